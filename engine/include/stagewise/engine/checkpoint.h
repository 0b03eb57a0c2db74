#pragma once
// Checkpoint folders, read without LibTorch: what a checkpoint holds and where they go.

#include <cstdint>
#include <string>

#include "stagewise/engine/spec.h"

namespace stagewise::engine {

/// What `<dir>/step-N/state.json` says about a checkpoint.
struct CheckpointInfo {
  std::string path;  ///< the step-N folder
  int64_t step = 0;  ///< steps every stage had finished
  int64_t totalSteps = 0;
  double elapsedS = 0;  ///< the run's training time when it was taken (0 for older checkpoints)
  int stages = 0;
  std::string specJson;  ///< the resolved spec of the run
  ExperimentSpec spec;
};

/// Reads a checkpoint folder (or the newest step-N inside a checkpoint dir). Throws
/// std::runtime_error naming the folder and what is wrong.
CheckpointInfo readCheckpointInfo(const std::string& path);

/// `$XDG_DATA_HOME/stagewise/checkpoints/<name>-<local time>` (or under ~/.local/share).
std::string defaultCheckpointDir(const std::string& runName);

}  // namespace stagewise::engine
