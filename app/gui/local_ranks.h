#pragma once
// A local run whose stages are spread over several processes, started from the workbench: this
// process is rank 0 (it reports the whole run, so the live view and the recorder see it like any
// other), and ranks 1..N-1 are `stagewise-cli train --dist` children that the run owns.
// Torch-free: the engine is reached through the factory given (engine::createRun in the app).

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "stagewise/engine/engine.h"

namespace stagewise::gui {

/// Creates this process's run of a spec with the given options (engine::createRun).
using RankZeroFactory = std::function<std::unique_ptr<engine::Run>(
    const engine::ExperimentSpec&, engine::RunObserver*, const engine::RunOptions&)>;

struct LocalRanksOptions {
  RankZeroFactory createRankZero;
  std::string cliPath;  ///< the stagewise-cli that runs the other ranks; empty: findCli(appDir)
  std::string appDir;   ///< the workbench's folder
  /// Each line a rank writes to stderr, as "[rank r] line" (default: this process's stderr).
  /// Called on a reader thread. The lines also reach the run's event log as warnings.
  std::function<void(const std::string&)> log;
};

/// The stagewise-cli next to the workbench: `<appDir>/../cli/stagewise-cli` (build tree),
/// `<appDir>/stagewise-cli` (installed), else the first on the PATH. Throws std::runtime_error
/// saying where it looked.
std::string findCli(const std::string& appDir);

/// Starts local multi-process runs. For N processes: checks the spec can run so
/// (engine::assignRanks), writes it to a temporary file, picks a free loopback port, starts
/// ranks 1..N-1, then creates rank 0's run, which blocks until every rank has joined.
///
/// The returned run owns its processes: once it has finished (wait()) or is destroyed, they get
/// the spec's distributed.timeout_s to end by themselves, then SIGTERM, then SIGKILL. A rank that
/// ends before joining, or `stopRequested()` turning true while waiting, ends the wait at once
/// (std::runtime_error naming the rank, its exit and its last line); rank 0's creation, which
/// cannot be interrupted, then finishes on its own thread within the timeout, and the launcher's
/// destructor waits for it. The workbench ignores SIGPIPE from then on: a rank that dies fails
/// the run (the engine says which), it must not end the workbench through a closed socket.
class LocalRankLauncher {
 public:
  explicit LocalRankLauncher(LocalRanksOptions options);
  ~LocalRankLauncher();
  LocalRankLauncher(const LocalRankLauncher&) = delete;
  LocalRankLauncher& operator=(const LocalRankLauncher&) = delete;

  /// `spec` must be a local-mode spec. Throws engine::SpecError when it cannot run in
  /// `processes` processes, std::runtime_error when they cannot be started or joined.
  std::unique_ptr<engine::Run> createRun(const engine::ExperimentSpec& spec,
                                         engine::RunObserver* observer, int processes,
                                         const std::function<bool()>& stopRequested = {});

  /// Rank-0 creations given up on that have not returned yet (tests).
  int pendingStarts();

 private:
  struct Start;
  void reapStarts(double waitS);

  LocalRanksOptions m_options;
  std::mutex m_mutex;
  std::vector<std::shared_ptr<Start>> m_abandoned;
};

}  // namespace stagewise::gui
