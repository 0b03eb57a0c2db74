#pragma once
#include <nlohmann/json.hpp>

#include "stagewise/engine/metrics.h"
#include "stagewise/engine/run.h"

namespace stagewise::cli {

/// The `train --json` summary object (NaN values become null). With `changes` (train), it lists
/// the changes applied while the run trained: step, key, value, pause_s.
nlohmann::json summaryJson(const engine::RunSummary& summary, std::optional<int64_t> runId,
                           const std::vector<engine::RunChange>* changes = nullptr);

/// A human-readable table of the summary.
std::string summaryTable(const engine::RunSummary& summary);

}  // namespace stagewise::cli
