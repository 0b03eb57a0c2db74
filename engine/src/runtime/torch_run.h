#pragma once
#include <torch/torch.h>  // free here: the engine precompiles it
// TorchRun, the LibTorch Run: private to the engine's runtime. Its parts live in
//   run_impl.cpp      lifecycle and threads: construction, start/pause/stop, the supervisor and
//                     each segment's loader and stage threads;
//   run_setup.cpp     building the stages and the run's checks, run info, checkpoints;
//   run_steering.cpp  live and scheduled changes: stage settings and re-partitions;
//   run_measure.cpp   the analysis thread's probe and evaluations, the final summary.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "data/tensor_data.h"
#include "runtime/checkpoint_io.h"
#include "runtime/measure_budget.h"
#include "runtime/memory_meter.h"
#include "runtime/method.h"
#include "runtime/run_context.h"
#include "runtime/snapshot.h"
#include "runtime/topology.h"
#include "stagewise/engine/engine.h"
#include "stagewise/engine/machine_load.h"
#include "stagewise/engine/observer_fanout.h"

namespace stagewise::engine {

/// Runs a scope with a fixed intra-op thread count on the calling thread, then restores it. The
/// dataset's normalisation reduces over the whole set, and a parallel reduction's result depends
/// on how many threads split it: without this, a run built on a thread that had inherited another
/// count (LibTorch's per-thread lazy init copies the last count any thread set) trained on
/// slightly different data than a fresh process.
class FixedIntraOpThreads {
 public:
  explicit FixedIntraOpThreads(int n) : m_saved(at::get_num_threads()) { at::set_num_threads(n); }
  ~FixedIntraOpThreads() { at::set_num_threads(m_saved); }
  FixedIntraOpThreads(const FixedIntraOpThreads&) = delete;
  FixedIntraOpThreads& operator=(const FixedIntraOpThreads&) = delete;

 private:
  int m_saved;
};

/// The LibTorch Run that createRun makes: the stages of the partition trained by the spec's
/// method, in segments between re-partitions, watched from a supervisor thread.
class TorchRun final : public Run {
 public:
  /// The modules an analysis thread measures with: copies of the stages' modules, laid out as
  /// the partition was when the thread started. A re-partition gives the next thread a new set,
  /// while the last one finishes its queue on its own (docs/architecture.md, "Live re-partition").
  struct ShadowSet {
    std::vector<StageModules> stages;
    std::vector<bool> isLast;
    std::vector<int> firstLayer;  ///< each stage's first layer, for the per-layer points
  };

  TorchRun(const ExperimentSpec& spec, RunObserver* observer, const RunOptions& options);

  /// A model too large for the memory this process may use is refused before LibTorch tries
  /// to allocate it (docs/reliability.md). STAGEWISE_MEMORY_CHECK=0 skips the check.
  void checkMemory() const;

  ~TorchRun() override;

  void start() override;
  void pause() override;
  void resume() override;
  void requestStop() override;
  RunSummary wait() override;
  bool waitFor(std::chrono::milliseconds timeout) override;
  RunState state() const override { return m_ctx.control.state(); }
  ChangeResult repartition(const std::vector<int>& cuts) override;

  ChangeResult changeStage(int stage, const std::string& key, double value) override;

  ChangeResult pauseStage(int stage, bool paused) override;

  SampleResult sample(const SampleRequest& request) override;

  std::vector<RunChange> changes() const override;

  Progress progress() const override;

 private:
  /// Why this run cannot move its cuts at all (empty: it can).
  std::string cannotRepartition() const;
  /// Why the run takes no more changes (empty: it does).
  std::string ended() const;

  /// options.changes: checked now (re-partitions need a run that can make them, and valid cuts),
  /// kept in step order; those before a resumed run's start happened before its checkpoint.
  void scheduleChanges(const std::vector<RunChange>& changes);

  /// A stage applied a setting before its step `step`: the event and the history.
  void recordSetting(int k, int64_t step, const std::string& setting, double value);

