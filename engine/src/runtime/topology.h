#pragma once
// Where a run's stages live: all in this process, or spread over processes joined by c10d. The
// run (TorchRun, torch_run.h) asks the topology, never the other way round: which stages this
// process runs, and what the other processes reported. In-process is the trivial implementation
// here; C10dTopology (dist/c10d_topology.h) is the real one. Modelled on flashlight's
// fl/distributed: one interface, an in-process implementation and a real one.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "stagewise/engine/metrics.h"

namespace stagewise::engine {

class BubbleBoard;

/// The last stage's throughput counters, as the process that ran it counted them.
struct LastStageCounters {
  int64_t steps = 0;
  int64_t samplesAfterWarmup = 0;
  double warmupEndS = -1, lastStepEndS = -1;
};

class Topology {
 public:
  virtual ~Topology() = default;

  virtual int rank() const = 0;
  virtual int world() const = 0;
  /// Whether this process runs stage `stage`.
  virtual bool owns(size_t stage) const = 0;
  virtual bool ownsLast() const = 0;

  /// The run's clock is about to start: every process starts together.
  virtual void start() = 0;
  /// Asks every process to stop.
  virtual void requestStop() = 0;
  /// Samples/s of the last stage when another process runs it (live), else 0.
  virtual double remoteSamplesPerSec() const = 0;

  /// Rank 0, once its own stages are done: the other processes' reports and final weights.
  virtual void collect() = 0;
  /// Rank 0: what the process that ran `stage` reported of it; nullopt if it is ours or absent.
  virtual std::optional<StageSummary> remoteStage(size_t stage) const = 0;
  /// Rank 0: whether the final weights of a stage run elsewhere arrived (then they checksum).
  virtual bool finalWeightsArrived(size_t stage) const = 0;
  /// Rank 0: the last stage's counters when another process ran it.
  virtual std::optional<LastStageCounters> remoteLastStage() const = 0;
  /// Bytes a boundary's transport put on the wire from this process (`gradients`: the backward
  /// direction), or -1 when it did not cross a process boundary here.
  virtual int64_t wireBytes(size_t channel, bool gradients) const = 0;
  /// Rank 0, after collect(): posts the final pass times (pipeline) or step seconds (local) that
  /// the other processes reported of their stages into `board`, so that it plans every stage.
  virtual void postRemoteTimes(BubbleBoard& board) const = 0;
  /// Rank 0: a failure or stop another process saw goes into the run's summary.
  virtual void mergeOutcome(RunSummary& summary, std::atomic<bool>& userStop) const = 0;
  /// At the very end, once this process's summary is final.
  virtual void conclude(const RunSummary& summary) = 0;
  /// Ends the topology's threads (idempotent).
  virtual void shutdown() = 0;
};

/// Every stage in this process.
class InProcessTopology final : public Topology {
 public:
  int rank() const override { return 0; }
  int world() const override { return 1; }
  bool owns(size_t) const override { return true; }
  bool ownsLast() const override { return true; }
  void start() override {}
  void requestStop() override {}
  double remoteSamplesPerSec() const override { return 0; }
  void collect() override {}
  std::optional<StageSummary> remoteStage(size_t) const override { return std::nullopt; }
  bool finalWeightsArrived(size_t) const override { return true; }
  std::optional<LastStageCounters> remoteLastStage() const override { return std::nullopt; }
  int64_t wireBytes(size_t, bool) const override { return -1; }
  void postRemoteTimes(BubbleBoard&) const override {}
  void mergeOutcome(RunSummary&, std::atomic<bool>&) const override {}
  void conclude(const RunSummary&) override {}
  void shutdown() override {}
};

}  // namespace stagewise::engine
