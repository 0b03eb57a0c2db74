// `stagewise-cli launch`: one experiment in N local processes (ranks), like torchrun: picks a free
// loopback port for the rendezvous, starts `train --dist` for each rank, prefixes their output
// with the rank, forwards Ctrl+C / SIGTERM, and makes sure no process outlives the run. The
// processes are started and watched by stagewise_launch, as the workbench starts its ranks.

#include <signal.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>

#include "cli_args.h"
#include "commands.h"
#include "rank_processes.h"

namespace stagewise::cli {

namespace {

std::atomic<int> g_launchSignal{0};
extern "C" void onLaunchSignal(int sig) {
  g_launchSignal.store(sig);
}

}  // namespace

int launchCommand(const std::vector<std::string>& argv) {
  Args args(argv, {"--config", "--procs", "--db", "--port", "--timeout"}, {"--set"},
            {"--json", "--quiet", "--no-store", "--help"});
  if (args.flag("--help")) {
    std::cout
        << "usage: stagewise-cli launch --config FILE --procs N [--set key=value]... [--db PATH | "
           "--no-store]\n"
           "                            [--port P] [--timeout S] [--json] [--quiet]\n"
           "  runs the experiment in N local processes, stages spread over them in order (or as\n"
           "  stages[i].rank says), activations passed over c10d/Gloo on loopback. Rank 0 records "
           "the\n"
           "  run in the store. Output lines carry their rank; --json prints rank 0's summary "
           "last.\n"
           "  A rank that dies or hangs ends the run within the timeout (default: the spec's\n"
           "  distributed.timeout_s); no process outlives the launch.\n";
    return 0;
  }
  if (!args.positional().empty())
    throw UsageError("unexpected argument '" + args.positional()[0] + "'");
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
    port = launch::freeLoopbackPort();
  }

  std::signal(SIGINT, onLaunchSignal);
  std::signal(SIGTERM, onLaunchSignal);
  std::signal(SIGPIPE, SIG_IGN);
  // Output lines carry their rank; one lock keeps lines from two ranks whole.
  std::mutex outputMutex;
  std::string lastRankZeroLine;
  launch::RankProcesses ranks(
      [&](int rank, launch::Stream stream, const std::string& line) {
        std::lock_guard lock(outputMutex);
        std::ostream& os = stream == launch::Stream::Out ? std::cout : std::cerr;
        os << "[rank " << rank << "] " << line << "\n";
        os.flush();
        if (rank == 0 && stream == launch::Stream::Out) lastRankZeroLine = line;
      },
      nullptr);
  const std::string self = launch::selfExecutable();
  for (int r = 0; r < procs; ++r) {
    std::vector<std::string> a = {
        self, "train", "--dist", "--config", config, "--timeout", std::to_string(timeout)};
    for (const auto& s : args.values("--set")) a.insert(a.end(), {"--set", s});
    if (r == 0) {
      if (args.flag("--no-store"))
        a.push_back("--no-store");
      else if (auto db = args.value("--db"))
        a.insert(a.end(), {"--db", *db});
      if (args.flag("--json")) a.push_back("--json");
      if (args.flag("--quiet")) a.push_back("--quiet");
    } else {
      a.insert(a.end(), {"--no-store", "--quiet"});
    }
    launch::SpawnOptions options;
    options.captureStdout = true;
    options.env = {{"RANK", std::to_string(r)},
                   {"WORLD_SIZE", std::to_string(procs)},
                   {"MASTER_ADDR", "127.0.0.1"},
                   {"MASTER_PORT", std::to_string(port)}};
    ranks.spawn(r, a, options);
  }
  ranks.watch();
  {
    std::lock_guard lock(outputMutex);
    std::cerr << "[launch] " << procs << " processes, rendezvous 127.0.0.1:" << port << ", timeout "
              << timeout << " s\n";
  }

  using Clock = std::chrono::steady_clock;
  std::optional<Clock::time_point>
      deadline;  // set when a rank fails: the others get the timeout to end
  bool termSent = false, killSent = false;
  int forwarded = 0;
  size_t told = 0;  // exits already reported
  while (!ranks.done()) {
    // Forward a signal to every rank; a second one kills.
    if (const int sig = g_launchSignal.exchange(0)) {
      ++forwarded;
      {
        std::lock_guard lock(outputMutex);
        std::cerr << "[launch] "
                  << (forwarded == 1 ? "stopping every rank (signal " + std::to_string(sig) + ")"
                                     : "killing every rank")
                  << "\n";
      }
      ranks.signalAll(forwarded == 1 ? SIGTERM : SIGKILL);
    }
    const auto exits = ranks.exits();
    for (; told < exits.size(); ++told) {
      const auto& e = exits[told];
      if (!e.failed() || deadline) continue;
      {
        std::lock_guard lock(outputMutex);
        std::cerr << "[launch] rank " << e.rank << " " << e.how() << "; the other ranks have "
                  << timeout << " s to end\n";
      }
      deadline = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(timeout * 1000));
    }
    if (deadline && Clock::now() > *deadline) {
      if (!termSent) {
        termSent = true;
        {
          std::lock_guard lock(outputMutex);
          std::cerr << "[launch] ranks still running after the timeout: stopping them\n";
        }
        ranks.signalAll(SIGTERM);
        ranks.signalAll(SIGCONT);  // a stopped rank must see it
        deadline = Clock::now() + std::chrono::seconds(3);
      } else if (!killSent) {
        killSent = true;
        ranks.signalAll(SIGKILL);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ranks.finish(0);  // every rank is reaped: this joins the reader after its last lines
  if (args.flag("--json") && !lastRankZeroLine.empty()) std::cout << lastRankZeroLine << std::endl;
  int code = 0;
  std::optional<int> rankZero;
  for (const auto& e : ranks.exits()) {
    if (e.failed() && code == 0) code = e.status();
    if (e.rank == 0) rankZero = e.status();
  }
  if (rankZero && *rankZero != 0) code = *rankZero;
  return code > 125 ? 1 : code;
}

}  // namespace stagewise::cli
