#pragma once
#include <nlohmann/json.hpp>

#include "stagewise/engine/metrics.h"

namespace stagewise::cli {

/// The `train --json` summary object (NaN values become null).
nlohmann::json summaryJson(const engine::RunSummary& summary, std::optional<int64_t> runId);

/// A human-readable table of the summary.
std::string summaryTable(const engine::RunSummary& summary);

}  // namespace stagewise::cli
