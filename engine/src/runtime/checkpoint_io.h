#pragma once
// Writing and reading checkpoint folders: state.json plus one archive per stage (weights,
// batch-norm statistics, optimizer state). Call only while no stage thread is computing.

#include <memory>
#include <vector>

#include "runtime/run_context.h"

namespace stagewise::engine {

/// Saves every stage at `step` into `<dir>/step-<step>` (written to a temporary folder, then
/// renamed, so a crash never leaves a half checkpoint). Returns the folder.
/// Writes into `step-N.partial/` and renames it `step-N/` once complete; on any failure the
/// partial folder is removed and the error thrown. `injectFailure` fails it after the stage files
/// are written (the debug.fail_checkpoint hook), as a full disk would. `elapsedS`: the run's
/// training time at the checkpoint, where a resumed run's clock continues.
std::string saveCheckpoint(const std::string& dir, int64_t step, int64_t totalSteps,
                           const std::string& specJson,
                           const std::vector<std::unique_ptr<StageRuntime>>& stages,
                           bool injectFailure = false, double elapsedS = 0);

/// Restores the stages from a checkpoint folder written for the same spec; returns its step.
/// Throws std::runtime_error naming the folder when it does not fit the model.
int64_t loadCheckpoint(const std::string& folder,
                       const std::vector<std::unique_ptr<StageRuntime>>& stages);

}  // namespace stagewise::engine
