#pragma once
// The plan of a pipeline step: the schedule's orders (pipeline_schedule.h) run with given
// per-stage pass times, and the bubble (the idle share of a worker) it plans, next to the bubble
// a step's real spans measured. See docs/metrics.md, "Bubble: planned against measured".

#include <cstdint>
#include <string>
#include <vector>

#include "stagewise/engine/metrics.h"
#include "stagewise/engine/pipeline_schedule.h"

namespace stagewise::engine {
struct ModelPlan;
struct PartitionPlan;
}  // namespace stagewise::engine

namespace stagewise::engine::schedule {

/// One stage's pass times, in seconds. A BW pass takes b + w; with recompute, each backward (B
/// or BW) is preceded by the forward again, `recompute` seconds.
struct PassTimes {
  double f = 0;
  double b = 0;
  double w = 0;
  double recompute = 0;
};

/// A planned pass: when it would start and end, in seconds from the step's start.
struct PlannedAction {
  Action action;
  double start = 0;
  double end = 0;
};

/// The plan of one step.
struct Plan {
  std::vector<std::vector<PlannedAction>> workers;  ///< per worker, in its order
  /// Per worker: the idle share between its first pass's start and its last pass's end.
  std::vector<double> workerBubble;
  /// Over the whole step (every worker from 0 to the last pass's end): 1 - busy / (workers x
  /// step). The textbook figure: (p - 1) / (m + p - 1) for GPipe and 1F1B.
  double stepBubble = 0;
  double stepSeconds = 0;  ///< the last pass's end
};

/// Runs `orders` (one per worker, as workerOrders gives them) with `times` per model stage: each
/// worker runs one pass at a time in its order, a pass starts once the passes it needs have
/// ended (F of stage s after F of s - 1, B or BW of s after F of s and the backward of s + 1, W
/// after its B). Throws std::invalid_argument if `times` has not one entry per stage or the
/// orders deadlock.
Plan simulate(const std::vector<std::vector<Action>>& orders, const std::vector<PassTimes>& times);

/// workerOrders + simulate; `times` has one entry per stage.
Plan planStep(const std::string& schedule, int micro, int chunks,
              const std::vector<PassTimes>& times);

/// Per stage, the most micro-batches whose activations the orders hold at once: from a stage's
/// F until its W (or BW).
std::vector<int> heldMicroBatches(const std::vector<std::vector<Action>>& orders, int stages);

/// One schedule planned for a pipeline, for `inspect` and the Design estimate.
struct ScheduleEstimate {
  std::string schedule;
  int chunks = 1;
  /// interleaved planned with 2 chunks as an example: the spec asks for no chunks (1)
  bool exampleChunks = false;
  std::string refused;  ///< why the schedule cannot run this pipeline; empty: planned
  double bubble = 0;    ///< the step's idle share (Plan::stepBubble)
  double stepSeconds = 0;
  /// Per stage, the most bytes held at once, as the engine counts them (peakHeldBytes).
  std::vector<int64_t> peakActivationBytes;
};

/// Per stage, the most bytes the orders hold at once, counted as the engine's pipeline step
/// counts them (`peak_activation_bytes`): a stage's F holds one micro-batch's `activationBytes`
/// (with recompute its `inputBytes`, the activations added when its backward recomputes them);
/// zb-h1's B adds `gradientBytes` (the gradients of the layers' outputs its W starts from) until
/// that W; W or BW releases the micro-batch. `gradientBytes` may be empty (none held).
std::vector<int64_t> peakHeldBytes(const std::vector<std::vector<Action>>& orders, int stages,
                                   const std::vector<int64_t>& activationBytes,
                                   const std::vector<int64_t>& inputBytes,
                                   const std::vector<int64_t>& gradientBytes, bool recompute);

/// Per stage and sample, the activations a pipeline stage keeps for its backward: its layers'
/// (the partition's figure counts the aux head's too, which pipelined backprop does not run),
/// the last stage's logits once more for the loss, as the engine counts them.
std::vector<int64_t> heldActivationBytes(const PartitionPlan& partition, const ModelPlan& plan);

/// Per stage and sample, the gradients zb-h1's B keeps for its W: those of every layer's output
/// (float32) but the stage's own output, whose gradient came from downstream; the last stage's
/// of every layer's output; stage 0's none (its W runs the whole backward).
std::vector<int64_t> heldGradientBytes(const PartitionPlan& partition, const ModelPlan& plan);

/// gpipe, 1f1b, interleaved and zb-h1 planned with `times` (one per stage; gpipe, 1f1b and
/// interleaved run B and W as one pass) and `micro` micro-batches. `activationBytes`,
/// `inputBytes`, `gradientBytes`: per stage, one micro-batch's activations kept for the
/// backward, its input and the gradients zb-h1's B keeps (see peakHeldBytes). Interleaved runs
/// the stages as `chunks` chunks per worker where `chunks` > 1 (refused with the reason where
/// the stages do not split so), else 2 as an example (`exampleChunks`).
std::vector<ScheduleEstimate> compareSchedules(const std::vector<PassTimes>& times, int micro,
                                               const std::vector<int64_t>& activationBytes,
                                               const std::vector<int64_t>& inputBytes,
                                               bool recompute,
                                               const std::vector<int64_t>& gradientBytes = {},
                                               int chunks = 1);

/// The measured bubble of one worker in one step: the idle share between the start of its first
/// compute span (forward, backward, weight, recompute, step, aux) and the end of its last; time
/// spent waiting or blocked counts as idle. `spans`: the worker's spans of that step, any order.
/// NaN without a compute span of positive length.
double measuredBubble(const std::vector<StepSpan>& spans);

}  // namespace stagewise::engine::schedule
