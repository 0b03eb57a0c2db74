#pragma once
// Small statistics for the findings: means and standard errors over seeds, rank correlation,
// and curves of several runs averaged on one grid (the bands of the report's plots).

#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include "stagewise/report/findings.h"
#include "stagewise/report/plot.h"
#include "stagewise/study/study.h"

namespace stagewise::report::stats {

double mean(const std::vector<double>& v);  ///< NaN for none
/// The ids of the runs of several sets, sorted, each once.
std::vector<int64_t> runIds(std::initializer_list<const std::vector<RunData>*> sets);
double sampleStd(const std::vector<double>& v);  ///< n - 1; NaN below 2 values
double stdErr(const std::vector<double>& v);     ///< sampleStd / sqrt(n); NaN below 2 values
/// The standard error of mean(a) - mean(b); NaN when either has fewer than 2 values.
double stdErrDiff(const std::vector<double>& a, const std::vector<double>& b);
double median(std::vector<double> v);  ///< NaN for none
double minOf(const std::vector<double>& v);
double maxOf(const std::vector<double>& v);
/// Spearman's rank correlation (ties get their mean rank); NaN below 3 points or without spread.
double spearman(const std::vector<double>& x, const std::vector<double>& y);

/// Where a difference stands against a threshold, beyond noise: Holds when diff - k*se >= t,
/// Fails when diff + k*se < t, Unclear otherwise (and when se is not finite).
enum class Side { Holds, Fails, Unclear };
Side against(double diff, double se, double threshold, double k);

/// The accuracy of a run at time `t` from its evaluations (linear between two, the last one
/// after it); NaN before the first.
double accuracyAtTime(const std::vector<study::EvalPoint>& evals, double t);

/// The median over runs of each stage's allocator peak (NaN where not counted; runs with another
/// stage count than the first are left out).
std::vector<double> peaksPerStage(const std::vector<RunData>& runs);
/// The runs at `stages` stages (and, unless -1, `microBatches` micro-batches).
std::vector<RunData> atSetting(const std::vector<RunData>& runs, int stages, int microBatches = -1);

/// Several runs' curves (x, y) averaged on `bins` equal bins of x over [0, xMax]: the mean of the
/// runs' bin means, and their min and max as the band. Bins no run reaches are left out.
PlotSeries meanCurve(const std::vector<std::vector<std::pair<double, double>>>& runs, double xMax,
                     int bins, const std::string& label);

}  // namespace stagewise::report::stats
