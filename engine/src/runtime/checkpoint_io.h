#pragma once
// Writing and reading checkpoint folders: state.json plus one archive per stage (weights,
// batch-norm statistics, optimizer state). Call only while no stage thread is computing.

#include <memory>
#include <vector>

#include "runtime/run_context.h"

namespace stagewise::engine {

/// What a checkpoint records about the whole run (not a stage), so that a resumed run's
/// figures continue from it (docs/metrics.md, "What continues across a resume").
struct RunTotals {
  double elapsedS = 0;  ///< training time (pauses excluded) at the checkpoint
  /// samples/s's measurement: the last stage's samples after each warm-up and the training
  /// time they took.
  int64_t measuredSamples = 0;
  double measuredS = 0;
  /// Loading: false when the checkpoint predates these totals and the stages' step counts
  /// (the resumed run's figures then cover the resumed part only).
  bool complete = false;
};

/// Saves every stage at `step` into `<dir>/step-<step>` (written to a temporary folder, then
/// renamed, so a crash never leaves a half checkpoint). Returns the folder.
/// Writes into `step-N.partial/` and renames it `step-N/` once complete; on any failure the
/// partial folder is removed and the error thrown. `injectFailure` fails it after the stage files
/// are written (the debug.fail_checkpoint hook), as a full disk would.
std::string saveCheckpoint(const std::string& dir, int64_t step, int64_t totalSteps,
                           const std::string& specJson,
                           const std::vector<std::unique_ptr<StageRuntime>>& stages,
                           bool injectFailure = false, const RunTotals& totals = {});

/// Restores the stages from a checkpoint folder written for the same spec; returns its step.
/// The stages' counters continue from the checkpoint's; `totals` (optional) receives the run's.
/// Throws std::runtime_error naming the folder when it does not fit the model.
int64_t loadCheckpoint(const std::string& folder,
                       const std::vector<std::unique_ptr<StageRuntime>>& stages,
                       RunTotals* totals = nullptr);

}  // namespace stagewise::engine
