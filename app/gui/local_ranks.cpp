#include "local_ranks.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <iostream>
#include <sstream>

#include "rank_processes.h"

namespace stagewise::gui {

namespace {

using Clock = std::chrono::steady_clock;

using launch::freeLoopbackPort;
using launch::isExecutableFile;
using launch::RankExit;
using launch::RankProcesses;

/// The experiment the other ranks read (--config), removed with the run.
class SpecFile {
 public:
  explicit SpecFile(const std::string& json) {
    const char* dir = std::getenv("TMPDIR");
    std::string pattern = std::string(dir && *dir ? dir : "/tmp") + "/stagewise-spec-XXXXXX.json";
    const int fd = ::mkstemps(pattern.data(), 5);
    if (fd < 0)
      throw std::runtime_error("cannot write the experiment for the other processes to " + pattern +
                               ": " + std::strerror(errno));
    m_path = pattern;
    size_t done = 0;
    while (done < json.size()) {
      const ssize_t n = ::write(fd, json.data() + done, json.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int error = errno;
        ::close(fd);
        ::unlink(m_path.c_str());
        throw std::runtime_error("cannot write " + m_path + ": " + std::strerror(error));
      }
      done += size_t(n);
    }
    ::close(fd);
  }
  ~SpecFile() { ::unlink(m_path.c_str()); }
  SpecFile(const SpecFile&) = delete;
  SpecFile& operator=(const SpecFile&) = delete;
  const std::string& path() const { return m_path; }

 private:
  std::string m_path;
};

/// Stands between rank 0's run and the caller's observer: forwards the run's callbacks, adds
/// the other ranks' stderr lines and abnormal exits as warnings (held until the run has started,
/// dropped once it has finished), and can be cut off when a start is given up. One lock
/// serialises everything, so the caller's observer never sees two calls at once.
class Relay : public engine::RunObserver {
 public:
  explicit Relay(engine::RunObserver* next) : m_next(next) {}
  void onStart(const engine::RunInfo& info) override {
    std::lock_guard lock(m_mutex);
    if (!m_next) return;
    m_t0 = Clock::now();
    m_next->onStart(info);
    m_started = true;
    for (const engine::RunEvent& e : m_pending) m_next->onEvent(e);
    m_pending.clear();
  }
  void onMetrics(const std::vector<engine::MetricPoint>& points) override {
    std::lock_guard lock(m_mutex);
    if (m_next) m_next->onMetrics(points);
  }
  void onSpans(const std::vector<engine::StepSpan>& spans) override {
    std::lock_guard lock(m_mutex);
    if (m_next) m_next->onSpans(spans);
  }
  void onEvent(const engine::RunEvent& event) override {
    std::lock_guard lock(m_mutex);
    if (m_next) m_next->onEvent(event);
  }
  void onFinish(const engine::RunSummary& summary) override {
    std::lock_guard lock(m_mutex);
    if (m_next) m_next->onFinish(summary);
    m_finished = true;
  }
  void inject(const std::string& message) {
    std::lock_guard lock(m_mutex);
    if (!m_next || m_finished) return;
    engine::RunEvent event{engine::EventKind::Warning, 0, -1, message};
    if (!m_started) {
      if (m_pending.size() < kMaxPending) m_pending.push_back(std::move(event));
      return;
    }
    event.timeS = std::chrono::duration<double>(Clock::now() - m_t0).count();
    m_next->onEvent(event);
  }
  void detach() {
    std::lock_guard lock(m_mutex);
    m_next = nullptr;
  }

