#pragma once
// The plan of a pipeline step: the schedule's orders (pipeline_schedule.h) run with given
// per-stage pass times, and the bubble (the idle share of a worker) it plans, next to the bubble
// a step's real spans measured. See docs/metrics.md, "Bubble: planned against measured".

#include <vector>

#include "stagewise/engine/metrics.h"
#include "stagewise/engine/pipeline_schedule.h"

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

/// The measured bubble of one worker in one step: the idle share between the start of its first
/// compute span (forward, backward, weight, recompute, step, aux) and the end of its last; time
/// spent waiting or blocked counts as idle. `spans`: the worker's spans of that step, any order.
/// NaN without a compute span of positive length.
double measuredBubble(const std::vector<StepSpan>& spans);

}  // namespace stagewise::engine::schedule
