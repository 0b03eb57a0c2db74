#pragma once
#include <torch/torch.h>  // free here: the engine precompiles it
// The topology of a run spread over several processes: this process's part: joins the rendezvous,
// swaps the channels that cross a process boundary for c10d ones, and carries the rank's side of
// the protocol. Rank 0 takes in the other ranks' report batches (into its Reporter), parameter
// snapshots (into its SnapshotCoordinator), and at the end their reports and final weights, so
// it reports the whole run; the other ranks send them. See docs/distributed.md.

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "dist/c10d_channel.h"
#include "dist/dist_group.h"
#include "dist/wire.h"
#include "metrics/reporter.h"
#include "runtime/run_context.h"
#include "runtime/snapshot.h"
#include "runtime/topology.h"
#include "stagewise/engine/engine.h"
#include "stagewise/engine/observer_fanout.h"

namespace stagewise::engine::dist {

class FeedForwarder;

class C10dTopology final : public Topology {
 public:
  /// Joins the run (blocks until every rank is there; throws with what to fix). `stages` holds
  /// every stage of the model, built on every rank from the same seed. Swaps the run's channels
  /// that cross a process boundary (ctx.channels, and ctx.gradChannels in pipeline mode) for
  /// c10d ones.
  C10dTopology(const RunOptions& options, const ModelPlan& plan, RunContext& ctx,
               ObserverFanout& fanout, std::vector<std::unique_ptr<StageRuntime>>& stages);
  ~C10dTopology() override;

  int rank() const override { return m_rank; }
  int world() const override { return m_group->world(); }
  bool owns(size_t stage) const override { return m_stageRank[stage] == m_rank; }
  bool ownsLast() const override { return owns(m_stageRank.size() - 1); }

  /// A common start, the monitor, rank 0's receiving threads.
  void start() override;
  void requestStop() override;
  double remoteSamplesPerSec() const override { return m_remoteSps.load(); }
  /// Rank 0, once its own stages are done: the other ranks' reports, last batches and weights.
  void collect() override;
  std::optional<StageSummary> remoteStage(size_t stage) const override;
  bool finalWeightsArrived(size_t stage) const override { return m_stateReceived.count(stage) > 0; }
  std::optional<LastStageCounters> remoteLastStage() const override;
  int64_t wireBytes(size_t channel, bool gradients) const override;
  void postRemoteTimes(BubbleBoard& board) const override;
  void mergeOutcome(RunSummary& summary, std::atomic<bool>& userStop) const override;
  /// Other ranks: report to rank 0, send the final weights, wait until it has them. Rank 0: the
  /// whole run is in, every rank may go. Then shutdown().
  void conclude(const RunSummary& summary) override;
  void shutdown() override;

 private:
  int rankOf(size_t stage) const { return m_stageRank[stage]; }
  const RankReport* report(int rank) const;
  void handOver(const RunSummary& summary);
  void end();
  void sendSnapshot(int stage, int64_t step, const std::vector<torch::Tensor>& body,
                    const std::vector<torch::Tensor>& aux);
  void receiveSnapshots(int stage);
  void feedLoop();
  /// Rank 0: another rank's board entries into this run's board (its own stages only).
  void postRemote(BubbleBoard& board, const std::vector<BubbleBoard::Entry>& entries) const;
  /// Rank 0: the planned bubble of each remote stage whose measured bubble is in `points`, at
  /// the same step and time, from the board as it now stands (live bubble_planned).
  void addRemotePlanned(std::vector<MetricPoint>& points) const;

  RunContext& m_ctx;
  const ExperimentSpec& m_spec;  ///< m_ctx.spec
  Reporter& m_reporter;          ///< m_ctx.reporter
  std::vector<std::unique_ptr<StageRuntime>>& m_stages;

  std::shared_ptr<DistGroup> m_group;
  std::unique_ptr<FeedForwarder> m_forwarder;
  int m_rank = 0;
  std::vector<int> m_stageRank;
  std::vector<C10dSendChannel*> m_sendChannels;  ///< [k]: channel k when this rank sends it
  std::vector<C10dSendChannel*>
      m_gradSendChannels;  ///< [k]: gradients into stage k, when sent here
  std::vector<std::unique_ptr<InFlight>> m_transferSlots;  ///< per stage: snapshot transfers
  InFlight m_finalSendSlot, m_finalRecvSlot;
  std::atomic<bool> m_peerFault{false};
  std::unique_ptr<Monitor> m_monitor;
  std::thread m_feedThread;
  std::vector<int64_t> m_feedNext;
  std::mutex m_feedMutex;
  std::condition_variable m_feedCv, m_feedProgress;
  bool m_feedQuit = false;
  std::vector<std::thread> m_snapshotReceivers;
  std::vector<std::optional<RankReport>> m_reports;
  std::set<size_t> m_stateReceived;
  std::atomic<double> m_remoteSps{0};
};

}  // namespace stagewise::engine::dist
