#pragma once
// One training run in this process, as `stagewise-cli train` makes it: the engine run, its
// progress line, its record in the store, and a clean stop on Ctrl+C / SIGTERM. `train`,
// `runs resume` and `study run|resume` all go through here, so a study's run is the run `train`
// would make for the same resolved spec.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "progress_line.h"
#include "stagewise/engine/engine.h"
#include "stagewise/engine/metrics.h"

namespace stagewise::storage {
class RunStore;
}

namespace stagewise::cli {

/// Installs the SIGINT / SIGTERM handlers that ask the current run to stop.
void installStopSignals();
/// The signal that asked to stop (0: none yet).
int stopSignal();

struct TrainOutcome {
  engine::RunSummary summary;
  std::optional<int64_t> runId;                ///< the record, when recorded
  std::string storeError;                      ///< not everything could be recorded
  std::vector<engine::RunChange> changes;      ///< the changes applied while it trained
  std::optional<engine::SampleResult> sample;  ///< TrainHooks::sample's text, or why none
};

/// More for a run than `train` gives it: who else watches, and when to stop it.
struct TrainHooks {
  /// Called (on this thread) as soon as the run's record exists.
  std::function<void(int64_t)> onRecorded;
  /// Sees the run's reports too (a study's pruner).
  engine::RunObserver* observer = nullptr;
  /// Polled while the run trains: true stops it (kept as `stopped`).
  std::function<bool()> stopWhen;
  /// Called with the run once it exists, before it starts (to stop it from an observer).
  std::function<void(engine::Run&)> onCreated;
  /// Text to generate at the run's final weights once it ends (`train --sample`).
  std::optional<engine::SampleRequest> sample;
};

/// Trains `spec` with `options`, recording into `store` when given (continuing record
/// `resumeRunId` when set). Blocks until the run ends; a stop signal stops it cleanly.
TrainOutcome trainInProcess(const engine::ExperimentSpec& spec, const engine::RunOptions& options,
                            storage::RunStore* store, std::optional<int64_t> resumeRunId,
                            ProgressPrinter& printer, const TrainHooks& hooks = {});

}  // namespace stagewise::cli
