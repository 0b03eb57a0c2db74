// A search's points: the vary grid, trials and tuned runs in the study's order, and the checks
// a search plan gets before anything runs.

#include <algorithm>
#include <set>

#include "stagewise/study/study.h"

namespace stagewise::study {

std::vector<std::vector<std::string>> varyGrid(const StudyPlan& plan) {
  if (plan.keys.empty()) return {{}};
  StudyPlan grid;
  grid.keys = plan.keys;
  grid.seeds = 1;
  std::vector<std::vector<std::string>> out;
  for (const GridPoint& p : expandGrid(grid)) out.push_back(p.values);
  return out;
}

void checkSearch(const StudyPlan& plan) {
  if (!plan.isSearch()) return;
  const SearchSpec& s = plan.search;
  if (s.trials < 1) throw StudyError("study.trials: a search needs at least 1 trial");
  const auto names = samplerNames();
  if (std::find(names.begin(), names.end(), s.sampler) == names.end())
    throw StudyError("study.sampler: '" + s.sampler + "' is not one of random, sobol, maxlipo");
  if (plan.seeds > 1)
    throw StudyError(
        "study.seeds: a search runs each trial once, on seed 1; give the seeds of the re-runs "
        "of each point's best trial as tune.seeds");
  if (plan.sample > 0) throw StudyError("study.sample: draws grid points; a search draws trials");
  std::set<std::string> seen;
  for (const auto& k : plan.keys) seen.insert(k.key);
  for (const auto& k : s.keys) {
    if (k.key == "train.seed" || k.key == "mode")
      throw StudyError("study.search." + k.key +
                       (k.key == "mode" ? ": a method is compared, not searched: put it in vary"
                                        : ": a search runs its trials on seed 1 and its tuned "
                                          "runs on fresh seeds"));
    if (!seen.insert(k.key).second)
      throw StudyError("study.search." + k.key + " is also varied: a key is varied or searched");
  }
  for (const auto& k : plan.keys)
    if (k.key == "train.seed")
      throw StudyError(
          "study.vary.train.seed: a search runs its trials on seed 1 and its tuned "
          "runs on fresh seeds (tune.seeds)");
  if (s.prune) requireValidationMetric(s.prune->metric, "study.prune.metric");
  if (s.tune) requireValidationMetric(s.tune->metric, "study.tune.metric");
  const size_t points = varyGrid(plan).size();
  if (points * static_cast<size_t>(s.trials + (s.tune ? s.tune->seeds : 0)) > 1000000)
    throw StudyError("study.trials: the search has more than 10^6 runs: use fewer trials");
}

int searchPointCount(const StudyPlan& plan) {
  const int v = static_cast<int>(varyGrid(plan).size());
  return v * (plan.search.trials + (plan.search.tune ? plan.search.tune->seeds : 0));
}

namespace {

GridPoint searchPoint(const StudyPlan& plan, int vary, const std::vector<std::string>& searched) {
  const auto grid = varyGrid(plan);
  GridPoint p;
  p.varyPoint = vary;
  p.values = grid.at(static_cast<size_t>(vary));
  p.values.insert(p.values.end(), searched.begin(), searched.end());
  p.explicitSeed = true;
  return p;
}

}  // namespace

GridPoint trialPoint(const StudyPlan& plan, int vary, int trial,
                     const std::vector<std::string>& searched) {
  GridPoint p = searchPoint(plan, vary, searched);
  const int v = static_cast<int>(varyGrid(plan).size());
  p.index = trial * v + vary;
  p.trial = trial;
  p.seed = 1;
  return p;
}

GridPoint tunedPoint(const StudyPlan& plan, int vary, int j,
                     const std::vector<std::string>& searched) {
  GridPoint p = searchPoint(plan, vary, searched);
  const int v = static_cast<int>(varyGrid(plan).size());
  const int seeds = plan.search.tune ? plan.search.tune->seeds : 0;
  p.index = plan.search.trials * v + vary * seeds + j;
  p.tuned = true;
  p.seed = 2 + j;
  return p;
}

std::vector<GridPoint> searchCheckPoints(const StudyPlan& plan) {
  std::vector<GridPoint> out;
  const auto& keys = plan.search.keys;
  auto low = [](const Distribution& d) { return d.valueAt(0); };
  std::vector<std::string> base;
  for (const auto& k : keys) base.push_back(low(k.dist));
  const int v = static_cast<int>(varyGrid(plan).size());
  for (int vary = 0; vary < v; ++vary) {
    out.push_back(trialPoint(plan, vary, 0, base));
    for (size_t k = 0; k < keys.size(); ++k) {
      std::vector<std::string> ends;
      if (keys[k].dist.kind == Distribution::Kind::Choice)
        ends = keys[k].dist.choices;
      else
        ends = {keys[k].dist.valueAt(1)};
      for (const auto& e : ends) {
        std::vector<std::string> values = base;
        values[k] = e;
        out.push_back(trialPoint(plan, vary, 0, values));
      }
    }
  }
  return out;
}

}  // namespace stagewise::study
