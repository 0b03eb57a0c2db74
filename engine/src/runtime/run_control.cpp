#include "runtime/run_control.h"

namespace stagewise::engine {

void RunControl::pause() {
  {
    std::lock_guard lock(m_mutex);
    if (stopRequested() || paused()) return;
    m_pauseStart = std::chrono::steady_clock::now();
    m_paused.store(true, std::memory_order_release);
  }
  if (state() == RunState::Running) setState(RunState::Paused);
}

void RunControl::resume() {
  {
    std::lock_guard lock(m_mutex);
    if (paused() && !stopRequested())
      m_pausedTotal += std::chrono::steady_clock::now() - m_pauseStart;
    m_paused.store(false, std::memory_order_release);
  }
  m_cv.notify_all();
  if (state() == RunState::Paused) setState(RunState::Running);
}

std::chrono::steady_clock::duration RunControl::pausedFor() const {
  std::lock_guard lock(m_mutex);
  auto total = m_pausedTotal;
  if (paused() && !stopRequested()) total += std::chrono::steady_clock::now() - m_pauseStart;
  return total;
}

void RunControl::requestStop() {
  {
    std::lock_guard lock(m_mutex);
    // A stop ends the pause: what follows (draining, saving) is not paused time.
    if (paused() && !stopRequested())
      m_pausedTotal += std::chrono::steady_clock::now() - m_pauseStart;
    m_stop.store(true, std::memory_order_release);
  }
  m_cv.notify_all();
  RunState s = state();
  if (s == RunState::Running || s == RunState::Paused) setState(RunState::Stopping);
}

bool RunControl::waitIfPaused() {
  if (!paused()) return !stopRequested();
  std::unique_lock lock(m_mutex);
  m_cv.wait(lock, [&] { return !paused() || stopRequested(); });
  return !stopRequested();
}

bool RunControl::sleepFor(std::chrono::microseconds d) {
  std::unique_lock lock(m_mutex);
  m_cv.wait_for(lock, d, [&] { return stopRequested(); });
  return !stopRequested();
}

}  // namespace stagewise::engine
