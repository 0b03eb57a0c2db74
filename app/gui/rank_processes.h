#pragma once
// The child processes of a run spread over several local processes: started with posix_spawn,
// their stderr read line by line on one thread, their exits noticed, and ended for certain.

#include <sys/types.h>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace stagewise::gui {

/// How a rank's process ended.
struct RankExit {
  int rank = 0;
  pid_t pid = -1;
  int code = 0;          ///< exit code, or 0 when killed by a signal
  int signal = 0;        ///< the signal that killed it, 0 if it exited
  std::string lastLine;  ///< the last line it wrote to stderr, if any
  bool failed() const { return code != 0 || signal != 0; }
  /// "exited with code 2" / "was killed by signal 9 (Killed)".
  std::string how() const;
  /// "rank 1 (pid 4242) exited with code 2".
  std::string describe() const;
};

/// Owns the processes of ranks 1..N-1. Call spawn() for each, then watch(). One thread reads
/// every child's stderr and reaps the children; the callbacks run on it and must be quick.
/// The destructor ends whatever still runs at once (finish(0)): no child outlives the object.
class RankProcesses {
 public:
  using LineSink = std::function<void(int rank, const std::string& line)>;
  using ExitSink = std::function<void(const RankExit& exit)>;

  RankProcesses(LineSink onLine, ExitSink onExit);
  ~RankProcesses();
  RankProcesses(const RankProcesses&) = delete;
  RankProcesses& operator=(const RankProcesses&) = delete;

  /// Starts `argv` (argv[0] is the program's path) as rank `rank`, stdin and stdout on
  /// /dev/null, stderr to us. Throws std::runtime_error when it cannot be started.
  void spawn(int rank, const std::vector<std::string>& argv);
  /// Starts the thread that reads and reaps (after the last spawn()).
  void watch();
  /// The first child that ended before finish() was called, if any.
  std::optional<RankExit> firstExit() const;
  /// Gives the children `graceS` seconds to end by themselves, then sends SIGTERM (and SIGCONT,
  /// so a stopped one sees it), then SIGKILL after 3 s more; returns once all are reaped.
  void finish(double graceS);
  std::vector<pid_t> pids() const;

 private:
  struct Child {
    int rank = 0;
    pid_t pid = -1;
    int err = -1;  // read end of its stderr pipe; -1 once closed
    std::string buffer;
    std::string lastLine;
    bool reaped = false;
  };
  void readLoop();
  void readFrom(Child& child);
  bool allReaped() const;  // call with m_mutex held
  void signalAlive(int sig);

  LineSink m_onLine;
  ExitSink m_onExit;
  mutable std::mutex m_mutex;  // guards the children's reaped flags, m_firstExit, m_finishing
  std::condition_variable m_changed;
  std::vector<Child> m_children;
  std::optional<RankExit> m_firstExit;
  bool m_finishing = false;
  bool m_watching = false;  // the reader was started (it may have ended since)
  std::thread m_reader;
};

}  // namespace stagewise::gui
