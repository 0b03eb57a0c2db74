#include "designer/schedule_estimate.h"

#include <QCoreApplication>
#include <algorithm>

#include "stagewise/engine/number_text.h"
#include "stagewise/engine/pipeline_plan.h"

namespace stagewise::ui {

namespace sched = engine::schedule;

QString scheduleEstimateText(const engine::ExperimentSpec& spec, const engine::ModelPlan& plan,
                             const engine::PartitionPlan& partition,
                             const engine::MethodProfile* measured) {
  auto tr = [](const char* text) { return QCoreApplication::translate("ScheduleEstimate", text); };
  const size_t k = partition.stages.size();
  if (k == 0) return QStringLiteral("—");
  const int micro = spec.pipeline.microBatches > 0 ? spec.pipeline.microBatches : int(k);
  const bool timed = measured && measured->pipelineMicro.size() == k;
  std::vector<sched::PassTimes> times;
  std::vector<int64_t> act, in;
  const int64_t rows = (std::max(1, spec.train.batchSize) + micro - 1) / micro;
  for (size_t s = 0; s < k; ++s) {
    const auto& st = partition.stages[s];
    if (timed) {  // the backward not timed apart: B and W half each
      const double f = s < measured->pipelineForward.size() ? measured->pipelineForward[s] : 0;
      const double back = std::max(0.0, measured->pipelineMicro[s] - f);
      times.push_back({f, back / 2, back / 2, 0});
    } else {  // a matrix product's input and weight gradients cost one forward each
      const double f = double(std::max<int64_t>(1, st.flops));
      times.push_back({f, f, f, 0});
    }
    act.push_back(st.activationBytes * rows);
    in.push_back((s == 0 ? plan.inputBytes() : partition.stages[s - 1].outBytes) * rows);
  }
  QStringList lines;
  for (const auto& e : sched::compareSchedules(times, micro, act, in, spec.pipeline.recompute)) {
    QString name = QString::fromStdString(e.schedule);
    // Interleaved runs the stages as chunks: K stages on K / v workers; say how many.
    const int stages = int(e.peakActivationBytes.size());
    if (e.chunks > 1 && stages > 0)
      name += tr(" (%1 worker(s) x %2 chunks)").arg(stages / e.chunks).arg(e.chunks);
    else if (e.chunks > 1)
      name += tr(" (%1 chunks)").arg(e.chunks);
    if (e.schedule == spec.pipeline.schedule) name = QStringLiteral("▸ ") + name;
    if (!e.refused.empty()) {
      lines << tr("%1: —").arg(name);
      continue;
    }
    const int64_t peak =
        *std::max_element(e.peakActivationBytes.begin(), e.peakActivationBytes.end());
    lines << tr("%1: bubble %2%, activations %3")
                 .arg(name)
                 .arg(e.bubble * 100, 0, 'f', 0)
                 .arg(QString::fromStdString(engine::bytesText(double(peak))));
  }
  lines << (timed ? tr("(planned bubble: the schedule alone, from the measured passes)")
                  : tr("(planned bubble: the schedule alone, from FLOPs; Measure times them)"));
  return lines.join(QLatin1Char('\n'));
}

}  // namespace stagewise::ui
