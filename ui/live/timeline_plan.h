#pragma once
// The schedule's plan laid under a pipeline run's measured spans in the Timeline: what each
// stage would do if every pass took its mean time and nothing else waited (docs/metrics.md,
// "Bubble: planned against measured"). No Widgets.

#include <deque>
#include <functional>
#include <vector>

#include "stagewise/engine/metrics.h"
#include "stagewise/engine/pipeline_schedule.h"

namespace stagewise::ui {

/// One planned pass, in the run's seconds.
struct PlannedSegment {
  int stage = 0;
  engine::schedule::Op op = engine::schedule::Op::F;
  double start = 0;
  double end = 0;
};

/// The plan under every step whose first forward (stage 0, micro-batch 0) starts in [begin,
/// end], started there: the run's schedule (from `info.specJson`) with each stage's mean pass
/// times over the spans of that range. Empty outside pipeline mode or without spans. `spans(k)`:
/// stage k's spans, oldest first.
std::vector<PlannedSegment> planUnderSpans(
    const engine::RunInfo& info,
    const std::function<const std::deque<engine::StepSpan>&(int)>& spans, double begin, double end);

}  // namespace stagewise::ui