 private:
  static constexpr size_t kMaxPending = 100;
  std::mutex m_mutex;
  engine::RunObserver* m_next;
  bool m_started = false;
  bool m_finished = false;
  Clock::time_point m_t0;
  std::vector<engine::RunEvent> m_pending;
};

/// Rank 0's run, owning the other ranks' processes and the spec file they read.
class LocalRanksRun : public engine::Run {
 public:
  LocalRanksRun(std::shared_ptr<Relay> relay, std::unique_ptr<RankProcesses> ranks,
                std::unique_ptr<SpecFile> file, std::unique_ptr<engine::Run> run, double graceS)
      : m_relay(std::move(relay)),
        m_ranks(std::move(ranks)),
        m_file(std::move(file)),
        m_run(std::move(run)),
        m_graceS(graceS) {}
  ~LocalRanksRun() override {
    m_run.reset();  // stops and joins rank 0, which tells the other ranks to stop
    m_ranks->finish(m_graceS);
    m_relay->detach();
  }
  void start() override { m_run->start(); }
  void pause() override { m_run->pause(); }
  void resume() override { m_run->resume(); }
  void requestStop() override { m_run->requestStop(); }
  engine::RunSummary wait() override {
    engine::RunSummary summary = m_run->wait();
    // The other ranks end once rank 0 has its summary; a run is over when they have.
    m_ranks->finish(m_graceS);
    return summary;
  }
  bool waitFor(std::chrono::milliseconds timeout) override { return m_run->waitFor(timeout); }
  engine::RunState state() const override { return m_run->state(); }
  engine::Progress progress() const override { return m_run->progress(); }

 private:
  std::shared_ptr<Relay> m_relay;
  std::unique_ptr<RankProcesses> m_ranks;
  std::unique_ptr<SpecFile> m_file;
  std::unique_ptr<engine::Run> m_run;
  double m_graceS;
};

std::string secondsArg(double s) {
  std::ostringstream out;
  out << s;
  return out.str();
}

}  // namespace

/// Rank 0's creation on its own thread, so that waiting for it can be given up.
struct LocalRankLauncher::Start {
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;
  bool abandoned = false;
  std::unique_ptr<engine::Run> run;
  std::exception_ptr error;
  double timeoutS = 60;
  std::thread thread;
};

std::string findCli(const std::string& appDir) {
  std::vector<std::string> looked;
  if (!appDir.empty())
    for (const char* rel : {"/../cli/stagewise-cli", "/stagewise-cli"}) {
      looked.push_back(appDir + rel);
      if (isExecutableFile(looked.back())) return looked.back();
    }
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');) {
      const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/stagewise-cli";
      if (isExecutableFile(candidate)) return candidate;
    }
  }
  std::string where;
  for (const auto& l : looked) where += l + ", ";
  throw std::runtime_error("stagewise-cli was not found (looked at " + where +
                           "and on the PATH); the workbench starts the other processes with it: "
                           "build it (target stagewise-cli) or install it next to the workbench");
}

LocalRankLauncher::LocalRankLauncher(LocalRanksOptions options) : m_options(std::move(options)) {
  if (!m_options.log)
    m_options.log = [](const std::string& line) { std::cerr << line << std::endl; };
}

LocalRankLauncher::~LocalRankLauncher() {
  double longest = 0;
  {
    std::lock_guard lock(m_mutex);
    for (const auto& s : m_abandoned) longest = std::max(longest, s->timeoutS);
  }
  reapStarts(longest + 10);
}

int LocalRankLauncher::pendingStarts() {
  reapStarts(0);
  std::lock_guard lock(m_mutex);
  return int(m_abandoned.size());
}

void LocalRankLauncher::reapStarts(double waitS) {
  std::lock_guard lock(m_mutex);
  const auto deadline = Clock::now() + std::chrono::milliseconds(int64_t(waitS * 1000));
  for (auto it = m_abandoned.begin(); it != m_abandoned.end();) {
    Start& s = **it;
    std::unique_lock startLock(s.mutex);
    if (!s.cv.wait_until(startLock, deadline, [&] { return s.done; })) {
      if (waitS == 0) {
        ++it;
        continue;
      }
      // Still blocked past its own timeout: let it end on its own (it holds what it uses).
      startLock.unlock();
      s.thread.detach();
    } else {
      startLock.unlock();
      s.thread.join();
    }
    it = m_abandoned.erase(it);
  }
}

