// A search read back from the store: its trials as far as they can be drawn, each vary point's
// best trial (on the validation metric that chooses, never a test metric) and its tuned runs.

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "stagewise/storage/run_reader.h"
#include "stagewise/study/points.h"
#include "stagewise/study/results.h"
#include "rung_value.h"

namespace stagewise::study {

using storage::RunStatus;

namespace {

/// The choosing metric of every run of the study: a run's final value from its summary, and for
/// runs without one (stopped) the last value of its series; a pruned run's is its value at the
/// rung that stopped it (`prunedAt`: run id -> rung).
std::map<int64_t, double> metricValues(storage::RunReader& reader, int64_t studyId,
                                       const std::string& metric,
                                       const std::map<int64_t, int64_t>& prunedAt) {
  std::map<int64_t, double> out = reader.studySummaryNumbers(studyId, "$." + metric);
  for (const auto& [runId, points] : reader.studySeries(studyId, {metric, -1, -1})) {
    if (auto rung = prunedAt.find(runId); rung != prunedAt.end()) {
      if (auto v = detail::rungValue(points, rung->second)) out[runId] = *v;
      continue;
    }
    if (!points.empty() && !out.count(runId)) out[runId] = points.back().value;
  }
  return out;
}

bool better(double a, double b, bool higher) {
  return higher ? a > b : a < b;
}

}  // namespace

SearchState searchWork(storage::RunReader& reader, const storage::StudyRecord& study,
                       const StudyPlan& plan) {
  SearchState state;
  state.varyPoints = varyGrid(plan);
  const SearchSpec& search = plan.search;
  const std::string metric = search.choosingMetric();
  const bool higher = higherIsBetter(metric);
  std::map<int, std::vector<storage::StudyRunRecord>> byPoint;
  std::map<int64_t, int64_t> prunedAt;
  for (const auto& link : reader.studyRuns(study.id)) {
    byPoint[link.point].push_back(link);
    if (link.runStatus == RunStatus::Pruned && link.prunedAt) prunedAt[link.runId] = *link.prunedAt;
  }
  const std::map<int64_t, double> values = metricValues(reader, study.id, metric, prunedAt);

  const int v = static_cast<int>(state.varyPoints.size());
  state.trials.resize(static_cast<size_t>(v));
  state.best.resize(static_cast<size_t>(v));
  std::vector<bool> open(static_cast<size_t>(v), true);  // its next trial can be drawn
  for (int t = 0; t < search.trials; ++t) {
    for (int p = 0; p < v; ++p) {
      if (!open[static_cast<size_t>(p)]) continue;
      auto& trials = state.trials[static_cast<size_t>(p)];
      std::vector<TrialResult> earlier;
      if (search.sampler == "maxlipo") {
        for (const auto& tr : trials) {
          TrialResult r;
          r.values.assign(tr.point.values.begin() + static_cast<long>(plan.keys.size()),
                          tr.point.values.end());
          r.value = tr.value;
          earlier.push_back(std::move(r));
        }
      }
      TrialState tr;
      tr.point = trialPoint(plan, p, t, drawTrial(search, plan.sampleSeed, t, earlier, higher));
      const auto& links = byPoint[tr.point.index];
      tr.work = workFor(reader, tr.point, links, /*failedIsDone=*/true);
      for (const auto& l : links)
        if (!l.replaced && l.runId == tr.work.runId) {
          tr.status = l.runStatus;
          tr.prunedAt = l.prunedAt;
        }
      if (tr.work.kind == PointWork::Kind::Done && tr.status != RunStatus::Failed)
        if (auto it = values.find(tr.work.runId); it != values.end() && std::isfinite(it->second))
          tr.value = it->second;
      state.work.push_back(tr.work);
      // The model draws trial t + 1 from the results of trials 0..t: it waits for this one.
      if (search.sampler == "maxlipo" && tr.work.kind != PointWork::Kind::Done)
        open[static_cast<size_t>(p)] = false;
      trials.push_back(std::move(tr));
    }
  }
  for (int p = 0; p < v; ++p) {
    const auto& trials = state.trials[static_cast<size_t>(p)];
    bool ended = static_cast<int>(trials.size()) == search.trials;
    for (const auto& tr : trials) ended = ended && tr.work.kind == PointWork::Kind::Done;
    if (!ended) continue;
    std::optional<size_t> best;
    for (size_t i = 0; i < trials.size(); ++i)
      if (trials[i].status == RunStatus::Completed && trials[i].value &&
          (!best || better(*trials[i].value, *trials[best.value()].value, higher)))
        best = i;
    state.best[static_cast<size_t>(p)] = best;
    if (!best || !search.tune) continue;
    const auto& winner = trials[*best].point.values;
    const std::vector<std::string> searched(winner.begin() + static_cast<long>(plan.keys.size()),
                                            winner.end());
    for (int j = 0; j < search.tune->seeds; ++j) {
      const GridPoint point = tunedPoint(plan, p, j, searched);
      std::vector<storage::StudyRunRecord> links = byPoint[point.index];
      // A tuned run made for other values (its trials were run again since) does not count.
      const std::string valuesJson = pointValuesJson(point);
      std::vector<int64_t> stale;
      std::erase_if(links, [&](const storage::StudyRunRecord& l) {
        const bool other = nlohmann::json::parse(l.valuesJson, nullptr, false) !=
                           nlohmann::json::parse(valuesJson, nullptr, false);
        if (other && !l.replaced) stale.push_back(l.runId);
        return other;
      });
      PointWork w = workFor(reader, point, links, /*failedIsDone=*/false);
      if (w.kind == PointWork::Kind::Run)
        w.replaces.insert(w.replaces.end(), stale.begin(), stale.end());
      state.work.push_back(std::move(w));
    }
  }
  std::sort(state.work.begin(), state.work.end(),
            [](const PointWork& a, const PointWork& b) { return a.point.index < b.point.index; });
  return state;
}

std::optional<std::pair<double, double>> confidence95(const Stat& s) {
  if (s.n < 2 || !std::isfinite(s.mean) || !std::isfinite(s.std)) return std::nullopt;
  const double half = tQuantile975(s.n - 1) * s.std / std::sqrt(static_cast<double>(s.n));
  return std::make_pair(s.mean - half, s.mean + half);
}

}  // namespace stagewise::study
