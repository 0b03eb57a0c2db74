#pragma once
// A run's timeline as a Chrome trace (the trace-event JSON format), for Perfetto
// (ui.perfetto.dev), chrome://tracing and Holistic Trace Analysis. One writer for
// `stagewise-cli runs trace` and the workbench's Timeline export.

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "stagewise/storage/records.h"

namespace stagewise::storage {

class RunReader;

/// The series drawn as counter tracks (ph "C"), per stage, where the run has them.
inline constexpr const char* kTraceCounterSeries[] = {"bytes_sent", "grad_bytes_sent",
                                                      "memory_bytes", "activation_bytes"};

/// A span's event name, as PyTorch pipelining names its actions (0-based stage): "PP:0F3"
/// (forward of micro-batch 3), "PP:2B0" (backward), "PP:1W2" (weight gradient), "PP:1R2"
/// (forward recomputed), "PP:0update" (a pipeline step's update), "PP:0local" (a whole step of
/// a local stage; "PP:0step" in backprop), "PP:0aux" (an aux head), "wait" and "blocked".
/// `mode` is the run's ("local", "backprop", "pipeline").
std::string traceEventName(const SpanRecord& span, const std::string& mode);

/// Writes run `runId`'s stored spans as one trace-event JSON object: {"traceEvents": [...]}
/// with a complete event (ph "X", ts and dur in microseconds since the run started) per span,
/// pid = the rank that ran the stage (the run's per-stage `rank` series; 0 when it has none),
/// tid = the 0-based stage, args {stage (1-based, as on screen), step, micro}; process and
/// thread names as metadata (ph "M": "rank 0", "S1"); and counter tracks (ph "C") from the
/// series in kTraceCounterSeries. Returns the number of span events written. Throws
/// StoreError with one line to act on for an unknown run or a run with no spans stored.
int64_t writeTrace(RunReader& reader, int64_t runId, std::ostream& out);

/// The same into `path` (created or replaced). Throws StoreError when the file cannot be
/// written.
int64_t writeTraceFile(RunReader& reader, int64_t runId, const std::string& path);

}  // namespace stagewise::storage
