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
