#pragma once
// A torch-free engine that replays a scripted metric stream through the real Run/RunObserver API,
// so the store and the workbench can be built and tested without LibTorch.

#include <cstdint>
#include <memory>
#include <vector>

#include "stagewise/engine/run.h"
#include "stagewise/engine/spec.h"

namespace stagewise::engine {

struct FakeScript {
  int64_t steps = 200;         ///< steps of the last stage
  double stepSeconds = 0.002;  ///< simulated time per step (real sleep)
  int64_t failAtStep = -1;     ///< fail the run at this step (stage `failStage`)
  int failStage = 0;
  uint64_t seed = 1;
  /// As RunOptions::evalAtSteps: after these numbers of finished steps the fake evaluates
  /// whatever eval.interval says (points at step N - 1).
  std::vector<int64_t> evalAtSteps{};
  /// The machine's load the summary reports (unknown by default): tests of the load warnings.
  MachineLoad loadStart{};
  MachineLoad loadEnd{};
  /// As RunOptions::changes: changes made at given steps (a replayed history), reported with
  /// the engine's events.
  std::vector<RunChange> changes{};
  /// As RunOptions::sampleAtEvaluations: each evaluation reports a made-up sample event
  /// (sampleEventMessage) that starts with this prompt; empty: none.
  std::string samplePrompt{};
};

/// A run that emits plausible, deterministic per-stage losses, utilization, cosines, events and
/// a summary for the stages of `spec` (the model plan comes from a synthetic input shape when the
/// dataset cannot be read).
std::unique_ptr<Run> createFakeRun(const ExperimentSpec& spec, RunObserver* observer,
                                   const FakeScript& script = {});

}  // namespace stagewise::engine
