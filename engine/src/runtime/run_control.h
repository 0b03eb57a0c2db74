#pragma once
// Pause / resume / stop shared by every thread of a run. Torch-free (TSan-tested).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "stagewise/engine/run.h"

namespace stagewise::engine {

class RunControl {
 public:
  void pause();
  void resume();
  /// Sets the stop flag and wakes anything waiting in waitIfPaused() or sleepFor().
  void requestStop();
  bool stopRequested() const { return m_stop.load(std::memory_order_acquire); }
  bool paused() const { return m_paused.load(std::memory_order_acquire); }

  /// Blocks while paused. Returns false if a stop was requested.
  bool waitIfPaused();
  /// Sleeps up to `d`, waking early on stop. Returns false if a stop was requested.
  bool sleepFor(std::chrono::microseconds d);

  /// Time spent paused so far, including a pause still going on. Timers of a run subtract it,
  /// so samples/s, the ETA, the time axis of every series and the wall time count training only.
  std::chrono::steady_clock::duration pausedFor() const;

  RunState state() const { return m_state.load(std::memory_order_acquire); }
  void setState(RunState s) { m_state.store(s, std::memory_order_release); }

 private:
  std::atomic<bool> m_stop{false};
  std::atomic<bool> m_paused{false};
  std::atomic<RunState> m_state{RunState::Created};
  mutable std::mutex m_mutex;
  std::condition_variable m_cv;
  std::chrono::steady_clock::duration m_pausedTotal{0};  ///< finished pauses (under m_mutex)
  std::chrono::steady_clock::time_point m_pauseStart;    ///< valid while m_paused (under m_mutex)
};

}  // namespace stagewise::engine
