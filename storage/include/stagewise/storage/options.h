#pragma once
// Tuning knobs of the run store and its writer thread.

#include <chrono>
#include <cstddef>

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
  /// Runs PRAGMA quick_check on an existing file before anything is written to it, so a corrupt
  /// file is refused untouched. Costs a read of the whole file (~0.1 s per 100 MB).
  bool verifyOnOpen = true;
  /// Marks `running` runs whose writer is gone as `interrupted` when the store opens.
  bool recoverStaleRuns = true;
  /// A run written from another host counts as abandoned after this long without a heartbeat.
  std::chrono::milliseconds staleHeartbeat{120000};
  WriterOptions writer;
};

}  // namespace stagewise::storage
