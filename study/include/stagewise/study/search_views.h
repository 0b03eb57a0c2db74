#pragma once
// What the workbench's study views draw for a search, computed from a study read back
// (StudyResults): the trials with their searched values and the choosing metric, one axis per
// searched key (log for log_uniform, categories for choice) and one for the metric (parallel
// coordinates, slice plots), the best value so far against trials, and each key's importance:
// the share of the metric's variance, within vary points, that the key explains alone (binned
// one-way ANOVA, eta squared; docs/metrics.md, "Search views"). And the spread a band or a group
// table shows around a mean (std, standard error, 95 % CI, min-max). Torch-free and Qt-free.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "stagewise/study/results.h"

namespace stagewise::study {

/// One axis of the parallel coordinates: a searched key, or the metric (the last axis).
struct SearchAxis {
  std::string key;
  bool log = false;                 ///< log_uniform: drawn on a log scale
  bool categorical = false;         ///< choice: one position per choice, in order
  double low = 0, high = 0;         ///< the range drawn (a choice: 0 .. choices - 1)
  std::vector<std::string> labels;  ///< choice: the choices as JSON texts
  /// Where `value` lies on the axis, 0 (low) to 1 (high); log axes in log space. A flat axis
  /// (low == high) puts everything at 0.5.
  double position(double value) const;
};

/// One trial as the views draw it.
struct TrialPoint {
  int varyPoint = 0;
  int trial = 0;  ///< 0-based, in the sampler's order
  int64_t runId = 0;
  /// Per searched key, the value as a number (a choice: its index among the choices; a number
  /// choice too, so its axis is evenly spaced).
  std::vector<double> coords;
  /// The choosing metric (a completed trial's final value, a pruned one's at its rung); NaN when
  /// it has none (failed, still running).
  double metric = 0;
  bool completed = false;
  bool pruned = false;
  std::optional<int64_t> prunedAt;
};

struct SearchViews {
  std::string metric;  ///< the choosing metric (val_accuracy, val_loss, ...)
  bool higherBetter = true;
  /// The searched keys' axes, then the metric's (over the trials' values).
  std::vector<SearchAxis> axes;
  std::vector<std::string> varyLabels;  ///< per vary point: "mode=local" ("" without vary keys)
  std::vector<TrialPoint> trials;       ///< every trial with a run, newest record per trial
  /// Per vary point: the best metric of the completed trials after each trial (NaN before the
  /// first), in trial order, as TunedResult::bestSoFar.
  std::vector<std::vector<double>> bestSoFar;
  /// Per searched key: the share of the metric's variance it explains alone (0..1; NaN with
  /// fewer than 3 completed trials or no variance).
  std::vector<double> importance;
};

/// The study views of a search (an empty SearchViews for a grid study).
SearchViews searchViews(const StudyResults& results);

/// A trial's line across the parallel coordinates: its place on each axis (keys, then the
/// metric), 0..1 each; NaN where it has no value (a failed trial's metric).
std::vector<double> parallelLine(const SearchViews& views, const TrialPoint& trial);

/// Eta squared of a one-way ANOVA: the between-group sum of squares over the total, for values
/// `y` in groups `group` (any integer labels). NaN for fewer than 2 values or zero variance.
double etaSquared(const std::vector<int>& group, const std::vector<double>& y);

/// The group of `value` on an axis: a choice's index; otherwise one of `bins` equal-width bins
/// between the axis' low and high (log axes in log space), the ends clamped into the first and
/// last bin.
int binOf(const SearchAxis& axis, double value, int bins);

/// Importance of one key: eta squared of the metric residuals (each trial's metric minus the
/// mean of its vary point's trials, so a method's level does not count) grouped by the key's
/// bins. Only completed trials with a metric count (a pruned trial's value is from fewer steps).
/// Bins: each choice; otherwise max(2, min(5, floor(sqrt(n)))) for n trials.
double keyImportance(const std::vector<TrialPoint>& trials, const SearchAxis& axis, size_t key);

/// The spread shown around a mean.
enum class Spread { Std, Sem, Ci95, MinMax };
/// "std", "sem", "ci95", "minmax" (settings, JSON).
std::string spreadId(Spread spread);
/// Parses spreadId's names; anything else is Std.
Spread spreadFromId(const std::string& id);
/// The interval around the mean: mean ± std, mean ± std / sqrt(n), the 95 % CI of the mean
/// (Student's t, n - 1 degrees of freedom), or [min, max]. With n < 2 (no spread) the mean
/// both ways, except min-max.
std::pair<double, double> spreadBounds(const Stat& s, Spread spread);

}  // namespace stagewise::study
