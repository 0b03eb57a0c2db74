#pragma once
// The child processes of a run spread over several local processes, for both `stagewise-cli
// launch` and the workbench: started with posix_spawn (close-on-exec pipes, default signal
// dispositions, other descriptors closed), their output read line by line on one thread with the
// rank attached, their exits noticed, and ended for certain. Qt-free and torch-free (POSIX).

#include <sys/types.h>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace stagewise::launch {

/// How a rank's process ended.
struct RankExit {
  int rank = 0;
  pid_t pid = -1;
  int code = 0;          ///< exit code, or 0 when killed by a signal
  int signal = 0;        ///< the signal that killed it, 0 if it exited
  std::string lastLine;  ///< the last line it wrote to stderr, if any
  bool failed() const { return code != 0 || signal != 0; }
  /// The shell's convention: the exit code, or 128 + the signal.
  int status() const { return signal != 0 ? 128 + signal : code; }
  /// "exited with code 2" / "was killed by signal 9 (Killed)".
  std::string how() const;
  /// "rank 1 (pid 4242) exited with code 2".
  std::string describe() const;
};

enum class Stream { Out, Err };

/// How to start one rank.
struct SpawnOptions {
  std::vector<std::pair<std::string, std::string>> env;  ///< added to this process's environment
  bool captureStdout = false;  ///< read its stdout too (else it goes to /dev/null)
};

/// Owns the processes of a run's ranks. Call spawn() for each, then watch(). One thread reads
/// every child's output and reaps the children; the callbacks run on it and must be quick.
/// The destructor ends whatever still runs at once (finish(0)): no child outlives the object.
class RankProcesses {
 public:
  /// A complete line (a progress line's last redraw after '\r'), without its newline.
  using LineSink = std::function<void(int rank, Stream stream, const std::string& line)>;
  using ExitSink = std::function<void(const RankExit& exit)>;

  RankProcesses(LineSink onLine, ExitSink onExit);
  ~RankProcesses();
  RankProcesses(const RankProcesses&) = delete;
  RankProcesses& operator=(const RankProcesses&) = delete;

  /// Starts `argv` (argv[0] is the program's path) as rank `rank`, stdin on /dev/null, stderr
  /// (and stdout when asked) to us. Throws std::runtime_error when it cannot be started.
  void spawn(int rank, const std::vector<std::string>& argv, const SpawnOptions& options = {});
  /// Starts the thread that reads and reaps (after the last spawn()).
  void watch();
  /// The first child that ended before finish() was called, if any.
  std::optional<RankExit> firstExit() const;
  /// How every child that has ended so far ended, in the order they did.
  std::vector<RankExit> exits() const;
  /// Whether every child has been reaped.
  bool done() const;
  /// Sends `sig` to every child still running.
  void signalAll(int sig);
  /// Gives the children `graceS` seconds to end by themselves, then sends SIGTERM (and SIGCONT,
  /// so a stopped one sees it), then SIGKILL after 3 s more; returns once all are reaped.
  void finish(double graceS);
  std::vector<pid_t> pids() const;

 private:
  struct Pipe {
    int fd = -1;  // read end; -1 once closed
    std::string buffer;
  };
  struct Child {
    int rank = 0;
    pid_t pid = -1;
    Pipe out, err;
    std::string lastLine;  // of stderr
    bool reaped = false;
  };
  void readLoop();
  void readFrom(Child& child, Stream stream);
  bool allReaped() const;  // call with m_mutex held

  LineSink m_onLine;
  ExitSink m_onExit;
  mutable std::mutex m_mutex;  // guards the children's reaped flags, the exits, m_finishing
  std::condition_variable m_changed;
  std::vector<Child> m_children;
  std::optional<RankExit> m_firstExit;
  std::vector<RankExit> m_exits;
  bool m_finishing = false;
  bool m_watching = false;  // the reader was started (it may have ended since)
  std::thread m_reader;
};

/// A free TCP port on the loopback interface, for a rendezvous.
int freeLoopbackPort();

/// Whether `path` is a regular file this process may execute.
bool isExecutableFile(const std::string& path);

/// This program's own executable (readlink /proc/self/exe).
std::string selfExecutable();

}  // namespace stagewise::launch
