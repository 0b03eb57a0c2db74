// The study views' data for a search (search_views.h) and the spread around a mean.

#include "stagewise/study/search_views.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "stagewise/study/search.h"

namespace stagewise::study {

namespace {

using nlohmann::json;

std::string unquoted(const std::string& text) {
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"')
    return text.substr(1, text.size() - 2);
  return text;
}

/// A searched value as a number on its axis (NaN when it is not one).
double coordinate(const SearchAxis& axis, const std::string& value) {
  const json v = json::parse(value, nullptr, false);
  if (axis.categorical) {
    for (size_t i = 0; i < axis.labels.size(); ++i)
      if (json::parse(axis.labels[i], nullptr, false) == v) return static_cast<double>(i);
    return std::nan("");
  }
  return v.is_number() ? v.get<double>() : std::nan("");
}

SearchAxis axisOf(const SearchedKey& k) {
  SearchAxis a;
  a.key = k.key;
  switch (k.dist.kind) {
    case Distribution::Kind::Choice:
      a.categorical = true;
      a.labels = k.dist.choices;
      a.low = 0;
      a.high = std::max<double>(0, static_cast<double>(k.dist.choices.size()) - 1);
      break;
    case Distribution::Kind::LogUniform:
      a.log = true;
      [[fallthrough]];
    default:
      a.low = k.dist.low;
      a.high = k.dist.high;
  }
  return a;
}

}  // namespace

double SearchAxis::position(double value) const {
  double lo = low, hi = high, v = value;
  if (log) {
    if (!(lo > 0) || !(hi > 0) || !(v > 0)) return std::nan("");
    lo = std::log(lo), hi = std::log(hi), v = std::log(v);
  }
  if (!(hi > lo)) return 0.5;
  return (v - lo) / (hi - lo);
}

int binOf(const SearchAxis& axis, double value, int bins) {
  if (axis.categorical) return static_cast<int>(std::lround(value));
  const double p = axis.position(value);
  if (!std::isfinite(p)) return 0;
  return std::clamp(static_cast<int>(std::floor(p * bins)), 0, bins - 1);
}

double etaSquared(const std::vector<int>& group, const std::vector<double>& y) {
  const size_t n = y.size();
  if (n < 2 || group.size() != n) return std::nan("");
  double mean = 0;
  for (double v : y) mean += v;
  mean /= static_cast<double>(n);
  std::map<int, std::pair<double, int>> sums;  // per group: sum, count
  double total = 0;
  for (size_t i = 0; i < n; ++i) {
    total += (y[i] - mean) * (y[i] - mean);
    auto& [sum, count] = sums[group[i]];
    sum += y[i];
    ++count;
  }
  if (!(total > 0)) return std::nan("");
  double between = 0;
  for (const auto& [g, sc] : sums) {
    const double m = sc.first / sc.second;
    between += sc.second * (m - mean) * (m - mean);
  }
  return std::clamp(between / total, 0.0, 1.0);
}

double keyImportance(const std::vector<TrialPoint>& trials, const SearchAxis& axis, size_t key) {
  // Residuals within each vary point: a method's own level is not the key's doing.
  std::map<int, std::pair<double, int>> pointMean;
  for (const auto& t : trials)
    if (t.completed && std::isfinite(t.metric) && key < t.coords.size() &&
        std::isfinite(t.coords[key])) {
      pointMean[t.varyPoint].first += t.metric;
      ++pointMean[t.varyPoint].second;
    }
  std::vector<double> y, x;
  std::vector<int> vary;
  for (const auto& t : trials)
    if (t.completed && std::isfinite(t.metric) && key < t.coords.size() &&
        std::isfinite(t.coords[key])) {
      const auto& [sum, count] = pointMean[t.varyPoint];
      y.push_back(t.metric - sum / count);
      x.push_back(t.coords[key]);
    }
  if (y.size() < 3) return std::nan("");
  const int bins = std::max(
      2, std::min(5, static_cast<int>(std::floor(std::sqrt(static_cast<double>(y.size()))))));
  std::vector<int> group;
  for (double v : x) group.push_back(binOf(axis, v, bins));
  return etaSquared(group, y);
}

SearchViews searchViews(const StudyResults& results) {
  SearchViews out;
  const StudyPlan& plan = results.plan;
  if (!plan.isSearch()) return out;
  out.metric = plan.search.choosingMetric();
  out.higherBetter = higherIsBetter(out.metric);
  for (const auto& k : plan.search.keys) out.axes.push_back(axisOf(k));

  const auto grid = varyGrid(plan);
  for (const auto& values : grid) {
    std::string label;
    for (size_t i = 0; i < plan.keys.size() && i < values.size(); ++i)
      label += (label.empty() ? "" : ", ") + plan.keys[i].key + "=" + unquoted(values[i]);
    out.varyLabels.push_back(label);
  }
  const int v = static_cast<int>(grid.size());
  const int trialPoints = plan.search.trials * v;
  const bool loss = out.metric.find("loss") != std::string::npos;
  std::map<int, size_t> byPoint;  // newest record per trial
  for (const auto& row : results.rows) {
    if (row.link.replaced || row.link.point >= trialPoints) continue;
    TrialPoint t;
    t.varyPoint = row.link.point % v;
    t.trial = row.link.point / v;
    t.runId = row.run.id;
    for (size_t k = 0; k < out.axes.size(); ++k) {
      const size_t at = plan.keys.size() + k;
      t.coords.push_back(at < row.values.size() ? coordinate(out.axes[k], row.values[at])
                                                : std::nan(""));
    }
    const auto value = loss ? row.valLoss : row.valAccuracy;
    t.completed = row.run.status == storage::RunStatus::Completed;
    t.pruned = row.run.status == storage::RunStatus::Pruned;
    t.prunedAt = row.link.prunedAt;
    t.metric = (t.completed || t.pruned) && value ? *value : std::nan("");
    if (auto it = byPoint.find(row.link.point); it != byPoint.end())
      out.trials[it->second] = std::move(t);
    else {
      byPoint[row.link.point] = out.trials.size();
      out.trials.push_back(std::move(t));
    }
  }
  std::sort(out.trials.begin(), out.trials.end(), [](const TrialPoint& a, const TrialPoint& b) {
    return a.trial != b.trial ? a.trial < b.trial : a.varyPoint < b.varyPoint;
  });

  SearchAxis metricAxis;
  metricAxis.key = out.metric;
  metricAxis.low = INFINITY;
  metricAxis.high = -INFINITY;
  for (const auto& t : out.trials)
    if (std::isfinite(t.metric)) {
      metricAxis.low = std::min(metricAxis.low, t.metric);
      metricAxis.high = std::max(metricAxis.high, t.metric);
    }
  if (!std::isfinite(metricAxis.low)) metricAxis.low = metricAxis.high = 0;

  for (size_t k = 0; k < out.axes.size(); ++k)
    out.importance.push_back(keyImportance(out.trials, out.axes[k], k));
  out.axes.push_back(std::move(metricAxis));
  for (const auto& t : results.tuned) out.bestSoFar.push_back(t.bestSoFar);
  return out;
}

std::vector<double> parallelLine(const SearchViews& views, const TrialPoint& trial) {
  std::vector<double> out;
  for (size_t a = 0; a < views.axes.size(); ++a) {
    const bool metric = a + 1 == views.axes.size();
    const double v =
        metric ? trial.metric : (a < trial.coords.size() ? trial.coords[a] : std::nan(""));
    out.push_back(std::isfinite(v) ? views.axes[a].position(v) : std::nan(""));
  }
  return out;
}

std::string spreadId(Spread spread) {
  switch (spread) {
    case Spread::Sem:
      return "sem";
    case Spread::Ci95:
      return "ci95";
    case Spread::MinMax:
      return "minmax";
    case Spread::Std:
      break;
  }
  return "std";
}

Spread spreadFromId(const std::string& id) {
  for (Spread s : {Spread::Std, Spread::Sem, Spread::Ci95, Spread::MinMax})
    if (spreadId(s) == id) return s;
  return Spread::Std;
}

std::pair<double, double> spreadBounds(const Stat& s, Spread spread) {
  if (spread == Spread::MinMax) return {s.min, s.max};
  if (s.n < 2) return {s.mean, s.mean};
  double half = s.std;
  if (spread == Spread::Sem) half = s.sem();
  if (spread == Spread::Ci95) half = tQuantile975(s.n - 1) * s.sem();
  return {s.mean - half, s.mean + half};
}

}  // namespace stagewise::study
