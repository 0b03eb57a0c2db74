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
/// `rank`: this process's rank in a distributed run (-1: one process); a rank other than 0 did
/// not evaluate (rank 0 evaluates the whole model) and says what it trained instead.
std::string summaryTable(const engine::RunSummary& summary, int rank = -1);

}  // namespace stagewise::cli
