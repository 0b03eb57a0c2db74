#pragma once
// The store's single writer thread.

#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "stagewise/storage/options.h"
#include "stagewise/storage/records.h"

namespace stagewise::storage {

/// Counters for diagnostics and benchmarks.
struct WriterStats {
  int64_t pointsWritten = 0;
  int64_t transactions = 0;
  int64_t pointsPending = 0;
  /// Handed over but not committed because the store cannot be written now; retried.
  int64_t pointsHeld = 0;
  int64_t pointsDropped = 0;  ///< for runs this writer does not record, or lost (see lastError)
  int64_t failedCommits = 0;
  std::string lastError;
  /// Why nothing commits right now (disk full, locked by another process); empty while writing.
  std::string problem;
};

/// A change in whether the writer can write, for the user to see while the run goes on.
struct WriterNotice {
  enum class Kind {
    Problem,    ///< commits started failing; data is held in memory and retried
    Recovered,  ///< commits work again; what was held is written
    Lost,       ///< points were given up (memory cap, or the store closed while failing)
  };
  Kind kind = Kind::Problem;
  std::string message;  ///< names the store file, what happened and what to do
  int64_t pointsHeld = 0;
  int64_t pointsLost = 0;
};

/// Writes runs to the store from one background thread with its own connection. Producers hand
/// points over under a short lock and return; the thread commits them in batches (by size or
/// after WriterOptions::maxDelay), so a crash loses at most the last fraction of a second.
///
/// When a commit fails because the disk is full, another process holds the store's lock or the
/// disk reports an I/O error, nothing committed is touched: the batch stays in memory and is
/// retried (WriterOptions::retryInterval) until it commits, and notice handlers hear about it.
///
/// While a run is recorded the writer holds its lock file (see docs/storage.md, liveness) and
/// refreshes its heartbeat. Obtain it from RunStore::writer(). All methods are thread-safe.
class RunWriter {
 public:
  ~RunWriter();
  RunWriter(const RunWriter&) = delete;
  RunWriter& operator=(const RunWriter&) = delete;

  /// Creates a `running` run with its stages, layers, tags and notes; returns its id once it is
  /// committed. Throws StoreError.
  int64_t createRun(const NewRun& run);
  /// The same, without waiting: the record is created on the writer thread (a lock held by
  /// another process is waited out, WriterOptions::createRetry), and the future gives its id,
  /// or the StoreError.
  std::future<int64_t> createRunLater(const NewRun& run);
  /// Reopens run `runId` as `running` (a run resumed from a checkpoint) so points continue its
  /// series. Throws StoreError if there is no such run or another writer still records it.
  void resumeRun(int64_t runId);

  /// Hands points over; never waits for the database.
  void appendPoints(int64_t runId, std::vector<PointInput>&& points);
  void appendPoints(int64_t runId, const std::vector<PointInput>& points);
  /// Hands a stage's timeline spans over, like points (they count as points for the batch size
  /// and the memory cap). The store keeps what the run's `timeline.max_spans` allows: the
  /// spans of each stage's newest steps and a sample of steps across the run (docs/metrics.md,
  /// "Spans kept").
  void appendSpans(int64_t runId, std::vector<SpanInput>&& spans);
  void appendEvent(int64_t runId, EventInput event);
  void addCheckpoint(int64_t runId, std::string path, int64_t step);
  /// Writes the final status and summary after every point handed over before it, then releases
  /// the run's lock. Does not wait; call flush() to wait.
  void finishRun(int64_t runId, RunFinish finish);

  /// Blocks until everything handed over before the call is committed. Throws StoreError if a
  /// commit failed since the last flush and data was lost, or if the store cannot be written now
  /// (after one more try, which waits up to the busy timeout): that data is still held and
  /// retried, and the message says why and what to do.
  void flush();
  WriterStats stats() const;

  /// Calls `handler` on the writer thread when commits start failing, when they work again and
  /// when points are lost. It must return quickly and must not call flush(), createRun() or
  /// resumeRun(). Returns an id for removeNoticeHandler.
  int addNoticeHandler(std::function<void(const WriterNotice&)> handler);
  /// After this returns the handler is not called any more (a call in progress is waited for).
  void removeNoticeHandler(int id);

 private:
  friend class RunStore;
  RunWriter(std::string path, const StoreOptions& options);
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

}  // namespace stagewise::storage
