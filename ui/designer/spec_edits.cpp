#include "designer/spec_edits.h"

#include <algorithm>
#include <sstream>

#include "stagewise/engine/partition.h"

namespace stagewise::ui {

using engine::ExperimentSpec;
using engine::StageOverride;

namespace {

// The per-stage overrides as a list with exactly one entry per stage.
std::vector<StageOverride> overridesFor(const ExperimentSpec& spec) {
  std::vector<StageOverride> out = spec.stages;
  out.resize(static_cast<size_t>(std::max(1, spec.stageCount())));
  return out;
}

bool isEmpty(const StageOverride& o) {
  return !o.device && !o.auxHead && !o.auxHidden && !o.threads && !o.cores && !o.lrScale &&
         !o.delayMs && !o.rank;
}

// Keeps the JSON clean: no `stages` list when no stage overrides anything.
void compact(ExperimentSpec& spec) {
  if (std::all_of(spec.stages.begin(), spec.stages.end(), isEmpty)) spec.stages.clear();
}

}  // namespace

ExperimentSpec toggleCut(const ExperimentSpec& spec, int gap) {
  ExperimentSpec out = spec;
  out.partition.balance = "manual";
  auto& cuts = out.partition.cuts;
  std::vector<StageOverride> stages = overridesFor(spec);
  auto it = std::find(cuts.begin(), cuts.end(), gap);
  if (it != cuts.end()) {
    // Joining at cut j merges stage j+1 into stage j.
    const auto j = static_cast<size_t>(it - cuts.begin());
    cuts.erase(it);
    if (j + 1 < stages.size()) stages.erase(stages.begin() + static_cast<std::ptrdiff_t>(j + 1));
  } else {
    auto pos = std::lower_bound(cuts.begin(), cuts.end(), gap);
    const auto stage = static_cast<size_t>(pos - cuts.begin());
    cuts.insert(pos, gap);
    const StageOverride copy = stage < stages.size() ? stages[stage] : StageOverride{};
    stages.insert(stages.begin() + static_cast<std::ptrdiff_t>(std::min(stage + 1, stages.size())),
                  copy);
  }
  out.stages = std::move(stages);
  compact(out);
  return out;
}

std::pair<int, int> cutRange(const std::vector<int>& cuts, int cutIndex, int numLayers) {
  const auto i = static_cast<size_t>(cutIndex);
  const int lo = cutIndex > 0 ? cuts[i - 1] + 1 : 1;
  const int hi = i + 1 < cuts.size() ? cuts[i + 1] - 1 : numLayers - 1;
  return {lo, hi};
}

ExperimentSpec moveCut(const ExperimentSpec& spec, int cutIndex, int gap, int numLayers) {
  ExperimentSpec out = spec;
  if (cutIndex < 0 || cutIndex >= static_cast<int>(out.partition.cuts.size())) return out;
  const auto [lo, hi] = cutRange(out.partition.cuts, cutIndex, numLayers);
  if (lo > hi) return out;
  out.partition.balance = "manual";
  out.partition.cuts[static_cast<size_t>(cutIndex)] = std::clamp(gap, lo, hi);
  return out;
}

ExperimentSpec withCuts(const ExperimentSpec& spec, const std::vector<int>& cuts) {
  ExperimentSpec out = spec;
  out.partition.balance = "manual";
  out.partition.cuts = cuts;
  if (!out.stages.empty()) out.stages.resize(cuts.size() + 1);
  compact(out);
  return out;
}

ExperimentSpec withStageSettings(const ExperimentSpec& spec, int stage,
                                 const engine::StageSettings& s) {
  ExperimentSpec out = spec;
  std::vector<StageOverride> stages = overridesFor(spec);
  if (stage < 0 || stage >= static_cast<int>(stages.size())) return out;
  const auto& d = spec.stageDefaults;
  StageOverride o;
  if (s.device != d.device) o.device = s.device;
  if (s.auxHead != d.auxHead) o.auxHead = s.auxHead;
  if (s.auxHidden != d.auxHidden) o.auxHidden = s.auxHidden;
  if (s.threads != d.threads) o.threads = s.threads;
  if (s.cores != d.cores) o.cores = s.cores;
  if (s.lrScale != d.lrScale) o.lrScale = s.lrScale;
  if (s.delayMs != d.delayMs) o.delayMs = s.delayMs;
  if (s.rank != d.rank) o.rank = s.rank;
  stages[static_cast<size_t>(stage)] = o;
  out.stages = std::move(stages);
  compact(out);
  return out;
}

ExperimentSpec resolvedForDesign(const ExperimentSpec& spec, const engine::ModelPlan& plan) {
  if (spec.partition.balance != "flops") return spec;
  const int n = static_cast<int>(plan.layers.size());
  if (spec.partition.numStages < 1 || spec.partition.numStages > n) return spec;
  ExperimentSpec out = spec;
  out.partition.cuts = engine::balanceCuts(engine::flopCosts(plan), spec.partition.numStages);
  out.partition.balance = "manual";
  out.partition.numStages = 0;
  return out;
}

std::optional<std::vector<int>> parseCoreList(const std::string& text) {
  std::vector<int> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    item.erase(std::remove_if(item.begin(), item.end(), ::isspace), item.end());
    if (item.empty()) continue;
    const auto dash = item.find('-');
    try {
      size_t used = 0;
      if (dash == std::string::npos) {
        out.push_back(std::stoi(item, &used));
        if (used != item.size()) return std::nullopt;
      } else {
        const int a = std::stoi(item.substr(0, dash), &used);
        if (used != dash) return std::nullopt;
        const std::string rest = item.substr(dash + 1);
        const int b = std::stoi(rest, &used);
        if (used != rest.size() || b < a || b - a > 4096) return std::nullopt;
        for (int c = a; c <= b; ++c) out.push_back(c);
      }
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  for (int c : out)
    if (c < 0) return std::nullopt;
  return out;
}

std::string formatCoreList(const std::vector<int>& cores) {
  std::string out;
  for (size_t i = 0; i < cores.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(cores[i]);
  }
  return out;
}

}  // namespace stagewise::ui
