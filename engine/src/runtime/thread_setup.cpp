#include "runtime/thread_setup.h"

#include <pthread.h>
#include <sched.h>

#include <thread>

namespace stagewise::engine {

int availableCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

void nameThread(const std::string& name) {
  pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
}

std::string setupComputeThread(int threads, const std::vector<int>& cores) {
  std::string note;
  if (!cores.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : cores) CPU_SET(c, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0)
      note = "could not pin to the requested cores; running unpinned";
  }
  // Initialise this thread's OpenMP state first, so a later lazy init cannot overwrite our count
  // with another thread's.
  at::internal::lazy_init_num_threads();
  at::set_num_threads(std::max(1, threads));
  at::globalContext().setFlushDenormal(true);
  if (threads > 1) {
    // One chunk per OpenMP worker of this thread's team: each sets its own flush flag.
    at::parallel_for(0, threads, 1, [](int64_t, int64_t) { at::globalContext().setFlushDenormal(true); });
  }
  return note;
}

}  // namespace stagewise::engine
