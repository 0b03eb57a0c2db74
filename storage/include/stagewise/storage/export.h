#pragma once
// Exporting runs to files other tools read.

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "stagewise/storage/records.h"

namespace stagewise::storage {

class RunReader;

/// A run's columns and tags as a JSON object (snake_case keys as in the runs table; absent
/// numbers as null; spec and summary as objects when the record has them). indent < 0: one line.
std::string runToJson(const RunRecord& run, int indent = -1);

/// Long-format CSV of every point of the runs: a header line, then one row per point,
/// `run_id,run_name,series,stage,layer,step,time_s,value` (RFC 4180 quoting; a NaN value is an
/// empty field). Throws StoreError for an unknown run id.
void exportCsv(RunReader& reader, const std::vector<int64_t>& runIds, std::ostream& out);

/// One JSON document: {"format": "stagewise-runs", "version": 1, "runs": [...]}, each run with
/// its columns, tags, spec and summary (as objects), stages, layers, events, checkpoints and
/// series, points as [step, time_s, value] (NaN as null). Points are streamed, not built in
/// memory. Throws StoreError for an unknown run id.
void exportJson(RunReader& reader, const std::vector<int64_t>& runIds, std::ostream& out);

}  // namespace stagewise::storage
