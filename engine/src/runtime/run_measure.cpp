// TorchRun's measurements (torch_run.h): the analysis thread's gradient probe and evaluations
// on the shadow copies, and the final evaluation and summary when the run ends.

#include <sys/resource.h>

#include <cmath>
#include <cstdio>
#include <numbers>

#include "probe/probe.h"
#include "probe/sample.h"
#include "runtime/error_text.h"
#include "runtime/run_change.h"
#include "runtime/run_summary.h"
#include "runtime/thread_setup.h"
#include "runtime/torch_run.h"

namespace stagewise::engine {

void TorchRun::loadShadowFrom(ShadowSet& shadow, const Snapshot& snap) {
  for (size_t i = 0; i < shadow.stages.size(); ++i)
    loadParams(shadow.stages[i], snap.body[i], snap.aux[i]);
}

void TorchRun::loadShadowFromLive() {
  for (size_t i = 0; i < m_shadow->stages.size(); ++i) {
    std::vector<torch::Tensor> body, aux;
    for (auto& p : m_stages[i]->modules.bodyState()) body.push_back(p.detach().to(torch::kCPU));
    for (auto& p : m_stages[i]->modules.auxState()) aux.push_back(p.detach().to(torch::kCPU));
    loadParams(m_shadow->stages[i], body, aux);
  }
}

std::pair<double, double> TorchRun::measure(ShadowSet& shadow, int64_t step, double t, bool probe,
                                            bool eval, RunSummary* summary) {
  std::vector<MetricPoint> points;
  double evalS = 0, probeS = 0;
  if (eval) {
    const double c0 = threadCpuSeconds();
    EvalResult r = summary ? evaluate(shadow.stages, m_data.testX, m_data.testY)
                           : evaluate(shadow.stages, m_testX, m_testY);
    points.push_back({series::kTestAccuracy, -1, -1, step, t, r.accuracy});
    points.push_back({series::kTestLoss, -1, -1, step, t, r.loss});
    if (summary) {
      summary->testAccuracy = r.accuracy;
      summary->testLoss = r.loss;
      if (m_data.shape.sequence) {  // nats per byte token: perplexity, bits per byte
        summary->testPerplexity = std::exp(r.loss);
        summary->testBitsPerByte = r.loss / std::numbers::ln2;
      }
    }
    if (m_valX.defined()) {
      const EvalResult v = summary ? evaluate(shadow.stages, m_data.valX, m_data.valY)
                                   : evaluate(shadow.stages, m_valX, m_valY);
      points.push_back({series::kValAccuracy, -1, -1, step, t, v.accuracy});
      points.push_back({series::kValLoss, -1, -1, step, t, v.loss});
      if (summary) summary->valAccuracy = v.accuracy, summary->valLoss = v.loss;
    }
    if (m_data.shape.sequence && !m_sampleAtEvals.prompt.empty()) {  // the Sample panel's
      const SampleRequest& q = m_sampleAtEvals;
      const std::string text =
          generateBytes(shadow.stages, q.prompt, q.length, q.temperature,
                        m_spec.train.seed + static_cast<uint64_t>(step), m_spec.dataset.context);
      m_reporter.event(
          {EventKind::Info, t, -1, sampleEventMessage(step, validUtf8(q.prompt + text))});
    }
    evalS = threadCpuSeconds() - c0;
  }
  const double p0 = threadCpuSeconds();
  if (probe) {
    ProbeResult r = gradientCosine(shadow.stages, shadow.isLast, m_probeX, m_probeY,
                                   m_spec.mode == Mode::Local ? m_spec.local.overlap : 0);
    for (size_t k = 0; k < r.stage.size(); ++k) {
      points.push_back({series::kGradCosine, static_cast<int>(k), -1, step, t, r.stage[k]});
      for (size_t l = 0; l < r.layer[k].size(); ++l)
        points.push_back({series::kGradCosine, static_cast<int>(k),
                          shadow.firstLayer[k] + static_cast<int>(l), step, t, r.layer[k][l]});
      if (summary) summary->stages[k].gradCosine = r.stage[k];
    }
    probeS = threadCpuSeconds() - p0;
  }
  m_reporter.add(points);
  return {probeS, evalS};
}

void TorchRun::analyse(ShadowSet& shadow, SnapshotCoordinator& snapshots) {
  try {
    nameThread("sw-analysis");
    setupComputeThread(1, {});
    // The lowest priority (on Linux nice applies to the calling thread): measuring takes the
    // cores' idle time first and, while the stages compete, a small share (docs/metrics.md,
    // "The measurement budget": measured against normal priority and SCHED_IDLE).
    setpriority(PRIO_PROCESS, 0, 19);
    while (auto snap = snapshots.next()) {
      const double c0 = threadCpuSeconds();
      loadShadowFrom(shadow, *snap);
      const double loadS = threadCpuSeconds() - c0;
      auto [probeS, evalS] =
          measure(shadow, snap->step, snap->timeS >= 0 ? snap->timeS : m_ctx.now(), snap->probe,
                  snap->eval, nullptr);
      // Loading the copies is part of what the point cost, whichever kind it was for.
      (snap->eval ? evalS : probeS) += loadS;
      m_budget->charge(snap->step, probeS, evalS);
    }
  } catch (const std::exception& e) {
    m_ctx.fail(-1, std::string("probe/evaluation: ") + errorText(e));
  }
}

void TorchRun::summariseMeasuring(RunSummary& s) {
  if (!m_ctx.snapshots || rank() != 0) return;
  const auto c = m_budget->counts();
  s.measureBudget = m_spec.measure.budget;
  s.measureShare = m_budget->share(m_budget->trainingCpuS());
  s.probePoints = c.probes;
  s.evalPoints = c.evals;
  s.thinnedPoints = c.thinnedProbes + c.thinnedEvals;
  s.skippedPoints = snapshotsDropped();
  // The series ends on the summary's share (measuring what was queued at the end is charged
  // after the last live point): the live header, the log and the store say one number.
  m_reporter.add(MetricPoint{series::kMeasureShare, -1, -1, s.steps, m_ctx.now(), s.measureShare});
  const double budget = m_spec.measure.budget;
  if (budget > 0 && s.measureShare > budget * 1.25)
    m_reporter.event({EventKind::Warning, m_ctx.now(), -1,
                      "measuring took " + percent(s.measureShare) + " of training, over its " +
                          percent(budget) + " budget: the " +
                          std::to_string(MeasureSpec::kMinPoints) +
                          " probes and evaluations kept per run cost more here; lower "
                          "probe.batch_size or eval.max_samples"});
}

std::string TorchRun::percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", share * 100);
  return buf;
}

