#pragma once
#include <torch/torch.h>  // free here: the engine precompiles it
// This process's part in a run spread over several processes: joins the rendezvous, swaps the
// channels that cross a process boundary for c10d ones, and carries the rank's side of the
// protocol. Rank 0 takes in the other ranks' report batches (into its Reporter), parameter
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
#include "stagewise/engine/engine.h"
#include "stagewise/engine/observer_fanout.h"

namespace stagewise::engine::dist {

class FeedForwarder;

class DistributedRun {
 public:
  /// Joins the run (blocks until every rank is there; throws with what to fix). `stages` holds
  /// every stage of the model, built on every rank from the same seed.
  DistributedRun(const RunOptions& options, const ExperimentSpec& spec, const ModelPlan& plan, RunContext& ctx,
                 Reporter& reporter, ObserverFanout& fanout, std::vector<std::unique_ptr<StageRuntime>>& stages,
                 SnapshotCoordinator* snapshots);
  ~DistributedRun();

  int rank() const { return m_rank; }
  int world() const { return m_group->world(); }
  int rankOf(size_t stage) const { return m_stageRank[stage]; }
  bool owns(size_t stage) const { return m_stageRank[stage] == m_rank; }
  bool ownsLast() const { return owns(m_stageRank.size() - 1); }

  /// When the run starts: a common start, the monitor, rank 0's receiving threads.
  void start();
  /// Asks every rank to stop.
  void requestStop();
  /// Rank 0, once its own stages are done: the other ranks' reports, last batches and weights.
  void gather();
  /// Other ranks, at the end: report to rank 0, send the final weights, wait until it has them.
  void handOver(const RunSummary& summary);
  /// Rank 0, at the very end: the whole run is in; every rank may go.
  void end();
  /// Ends the threads (idempotent).
  void shutdown();

  double remoteSamplesPerSec() const { return m_remoteSps.load(); }
  /// Rank 0: the report of `rank` (after gather), if it came.
  const RankReport* report(int rank) const;
  bool stateReceived(size_t stage) const { return m_stateReceived.count(stage) > 0; }
  /// Bytes the c10d channel feeding `channel` put on the wire; -1 if this rank does not send it.
  int64_t payloadSent(size_t channel) const;

 private:
  void sendSnapshot(int stage, int64_t step, const std::vector<torch::Tensor>& body, const std::vector<torch::Tensor>& aux);
  void receiveSnapshots(int stage);
  void feedLoop();

  const ExperimentSpec& m_spec;
  const ModelPlan& m_plan;
  RunContext& m_ctx;
  Reporter& m_reporter;
  ObserverFanout& m_fanout;
  std::vector<std::unique_ptr<StageRuntime>>& m_stages;
  SnapshotCoordinator* m_snapshots;

  std::shared_ptr<DistGroup> m_group;
  std::unique_ptr<FeedForwarder> m_forwarder;
  int m_rank = 0;
  std::vector<int> m_stageRank;
  std::vector<C10dSendChannel*> m_sendChannels;  ///< [k]: channel k when this rank sends it
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
