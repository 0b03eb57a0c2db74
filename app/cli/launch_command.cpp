// `stagewise-cli launch`: one experiment in N local processes (ranks), like torchrun: picks a free
// loopback port for the rendezvous, starts `train --dist` for each rank, prefixes their output
// with the rank, forwards Ctrl+C / SIGTERM, and makes sure no process outlives the run.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <chrono>
#include <cstring>
#include <iostream>
#include <optional>

#include "cli_args.h"
#include "commands.h"

namespace stagewise::cli {

namespace {

std::atomic<int> g_launchSignal{0};
extern "C" void onLaunchSignal(int sig) { g_launchSignal.store(sig); }

int freeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    throw std::runtime_error(std::string("cannot find a free port: ") + std::strerror(errno));
  }
  const int port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

struct Child {
  int rank = 0;
  pid_t pid = -1;
  int out = -1, err = -1;  // pipe read ends; -1 once closed
  std::string outBuf, errBuf;
  std::optional<int> code;  // exit code (128 + signal when killed)
  std::string lastOutLine;
};

pid_t spawn(const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& env,
            int& outFd, int& errFd) {
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(err[1], STDERR_FILENO);
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv("/proc/self/exe", args.data());
    std::fprintf(stderr, "cannot start rank: %s\n", std::strerror(errno));
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(err[1]);
  outFd = out[0];
  errFd = err[0];
  return pid;
}

/// Moves complete lines from `buf` to the terminal with the rank's prefix.
void flushLines(std::string& buf, std::ostream& os, const std::string& prefix, bool final, std::string* last) {
  size_t start = 0;
  while (true) {
    auto nl = buf.find('\n', start);
    if (nl == std::string::npos) break;
    std::string line = buf.substr(start, nl - start);
    if (auto cr = line.rfind('\r'); cr != std::string::npos) line = line.substr(cr + 1);  // progress redraws
    if (!line.empty()) {
      if (last) *last = line;
      os << prefix << line << "\n";
    }
    start = nl + 1;
  }
  buf.erase(0, start);
  if (final && !buf.empty()) {
    if (last) *last = buf;
    os << prefix << buf << "\n";
    buf.clear();
  }
  os.flush();
}

}  // namespace