void TorchRun::finish(double cpu0) {
  const SummaryBuilder builder(m_ctx, m_stages, *m_topology, m_info.hardwareCores, m_info.blas);
  RunSummary s =
      builder.build(processCpuSeconds() - cpu0, samplesPerSec(m_ctx.now()), m_ctx.userStop);
  if (m_spec.mode == Mode::Local && m_spec.local.overlap > 0)
    s.overlapLayers = m_spec.local.overlap, s.overlapDelay = m_spec.train.queueCapacity + 1;
  summariseMeasuring(s);
  s.loadStart = m_loadStart;
  s.loadEnd = m_loadMeter.end();
  {
    std::vector<StagePlan> plans;
    for (const auto& st : m_stages) plans.push_back(st->plan);
    const auto perSample =
        trainFlopsPerSample(plans, m_plan, m_spec.mode == Mode::Local ? m_spec.local.overlap : 0);
    for (const auto& ss : s.stages)
      if (ss.index >= 0 && static_cast<size_t>(ss.index) < perSample.size())
        s.trainFlops += static_cast<double>(ss.steps) * m_spec.train.batchSize *
                        perSample[static_cast<size_t>(ss.index)];
  }
  const bool drained = m_ctx.drain.load() && !m_drainFailed;
  if (s.error.empty()) {
    if (drained && s.steps < m_ctx.totalSteps) {
      bool aligned = true;
      for (size_t k = 1; k <= m_stages.size(); ++k)
        aligned = aligned && m_ctx.produced[k].load() == s.steps;
      if (aligned) saveAt(s.steps);
    }
    if (m_spec.model.kind == "torchscript") saveFinalWeights(s.steps);
    if (rank() == 0) try {
        setupComputeThread(m_info.hardwareCores, {});
        loadShadowFromLive();
        const bool probe = m_method->probes() && m_spec.probe.interval >= 0;
        measure(*m_shadow, s.steps, s.wallSeconds, probe, true, &s);
      } catch (const std::exception& e) {
        m_reporter.event({EventKind::Warning, m_ctx.now(), -1,
                          std::string("final evaluation failed: ") + errorText(e)});
      }
    m_reporter.event({s.status == RunStatus::Completed ? EventKind::Completed : EventKind::Stopped,
                      m_ctx.now(), -1,
                      toString(s.status) + " after " + std::to_string(s.steps) + " steps"});
  }
  if (m_liveCuts)
    m_reporter.event(
        {EventKind::Warning, m_ctx.now(), -1,
         "repartition to " + cutsText(*m_liveCuts) + " not made: the run ended first"});
  for (const RunChange& c : m_scheduled)
    m_reporter.event({EventKind::Warning, m_ctx.now(), -1,
                      "change at step " + std::to_string(c.step) + ": " + c.key + "=" + c.value +
                          " not made: the run ended at step " + std::to_string(s.steps)});
  if (snapshotsDropped() > 0)
    m_reporter.event({EventKind::Warning, m_ctx.now(), -1,
                      std::to_string(snapshotsDropped()) +
                          " probe/evaluation points skipped: the analysis thread fell behind"});
  if (snapshotsDiscarded() > 0)
    m_reporter.event(
        {EventKind::Warning, m_ctx.now(), -1,
         std::to_string(snapshotsDiscarded()) +
             " probe/evaluation points not measured: the run stopped before they were"});
  m_reporter.finish(s);
  m_topology->conclude(s);
  m_ctx.control.setState(RunState::Finished);
  {
    std::lock_guard lock(m_mutex);
    m_summary = s;
    m_finished = true;
  }
  m_done.notify_all();
}

}  // namespace stagewise::engine
