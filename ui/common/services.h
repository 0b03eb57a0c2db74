#pragma once
// What the workbench is given from outside: how to create a run, which devices exist, and what
// the engine was built with. app/gui fills this from the LibTorch engine (or the fake engine);
// tests fill it with the fake engine. Keeping it injected is what lets `ui` link only
// stagewise_core and never include a LibTorch header.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "stagewise/engine/engine.h"
#include "stagewise/engine/metrics.h"
#include "stagewise/engine/partition.h"
#include "stagewise/engine/run.h"
#include "stagewise/engine/spec.h"

namespace stagewise::ui {

/// Creates (does not start) a run of a spec; may throw SpecError or std::runtime_error.
using RunFactory = std::function<std::unique_ptr<engine::Run>(const engine::ExperimentSpec&,
                                                              engine::RunObserver*)>;

/// Creates (does not start) a run that continues from a checkpoint folder (".../step-N"): the
/// engine restores weights, optimizer state and the data position. May throw.
using ResumeFactory = std::function<std::unique_ptr<engine::Run>(
    const engine::ExperimentSpec&, engine::RunObserver*, const std::string& checkpoint)>;

/// Creates (does not start) a run with options: evaluations forced after given step counts (a
/// search's rungs, so pruning sees each one) and, with `resumeFrom`, a checkpoint to continue.
/// May throw like RunFactory.
using OptionsRunFactory = std::function<std::unique_ptr<engine::Run>(
    const engine::ExperimentSpec&, engine::RunObserver*, const engine::RunOptions&)>;

/// Creates (does not start) a local-mode run whose stages are spread over `processes` local
/// processes (this one is rank 0 and reports the whole run). Blocks until every process has
/// joined; returns early, throwing, when `stopRequested()` turns true or a process ends before
/// joining. May throw SpecError (the spec cannot run distributed) or std::runtime_error.
using DistributedRunFactory = std::function<std::unique_ptr<engine::Run>(
    const engine::ExperimentSpec&, engine::RunObserver*, int processes,
    const std::function<bool()>& stopRequested)>;

/// Something the run store says while a run is recorded: it cannot write (disk full, locked by
/// another process: the points are held and retried), it can again, or points were lost.
struct StoreNotice {
  bool problem = true;  ///< false: a recovery (everything held was written)
  std::string message;
};
/// Told of store notices; called on the store's writer thread, must return quickly.
using StoreNoticeSink = std::function<void(const StoreNotice&)>;

/// What the recorder of one run is asked for.
struct RecordRequest {
  /// Continue this stored record (a run resumed from a checkpoint) instead of a new one.
  std::optional<int64_t> continueRunId;
  /// To be told of the store's notices while the run is recorded.
  StoreNoticeSink onNotice;
  /// Tags for the new record: the runs of one plan of several modes share one, so Runs shows
  /// them as one comparison.
  std::vector<std::string> tags;
  /// Told the record's id once it exists (on an engine thread; must return quickly).
  std::function<void(int64_t)> onRecorded;
  /// The rank of each stage when the run is spread over processes (engine::assignRanks), for
  /// the trace's process tracks; empty: one process.
  std::vector<int> stageRanks;
};

/// Creates an extra observer for one run (the recorder writing it into the store), or null.
using ObserverFactory = std::function<std::unique_ptr<engine::RunObserver>(RecordRequest request)>;

/// Measures each layer's cost (forward + backward seconds of one batch) for the spec's cuts and
/// devices. `progress(done, total)` returns false to cancel; may throw. Runs off the UI thread.
using LayerProfiler = std::function<std::vector<double>(
    const engine::ExperimentSpec&, const std::function<bool(int, int)>& progress)>;

/// Measures one batch's work per method (local, pipelined backprop, backprop) for the spec, the
/// calibration of engine::estimateMethods. Same contract as LayerProfiler.
using MethodProfiler = std::function<engine::MethodProfile(
    const engine::ExperimentSpec&, const std::function<bool(int, int)>& progress)>;

/// The engine as the UI sees it (a copy of engine::EngineInfo, which lives in a header the UI
/// library must not depend on).
struct EngineDescription {
  std::string torchVersion = "unknown";
  std::string blas = "unknown";
  std::string openmpWait = "unknown";  ///< how idle OpenMP workers wait (spin count, policy)
  std::string malloc = "unknown";      ///< glibc malloc's thresholds (tuned for training or not)
  bool cudaAvailable = false;
  std::vector<std::string> devices = {"cpu"};  ///< devices that exist: "cpu", "cuda:0", ...
  int hardwareCores = 1;
  bool fake = false;  ///< the fake engine: scripted numbers, no training
};

/// One entry of a device picker: devices that do not exist are shown greyed with the reason.
struct DeviceChoice {
  std::string id;
  bool available = true;
  std::string reason;  ///< why it is not available (empty when it is)
};

/// Everything the workbench needs from the engine side.
struct EngineServices {
  RunFactory createRun;
  ResumeFactory resumeRun;                     ///< optional: enables resuming from a checkpoint
  DistributedRunFactory createDistributedRun;  ///< optional: enables running in N processes
  /// Optional: a study's runs with forced evaluations (without it a search's rungs are measured
  /// only where eval.interval happens to fall, and pruning may see fewer of them).
  OptionsRunFactory createRunWithOptions;
  ObserverFactory createRecorder;              ///< optional
  LayerProfiler profileLayers;                 ///< optional: enables "balance by measured time"
  MethodProfiler profileMethods;               ///< optional: enables the estimate's samples/s
  EngineDescription engine;
};

/// The devices to offer: those that exist, plus cuda:0 greyed when CUDA is absent.
std::vector<DeviceChoice> deviceChoices(const EngineDescription& engine);

}  // namespace stagewise::ui
