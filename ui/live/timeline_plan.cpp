#include "live/timeline_plan.h"

#include <algorithm>
#include <stdexcept>

#include "stagewise/engine/pipeline_plan.h"
#include "stagewise/engine/spec.h"

namespace stagewise::ui {

namespace sched = engine::schedule;

std::vector<PlannedSegment> planUnderSpans(
    const engine::RunInfo& info,
    const std::function<const std::deque<engine::StepSpan>&(int)>& spans, double begin,
    double end) {
  const int stages = int(info.stages.size());
  if (info.mode != engine::Mode::Pipeline || stages == 0) return {};
  engine::ExperimentSpec spec;
  try {
    spec = engine::parseSpec(info.specJson);
  } catch (const std::exception&) {
    return {};
  }
  // Mean pass times per stage over the range shown, and the micro-batches of a step.
  struct Sum {
    double total[3] = {0, 0, 0};
    int count[3] = {0, 0, 0};
  };
  std::vector<Sum> sums(static_cast<size_t>(stages));
  int micro = 0;
  std::vector<double> starts;  // each step's first forward
  for (int k = 0; k < stages; ++k)
    for (const auto& s : spans(k)) {
      if (s.endS < begin || s.micro < 0) continue;
      if (s.startS > end) break;
      const int kind = s.kind == engine::SpanKind::Forward    ? 0
                       : s.kind == engine::SpanKind::Backward ? 1
                       : s.kind == engine::SpanKind::Weight   ? 2
                                                              : -1;
      if (kind < 0) continue;
      sums[size_t(k)].total[kind] += s.endS - s.startS;
      ++sums[size_t(k)].count[kind];
      micro = std::max(micro, s.micro + 1);
      if (k == 0 && kind == 0 && s.micro == 0 && s.startS >= begin) starts.push_back(s.startS);
    }
  if (micro == 0 || starts.empty()) return {};
  std::vector<sched::PassTimes> times;
  for (const Sum& s : sums) {
    auto mean = [&](int i) { return s.count[i] > 0 ? s.total[i] / s.count[i] : 0.0; };
    times.push_back({mean(0), mean(1), mean(2), 0});
  }
  sched::Plan plan;
  try {
    plan = sched::planStep(spec.pipeline.schedule, micro, spec.pipeline.chunks, times);
  } catch (const std::invalid_argument&) {
    return {};
  }
  std::vector<PlannedSegment> out;
  constexpr size_t kMostSteps = 400;  // a 60 s window of fast steps: the newest
  const size_t from = starts.size() > kMostSteps ? starts.size() - kMostSteps : 0;
  for (size_t i = from; i < starts.size(); ++i)
    for (const auto& row : plan.workers)
      for (const auto& a : row)
        out.push_back({a.action.stage, a.action.op, starts[i] + a.start, starts[i] + a.end});
  return out;
}

}  // namespace stagewise::ui
