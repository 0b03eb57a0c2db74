#include "runtime/run_summary.h"

#include <algorithm>

#include "runtime/memory_meter.h"

namespace stagewise::engine {

double SummaryBuilder::checksum(const StageRuntime& st) {
  torch::NoGradGuard noGrad;
  double sum = 0;
  for (auto& p : st.modules.bodyParams()) sum += p.to(torch::kFloat64).sum().item<double>();
  return sum;
}

StageSummary SummaryBuilder::ownStage(size_t k) const {
  const auto& st = *m_stages[k];
  StageSummary ss;
  ss.index = st.plan.index;
  ss.device = st.plan.settings.device;
  ss.firstLayer = st.plan.firstLayer;
  ss.lastLayer = st.plan.lastLayer;
  ss.threads = st.plan.settings.threads;
  ss.params = st.plan.params;
  ss.auxParams = st.modules.aux ? st.plan.auxParams : 0;
  ss.auxHead = st.isLast ? "classifier" : st.modules.aux ? st.plan.settings.auxHead : "none";
  ss.steps = st.meter.steps();
  ss.finalLoss = st.meter.recentLoss();
  ss.finalAccuracy = st.meter.recentAccuracy();
  auto f = st.meter.total();
  ss.computeFraction = f.compute, ss.waitFraction = f.wait, ss.blockedFraction = f.blocked;
  ss.bytesSent = st.bytesSent;
  ss.gradBytesSent = st.gradBytesSent;
  // Across processes: what the transport put on the wire (activations + labels, no headers).
  if (const int64_t wire = m_topology.wireBytes(k + 1, false); wire >= 0) ss.bytesSent = wire;
  if (k > 0)
    if (const int64_t wire = m_topology.wireBytes(k - 1, true); wire >= 0) ss.gradBytesSent = wire;
  ss.backpropBytes = st.backpropBytes;
  ss.peakActivationBytes = st.peakActivationBytes;
  ss.peakMemoryBytes = memory::runPeak(memory::stagePeak(st.memorySlot, st.plan.settings.device),
                                       st.peakMemoryFloor);
  ss.meanStepSeconds = st.meter.meanComputeSeconds();
  // Local stages idle waiting on their queues; pipeline stages between their passes.
  if (m_ctx.spec.mode == Mode::Local) ss.bubbleMeasured = f.wait + f.blocked;
  if (m_ctx.spec.mode == Mode::Pipeline) ss.bubbleMeasured = st.bubble.measured();
  ss.paramChecksum = checksum(st);
  return ss;
}

std::vector<double> SummaryBuilder::plannedBubbles() const {
  if (!m_ctx.bubbles) return {};
  // The run's own mean pass times (the stage threads have joined).
  for (size_t k = 0; k < m_stages.size(); ++k) {
    if (!m_topology.owns(k)) continue;
    const auto& st = *m_stages[k];
    if (m_ctx.spec.mode == Mode::Pipeline)
      for (const auto& [stage, times] : st.bubble.passTimes())
        m_ctx.bubbles->post(stage, times, st.bubble.microBatches());
    else
      m_ctx.bubbles->postStepSeconds(static_cast<int>(k), st.meter.meanComputeSeconds());
  }
  // Across processes rank 0 plans every stage: the other ranks reported their stages' times.
  if (m_topology.rank() == 0) m_topology.postRemoteTimes(*m_ctx.bubbles);
  return m_ctx.bubbles->planned();
}

RunSummary SummaryBuilder::build(double cpuSeconds, double samplesPerSec,
                                 std::atomic<bool>& userStop) const {
  const auto& spec = m_ctx.spec;
  RunSummary s;
  s.mode = spec.mode;
  s.wallSeconds = m_ctx.now();
  s.pausedSeconds = std::chrono::duration<double>(m_ctx.control.pausedFor()).count();
  s.steps = m_ctx.lastStageSteps.load();
  // No step finished after the 20-step warm-up: throughput was not measured (null), not 0.
  s.samplesPerSec = samplesPerSec > 0 ? samplesPerSec : kNoValue;
  if (m_topology.rank() == 0)
    if (const auto last =
            m_topology.remoteLastStage()) {  // the last stage ran elsewhere: its numbers
      s.steps = last->steps;
      // As samplesPerSec(): with what was measured before a resume.
      auto samples = static_cast<double>(m_ctx.priorMeasuredSamples);
      double span = m_ctx.priorMeasuredS;
      if (last->warmupEndS >= 0 && last->lastStepEndS > last->warmupEndS) {
        samples += static_cast<double>(last->samplesAfterWarmup);
        span += last->lastStepEndS - last->warmupEndS;
      }
      s.samplesPerSec = span > 0 ? samples / span : kNoValue;
    }
  s.samples = s.steps * spec.train.batchSize;
  // This process's CPU time over this segment of the run (a resumed run's clock starts later).
  s.cpuUtilization = cpuSeconds / std::max(1e-3, (s.wallSeconds - m_ctx.clockOffsetS) * m_cores);
  s.blas = m_blas;
  s.flushDenormal = true;
  const std::vector<double> planned = plannedBubbles();
  double slowest = 0;
  for (size_t k = 0; k < m_stages.size(); ++k) {
    StageSummary ss;
    if (m_topology.owns(k)) {
      ss = ownStage(k);
      if (k < planned.size()) ss.bubblePlanned = planned[k];
    } else {
      // Another rank ran it: rank 0 takes its summary from that rank's report.
      if (m_topology.rank() != 0) continue;
      const auto& st = *m_stages[k];
      if (const auto remote = m_topology.remoteStage(k))
        ss = *remote;
      else
        ss.index = st.plan.index, ss.device = st.plan.settings.device,
        ss.firstLayer = st.plan.firstLayer, ss.lastLayer = st.plan.lastLayer;
      if (m_topology.finalWeightsArrived(k))
        ss.paramChecksum = checksum(st);  // of the weights that arrived
      // That rank could not plan: it ran only its own stages.
      if (k < planned.size()) ss.bubblePlanned = planned[k];
    }
    slowest = std::max(slowest, ss.meanStepSeconds);
    s.threads += ss.threads;
    s.stages.push_back(ss);
  }
  if (slowest > 0 && s.samplesPerSec > 0)
    s.pipelineEfficiency = s.samplesPerSec / (spec.train.batchSize / slowest);
  {
    std::lock_guard lock(m_ctx.failureMutex);
    s.error = m_ctx.error;
    s.failedStage = m_ctx.failedStage;
  }
  m_topology.mergeOutcome(s, userStop);
  if (!s.error.empty())
    s.status = RunStatus::Failed;
  else
    // A stop that came once every step was trained (while the last probes and evaluations
    // were measured) does not make a finished run a stopped one.
    s.status =
        userStop.load() && s.steps < m_ctx.totalSteps ? RunStatus::Stopped : RunStatus::Completed;
  return s;
}

}  // namespace stagewise::engine
