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

  RunState state() const { return m_state.load(std::memory_order_acquire); }
  void setState(RunState s) { m_state.store(s, std::memory_order_release); }

 private:
  std::atomic<bool> m_stop{false};
  std::atomic<bool> m_paused{false};
  std::atomic<RunState> m_state{RunState::Created};
  std::mutex m_mutex;
  std::condition_variable m_cv;
};

}  // namespace stagewise::engine
