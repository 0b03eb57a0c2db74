#pragma once
// The store's single writer thread.

#include <cstdint>
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
  int64_t pointsDropped = 0;  ///< for runs this writer does not record, or lost to a failed commit
  std::string lastError;
};

/// Writes runs to the store from one background thread with its own connection. Producers hand
/// points over under a short lock and return; the thread commits them in batches (by size or
/// after WriterOptions::maxDelay), so a crash loses at most the last fraction of a second.
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
  /// Reopens run `runId` as `running` (a run resumed from a checkpoint) so points continue its
  /// series. Throws StoreError if there is no such run or another writer still records it.
  void resumeRun(int64_t runId);

  /// Hands points over; never waits for the database.
  void appendPoints(int64_t runId, std::vector<PointInput>&& points);
  void appendPoints(int64_t runId, const std::vector<PointInput>& points);
  void appendEvent(int64_t runId, EventInput event);
  void addCheckpoint(int64_t runId, std::string path, int64_t step);
  /// Writes the final status and summary after every point handed over before it, then releases
  /// the run's lock. Does not wait; call flush() to wait.
  void finishRun(int64_t runId, RunFinish finish);

  /// Blocks until everything handed over before the call is committed. Throws StoreError if a
  /// commit failed since the last flush (the message says why).
  void flush();
  WriterStats stats() const;

 private:
  friend class RunStore;
  RunWriter(std::string path, const StoreOptions& options);
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

}  // namespace stagewise::storage
