#pragma once
// Edits of an experiment spec as pure functions, so the canvas, the inspector and undo all
// agree on what "cut here" or "move this boundary" does to the spec (and tests can check it).
// Cuts are layer indices where stages 2..K begin; gap i lies between layers i-1 and i.

#include <optional>
#include <vector>

#include "stagewise/engine/model_plan.h"
#include "stagewise/engine/spec.h"

namespace stagewise::ui {

/// Cuts a stage at gap `gap`, or joins the two stages meeting there if it is already a cut.
/// Per-stage settings follow: a split stage's settings go to both halves; joining keeps the
/// upper stage's settings.
engine::ExperimentSpec toggleCut(const engine::ExperimentSpec& spec, int gap);

/// Moves cut number `cutIndex` (0-based) to `gap`; the gap is clamped so no stage gets empty.
engine::ExperimentSpec moveCut(const engine::ExperimentSpec& spec, int cutIndex, int gap,
                               int numLayers);

/// The range of gaps cut `cutIndex` may move to without emptying a stage.
std::pair<int, int> cutRange(const std::vector<int>& cuts, int cutIndex, int numLayers);

/// Replaces all cuts; per-stage settings are kept for stages that still exist, new stages take
/// the defaults.
engine::ExperimentSpec withCuts(const engine::ExperimentSpec& spec, const std::vector<int>& cuts);

/// Sets stage `stage`'s settings, stored as overrides of stage_defaults (only what differs).
engine::ExperimentSpec withStageSettings(const engine::ExperimentSpec& spec, int stage,
                                         const engine::StageSettings& settings);

/// A spec the designer can edit: balance=flops is resolved to explicit cuts (needs the plan).
engine::ExperimentSpec resolvedForDesign(const engine::ExperimentSpec& spec,
                                         const engine::ModelPlan& plan);

/// Parses "0,1,4-6" into core indices; nullopt if malformed. Empty text: no pinning.
std::optional<std::vector<int>> parseCoreList(const std::string& text);
std::string formatCoreList(const std::vector<int>& cores);

}  // namespace stagewise::ui
