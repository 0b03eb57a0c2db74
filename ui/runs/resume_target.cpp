#include "runs/resume_target.h"

#include <stdexcept>

#include "stagewise/engine/checkpoint.h"

namespace stagewise::ui {

ResumeCheck checkResumable(storage::RunReader& reader, int64_t runId) {
  ResumeCheck out;
  const auto run = reader.run(runId);
  if (!run) {
    out.reason = "the run is no longer in the store";
    return out;
  }
  if (run->status == storage::RunStatus::Running) {
    out.reason = "the run is still training";
    return out;
  }
  if (run->status == storage::RunStatus::Completed) {
    out.reason = "the run completed: there is nothing left to train";
    return out;
  }
  for (const auto& c : reader.checkpoints(runId))
    if (!out.checkpoint || c.step > out.checkpoint->step) out.checkpoint = c;
  if (!out.checkpoint)
    out.reason =
        "the run has no checkpoint (train with checkpoints on: Design → Checkpoints, an "
        "interval or a folder)";
  return out;
}

ResumeTarget resumeTargetForRun(storage::RunReader& reader, int64_t runId) {
  const ResumeCheck check = checkResumable(reader, runId);
  if (!check.checkpoint)
    throw std::runtime_error("run #" + std::to_string(runId) +
                             " cannot be resumed: " + check.reason);
  const engine::CheckpointInfo info = engine::readCheckpointInfo(check.checkpoint->path);
  ResumeTarget target;
  target.checkpoint = info.path;
  target.step = info.step;
  target.spec = info.spec;
  target.runId = runId;
  const auto run = reader.run(runId);
  target.title = "run #" + std::to_string(runId) + " " + (run ? run->name : info.spec.name);
  return target;
}

ResumeTarget resumeTargetForCheckpoint(storage::RunReader* reader, const std::string& path) {
  const engine::CheckpointInfo info = engine::readCheckpointInfo(path);
  ResumeTarget target;
  target.checkpoint = info.path;
  target.step = info.step;
  target.spec = info.spec;
  target.title = info.spec.name;
  if (reader) {
    storage::RunFilter filter;
    filter.text = info.spec.name;
    for (const auto& run : reader->listRuns(filter)) {
      for (const auto& c : reader->checkpoints(run.id))
        if (c.path == info.path) target.runId = run.id;
      if (target.runId) {
        target.title = "run #" + std::to_string(run.id) + " " + run.name;
        break;
      }
    }
  }
  return target;
}

}  // namespace stagewise::ui
