#pragma once
// Telling a live writer from a dead one. A writer holds an exclusive flock() on a sidecar file
// `<db>.run-<id>.lock` while its run is `running`; the kernel drops the lock when the process
// dies, however it dies. flock (not fcntl) because fcntl locks belong to the process and vanish
// when any descriptor of the file is closed, which two stores in one process would do.

#include <cstdint>
#include <optional>
#include <string>

#include "stagewise/storage/records.h"

namespace stagewise::storage::detail {

std::string lockPathFor(const std::string& dbPath, int64_t runId);
/// A study's lock file, `<db>.study-<id>.lock`: held while a process runs the study.
std::string studyLockPathFor(const std::string& dbPath, int64_t studyId);
std::string hostName();
int64_t currentPid();
/// True if a process with this pid exists on this host (EPERM counts as alive).
bool pidAlive(int64_t pid);

/// An exclusive flock on a run's lock file, released (and the file removed) on destruction.
class RunLock {
 public:
  /// nullopt if another open file description holds the lock. Throws StoreError when the file
  /// cannot be created.
  static std::optional<RunLock> tryAcquire(const std::string& path);
  RunLock(RunLock&& other) noexcept;
  RunLock& operator=(RunLock&& other) noexcept;
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;
  ~RunLock();
  /// Unlinks the file, then drops the lock.
  void release();
  /// Drops the lock but leaves the file, as a crash would: the next open finds it unlocked and
  /// marks the run `interrupted` (even from this process, whose pid is alive).
  void abandon();

 private:
  RunLock(std::string path, int fd) : m_path(std::move(path)), m_fd(fd) {}
  std::string m_path;
  int m_fd = -1;
};

/// Whether the writer of a `running` run is still there. Same host: its lock file is locked, or
/// (no lock file) its pid exists. Another host: the lock is held or the heartbeat is newer than
/// `staleMs`. A dead verdict comes with the lock, held so nobody resumes the run meanwhile.
struct WriterProbe {
  bool alive = true;
  std::optional<RunLock> lock;
};
WriterProbe probeWriter(const std::string& dbPath, int64_t runId, const WriterInfo& writer,
                        int64_t staleMs);
/// The same for any lock file (a study's).
WriterProbe probeLockHolder(const std::string& lockPath, const WriterInfo& writer, int64_t staleMs);

}  // namespace stagewise::storage::detail
