#pragma once
#include <torch/torch.h>  // free here: the engine precompiles it
// A training method: what differs between local updates, backprop and pipelined backprop. The
// run (TorchRun, torch_run.h) and the stage worker (stage_worker.cpp) share the loader, the
// channels, the meters, the probe, checkpoints and the reporter; a method owns the layout of its
// stages, what a stage does with a batch and what travels back. See docs/architecture.md,
// "Methods".

#include <memory>
#include <optional>
#include <vector>

#include "runtime/run_context.h"
#include "stagewise/engine/model_plan.h"

namespace stagewise::engine {

/// What one training step of a stage measured, for the worker's shared bookkeeping.
struct StepResult {
  int64_t step = 0;
  double startedAt = 0;  ///< run clock when the step began waiting for its input
  double inputAt = 0;    ///< when its (first) input arrived
  double waitS = 0;      ///< waiting for input, forward or gradients
  double blockedS = 0;   ///< blocked sending (the receiver full)
  bool hasLoss = false;  ///< local stages and the model's last stage have a loss
  double loss = kNoValue;
  double accuracy = kNoValue;
  size_t depth = 0;      ///< input queue depth when the input arrived
  int64_t upstream = 0;  ///< steps the upstream stage had finished then
  int64_t samples = 0;   ///< samples in the step's batch
  /// The timeline's spans when the step has several (pipeline: each micro-batch's forward and
  /// backward compute); empty means one span from `inputAt` to the step's end.
  std::vector<StepSpan> spans;
  /// Waits for an input or a gradient and blocked sends longer than kMinWaitSpan, as Wait and
  /// Blocked spans: shorter ones would only crowd the timeline (they still count in waitS).
  std::vector<StepSpan> waits;
};

/// The shortest wait or blocked send that becomes a span of its own (50 us).
inline constexpr double kMinWaitSpan = 50e-6;

/// One stage's part of a method, run by its worker thread.
class StageStep {
 public:
  virtual ~StageStep() = default;
  /// One training step: takes its input, computes, sends what travels, updates the weights.
  /// Empty once the input has ended or the run stops.
  virtual std::optional<StepResult> run() = 0;
  /// The stage is done (its input ended): close what it sends on, so the next stage ends too.
  virtual void finish() = 0;
  /// The stage's lr_scale changed (live or scheduled) before its step `step`: the learning rate
  /// becomes train.lr x `scale` (x the schedule's factor) from that step on.
  virtual void setLrScale(double scale, int64_t step) = 0;
};

class Method {
 public:
  virtual ~Method() = default;
  virtual Mode mode() const = 0;
  /// The stages this method trains, from the partition's.
  virtual std::vector<StagePlan> stages(std::vector<StagePlan> partition, const ModelPlan& plan,
                                        int cores) const {
    (void)plan, (void)cores;
    return partition;
  }
  /// Whether a stage trains an aux head of its own (local: every stage but the last).
  virtual bool auxHead(const StagePlan& stage) const { return !stage.isLast; }
  /// Whether the gradient probe measures it (local updates against backprop's gradient).
  virtual bool probes() const { return false; }
  /// Whether boundary gradients travel upstream (the run then makes gradient channels).
  virtual bool sendsGradients() const { return false; }
  virtual std::unique_ptr<StageStep> stageStep(RunContext& ctx, StageRuntime& stage) const = 0;
};

/// Capacity of a gradient channel: every micro-batch of a step (pipeline), or the steps of
/// gradients in flight before they are applied (overlap).
inline size_t gradientCapacity(const ExperimentSpec& spec) {
  return static_cast<size_t>(std::max(spec.train.batchSize, spec.train.queueCapacity + 2));
}

/// Capacity of forward channel `i` (0: the loader's, in batches): train.queue_capacity, and under
/// interleaved every micro-batch of two steps, so that no send blocks a worker's turn while the
/// stage it feeds waits for a turn of its own worker.
inline size_t activationCapacity(const ExperimentSpec& spec, size_t i) {
  const bool interleaved = spec.mode == Mode::Pipeline && spec.pipeline.schedule == "interleaved";
  const int capacity = interleaved && i > 0
                           ? std::max(spec.train.queueCapacity, 2 * spec.train.batchSize)
                           : spec.train.queueCapacity;
  return static_cast<size_t>(capacity);
}

/// The method of a spec's mode.
std::unique_ptr<Method> makeMethod(const ExperimentSpec& spec);

/// The learning-rate factor at `step` of `totalSteps` (train.lr_schedule after
/// train.warmup_steps of linear warm-up).
double lrFactor(const TrainSpec& train, int64_t step, int64_t totalSteps);

}  // namespace stagewise::engine
