#include "rank_processes.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace stagewise::launch {

int freeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const int error = errno;
    ::close(fd);
    throw std::runtime_error(std::string("cannot find a free loopback port: ") +
                             std::strerror(error));
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

bool isExecutableFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::string selfExecutable() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0)
    throw std::runtime_error(std::string("cannot find this program's file: ") +
                             std::strerror(errno));
  return std::string(buf, static_cast<size_t>(n));
}

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
    for (Pipe* p : {&c.out, &c.err})
      if (p->fd >= 0) ::close(p->fd);
}

void RankProcesses::spawn(int rank, const std::vector<std::string>& argv,
                          const SpawnOptions& options) {
  if (m_watching) throw std::logic_error("RankProcesses::spawn after watch");
  int pipeFds[2], outFds[2] = {-1, -1};
  if (::pipe2(pipeFds, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("cannot start rank ") + std::to_string(rank) +
                             ": pipe: " + std::strerror(errno));
  if (options.captureStdout && ::pipe2(outFds, O_CLOEXEC) != 0) {
    const int error = errno;
    ::close(pipeFds[0]), ::close(pipeFds[1]);
    throw std::runtime_error(std::string("cannot start rank ") + std::to_string(rank) +
                             ": pipe: " + std::strerror(error));
  }
  // posix_spawn, not fork + exec by hand: this process runs many threads (Qt, LibTorch), and
  // after a fork only async-signal-safe calls are allowed until exec.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  if (options.captureStdout)
    posix_spawn_file_actions_adddup2(&actions, outFds[1], STDOUT_FILENO);
  else
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
  // The environment with the rank's variables: built here, not set in this process (setenv is
  // not thread-safe, and the workbench's other threads read the environment).
  std::vector<std::string> envText;
  for (char** e = environ; *e; ++e) {
    const std::string entry(*e);
    const std::string key = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& [k, v] : options.env) replaced = replaced || k == key;
    if (!replaced) envText.push_back(entry);
  }
  for (const auto& [k, v] : options.env) envText.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (std::string& e : envText) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, argv.at(0).c_str(), &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(pipeFds[1]);
  if (outFds[1] >= 0) ::close(outFds[1]);
  if (rc != 0) {
    ::close(pipeFds[0]);
    if (outFds[0] >= 0) ::close(outFds[0]);
    throw std::runtime_error("cannot start rank " + std::to_string(rank) + " (" + argv[0] +
                             "): " + std::strerror(rc));
  }
  Child child;
  child.rank = rank;
  child.pid = pid;
  child.err.fd = pipeFds[0];
  child.out.fd = outFds[0];
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

std::vector<RankExit> RankProcesses::exits() const {
  std::lock_guard lock(m_mutex);
  return m_exits;
}

bool RankProcesses::done() const {
  std::lock_guard lock(m_mutex);
  return allReaped();
}

void RankProcesses::signalAll(int sig) {
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
    signalAll(SIGTERM);
    signalAll(SIGCONT);  // a stopped process only acts on SIGTERM once it runs again
    if (!waitAll(3.0)) {
      signalAll(SIGKILL);
      waitAll(1e9);  // SIGKILL cannot be caught: the reaping follows
    }
  }
  if (m_reader.joinable()) m_reader.join();
}

void RankProcesses::readFrom(Child& child, Stream stream) {
  Pipe& pipe = stream == Stream::Out ? child.out : child.err;
  char buf[4096];
  const ssize_t n = ::read(pipe.fd, buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n > 0) pipe.buffer.append(buf, size_t(n));
  auto deliver = [&](const std::string& line) {
    if (stream == Stream::Err) child.lastLine = line;
    if (m_onLine) m_onLine(child.rank, stream, line);
  };
  size_t start = 0;
  for (size_t nl; (nl = pipe.buffer.find('\n', start)) != std::string::npos; start = nl + 1) {
    std::string line = pipe.buffer.substr(start, nl - start);
    if (const auto cr = line.rfind('\r'); cr != std::string::npos)
      line.erase(0, cr + 1);  // progress redraws
    if (!line.empty()) deliver(line);
  }
  pipe.buffer.erase(0, start);
  if (n <= 0) {  // end of file: the child (and anything it started) closed it
    if (const auto cr = pipe.buffer.rfind('\r'); cr != std::string::npos)
      pipe.buffer.erase(0, cr + 1);
    if (!pipe.buffer.empty()) deliver(pipe.buffer);
    pipe.buffer.clear();
    ::close(pipe.fd);
    pipe.fd = -1;
  }
}

void RankProcesses::readLoop() {
  while (true) {
    std::vector<pollfd> fds;
    std::vector<std::pair<Child*, Stream>> owners;
    for (Child& c : m_children) {
      if (c.out.fd >= 0) fds.push_back({c.out.fd, POLLIN, 0}), owners.push_back({&c, Stream::Out});
      if (c.err.fd >= 0) fds.push_back({c.err.fd, POLLIN, 0}), owners.push_back({&c, Stream::Err});
    }
    if (!fds.empty())
      ::poll(fds.data(), fds.size(), 100);
    else
      ::usleep(100 * 1000);
    for (size_t i = 0; i < fds.size(); ++i)
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR))
        readFrom(*owners[i].first, owners[i].second);

    for (Child& c : m_children) {
      if (c.reaped) continue;  // only this thread sets it
      int status = 0;
      pid_t got = ::waitpid(c.pid, &status, WNOHANG);
      // Its stderr closed: it is ending. Reaped at once, its end reaches the event log before
      // rank 0's run, failing because of it, has finished.
      for (int i = 0; got == 0 && c.err.fd < 0 && i < 100; ++i) {
        ::usleep(2000);
        got = ::waitpid(c.pid, &status, WNOHANG);
      }
      if (got != c.pid) continue;
      // Whatever it wrote last is read before its end is told, so the message has it.
      for (Stream stream : {Stream::Out, Stream::Err}) {
        Pipe& pipe = stream == Stream::Out ? c.out : c.err;
        while (pipe.fd >= 0) {
          pollfd p{pipe.fd, POLLIN, 0};
          if (::poll(&p, 1, 200) <= 0) break;
          readFrom(c, stream);
        }
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
        m_exits.push_back(exit);
        if (!m_finishing && !m_firstExit) m_firstExit = exit;
      }
      m_changed.notify_all();
      if (m_onExit) m_onExit(exit);
    }
    std::lock_guard lock(m_mutex);
    if (allReaped()) return;
  }
}

}  // namespace stagewise::launch
