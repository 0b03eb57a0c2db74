#pragma once
// Controlling a run from another thread: start, pause, resume, stop, wait.

#include <chrono>
#include <memory>

#include "stagewise/engine/metrics.h"
#include "stagewise/engine/spec.h"

namespace stagewise::engine {

enum class RunState { Created, Running, Paused, Stopping, Finished };

struct Progress {
  int64_t step = 0;  ///< steps finished by the last stage
  int64_t totalSteps = 0;
  double elapsedS = 0;  ///< training time since the start; time paused is not counted
  double pausedS = 0;   ///< time spent paused so far
  double etaS = -1;     ///< -1: unknown yet
  double samplesPerSec = 0;
};

/// A training run in the background. Thread-safe; the destructor stops and joins.
class Run {
 public:
  virtual ~Run() = default;
  /// Starts the worker threads and returns at once.
  virtual void start() = 0;
  virtual void pause() = 0;
  virtual void resume() = 0;
  /// Asks every thread to stop; returns at once. wait() returns within ~1 s.
  virtual void requestStop() = 0;
  /// Blocks until the run has finished and the observer has seen onFinish.
  virtual RunSummary wait() = 0;
  /// Waits up to `timeout`; true if finished.
  virtual bool waitFor(std::chrono::milliseconds timeout) = 0;
  virtual RunState state() const = 0;
  virtual Progress progress() const = 0;
};

}  // namespace stagewise::engine
