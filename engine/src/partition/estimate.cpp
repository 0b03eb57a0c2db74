// The speed-up estimates: the FLOP estimate (relative units) and the estimate per method, whose
// schedules schedule_sim.cpp simulates.
#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include "partition/schedule_sim.h"
#include "stagewise/engine/partition.h"

namespace stagewise::engine {

using sim::kVariants;
using sim::period;
using sim::SimOp;
using sim::simulate;

static double speedOf(int threads, const ScalingModel& m) {
  return 1.0 + m.threadEfficiency * (std::max(1, threads) - 1);
}

SpeedEstimate estimateSpeed(const PartitionPlan& partition, const ModelPlan& plan, int batchSize,
                            int cores, const ScalingModel& scaling) {
  SpeedEstimate e;
  cores = std::max(1, cores);
  const double batch = batchSize;
  // Work in FLOPs per batch: backward ~ 2x forward.
  const double bpWork = 3.0 * static_cast<double>(plan.totalFlops()) * batch;
  e.backpropTime = bpWork;
  for (int t = 1; t <= cores; ++t) {
    double time = bpWork / speedOf(t, scaling);
    if (time < e.backpropTime - 1e-9) e.backpropTime = time, e.backpropThreads = t;
  }
  std::vector<double> work;
  int threads = 0;
  double slowest = 0;
  // int64 labels: one per sample, one per token of a text window
  const int64_t labelBytes = 8 * (plan.input.sequence ? plan.input.dims.at(0) : 1);
  for (const auto& s : partition.stages) {
    double w = 3.0 * static_cast<double>(s.flops + s.auxFlops) * batch;
    work.push_back(w);
    double t = w / speedOf(std::min(s.settings.threads, cores), scaling);
    e.stageTime.push_back(t);
    slowest = std::max(slowest, t);
    threads += s.settings.threads;
    if (!s.isLast) {
      e.boundaryBytes.push_back(static_cast<int64_t>((s.outBytes + labelBytes) * batchSize));
      int64_t bp = 2 * s.outBytes * batchSize;
      // labels travel once, straight to the last stage: count them at the last boundary
      if (s.index + 2 == static_cast<int>(partition.stages.size())) bp += labelBytes * batchSize;
      e.backpropBoundaryBytes.push_back(bp);
    }
  }
  const double total = std::accumulate(work.begin(), work.end(), 0.0);
  for (double w : work) e.stageShare.push_back(total > 0 ? w / total : 0);
  e.coresShared = threads > cores;
  // Stages sharing cores cannot finish more than `cores` threads' worth of work per unit time.
  const double sharedBound = total / cores;
  e.localTime = std::max(slowest, e.coresShared ? sharedBound : 0.0);
  e.speedup = e.localTime > 0 ? e.backpropTime / e.localTime : 1.0;
  const double meanStage =
      e.stageTime.empty()
          ? 0
          : std::accumulate(e.stageTime.begin(), e.stageTime.end(), 0.0) / e.stageTime.size();
  e.pipelineEfficiency = e.localTime > 0 ? std::min(1.0, meanStage / e.localTime) : 1.0;
  if (e.coresShared && e.localTime > 0)
    e.pipelineEfficiency = std::min(1.0, sharedBound / e.localTime);
  return e;
}

namespace {
/// Steps simulated per schedule. Local stages run ahead of each other, and with a queue per core
/// they settle into long cycles, which 64 steps measure poorly (docs/benchmarks.md, "The estimate
/// per method"). A pipeline flushes every step, and 64 steps give the same period as 512.
constexpr int kLocalSteps = 256;
constexpr int kPipelineSteps = 64;
}  // namespace

double defaultSchedulerSlice(int cores) {
  const int c = std::clamp(cores, 1, 8);
  int log2 = 0;
  while ((2 << log2) <= c) ++log2;
  return 0.75e-3 * (1 + log2);
}

MethodEstimate estimateMethods(const MethodProfile& profile, const PartitionPlan& partition,
                               int cores, bool oneFOneB, int queueCapacity, bool threadStats) {
  MethodEstimate e;
  cores = std::max(1, cores);
  const size_t k = partition.stages.size();
  const double batch = std::max(1, profile.batchSize);
  if (k == 0 || profile.localStep.size() != k || profile.pipelineMicro.size() != k ||
      profile.pipelineForward.size() != k || profile.pipelineUpdate.size() != k)
    return e;
  std::vector<int> width;
  int threads = 0;
  for (const auto& s : partition.stages) {
    width.push_back(std::max(1, s.settings.threads));
    threads += width.back();
  }
  e.coresShared = threads > cores;
  const double contention = std::max(1.0, profile.contention);
  const double slice =
      profile.sliceSeconds < 0 ? defaultSchedulerSlice(cores) : profile.sliceSeconds;
  const double tick = profile.tickSeconds > 0 ? profile.tickSeconds : 4e-3;
  const double migrationCost = std::max(0.0, profile.migrationCostSeconds);
  // The steady-state seconds per step (`stepEnd(t)`: the operation that ends step t). With a
  // queue per core the schedule depends on where the ticks fall and where the threads start,
  // which a real run goes through many of and one simulated schedule sees one: the mean over
  // kVariants of them.
  // With no more one-thread stages than cores, every thread has a core of its own and every
  // variant is the same schedule.
  const bool coreQueues = profile.perCoreQueues && slice > 0 && threads == static_cast<int>(k);
  const int variants = coreQueues && e.coresShared ? kVariants : 1;
  // `stats` (where asked and simulated with per-core queues): the threads' counts over the same
  // steps, a second pass through the same (deterministic) schedule.
  auto meanPeriod = [&](std::vector<SimOp>& ops, const std::vector<std::vector<size_t>>& order,
                        int steps, const std::function<size_t(int)>& stepEnd,
                        SimThreadStats& stats) {
    const bool counted = threadStats && coreQueues;
    const size_t n = order.size();
    if (counted) stats = {std::vector<double>(n), std::vector<double>(n), std::vector<double>(n)};
    double sum = 0;
    for (int v = 0; v < variants; ++v) {
      for (auto& op : ops) op.end = -1;
      simulate(ops, order, width, cores, profile.handoffSeconds, contention, slice, coreQueues,
               tick, v, nullptr, migrationCost);
      std::vector<double> ends;
      for (int t = 0; t < steps; ++t) ends.push_back(ops[stepEnd(t)].end);
      sum += period(ends);
      const int from = steps / 4, to = steps / 2;
      if (!counted || to <= from) continue;
      sim::SimStats window;
      window.from = ends[static_cast<size_t>(from)], window.to = ends[static_cast<size_t>(to)];
      for (auto& op : ops) op.end = -1;
      simulate(ops, order, width, cores, profile.handoffSeconds, contention, slice, coreQueues,
               tick, v, &window, migrationCost);
      const double per = 1.0 / (to - from) / variants;
      for (size_t j = 0; j < n; ++j) {
        stats.running[j] += window.running[j] * per, stats.queued[j] += window.queued[j] * per;
        stats.switchIns[j] += window.switchIns[j] * per;
      }
      stats.idleCoreSeconds += window.idleCoreSeconds * per;
    }
    return sum / variants;
  };
  // Every send and receive costs its thread CPU (the wake-up, the wait): `queueOps` of them.
  const double queueOp = std::max(0.0, profile.handoffCpuSeconds);
  auto withQueue = [&](double work, int queueOps) { return work + queueOps * queueOp; };
  // What an operation costs more after another stage ran on its core (0 where not profiled).
  auto cold = [&](const std::vector<double>& perStage, size_t s) {
    return perStage.size() == k ? std::max(0.0, perStage[s]) : 0.0;
  };

  // Local: stage s's step t needs stage s - 1's step t, and room in its output queue (stage
  // s + 1 has taken step t - capacity).
  {
    std::vector<SimOp> ops(k * kLocalSteps);
    std::vector<std::vector<size_t>> order(k);
    auto id = [&](size_t s, int t) { return s * kLocalSteps + static_cast<size_t>(t); };
    for (size_t s = 0; s < k; ++s)
      for (int t = 0; t < kLocalSteps; ++t) {
        SimOp& op = ops[id(s, t)];
        // Stage 0 receives from the loader; every stage but the last sends on.
        op.work = withQueue(profile.localStep[s], 1 + (s + 1 < k ? 1 : 0));
        op.cold = cold(profile.localStepCold, s);
        op.handoff = s > 0;
        if (s > 0) op.after.push_back(id(s - 1, t));
        if (s + 1 < k && t - queueCapacity - 1 >= 0)
          op.after.push_back(id(s + 1, t - queueCapacity - 1));
        order[s].push_back(id(s, t));
      }
    const double p = meanPeriod(
        ops, order, kLocalSteps, [&](int t) { return id(k - 1, t); }, e.localThreads);
    if (p > 0) e.localSamplesPerSec = batch / p;
  }

  // Pipeline: per stage and step, M forwards, M backwards (in the schedule's order), the update.
  {
    const int m = std::max(1, profile.microBatches);
    const size_t perStep = static_cast<size_t>(2 * m + 1);
    std::vector<SimOp> ops(k * kPipelineSteps * perStep);
    std::vector<std::vector<size_t>> order(k);
    auto fwd = [&](size_t s, int t, int i) {
      return (s * kPipelineSteps + static_cast<size_t>(t)) * perStep + static_cast<size_t>(i);
    };
    auto bwd = [&](size_t s, int t, int i) { return fwd(s, t, m + i); };
    auto upd = [&](size_t s, int t) { return fwd(s, t, 2 * m); };
    double busy = 0;
    for (size_t s = 0; s < k; ++s) {
      const double f = profile.pipelineForward[s];
      const double b = std::max(0.0, profile.pipelineMicro[s] - f);
      busy += m * profile.pipelineMicro[s] + profile.pipelineUpdate[s];
      const int warm = oneFOneB ? std::min(static_cast<int>(k) - 1 - static_cast<int>(s), m) : m;
      for (int t = 0; t < kPipelineSteps; ++t) {
        for (int i = 0; i < m; ++i) {
          // Queue operations: a forward receives its micro-batch (stage 0 the loader's batch,
          // once a step) and sends it on; a backward receives the gradient of its output and
          // sends the one of its input, except at the ends.
          SimOp& F = ops[fwd(s, t, i)];
          F.work = withQueue(f, (s > 0 || i == 0 ? 1 : 0) + (s + 1 < k ? 1 : 0));
          F.cold = cold(profile.pipelineForwardCold, s);
          if (s > 0) F.after.push_back(fwd(s - 1, t, i)), F.handoff = true;
          SimOp& B = ops[bwd(s, t, i)];
          B.work = withQueue(b, (s + 1 < k ? 1 : 0) + (s > 0 ? 1 : 0));
          B.cold = cold(profile.pipelineBackwardCold, s);
          if (s + 1 < k) B.after.push_back(bwd(s + 1, t, i)), B.handoff = true;
        }
        ops[upd(s, t)].work = profile.pipelineUpdate[s];
        ops[upd(s, t)].cold = cold(profile.pipelineUpdateCold, s);
        ops[upd(s, t)].coldSince = fwd(s, t, 0);  // the step's first operation in either order
        for (int i = 0; i < warm; ++i) order[s].push_back(fwd(s, t, i));
        for (int i = 0; i < m - warm; ++i) {
          order[s].push_back(fwd(s, t, warm + i));
          order[s].push_back(bwd(s, t, i));
        }
        for (int i = m - warm; i < m; ++i) order[s].push_back(bwd(s, t, i));
        order[s].push_back(upd(s, t));
      }
    }
    const double p = meanPeriod(
        ops, order, kPipelineSteps, [&](int t) { return upd(0, t); }, e.pipelineThreads);
    if (p > 0) {
      e.pipelineSamplesPerSec = batch / p;
      e.bubbleFraction = std::max(0.0, 1.0 - busy / static_cast<double>(k) / p);
    }
  }

  // Backprop's one thread receives the loader's batch.
  if (profile.backpropStep > 0)
    e.backpropSamplesPerSec = batch / withQueue(profile.backpropStep, 1);
  if (e.backpropSamplesPerSec > 0) {
    e.localSpeedup = e.localSamplesPerSec / e.backpropSamplesPerSec;
    e.pipelineSpeedup = e.pipelineSamplesPerSec / e.backpropSamplesPerSec;
  }
  return e;
}

}  // namespace stagewise::engine
