#pragma once
// The run summary as stored in runs.summary_json (keys as in docs/metrics.md).

#include <string>

#include "stagewise/engine/metrics.h"

namespace stagewise::recorder::detail {

std::string summaryToJson(const engine::RunSummary& summary);

}  // namespace stagewise::recorder::detail
