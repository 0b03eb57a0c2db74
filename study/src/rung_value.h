#pragma once
// A pruned trial's value is the one the pruner judged: its evaluation at the rung that stopped
// it, not whatever its run measured when the stop took effect (later, on a busy machine, and
// at the stop on the whole validation split). Internal to study/.

#include <cstdint>
#include <optional>
#include <vector>

#include "stagewise/storage/run_reader.h"

namespace stagewise::study::detail {

/// The value of `points` (one run's series of the metric) at the evaluation after `rung` steps
/// (an evaluation after step s has s + 1 steps behind it); nullopt when there is none.
inline std::optional<double> rungValue(const std::vector<storage::SeriesPoint>& points,
                                       int64_t rung) {
  for (const auto& p : points)
    if (p.step + 1 == rung) return p.value;
  return std::nullopt;
}

}  // namespace stagewise::study::detail
