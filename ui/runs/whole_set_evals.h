#pragma once
// The whole-test-set evaluations among a run's stored test points. The periodic evaluations use
// eval.max_samples; when a run ends (a stop, also one resumed later, or its completion) the
// engine evaluates on the whole test set and stores that point on the same series, at the end
// step. Drawn on the periodic line it would join two different measurements (issue 36).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "stagewise/storage/records.h"

namespace stagewise::ui {

/// Whether the run-level `series` gets a whole-test-set point where a run ends (the test
/// accuracy and loss).
bool hasWholeSetEvaluations(const std::string& series);

/// The steps where the run ended, stopped or completed, from its events ("stopped after 418
/// steps"), in event order.
std::vector<int64_t> endSteps(const std::vector<storage::EventRecord>& events);

/// Indices into `points` (a run-level test series as stored, in step order) of its
/// whole-test-set evaluations: at each of `ends`, the last point at that step; and the last
/// point when its value is the run's summary value `final` (as stored, a float). Ascending.
std::vector<size_t> wholeSetIndices(const std::vector<storage::SeriesPoint>& points,
                                    const std::vector<int64_t>& ends, std::optional<double> final);

}  // namespace stagewise::ui
