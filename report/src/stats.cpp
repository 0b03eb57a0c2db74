#include "stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "stagewise/report/findings.h"

namespace stagewise::report::stats {

double mean(const std::vector<double>& v) {
  if (v.empty()) return kNaN;
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

std::vector<int64_t> runIds(std::initializer_list<const std::vector<RunData>*> sets) {
  std::vector<int64_t> ids;
  for (const auto* s : sets)
    for (const auto& r : *s) ids.push_back(r.id);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

std::vector<double> peaksPerStage(const std::vector<RunData>& runs) {
  std::vector<std::vector<double>> per;
  for (const auto& r : runs) {
    if (per.empty()) per.resize(r.stageData.size());
    if (r.stageData.size() != per.size()) continue;
    for (size_t k = 0; k < per.size(); ++k)
      per[k].push_back(r.stageData[k].peakMemoryBytes >= 0
                           ? static_cast<double>(r.stageData[k].peakMemoryBytes)
                           : kNaN);
  }
  std::vector<double> out;
  for (const auto& v : per) out.push_back(median(v));
  return out;
}

std::vector<RunData> atSetting(const std::vector<RunData>& runs, int stages, int microBatches) {
  std::vector<RunData> out;
  for (const auto& r : runs)
    if (r.stages == stages && (microBatches < 0 || r.microBatches == microBatches))
      out.push_back(r);
  return out;
}

double sampleStd(const std::vector<double>& v) {
  if (v.size() < 2) return kNaN;
  const double m = mean(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size() - 1));
}

double stdErr(const std::vector<double>& v) {
  if (v.size() < 2) return kNaN;
  return sampleStd(v) / std::sqrt(static_cast<double>(v.size()));
}

double stdErrDiff(const std::vector<double>& a, const std::vector<double>& b) {
  const double sa = stdErr(a), sb = stdErr(b);
  return std::sqrt(sa * sa + sb * sb);
}

double median(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return !std::isfinite(x); }), v.end());
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double minOf(const std::vector<double>& v) {
  double m = kNaN;
  for (double x : v)
    if (std::isfinite(x) && !(m <= x)) m = x;
  return m;
}

double maxOf(const std::vector<double>& v) {
  double m = kNaN;
  for (double x : v)
    if (std::isfinite(x) && !(m >= x)) m = x;
  return m;
}

namespace {
std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    const double rank = 0.5 * static_cast<double>(i + j) + 1;
    for (size_t k = i; k <= j; ++k) r[order[k]] = rank;
    i = j + 1;
  }
  return r;
}
}  // namespace

double spearman(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 3) return kNaN;
  const auto rx = ranks(x), ry = ranks(y);
  const double mx = mean(rx), my = mean(ry);
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < rx.size(); ++i) {
    sxy += (rx[i] - mx) * (ry[i] - my);
    sxx += (rx[i] - mx) * (rx[i] - mx);
    syy += (ry[i] - my) * (ry[i] - my);
  }
  if (sxx <= 0 || syy <= 0) return kNaN;
  return sxy / std::sqrt(sxx * syy);
}

Side against(double diff, double se, double threshold, double k) {
  if (!std::isfinite(diff) || !std::isfinite(se)) return Side::Unclear;
  if (diff - k * se >= threshold) return Side::Holds;
  if (diff + k * se < threshold) return Side::Fails;
  return Side::Unclear;
}

double accuracyAtTime(const std::vector<study::EvalPoint>& evals, double t) {
  if (evals.empty() || !(t >= evals.front().timeS)) return kNaN;
  for (size_t i = 1; i < evals.size(); ++i)
    if (evals[i].timeS >= t) {
      const auto& a = evals[i - 1];
      const auto& b = evals[i];
      const double span = b.timeS - a.timeS;
      return span > 0 ? a.accuracy + (b.accuracy - a.accuracy) * (t - a.timeS) / span : b.accuracy;
    }
  return evals.back().accuracy;
}

PlotSeries meanCurve(const std::vector<std::vector<std::pair<double, double>>>& runs, double xMax,
                     int bins, const std::string& label) {
  PlotSeries s;
  s.label = label;
  if (!(xMax > 0) || bins < 1) return s;
  const double width = xMax / bins;
  for (int b = 0; b < bins; ++b) {
    std::vector<double> perRun;
    double xs = 0;
    int xn = 0;
    for (const auto& run : runs) {
      double sum = 0;
      int n = 0;
      for (const auto& [x, y] : run) {
        const bool inBin = x >= b * width && (x < (b + 1) * width || (b == bins - 1 && x <= xMax));
        if (inBin && std::isfinite(y)) sum += y, ++n, xs += x, ++xn;
      }
      if (n > 0) perRun.push_back(sum / n);
    }
    if (perRun.empty()) continue;
    s.x.push_back(xs / xn);
    s.y.push_back(mean(perRun));
    s.lo.push_back(minOf(perRun));
    s.hi.push_back(maxOf(perRun));
  }
  return s;
}

}  // namespace stagewise::report::stats
