#include <algorithm>
#include <numeric>

#include "stagewise/engine/partition.h"

namespace stagewise::engine {

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
  for (const auto& s : partition.stages) {
    double w = 3.0 * static_cast<double>(s.flops + s.auxFlops) * batch;
    work.push_back(w);
    double t = w / speedOf(std::min(s.settings.threads, cores), scaling);
    e.stageTime.push_back(t);
    slowest = std::max(slowest, t);
    threads += s.settings.threads;
    if (!s.isLast) {
      e.boundaryBytes.push_back(static_cast<int64_t>((s.outBytes + 8) * batchSize));
      int64_t bp = 2 * s.outBytes * batchSize;
      // labels travel once, straight to the last stage: count them at the last boundary
      if (s.index + 2 == static_cast<int>(partition.stages.size())) bp += 8 * batchSize;
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
  const double meanStage = e.stageTime.empty() ? 0 : std::accumulate(e.stageTime.begin(), e.stageTime.end(), 0.0) / e.stageTime.size();
  e.pipelineEfficiency = e.localTime > 0 ? std::min(1.0, meanStage / e.localTime) : 1.0;
  if (e.coresShared && e.localTime > 0)
    e.pipelineEfficiency = std::min(1.0, sharedBound / e.localTime);
  return e;
}

}  // namespace stagewise::engine