  /// Between two segments (no loader or stage thread runs, every stage has finished `step`
  /// steps): applies what is due at `step` (stage settings first, then a re-partition), hands
  /// the next segment's setting changes to the stages and tells the loader where to stop.
  /// `drainFromS`: when the loader stopped for a re-partition (-1: the run's start).
  void beginSegment(int64_t step, double drainFromS);

  /// A setting applied between segments (no stage thread runs).
  void applyNow(int k, int64_t step, const std::string& setting, double value);

  /// The seed of a fresh aux head at the boundary before layer `cut`: the boundary's layer, not
  /// the stage's index, so the same history gives the same head whatever the stages were.
  uint64_t auxSeedAtCut(int cut) const;

  /// The spec the run trains now: the current cuts, and each stage's settings as overrides.
  ExperimentSpec currentSpec() const;

  /// Moves the cuts to `cuts` at `step`, every stage idle (beginSegment), and reports it.
  void moveCuts(const std::vector<int>& cuts, int64_t step, double drainFromS);

  /// A new snapshot coordinator for `stages` stages. The old one, closed, stays alive while the
  /// analysis thread that reads it finishes (m_retired).
  void renewSnapshots(int stages);

  /// Regroups the layers into the stages of `cuts`: the same modules (weights) and their
  /// optimizer state (Adam's moments and step counts) move to the stage that now holds them;
  /// a boundary that existed keeps its aux head (and its state), a new one gets a fresh head
  /// seeded by auxSeedAtCut. Settings: those of the stage each new stage's first layer came
  /// from, or `settingsFrom`'s (resuming a checkpoint). Channels, the progress counters and the
  /// snapshot coordinator are rebuilt for the new stage count; meters and byte counters stay
  /// with their stage index. No stage thread, loader or analysis thread may run.
  void rebuild(const std::vector<int>& cuts, int64_t step, const ExperimentSpec* settingsFrom,
               std::vector<int>& freshHeads, std::vector<int>& keptHeads);

  double samplesPerSec(double now) const;

  void buildStages();

  /// model.norm batchnorm: LibTorch cannot train batch norm on one row, so a batch (or a
  /// pipeline micro-batch) of one row is refused before the run starts, naming what to change.
  /// validateSpec checks the full batches; the last batch of an epoch needs the dataset's size.
  void checkBatchNormRows() const;

  RunInfo runInfo() const;

  static void loadShadowFrom(ShadowSet& shadow, const Snapshot& snap);

  void loadShadowFromLive();

  /// `t`: when the last stage finished `step` (the points' time, not when they were measured).
  /// The final measurement (`summary` given) evaluates on the whole test set (and validation
  /// set, when dataset.validation holds one out). Returns the CPU
  /// seconds the probe and the evaluation took on this thread.
  std::pair<double, double> measure(ShadowSet& shadow, int64_t step, double t, bool probe,
                                    bool eval, RunSummary* summary);

  /// The analysis thread of one segment: measures the snapshots of `snapshots` on `shadow`
  /// (both laid out as the segment's partition) until the coordinator is closed and empty.
  void analyse(ShadowSet& shadow, SnapshotCoordinator& snapshots);

  void resumeFrom(const std::string& path);

  void saveAt(int64_t step);
  /// The run's totals a checkpoint taken now records (checkpoint_io.h).
  RunTotals runTotals() const;

  void supervise();

  bool segmentAligned(int64_t step) const;

  /// One segment: the loader and stage threads from m_ctx.segmentStart until the loader stops
  /// (the end, a stop or a re-partition), reporting the run-level series meanwhile. Returns the
  /// step the loader stopped at for a re-partition, or -1.
  int64_t trainSegment(double& lastCpu, double& lastT);

  /// The measurement budget's account in the summary, and a warning when its kept points alone
  /// cost more than the budget (which knobs make them cheaper).
  void summariseMeasuring(RunSummary& s);
  static std::string percent(double share);

  /// Which file a torchscript run trained, whatever its name: its path and SHA-256.
  std::string modelFileText() const;

  /// A torchscript run keeps its trained weights, for `runs export-model`: a checkpoint at its
  /// last step (in checkpoint.dir, else the default folder), unless one is there already. In
  /// one process only: the stages' weights must all be here.
  void saveFinalWeights(int64_t step);

