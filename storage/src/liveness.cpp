#include "liveness.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "stagewise/storage/store_error.h"

namespace stagewise::storage::detail {

std::string lockPathFor(const std::string& dbPath, int64_t runId) {
  return dbPath + ".run-" + std::to_string(runId) + ".lock";
}

std::string studyLockPathFor(const std::string& dbPath, int64_t studyId) {
  return dbPath + ".study-" + std::to_string(studyId) + ".lock";
}

std::string hostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  return buf;
}

int64_t currentPid() {
  return static_cast<int64_t>(getpid());
}

bool pidAlive(int64_t pid) {
  if (pid <= 0) return false;
  return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

std::optional<RunLock> RunLock::tryAcquire(const std::string& path) {
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw StoreError("cannot create the run lock file '" + path + "': " + std::strerror(errno));
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    close(fd);
    return std::nullopt;
  }
  return RunLock(path, fd);
}

RunLock::RunLock(RunLock&& other) noexcept
    : m_path(std::move(other.m_path)), m_fd(std::exchange(other.m_fd, -1)) {}

RunLock& RunLock::operator=(RunLock&& other) noexcept {
  if (this != &other) {
    release();
    m_path = std::move(other.m_path);
    m_fd = std::exchange(other.m_fd, -1);
  }
  return *this;
}

RunLock::~RunLock() {
  release();
}

void RunLock::release() {
  if (m_fd < 0) return;
  // Unlink while still holding the lock: whoever opens the path afterwards gets a new file.
  unlink(m_path.c_str());
  close(m_fd);
  m_fd = -1;
}

void RunLock::abandon() {
  if (m_fd < 0) return;
  close(m_fd);
  m_fd = -1;
}

WriterProbe probeWriter(const std::string& dbPath, int64_t runId, const WriterInfo& writer,
                        int64_t staleMs) {
  return probeLockHolder(lockPathFor(dbPath, runId), writer, staleMs);
}

WriterProbe probeLockHolder(const std::string& path, const WriterInfo& writer, int64_t staleMs) {
  const bool sameHost = writer.host == hostName();
  const bool heartbeatStale = nowMs() - writer.heartbeatAtMs > staleMs;
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    bool opened = true;
    std::optional<RunLock> lock;
    try {
      lock = RunLock::tryAcquire(path);
    } catch (const StoreError&) {
      opened = false;  // a read-only folder: judge by pid / heartbeat below
    }
    if (opened) {
      if (!lock) return {true, std::nullopt};
      if (sameHost || heartbeatStale) return {false, std::move(lock)};
      return {true, std::nullopt};
    }
  }
  if (sameHost) return {pidAlive(writer.pid), std::nullopt};
  return {!heartbeatStale, std::nullopt};
}

}  // namespace stagewise::storage::detail
