#pragma once
// Controlling a run from another thread: start, pause, resume, stop, wait.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

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

/// One change to a run while it trains (docs/user-guide.md, "Steering a run"). Keys:
/// `partition.cuts` (value: a JSON list, e.g. "[4]"), `stages.N.delay_ms`, `stages.N.lr_scale`,
/// `stages.N.threads` (value: a number; N is the stage's index in the partition at `step`).
/// A re-partition applies once every stage has finished `step` steps; a stage's setting before
/// that stage's own step `step` (its step index `step`, 0-based, runs with the new value).
struct RunChange {
  int64_t step = -1;  ///< -1 (live requests only): at the next step boundary
  std::string key;
  std::string value;  ///< canonical text: "[2,4]", "25", "0.5"
  double pauseS = 0;  ///< applied re-partitions: how long training stood still
};

/// "STEP:KEY=VALUE" (`stagewise-cli train --change`) as a change; throws std::invalid_argument
/// saying what is wrong. The value is checked for its key's type and made canonical.
RunChange parseRunChange(const std::string& text);
/// The applied change an engine event's message reports ("change at step S: KEY=VALUE ..." or
/// "repartition at step S: partition.cuts=[..] ..."); empty when the message is no such event.
/// `stagewise-cli train --replay` reads a stored run's history back with it.
std::optional<RunChange> changeFromEvent(const std::string& message);

/// What a live request got: accepted (it applies at the next step boundary and an event reports
/// it with its step), or refused with the reason (the run goes on unchanged).
struct ChangeResult {
  bool accepted = false;
  std::string reason;
};

/// Text to generate from a language model (model.kind gpt): `length` bytes after `prompt`, greedy
/// (`temperature` 0: the most likely byte at each step) or drawn at `temperature` > 0 with the
/// run's seed (train.seed), so a run draws the same text each time.
struct SampleRequest {
  std::string prompt;
  int length = 200;
  double temperature = 0;
};

/// Generated text (valid UTF-8: a byte the model made that is not becomes U+FFFD), or why none.
struct SampleResult {
  bool ok = false;
  std::string text;  ///< the continuation, without the prompt
  std::string error;
};

/// The Info event that reports a sample (RunOptions::sampleAtEvaluations in engine.h):
/// "sample at step S: TEXT", TEXT being the prompt and its continuation.
std::string sampleEventMessage(int64_t step, const std::string& text);
/// The step and text of a sample event; empty for any other message.
std::optional<std::pair<int64_t, std::string>> sampleFromEvent(const std::string& message);

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

  // Steering (docs/architecture.md, "Live re-partition"). Thread-safe; each returns at once.
  /// Moves the cuts (local mode, in one process): the run drains at the next step boundary,
  /// moves the layers with their weights and optimizer state, gives each new boundary a fresh
  /// aux head and goes on. Refused with the reason in backprop and pipeline mode, with
  /// local.overlap > 0, in a distributed run, while a drain or another re-partition is under
  /// way, while a stage is paused, and for invalid cuts.
  virtual ChangeResult repartition(const std::vector<int>& cuts) {
    (void)cuts;
    return {false, "this engine cannot re-partition a running run"};
  }
  /// Sets stage `stage`'s delay_ms, lr_scale or threads (key without the "stages.N." prefix);
  /// it applies before that stage's next step.
  virtual ChangeResult changeStage(int stage, const std::string& key, double value) {
    (void)stage, (void)key, (void)value;
    return {false, "this engine cannot change a running stage"};
  }
  /// Holds stage `stage` before its next step (true) or lets it go on (false): the stages
  /// around it fill or empty their queues, which shows the back-pressure.
  virtual ChangeResult pauseStage(int stage, bool paused) {
    (void)stage, (void)paused;
    return {false, "this engine cannot pause one stage"};
  }
  /// The changes applied so far, in the order they took effect.
  virtual std::vector<RunChange> changes() const { return {}; }
  /// Text generated by the composed network (every stage's body, the last stage's head) at the
  /// finished run's weights. Blocks while it generates. Refused with the reason for a model that
  /// is not a language model, before the run has finished, and on a rank other than 0.
  virtual SampleResult sample(const SampleRequest& request) {
    (void)request;
    return {false, {}, "this engine cannot generate text"};
  }
};

}  // namespace stagewise::engine
