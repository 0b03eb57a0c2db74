// The parts of a distributed run that need no c10d headers: aborting transfers, the monitor.
#include <chrono>
#include <sstream>

#include "dist/dist_group.h"

namespace stagewise::engine::dist {

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string shortError(const std::string& what) {
  std::string s = what;
  if (!s.empty() && s[0] == '[') {
    auto close = s.find("] ");
    if (close != std::string::npos) s = s.substr(close + 2);
  }
  if (auto nl = s.find('\n'); nl != std::string::npos) s = s.substr(0, nl);
  return s;
}

void InFlight::abort() {
  m_aborted.store(true);
  std::lock_guard lock(m_mutex);
  if (m_abort) m_abort();
}

void publishAbort(DistGroup& group, int stage, const std::string& message) {
  try {
    if (!group.has(keys::kAbort))
      group.set(keys::kAbort, std::to_string(group.rank()) + " " + std::to_string(stage) + "\n" + message);
  } catch (const std::exception&) {  // the store is gone: the others find out by themselves
  }
}

Monitor::Monitor(DistGroup& group, FaultHandler onFault, std::function<void()> onStop)
    : m_group(group), m_onFault(std::move(onFault)), m_onStop(std::move(onStop)) {
  m_thread = std::thread([this] { loop(); });
}

Monitor::~Monitor() { stop(); }

void Monitor::stop() {
  m_quit.store(true);
  if (m_thread.joinable()) m_thread.join();
}

void Monitor::markDone() {
  try {
    m_group.set(keys::done(m_group.rank()), "1");
  } catch (const std::exception&) {  // the store is gone: nobody is waiting for us any more
  }
}

void Monitor::loop() {
  const int world = m_group.world(), me = m_group.rank();
  std::vector<int64_t> last(static_cast<size_t>(world), -1);
  std::vector<Clock::time_point> changed(static_cast<size_t>(world), Clock::now());
  bool stopSeen = false;
  while (!m_quit.load()) {
    try {
      m_group.add(keys::heartbeat(me), 1);
      if (auto a = m_group.tryGet(keys::kAbort)) {
        const auto nl = a->find('\n');
        int rank = -1, stage = -1;
        std::istringstream(a->substr(0, nl)) >> rank >> stage;
        if (rank != me) {
          m_onFault(rank, stage, "rank " + std::to_string(rank) + ": " + (nl == std::string::npos ? *a : a->substr(nl + 1)));
          return;
        }
      }
      if (!stopSeen && m_group.has(keys::kStop)) {
        stopSeen = true;
        m_onStop();
      }
      for (int r = 0; r < world; ++r) {
        if (r == me || m_group.has(keys::done(r))) continue;
        const int64_t beat = m_group.add(keys::heartbeat(r), 0);
        const size_t i = static_cast<size_t>(r);
        if (beat != last[i]) {
          last[i] = beat;
          changed[i] = Clock::now();
        } else if (since(changed[i]) > m_group.timeoutS()) {
          m_onFault(r, -1, "rank " + std::to_string(r) + " stopped responding: no heartbeat for " +
                           std::to_string(int(m_group.timeoutS())) +
                           " s (hung, stopped or unreachable; distributed.timeout_s sets the limit)");
          return;
        }
      }
    } catch (const std::exception& e) {
      if (m_quit.load()) return;
      m_onFault(0, -1, "lost contact with rank 0 (the rendezvous at " + m_group.where() + "): " + shortError(e.what()));
      return;
    }
    for (int i = 0; i < 10 && !m_quit.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace stagewise::engine::dist
