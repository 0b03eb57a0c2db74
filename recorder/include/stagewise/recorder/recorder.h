#pragma once
// Recording a run into the run store as it trains.

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "stagewise/engine/metrics.h"
#include "stagewise/storage/run_store.h"

namespace stagewise::recorder {

struct RecorderOptions {
  std::vector<std::string> tags;  ///< given to the new run
  std::string notes;
  /// Continue this existing run record (a run resumed from a checkpoint) instead of creating
  /// one: it becomes `running` again and its series go on where they stopped.
  std::optional<int64_t> resumeRunId;
  /// Keep each stage's compute span as a `step_seconds` series (end - start, at the span's end).
  bool recordSpans = true;
};

/// An engine observer that writes the run it watches to a RunStore: the record (spec, stages,
/// layers) on onStart, every metric point, span and event as they come, and the summary with
/// the final status on onFinish, after which everything is flushed.
///
/// Callbacks only hand data to the store's writer thread, so recording does not slow the run.
/// A store error never reaches the engine: recording stops quietly and error() says why.
/// The store must outlive the recorder.
class Recorder : public engine::RunObserver {
 public:
  explicit Recorder(storage::RunStore& store, RecorderOptions options = {});

  /// The run's id once onStart has created (or reopened) it. Any thread.
  std::optional<int64_t> runId() const;
  /// The first store error, empty if none. Any thread.
  std::string error() const;

  void onStart(const engine::RunInfo& info) override;
  void onMetrics(const std::vector<engine::MetricPoint>& points) override;
  void onSpans(const std::vector<engine::StepSpan>& spans) override;
  void onEvent(const engine::RunEvent& event) override;
  void onFinish(const engine::RunSummary& summary) override;

 private:
  void fail(const std::string& what);

  storage::RunStore& m_store;
  RecorderOptions m_options;
  std::atomic<int64_t> m_runId{0};  // 0: no record (not started, or failed)
  int64_t m_lastStep = 0;           // of the last stage, for checkpoint records
  mutable std::mutex m_errorMutex;
  std::string m_error;
};

}  // namespace stagewise::recorder
