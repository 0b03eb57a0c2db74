#pragma once
// The not-converged check of the learning findings (issue 32 §6): a finding whose methods'
// metric is still rising at the end of their runs cannot say which method is better, so its
// verdict becomes "inconclusive: not converged", with a run length that would decide it. The rule
// and its thresholds are rules::kRising* (docs/replication.md).

#include <string>
#include <utility>
#include <vector>

#include "stagewise/report/findings.h"

namespace stagewise::report::convergence {

/// The least-squares slope of the last quarter of a curve's points (at least
/// rules::kRisingPoints of them) times `length` (in the curve's x units): the gain one more run
/// of that length would bring at the end's rate. NaN with fewer points than that.
double projectedGain(const std::vector<std::pair<double, double>>& curve, double length);

/// What a run's metric is: its validation accuracy when it has one, else its test accuracy
/// evaluations (x: samples seen; on text, bits per byte, read negated so that a gain is
/// positive, with rules::kBitsPerByteTolerance as the threshold); or the model head's training
/// accuracy (x: step).
enum class Metric { Evaluations, HeadAccuracy };

/// Applies the rule (rules::kRising*, with rules::kNoise) to each method's runs (a label and the
/// runs) and, when a method is still rising and the finding has a verdict from data, turns it into
/// Inconclusive with reason "not_converged", says so in `why` (with the verdict the rule would have
/// given), and sets decideSteps. Always fills convergenceJson.
void check(Finding& f,
           const std::vector<std::pair<std::string, const std::vector<RunData>*>>& methods,
           Metric metric = Metric::Evaluations);

}  // namespace stagewise::report::convergence
