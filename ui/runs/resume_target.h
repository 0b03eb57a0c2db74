#pragma once
// What continuing a run from a checkpoint needs, looked up on the store thread: the checkpoint
// folder, the spec it holds, and the stored run it belongs to (so the resumed run goes on in
// the same record, as `stagewise-cli runs resume` does).

#include <optional>
#include <string>

#include "stagewise/engine/spec.h"
#include "stagewise/storage/run_reader.h"

namespace stagewise::ui {

struct ResumeTarget {
  std::string checkpoint;        ///< the step-N folder
  int64_t step = 0;              ///< steps every stage had finished
  engine::ExperimentSpec spec;   ///< the checkpoint's own (resolved) spec
  std::optional<int64_t> runId;  ///< the stored run it continues, if found
  std::string title;             ///< "run #12 mlp-fmnist-4stage", for messages
};

/// Whether a stored run can be resumed, and from where: its newest checkpoint, or why not.
struct ResumeCheck {
  std::optional<storage::CheckpointRecord> checkpoint;
  std::string reason;  ///< why it cannot be resumed (empty when it can)
};
ResumeCheck checkResumable(storage::RunReader& reader, int64_t runId);

/// The newest checkpoint of run `runId`, read. Throws std::runtime_error saying why not.
ResumeTarget resumeTargetForRun(storage::RunReader& reader, int64_t runId);

/// A checkpoint folder (or a checkpoint dir: its newest step-N) and the stored run that wrote
/// it, if the store has it. Throws std::runtime_error for a folder that is not a checkpoint.
ResumeTarget resumeTargetForCheckpoint(storage::RunReader* reader, const std::string& path);

}  // namespace stagewise::ui
