#pragma once
// The writer thread's connection and what it knows about the runs it records: their lock files,
// and per series the next sequence number and the open summary-level buckets. Used only from
// the writer thread.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "levels.h"
#include "liveness.h"
#include "sqlite_db.h"
#include "stagewise/storage/options.h"
#include "stagewise/storage/records.h"

namespace stagewise::storage::detail {

class WriterDb {
 public:
  WriterDb(const std::string& path, const StoreOptions& options);
  ~WriterDb();
  Database& db() { return *m_db; }

  // Each in its own transaction; the run's lock is taken before the `running` status commits.
  int64_t createRun(const NewRun& run);
  void resumeRun(int64_t runId);

  // Inside the caller's batch transaction. Return false (or the number of points not written)
  // for a run this writer does not record.
  int64_t writePoints(int64_t runId, const std::vector<PointInput>& points);
  int64_t writeSpans(int64_t runId, const std::vector<SpanInput>& spans);
  bool writeEvent(int64_t runId, const EventInput& event);
  bool writeCheckpoint(int64_t runId, const std::string& path, int64_t step);
  bool finishRun(int64_t runId, const RunFinish& finish);
  void writeHeartbeats();
  /// An event in every run being recorded (not finished in this batch), at `tByRun[id]` where
  /// given, else at the run's last event.
  void noteInLiveRuns(const std::string& kind, const std::string& message,
                      const std::map<int64_t, double>& tByRun);
  /// Marks every run not finished yet `interrupted` (the writer is shutting down).
  void interruptAll(const std::string& why);
  /// When even that cannot be written: leaves the runs' lock files unlocked, so the next open
  /// marks them `interrupted`.
  void abandonAll();
  /// Writes the changed level buckets and point counts; call just before COMMIT.
  void flushLevels();

  /// After COMMIT: releases the locks of runs finished in the batch.
  void afterCommit();
  /// After ROLLBACK: in-memory series state ran ahead of the database, so forget it.
  void afterRollback();
  bool hasLiveRuns() const { return !m_runs.empty(); }

 private:
  /// A window of the recording policy being filled: its extreme points so far.
  struct Sample {
    int64_t step = 0;
    double timeS = 0;
    double value = 0;
  };
  struct Window {
    int64_t count = 0;
    std::optional<Sample> min, max, nan;
    Sample last;
  };
  struct SeriesState {
    int64_t id = 0;
    int64_t nextSeq = 0;
    SeriesLevels levels;
    bool touched = false;
    Window window;
  };
  struct KeyView {
    std::string_view name;
    int stage;
    int layer;
  };
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(const KeyView& k) const;
    size_t operator()(const SeriesKey& k) const {
      return (*this)(KeyView{k.name, k.stage, k.layer});
    }
  };
  struct KeyEqual {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return a.stage == b.stage && a.layer == b.layer && std::string_view(a.name) == b.name;
    }
  };
  /// What the writer knows of one stage's stored spans (docs/metrics.md, "Spans kept"): steps
  /// from `cutoff` on are the recent window, kept whole; below it only steps that are multiples
  /// of `stride` stay, `sampled` of them.
  struct SpanStage {
    int64_t nextSeq = 0;
    int64_t lastStep = -1;
    int64_t cutoff = 0;
    int64_t stride = 1;
    int64_t sampled = 0;
    int64_t step = -1;    // the step being counted
    int64_t inStep = 0;   // spans seen of it
    int64_t perStep = 1;  // the most spans one step had
  };
  struct SpanBudget {
    bool loaded = false;
    int64_t maxSpans = 0;  // timeline.max_spans of the run's spec; 0: the default
    int stages = 1;
  };
  struct RunState {
    std::optional<RunLock> lock;
    bool finishing = false;
    std::unordered_map<SeriesKey, std::unique_ptr<SeriesState>, KeyHash, KeyEqual> series;
    SpanBudget spanBudget;
    std::map<int, SpanStage> spanStages;
  };

  RunState* live(int64_t runId);
  SeriesState& seriesFor(int64_t runId, RunState& run, const PointInput& point);
  void insert(SeriesState& s, int64_t step, double timeS, double value);
  /// Points per window for a series that has stored `rows` rows (0: store every point).
  int64_t windowWidth(int64_t rows) const;
  /// Stores what a window kept, in the order the points came (`final`: its last point too).
  void emitWindow(SeriesState& s, bool final);
  /// The run ends: every open window is stored, with its last point.
  void closeWindows(RunState& run);
  void insertRunChildren(int64_t runId, const NewRun& run);
  SpanStage& spanStage(int64_t runId, RunState& run, int stage);
  /// Steps of a stage's recent window and of its sample, from the run's budget.
  std::pair<int64_t, int64_t> spanSteps(const RunState& run, const SpanStage& s) const;
  /// Moves the stage's window to its newest step and thins the sample to its budget.
  void trimSpans(int64_t runId, const RunState& run, int stage, SpanStage& s);

  std::string m_path;
  WriterOptions m_options;
  std::unique_ptr<Database> m_db;
  std::map<int64_t, RunState> m_runs;
  std::vector<SeriesState*> m_touched;
  std::string m_host;
  int64_t m_pid = 0;
  TimestampMs m_startedAtMs = 0;
  // Statements prepared once: the point insert runs hundreds of thousands of times a second.
  std::unique_ptr<Statement> m_insertPoint;
  std::unique_ptr<Statement> m_upsertLevel;
  std::unique_ptr<Statement> m_updateCount;
  std::unique_ptr<Statement> m_insertSpan;
};

}  // namespace stagewise::storage::detail
