// Why a shorter spin: libgomp's default lets an idle member of a team of intra-op threads spin
// 300,000 times (milliseconds on recent x86, where one pause takes ~100 cycles) before it
// sleeps. A stage whose team fills the cores (backprop uses one thread per core by default) then
// keeps every core busy between parallel regions as well. On the 2-core VM this project is
// measured on, such a run switched between two speeds for seconds at a time (~5,500 and ~3,000
// samples/s, the slow one below a single thread's ~4,000), and with the workbench open the UI
// thread and the X server had to preempt a spinning worker, stalling the team at its next
// barrier. bench/engine/omp_wait.sh measures it.
//
// Why a re-execution: libgomp reads GOMP_SPINCOUNT in its constructor, which runs before main().
// Tried first and rejected: a .preinit_array function (libc's own initialisation, which runs
// after it, resets the environment to the one the process started with), and a constructor in a
// small shared library linked first (glibc initialised it after libgomp all the same).
#include "stagewise/engine/omp_wait.h"

#include <unistd.h>

#include <cstdlib>

namespace stagewise::engine {

void ensureOmpWaitDefault(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr || std::getenv("GOMP_SPINCOUNT") != nullptr) return;
  if (setenv("GOMP_SPINCOUNT", STAGEWISE_GOMP_SPINCOUNT_DEFAULT, 0) != 0) return;
  execv("/proc/self/exe", argv);
  // Still here: exec failed (no /proc?). Say so through the description rather than pretend.
  unsetenv("GOMP_SPINCOUNT");
}

std::string openmpWaitDescription() {
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  const char* spin = std::getenv("GOMP_SPINCOUNT");
  if (policy != nullptr && spin != nullptr)
    return std::string("OMP_WAIT_POLICY=") + policy + ", GOMP_SPINCOUNT=" + spin;
  if (policy != nullptr) return std::string("OMP_WAIT_POLICY=") + policy;
  if (spin != nullptr) {
    const std::string value(spin);
    return "spin " + value + ", then sleep" +
           (value == STAGEWISE_GOMP_SPINCOUNT_DEFAULT ? " (Stagewise default)" : " (GOMP_SPINCOUNT)");
  }
  return "libgomp default (spin 300000, then sleep)";
}

}  // namespace stagewise::engine
