#include "rank_processes.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace stagewise::gui {

std::string RankExit::how() const {
  if (signal == 0) return "exited with code " + std::to_string(code);
  const char* name = ::strsignal(signal);
  return "was killed by signal " + std::to_string(signal) +
         (name ? std::string(" (") + name + ")" : "");
}

std::string RankExit::describe() const {
  return "rank " + std::to_string(rank) + " (pid " + std::to_string(pid) + ") " + how();
}

RankProcesses::RankProcesses(LineSink onLine, ExitSink onExit)
    : m_onLine(std::move(onLine)), m_onExit(std::move(onExit)) {}

RankProcesses::~RankProcesses() {
  finish(0);
  for (Child& c : m_children)
    if (c.err >= 0) ::close(c.err);
}

void RankProcesses::spawn(int rank, const std::vector<std::string>& argv) {
  if (m_watching) throw std::logic_error("RankProcesses::spawn after watch");
  int pipeFds[2];
  if (::pipe2(pipeFds, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("cannot start rank ") + std::to_string(rank) +
                             ": pipe: " + std::strerror(errno));
  // posix_spawn, not fork + exec by hand: this process runs many threads (Qt, LibTorch), and
  // after a fork only async-signal-safe calls are allowed until exec.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipeFds[1], STDERR_FILENO);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
  // Descriptors opened without O_CLOEXEC (the run store, sockets) stay with the workbench.
  posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
#endif
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults, none;
  sigemptyset(&defaults);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD}) sigaddset(&defaults, sig);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr,
                                &defaults);  // the workbench ignores SIGPIPE; a rank must not
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, argv.at(0).c_str(), &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(pipeFds[1]);
  if (rc != 0) {
    ::close(pipeFds[0]);
    throw std::runtime_error("cannot start rank " + std::to_string(rank) + " (" + argv[0] +
                             "): " + std::strerror(rc));
  }
  Child child;
  child.rank = rank;
  child.pid = pid;
  child.err = pipeFds[0];
  std::lock_guard lock(m_mutex);
  m_children.push_back(std::move(child));
}

void RankProcesses::watch() {
  if (m_watching) return;
  m_watching = true;
  m_reader = std::thread([this] { readLoop(); });
}

std::optional<RankExit> RankProcesses::firstExit() const {
  std::lock_guard lock(m_mutex);
  return m_firstExit;
}

std::vector<pid_t> RankProcesses::pids() const {
  std::lock_guard lock(m_mutex);
  std::vector<pid_t> out;
  for (const Child& c : m_children) out.push_back(c.pid);
  return out;
}

bool RankProcesses::allReaped() const {
  for (const Child& c : m_children)
    if (!c.reaped) return false;
  return true;
}

void RankProcesses::signalAlive(int sig) {
  // Under the lock that reaping takes, so a pid is never signalled after it was reaped (and
  // possibly reused by another process).
  std::lock_guard lock(m_mutex);
  for (const Child& c : m_children)
    if (!c.reaped) ::kill(c.pid, sig);
}

void RankProcesses::finish(double graceS) {
  using Clock = std::chrono::steady_clock;
  {
    std::lock_guard lock(m_mutex);
    m_finishing = true;
    if (m_children.empty()) return;
  }
  watch();  // the reader reaps; it may not have been started if a later spawn failed
  auto waitAll = [this](double seconds) {
    std::unique_lock lock(m_mutex);
    const auto deadline = Clock::now() + std::chrono::milliseconds(int64_t(seconds * 1000));
    return m_changed.wait_until(lock, deadline, [this] { return allReaped(); });
  };
  if (!waitAll(graceS)) {
    signalAlive(SIGTERM);
    signalAlive(SIGCONT);  // a stopped process only acts on SIGTERM once it runs again
    if (!waitAll(3.0)) {
      signalAlive(SIGKILL);
      waitAll(1e9);  // SIGKILL cannot be caught: the reaping follows
    }
  }
  if (m_reader.joinable()) m_reader.join();
}

void RankProcesses::readFrom(Child& child) {
  char buf[4096];
  const ssize_t n = ::read(child.err, buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n > 0) child.buffer.append(buf, size_t(n));
  size_t start = 0;
  for (size_t nl; (nl = child.buffer.find('\n', start)) != std::string::npos; start = nl + 1) {
    std::string line = child.buffer.substr(start, nl - start);
    if (const auto cr = line.rfind('\r'); cr != std::string::npos) line.erase(0, cr + 1);
    if (line.empty()) continue;
    child.lastLine = line;
    if (m_onLine) m_onLine(child.rank, line);
  }
  child.buffer.erase(0, start);
  if (n <= 0) {  // end of file: the child (and anything it started) closed its stderr
    if (!child.buffer.empty()) {
      child.lastLine = child.buffer;
      if (m_onLine) m_onLine(child.rank, child.buffer);
      child.buffer.clear();
    }
    ::close(child.err);
    child.err = -1;
  }
}

void RankProcesses::readLoop() {
  while (true) {
    std::vector<pollfd> fds;
    std::vector<Child*> owners;
    for (Child& c : m_children)
      if (c.err >= 0) fds.push_back({c.err, POLLIN, 0}), owners.push_back(&c);
    if (!fds.empty())
      ::poll(fds.data(), fds.size(), 100);
    else
      ::usleep(100 * 1000);
    for (size_t i = 0; i < fds.size(); ++i)
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) readFrom(*owners[i]);

    for (Child& c : m_children) {
      if (c.reaped) continue;  // only this thread sets it
      int status = 0;
      pid_t got = ::waitpid(c.pid, &status, WNOHANG);
      // Its stderr closed: it is ending. Reaped at once, its end reaches the event log before
      // rank 0's run, failing because of it, has finished.
      for (int i = 0; got == 0 && c.err < 0 && i < 100; ++i) {
        ::usleep(2000);
        got = ::waitpid(c.pid, &status, WNOHANG);
      }
      if (got != c.pid) continue;
      // Whatever it wrote last is read before its end is told, so the message has it.
      while (c.err >= 0) {
        pollfd p{c.err, POLLIN, 0};
        if (::poll(&p, 1, 200) <= 0) break;
        readFrom(c);
      }
      RankExit exit;
      exit.rank = c.rank;
      exit.pid = c.pid;
      exit.code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
      exit.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
      exit.lastLine = c.lastLine;
      {
        std::lock_guard lock(m_mutex);
        c.reaped = true;
        if (!m_finishing && !m_firstExit) m_firstExit = exit;
      }
      m_changed.notify_all();
      if (m_onExit) m_onExit(exit);
    }
    std::lock_guard lock(m_mutex);
    if (allReaped()) return;
  }
}

}  // namespace stagewise::gui
