#pragma once
// Tuning knobs of the run store and its writer thread.

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace stagewise::storage {

struct WriterOptions {
  /// Commit as soon as this many points wait...
  size_t batchPoints = 20000;
  /// ...or when the oldest waiting point is this old, whichever comes first.
  std::chrono::milliseconds maxDelay{250};
  /// How often a live run's heartbeat is refreshed (liveness across hosts).
  std::chrono::milliseconds heartbeatInterval{5000};
  /// While the store cannot be written (disk full, locked by another process, I/O error), what
  /// failed stays in memory and is retried this often, in order, until it commits...
  std::chrono::milliseconds retryInterval{1000};
  /// ...holding at most this many points (about 70 bytes each); points handed over beyond it
  /// are dropped and counted as lost.
  size_t maxHeldPoints = 2'000'000;
  /// When the store closes with data still held, how long to keep retrying before counting it
  /// lost (the runs concerned then read as `interrupted`).
  std::chrono::milliseconds closeRetry{10000};
  /// A new run met a store locked by another process (or a full disk): its record is retried
  /// every retryInterval for this long, so the run is recorded once the lock goes, before its
  /// creation fails (the caller then trains unrecorded and says so).
  std::chrono::milliseconds createRetry{60000};
  /// The recording policy for long series (docs/storage.md): a series keeps its first
  /// `rawPointsPerSeries` points as they came; after that every window of W points keeps its
  /// smallest and largest point (a NaN point too), with W = 4, then doubling every
  /// `rowsPerPhase` stored rows, so rows grow with the log of the points (a 10^6-step series
  /// keeps < 100,000) and the min and max over any whole windows stay exact. 0: keep every point.
  int64_t rawPointsPerSeries = 10000;
  int64_t rowsPerPhase = 10000;
};

struct StoreOptions {
  int busyTimeoutMs = 10000;
  /// Checks an existing file before anything is written to it, so a damaged file is refused
  /// untouched: PRAGMA quick_check (reads the whole file, ~4 ms per MB) for files up to
  /// fullCheckMaxBytes; above that, the header against the file size, the schema and both ends of
  /// every table, and later damage surfaces as a StoreError when it is read.
  bool verifyOnOpen = true;
  int64_t fullCheckMaxBytes = 64LL << 20;
  /// Marks `running` runs whose writer is gone as `interrupted` when the store opens.
  bool recoverStaleRuns = true;
  /// A run written from another host counts as abandoned after this long without a heartbeat.
  std::chrono::milliseconds staleHeartbeat{120000};
  WriterOptions writer;
};

}  // namespace stagewise::storage
