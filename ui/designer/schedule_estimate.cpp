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
  std::vector<int64_t> act, in, grad;
  const int64_t rows = (std::max(1, spec.train.batchSize) + micro - 1) / micro;
  // What the engine's pipeline step holds per micro-batch (no aux heads in pipeline mode; zb-h1
  // keeps its layer outputs' gradients from B to W), as `inspect` plans it.
  const std::vector<int64_t> held = sched::heldActivationBytes(partition, plan);
  const std::vector<int64_t> heldGrad = sched::heldGradientBytes(partition, plan);
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
    act.push_back((s < held.size() ? held[s] : st.activationBytes) * rows);
    grad.push_back((s < heldGrad.size() ? heldGrad[s] : 0) * rows);
    in.push_back((s == 0 ? plan.inputBytes() : partition.stages[s - 1].outBytes) * rows);
  }
  QStringList lines;
  for (const auto& e : sched::compareSchedules(times, micro, act, in, spec.pipeline.recompute, grad,
                                               spec.pipeline.chunks)) {
    QString name = QString::fromStdString(e.schedule);
    // Interleaved runs the stages as chunks: K stages on K / v workers; say how many.
    const int stages = int(e.peakActivationBytes.size());
    // An example where the design's own chunks (1) do not apply.
    const QString eg = e.exampleChunks ? tr("e.g. ") : QString();
    if (e.chunks > 1 && stages > 0)
      name += tr(" (%1%2 worker(s) x %3 chunks)").arg(eg).arg(stages / e.chunks).arg(e.chunks);
    else if (e.chunks > 1)
      name += tr(" (%1%2 chunks)").arg(eg).arg(e.chunks);
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
  if (spec.pipeline.recompute)
    lines << tr("(activations with recomputation: each stage keeps only its inputs)");
  return lines.join(QLatin1Char('\n'));
}

}  // namespace stagewise::ui
