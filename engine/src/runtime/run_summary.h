#pragma once
#include <torch/torch.h>  // free here: the engine precompiles it
// The run's summary, built from what its stages measured and what the other processes
// reported: throughput, time, the stages' numbers, and the outcome (completed, stopped, failed).

#include <atomic>
#include <memory>
#include <vector>

#include "runtime/run_context.h"
#include "runtime/topology.h"

namespace stagewise::engine {

class SummaryBuilder {
 public:
  SummaryBuilder(const RunContext& ctx, const std::vector<std::unique_ptr<StageRuntime>>& stages,
                 const Topology& topology, int hardwareCores, std::string blas)
      : m_ctx(ctx),
        m_stages(stages),
        m_topology(topology),
        m_cores(hardwareCores),
        m_blas(std::move(blas)) {}

  /// `cpuSeconds`: the process's CPU time over the run; `samplesPerSec`: this process's count
  /// at the last stage (used when it runs the last stage). A stop another process saw sets
  /// `userStop`. The outcome is final; the test numbers are the final evaluation's to add.
  RunSummary build(double cpuSeconds, double samplesPerSec, std::atomic<bool>& userStop) const;

  /// Sum of a stage's body parameters (the summary's param_checksum).
  static double checksum(const StageRuntime& stage);

 private:
  StageSummary ownStage(size_t k) const;
  /// Per stage, the bubble the schedule plans from the run's own pass times (empty: no plan).
  std::vector<double> plannedBubbles() const;

  const RunContext& m_ctx;
  const std::vector<std::unique_ptr<StageRuntime>>& m_stages;
  const Topology& m_topology;
  int m_cores;
  std::string m_blas;
};

}  // namespace stagewise::engine