int launchCommand(const std::vector<std::string>& argv) {
  Args args(argv, {"--config", "--procs", "--db", "--port", "--timeout"}, {"--set"},
            {"--json", "--quiet", "--no-store", "--help"});
  if (args.flag("--help")) {
    std::cout << "usage: stagewise-cli launch --config FILE --procs N [--set key=value]... [--db PATH | --no-store]\n"
                 "                            [--port P] [--timeout S] [--json] [--quiet]\n"
                 "  runs the experiment in N local processes, stages spread over them in order (or as\n"
                 "  stages[i].rank says), activations passed over c10d/Gloo on loopback. Rank 0 records the\n"
                 "  run in the store. Output lines carry their rank; --json prints rank 0's summary last.\n"
                 "  A rank that dies or hangs ends the run within the timeout (default: the spec's\n"
                 "  distributed.timeout_s); no process outlives the launch.\n";
    return 0;
  }
  if (!args.positional().empty()) throw UsageError("unexpected argument '" + args.positional()[0] + "'");
  const std::string config = args.required("--config");
  int procs = 0;
  try {
    procs = std::stoi(args.required("--procs"));
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception&) {
    throw UsageError("--procs needs a number of processes, got '" + *args.value("--procs") + "'");
  }
  if (procs < 1 || procs > 64) throw UsageError("--procs must be between 1 and 64");
  // Bad specs fail here, once, rather than in every rank.
  const engine::ExperimentSpec spec = specFromArgs(config, args.values("--set"));
  engine::assignRanks(spec, spec.stageCount(), procs);  // throws SpecError with what to change
  double timeout = spec.distributed.timeoutS;
  if (auto t = args.value("--timeout")) {
    try {
      timeout = std::stod(*t);
    } catch (const std::exception&) {
      throw UsageError("--timeout needs seconds, got '" + *t + "'");
    }
    if (!(timeout >= 1)) throw UsageError("--timeout must be at least 1 second");
  }
  int port = 0;
  if (auto p = args.value("--port")) {
    try {
      port = std::stoi(*p);
    } catch (const std::exception&) {
      throw UsageError("--port needs a TCP port number, got '" + *p + "'");
    }
  } else {
    port = freeLoopbackPort();
  }

  std::signal(SIGINT, onLaunchSignal);
  std::signal(SIGTERM, onLaunchSignal);
  std::signal(SIGPIPE, SIG_IGN);
  std::vector<Child> children(static_cast<size_t>(procs));
  for (int r = 0; r < procs; ++r) {
    std::vector<std::string> a = {"stagewise-cli", "train", "--dist", "--config", config, "--timeout", std::to_string(timeout)};
    for (const auto& s : args.values("--set")) a.insert(a.end(), {"--set", s});
    if (r == 0) {
      if (args.flag("--no-store")) a.push_back("--no-store");
      else if (auto db = args.value("--db")) a.insert(a.end(), {"--db", *db});
      if (args.flag("--json")) a.push_back("--json");
      if (args.flag("--quiet")) a.push_back("--quiet");
    } else {
      a.insert(a.end(), {"--no-store", "--quiet"});
    }
    Child& c = children[static_cast<size_t>(r)];
    c.rank = r;
    c.pid = spawn(a,
                  {{"RANK", std::to_string(r)},
                   {"WORLD_SIZE", std::to_string(procs)},
                   {"MASTER_ADDR", "127.0.0.1"},
                   {"MASTER_PORT", std::to_string(port)}},
                  c.out, c.err);
  }
  std::cerr << "[launch] " << procs << " processes, rendezvous 127.0.0.1:" << port << ", timeout " << timeout << " s\n";

  using Clock = std::chrono::steady_clock;
  std::optional<Clock::time_point> deadline;  // set when a rank fails: the others get the timeout to end
  bool termSent = false, killSent = false;
  int forwarded = 0;
  auto alive = [&] {
    int n = 0;
    for (auto& c : children) n += !c.code.has_value();
    return n;
  };
  while (alive() > 0 || std::any_of(children.begin(), children.end(), [](auto& c) { return c.out >= 0 || c.err >= 0; })) {
    // Forward a signal to every rank; a second one kills.
    if (const int sig = g_launchSignal.exchange(0)) {
      ++forwarded;
      std::cerr << "[launch] " << (forwarded == 1 ? "stopping every rank (signal " + std::to_string(sig) + ")" : "killing every rank") << "\n";
      for (auto& c : children)
        if (!c.code) ::kill(c.pid, forwarded == 1 ? SIGTERM : SIGKILL);
    }
    std::vector<pollfd> fds;
    std::vector<std::pair<Child*, bool>> who;
    for (auto& c : children) {
      if (c.out >= 0) fds.push_back({c.out, POLLIN, 0}), who.push_back({&c, true});
      if (c.err >= 0) fds.push_back({c.err, POLLIN, 0}), who.push_back({&c, false});
    }
    if (!fds.empty()) ::poll(fds.data(), fds.size(), 100);
    else ::usleep(100000);
    for (size_t i = 0; i < fds.size(); ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      auto [c, isOut] = who[i];
      char buf[4096];
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      std::string& b = isOut ? c->outBuf : c->errBuf;
      const std::string prefix = "[rank " + std::to_string(c->rank) + "] ";
      if (n > 0) {
        b.append(buf, static_cast<size_t>(n));
        flushLines(b, isOut ? std::cout : std::cerr, prefix, false, isOut ? &c->lastOutLine : nullptr);
      } else {
        flushLines(b, isOut ? std::cout : std::cerr, prefix, true, isOut ? &c->lastOutLine : nullptr);
        ::close(fds[i].fd);
        (isOut ? c->out : c->err) = -1;
      }
    }
    for (auto& c : children) {
      if (c.code) continue;
      int status = 0;
      if (::waitpid(c.pid, &status, WNOHANG) == c.pid) {
        c.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (*c.code != 0 && !deadline) {
          std::cerr << "[launch] rank " << c.rank << " ended with "
                    << (WIFEXITED(status) ? "exit code " + std::to_string(*c.code)
                                          : std::string("signal ") + strsignal(WTERMSIG(status)))
                    << "; the other ranks have " << timeout << " s to end\n";
          deadline = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(timeout * 1000));
        }
      }
    }
    if (deadline && Clock::now() > *deadline && alive() > 0) {
      if (!termSent) {
        termSent = true;
        std::cerr << "[launch] ranks still running after the timeout: stopping them\n";
        for (auto& c : children)
          if (!c.code) ::kill(c.pid, SIGTERM), ::kill(c.pid, SIGCONT);  // a stopped rank must see it
        deadline = Clock::now() + std::chrono::seconds(3);
      } else if (!killSent) {
        killSent = true;
        for (auto& c : children)
          if (!c.code) ::kill(c.pid, SIGKILL);
      }
    }
  }
  if (args.flag("--json") && !children[0].lastOutLine.empty()) std::cout << children[0].lastOutLine << std::endl;
  int code = 0;
  for (auto& c : children)
    if (c.code && *c.code != 0 && code == 0) code = *c.code;
  if (children[0].code && *children[0].code != 0) code = *children[0].code;
  return code > 125 ? 1 : code;
}

}  // namespace stagewise::cli
