#include "convergence.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "format.h"
#include "stats.h"

namespace stagewise::report::convergence {

using nlohmann::ordered_json;

double projectedGain(const std::vector<std::pair<double, double>>& curve, double length) {
  std::vector<std::pair<double, double>> points;
  for (const auto& p : curve)
    if (std::isfinite(p.first) && std::isfinite(p.second)) points.push_back(p);
  const size_t n = points.size();
  const size_t tail = std::max<size_t>(
      rules::kRisingPoints, static_cast<size_t>(std::ceil(rules::kRisingPart * double(n))));
  if (n < static_cast<size_t>(rules::kRisingPoints) || !(length > 0)) return kNaN;
  const size_t from = n - std::min(n, tail);
  double mx = 0, my = 0;
  for (size_t i = from; i < n; ++i) mx += points[i].first, my += points[i].second;
  const double m = static_cast<double>(n - from);
  mx /= m, my /= m;
  double sxy = 0, sxx = 0;
  for (size_t i = from; i < n; ++i) {
    const double dx = points[i].first - mx;
    sxy += dx * (points[i].second - my);
    sxx += dx * dx;
  }
  if (!(sxx > 0)) return kNaN;
  return sxy / sxx * length;
}

namespace {

/// The run's curve and its length in the curve's x units; which metric it read.
std::pair<std::vector<std::pair<double, double>>, double> curveOf(const RunData& r, Metric metric,
                                                                  std::string& name) {
  std::vector<std::pair<double, double>> c;
  if (metric == Metric::HeadAccuracy) {
    name = "head_training_accuracy";
    for (const auto& [step, v] : r.headAccuracy) c.push_back({static_cast<double>(step), v});
    return {c, static_cast<double>(r.steps)};
  }
  const bool val = !r.valEvals.empty();
  // Text (issue 34): bits per byte, lower is better, read negated so a gain is positive.
  const std::string kind = r.text ? "_bits_per_byte" : "_accuracy";
  if (val || name.empty() || name == "test" + kind) name = (val ? "val" : "test") + kind;
  for (const auto& e : val ? r.valEvals : r.evals)
    c.push_back({e.samples, r.text ? -e.accuracy : e.accuracy});
  return {c, static_cast<double>(r.steps) * r.batchSize};
}

}  // namespace

void check(Finding& f,
           const std::vector<std::pair<std::string, const std::vector<RunData>*>>& methods,
           Metric metric) {
  ordered_json out;
  ordered_json per = ordered_json::object();
  std::string metricName;
  std::vector<std::string> rising;
  double worstGain = kNaN;
  int64_t decide = 0;
  bool text = false;
  for (const auto& m : methods)
    for (const auto& r : *m.second) text = text || (metric == Metric::Evaluations && r.text);
  const double threshold = text ? rules::kBitsPerByteTolerance : rules::kRisingGain;
  for (const auto& [label, runs] : methods) {
    std::vector<double> gains, steps;
    for (const auto& r : *runs) {
      const auto [curve, length] = curveOf(r, metric, metricName);
      const double g = projectedGain(curve, length);
      if (std::isfinite(g)) gains.push_back(g), steps.push_back(static_cast<double>(r.steps));
    }
    const double g = stats::mean(gains), se = stats::stdErr(gains);
    const bool beyondNoise = !std::isfinite(se) || g - rules::kNoise * se > 0;
    const bool up = g > threshold && beyondNoise;
    // The gain over a run length falls as 1 / length when the metric approaches its limit as
    // a - c / t: a run (g / threshold) times as long would gain less than the threshold.
    const int64_t need =
        up ? static_cast<int64_t>(std::ceil(stats::mean(steps) * g / threshold)) : 0;
    per[label] = {{"gain", jsonNumber(g)},
                  {"stderr", jsonNumber(se)},
                  {"runs", gains.size()},
                  {"rising", up}};
    if (up) {
      per[label]["decide_steps"] = need;
      rising.push_back(label);
      decide = std::max(decide, need);
      if (!(worstGain >= g)) worstGain = g;
    }
  }
  out["metric"] = metricName.empty() ? ordered_json(nullptr) : ordered_json(metricName);
  out["threshold"] = threshold;
  out["lower_is_better"] = text;
  out["methods"] = per;
  out["converged"] = rising.empty();
  f.convergenceJson = out.dump();
  if (rising.empty() || f.verdict == Verdict::HoldsByConstruction) return;
  std::string who;
  for (size_t i = 0; i < rising.size(); ++i)
    who += (i ? (i + 1 == rising.size() ? " and " : ", ") : "") + rising[i];
  const std::string words = metricName == "val_accuracy"         ? "validation accuracy"
                            : metricName == "test_accuracy"      ? "test accuracy"
                            : metricName == "val_bits_per_byte"  ? "validation bits per byte"
                            : metricName == "test_bits_per_byte" ? "test bits per byte"
                                                                 : "training accuracy";
  const std::string moving = text ? " was still falling" : " was still rising";
  const std::string amount =
      text ? fmt(worstGain, 3) + " bits per byte" : fmt(worstGain * 100, 1) + " points";
  const std::string bar = text ? fmt(threshold, 2) : fmt(threshold * 100, 0);
  std::string before = toString(f.verdict);
  std::replace(before.begin(), before.end(), '_', ' ');
  f.why = who + "'s " + words + moving + " at the end (up to " + amount +
          " over another run length at the last quarter's rate, more than " + bar +
          " and beyond the seeds' noise); a run of about " + std::to_string(decide) +
          " steps would decide it. Judged as it stands, the verdict would be " + before + ": " +
          f.why;
  f.verdict = Verdict::Inconclusive;
  f.reason = "not_converged";
  if (!f.carriedBy.empty()) f.carriedBy = "neither";  // the measures' verdict stays in `why`
  f.decideSteps = decide;
}

}  // namespace stagewise::report::convergence
