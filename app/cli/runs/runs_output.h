#pragma once
// How `runs list` and `runs show` print: aligned text tables and JSON.

#include <map>
#include <ostream>
#include <vector>

#include "stagewise/storage/run_reader.h"

namespace stagewise::cli::detail {

/// An aligned table: a header row, then one row per run.
/// `prunedAt`: the step a search's rung stopped a pruned run at, by run id ("pruned at 40").
void printRunTable(const std::vector<storage::RunRecord>& runs, std::ostream& out,
                   const std::map<int64_t, int64_t>& prunedAt = {});
/// A JSON array, one run object per line.
void printRunJson(const std::vector<storage::RunRecord>& runs, std::ostream& out);
/// Everything about one run, as text or as one JSON object.
void printRunDetails(storage::RunReader& reader, const storage::RunRecord& run, bool json,
                     std::ostream& out);

}  // namespace stagewise::cli::detail
