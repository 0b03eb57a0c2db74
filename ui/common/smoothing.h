#pragma once
// Which series a plot may smooth (the live panels and the Runs overlay share the rule).

#include <string_view>

#include "stagewise/engine/metrics.h"

namespace stagewise::ui {

/// Only the noisy per-step series (loss, accuracy, queue depth, staleness). Cumulative
/// counters (bytes), peaks (memory), monotone series (progress, the measure share), windowed
/// rates (samples/s, fractions) and sparse measurements (evaluations, probes) are drawn as they
/// are: a moving average would bend them away from the stored values.
inline bool smoothable(std::string_view name) {
  namespace s = engine::series;
  return name == s::kLoss || name == s::kAccuracy || name == s::kQueueDepth ||
         name == s::kStaleness;
}

}  // namespace stagewise::ui