std::unique_ptr<engine::Run> LocalRankLauncher::createRun(
    const engine::ExperimentSpec& spec, engine::RunObserver* observer, int processes,
    const std::function<bool()>& stopRequested) {
  if (!m_options.createRankZero) throw std::logic_error("LocalRankLauncher needs createRankZero");
  reapStarts(0);
  if (processes < 1) throw engine::SpecError("", "a run needs at least 1 process");
  if (processes == 1) return m_options.createRankZero(spec, observer, {});
  // Every rank must run the identical spec: rank 0 runs what the others read from the file.
  const std::string json = engine::specToJson(spec);
  const engine::ExperimentSpec same = engine::parseSpec(json);
  engine::assignRanks(same, same.stageCount(), processes);  // SpecError: what to change
  const std::string cli = m_options.cliPath.empty() ? findCli(m_options.appDir) : m_options.cliPath;
  auto file = std::make_unique<SpecFile>(json);
  const double timeoutS = std::max(1.0, same.distributed.timeoutS);
  const int port = freeLoopbackPort();
  std::signal(SIGPIPE, SIG_IGN);

  auto relay = std::make_shared<Relay>(observer);
  auto log = m_options.log;
  auto ranks = std::make_unique<RankProcesses>(
      [relay, log](int rank, launch::Stream, const std::string& line) {
        log("[rank " + std::to_string(rank) + "] " + line);
        relay->inject("rank " + std::to_string(rank) + ": " + line);
      },
      [relay, log](const RankExit& exit) {
        if (!exit.failed()) return;
        log("[rank " + std::to_string(exit.rank) + "] pid " + std::to_string(exit.pid) + " " +
            exit.how());
        relay->inject(exit.describe());
      });
  for (int r = 1; r < processes; ++r)
    ranks->spawn(r, {cli, "train", "--dist", "--config", file->path(), "--rank", std::to_string(r),
                     "--world-size", std::to_string(processes), "--master",
                     "127.0.0.1:" + std::to_string(port), "--timeout", secondsArg(timeoutS),
                     "--no-store", "--quiet"});
  ranks->watch();

  engine::RunOptions options;
  options.dist.rank = 0;
  options.dist.worldSize = processes;
  options.dist.masterAddr = "127.0.0.1";
  options.dist.masterPort = port;
  options.dist.timeoutS = timeoutS;
  auto start = std::make_shared<Start>();
  start->timeoutS = timeoutS;
  start->thread = std::thread([start, relay, same, options, create = m_options.createRankZero] {
    std::unique_ptr<engine::Run> run;
    std::exception_ptr error;
    try {
      run = create(same, relay.get(), options);
    } catch (...) {
      error = std::current_exception();
    }
    std::unique_lock lock(start->mutex);
    if (start->abandoned) {
      lock.unlock();
      run.reset();  // its observer was cut off; nobody will start it
      lock.lock();
    } else {
      start->run = std::move(run);
      start->error = error;
    }
    start->done = true;
    start->cv.notify_all();
  });

  // Wait for rank 0 to be created, watching the other ranks and the stop button meanwhile.
  std::string givenUp;
  while (givenUp.empty()) {
    {
      std::unique_lock lock(start->mutex);
      if (start->cv.wait_for(lock, std::chrono::milliseconds(100), [&] { return start->done; }))
        break;
    }
    if (const auto exit = ranks->firstExit())
      givenUp = exit->describe() + " before the run started" +
                (exit->lastLine.empty() ? std::string(" (it wrote nothing to stderr)")
                                        : ": " + exit->lastLine);
    else if (stopRequested && stopRequested())
      givenUp = "stopped while waiting for the other processes to join";
  }
  if (!givenUp.empty()) {
    std::unique_lock lock(start->mutex);
    if (!start->done) {
      start->abandoned = true;
      lock.unlock();
      relay->detach();
      ranks->finish(0);
      std::lock_guard abandonedLock(m_mutex);
      m_abandoned.push_back(start);
      throw std::runtime_error(givenUp);
    }
  }
  start->thread.join();
  if (start->error) {
    ranks->finish(0);
    std::rethrow_exception(start->error);
  }
  return std::make_unique<LocalRanksRun>(relay, std::move(ranks), std::move(file),
                                         std::move(start->run), timeoutS);
}

}  // namespace stagewise::gui