  int64_t snapshotsDropped() const { return m_droppedBefore + m_snapshots->dropped(); }
  int64_t snapshotsDiscarded() const { return m_discardedBefore + m_snapshots->discarded(); }
  bool changed() const;

  int rank() const { return m_topology->rank(); }
  bool owns(size_t stage) const { return m_topology->owns(stage); }
  bool ownsLast() const { return m_topology->ownsLast(); }

  void finish(double cpu0);

  /// The allocator slots of this run's stages: declared first, so released last, after every
  /// tensor of the run is freed.
  struct MemorySlots {
    int first = -1, count = 0;
    ~MemorySlots() { memory::release(first, count); }
  } m_memory;
  ExperimentSpec m_spec;
  ObserverFanout m_fanout;
  std::unique_ptr<Method> m_method;      ///< what differs between local, backprop and pipeline
  std::unique_ptr<Topology> m_topology;  ///< where the stages run: here, or over c10d
  Reporter m_reporter;
  RunContext m_ctx;
  EngineInfo m_info;
  TensorData m_data;
  ModelPlan m_plan;
  PartitionPlan m_partition;
  std::vector<std::unique_ptr<StageRuntime>> m_stages;
  std::shared_ptr<ShadowSet> m_shadow = std::make_shared<ShadowSet>();
  std::unique_ptr<MeasureBudget> m_budget;  ///< before the coordinator, which refers to it
  std::unique_ptr<SnapshotCoordinator> m_snapshots;
  LoadMeter m_loadMeter;  ///< the machine's load at the start and end (summary load_start/end)
  MachineLoad m_loadStart;
  static constexpr double kDrainTimeoutS = 5.0;
  std::string m_checkpointDir;
  std::string m_resumedFrom;
  /// The checkpoint resumed from predates the whole-run totals: the figures cover the resumed
  /// part (said at the start).
  bool m_resumedPartly = false;
  int64_t m_lastCheckpoint = -1;  ///< the step of the last checkpoint saved
  bool m_distributed = false;     ///< stages in several processes
  std::atomic<double> m_drainSince{-1.0};
  std::atomic<bool> m_drainFailed{false};
  std::atomic<bool> m_pipelineDone{false};
  std::mutex m_clockMutex;      ///< pause / resume against the clock's start
  bool m_clockStarted = false;  ///< m_ctx.start is set (under m_clockMutex)
  bool m_pauseEarly = false;    ///< a pause asked for before it (under m_clockMutex)
  torch::Tensor m_probeX, m_probeY, m_testX, m_testY, m_valX, m_valY;
  std::set<int64_t> m_forcedEvals;  ///< RunOptions::evalAtSteps, as steps (N - 1)
  SampleRequest m_sampleAtEvals;    ///< RunOptions::sampleAtEvaluations
  std::thread m_supervisor;
  mutable std::mutex m_mutex;
  std::condition_variable m_done;
  bool m_finished = false;
  RunSummary m_summary;

  // Steering (docs/architecture.md, "Live re-partition").
  std::vector<int> m_cuts;       ///< the cuts the stages have now
  ExperimentSpec m_currentSpec;  ///< m_spec with the current cuts and stage settings
  bool m_rebuilt = false;        ///< the stages were re-partitioned (checkpoints say how)
  std::mutex m_changeMutex;      ///< the requests below, and m_stages against a rebuild
  std::optional<std::vector<int>> m_liveCuts;  ///< a live re-partition asked for
  std::vector<RunChange> m_scheduled;          ///< RunOptions::changes not made yet, by step
  mutable std::mutex m_appliedMutex;
  std::vector<RunChange> m_applied;                    ///< under m_appliedMutex
  int64_t m_droppedBefore = 0, m_discardedBefore = 0;  ///< earlier segments' coordinators
  /// Earlier segments' coordinators, closed; alive while their analysis threads finish.
  std::vector<std::unique_ptr<SnapshotCoordinator>> m_retiredSnapshots;
};

}  // namespace stagewise::engine
