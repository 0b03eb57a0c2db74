#pragma once
// Recording a run into the run store as it trains.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "stagewise/engine/metrics.h"
#include "stagewise/storage/run_store.h"
#include "stagewise/storage/run_writer.h"

namespace stagewise::recorder {

struct RecorderOptions {
  std::vector<std::string> tags;  ///< given to the new run
  std::string notes;
  /// Continue this existing run record (a run resumed from a checkpoint) instead of creating
  /// one: it becomes `running` again and its series go on where they stopped.
  std::optional<int64_t> resumeRunId;
  /// Keep each stage's timeline spans (bounded by the spec's timeline.max_spans) and each
  /// compute span as a `step_seconds` point (end - start, at the span's end; waits and blocked
  /// sends are spans only).
  bool recordSpans = true;
  /// The rank that runs each stage in a run over several processes (engine::assignRanks),
  /// stored as a per-stage `rank` series so a trace groups stages by process; empty: one
  /// process.
  std::vector<int> stageRanks;
  /// Told, on the store's writer thread, when the store cannot be written (disk full, locked by
  /// another process: the data is held in memory and retried), when it can again, and when
  /// points are lost, so the user hears of it while the run goes on. Must return quickly.
  std::function<void(const storage::WriterNotice&)> onStoreNotice;
  /// Told the run's record id once it exists (created, or reopened to continue), on the thread
  /// of the engine's callbacks: a study links its run here, before the run ends.
  std::function<void(int64_t)> onRecordCreated;
};

/// An engine observer that writes the run it watches to a RunStore: the record (spec, stages,
/// layers) on onStart, every metric point, span and event as they come, and the summary with
/// the final status on onFinish, after which everything is flushed.
///
/// Callbacks only hand data to the store's writer thread, so recording does not slow the run.
/// A store error never reaches the engine: error() says why, and onStoreNotice tells while it
/// happens. A full disk or a store locked by another process only delays writing: the points
/// are held and land once it can write again. The store must outlive the recorder.
class Recorder : public engine::RunObserver {
 public:
  explicit Recorder(storage::RunStore& store, RecorderOptions options = {});
  ~Recorder() override;
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  /// The run's id once onStart has created (or reopened) it. Any thread.
  std::optional<int64_t> runId() const;
  /// The first store error that lost data or left the run unfinished in the store (points
  /// lost, the final status not written yet), empty if none. A delay that was made up for is
  /// not an error. Any thread.
  std::string error() const;

  void onStart(const engine::RunInfo& info) override;
  void onMetrics(const std::vector<engine::MetricPoint>& points) override;
  void onSpans(const std::vector<engine::StepSpan>& spans) override;
  void onEvent(const engine::RunEvent& event) override;
  void onFinish(const engine::RunSummary& summary) override;

 private:
  void fail(const std::string& what);
  void listen(storage::RunWriter& writer);
  /// True once the run's record exists. While the writer still creates it (a store locked by
  /// another process), waits up to `wait`; the reports held meanwhile go to the store then.
  bool resolve(std::chrono::milliseconds wait);
  void record(int64_t id, const engine::RunEvent& event, int64_t lastStep);
  void hold(std::vector<storage::PointInput>&& points);

  storage::RunStore& m_store;
  RecorderOptions m_options;
  std::atomic<int64_t> m_runId{0};  // 0: no record (not started, or failed)
  std::vector<std::pair<int, int>>
      m_startLayout;       ///< each stage's first and last layer at the start
  int64_t m_lastStep = 0;  // of the last stage, for checkpoint records
  mutable std::mutex m_errorMutex;
  std::string m_error;
  storage::RunWriter* m_listening = nullptr;  // the writer our notice handler is on
  int m_handlerId = 0;
  // The record being created (on the writer thread) and what arrived before it existed.
  std::optional<std::shared_future<int64_t>> m_pending;
  std::vector<storage::PointInput> m_heldPoints;
  std::vector<storage::SpanInput> m_heldSpans;
  std::vector<std::pair<engine::RunEvent, int64_t>> m_heldEvents;  ///< with the last step then
  int64_t m_heldLost = 0;
  static constexpr size_t kMaxHeldPoints = 2'000'000;
};

}  // namespace stagewise::recorder
