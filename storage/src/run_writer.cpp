#include "stagewise/storage/run_writer.h"

#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>
#include <variant>

#include "stagewise/storage/store_error.h"
#include "writer_db.h"

namespace stagewise::storage {

namespace {

using Clock = std::chrono::steady_clock;

struct CreateCmd {
  NewRun run;
  std::promise<int64_t> done;
};
struct ResumeCmd {
  int64_t runId;
  std::promise<void> done;
};
struct EventCmd {
  int64_t runId;
  EventInput event;
};
struct CheckpointCmd {
  int64_t runId;
  std::string path;
  int64_t step;
};
struct FinishCmd {
  int64_t runId;
  RunFinish finish;
};
struct FlushCmd {
  std::promise<void> done;
};
using Command = std::variant<CreateCmd, ResumeCmd, EventCmd, CheckpointCmd, FinishCmd, FlushCmd>;

struct Chunk {
  int64_t runId;
  std::vector<PointInput> points;
};

struct Batch {
  std::vector<Chunk> chunks;
  std::vector<Command> commands;
  int64_t points = 0;
};

}  // namespace

struct RunWriter::Impl {
  StoreOptions options;
  std::unique_ptr<detail::WriterDb> db;  // touched only by the thread

  mutable std::mutex mutex;
  std::condition_variable wake;
  Batch pending;
  std::optional<Clock::time_point> oldest;  // of anything pending
  bool urgent = false;                      // a caller waits (create, resume, flush)
  bool stopping = false;
  std::string error;  // since the last flush
  WriterStats stats;

  std::thread thread;

  void enqueue(Command cmd, bool isUrgent) {
    {
      std::lock_guard lock(mutex);
      pending.commands.push_back(std::move(cmd));
      if (!oldest) oldest = Clock::now();
      urgent = urgent || isUrgent;
    }
    wake.notify_one();
  }

  void run();
  void process(Batch& batch, bool heartbeatDue);
  void writeData(Batch& batch, bool heartbeatDue);
  void noteError(const std::string& message) {
    std::lock_guard lock(mutex);
    error = message;
    stats.lastError = message;
  }
};

RunWriter::RunWriter(std::string path, const StoreOptions& options)
    : m_impl(std::make_unique<Impl>()) {
  m_impl->options = options;
  m_impl->db = std::make_unique<detail::WriterDb>(path, options);
  m_impl->thread = std::thread([impl = m_impl.get()] {
    try {
      impl->run();
    } catch (const std::exception& e) {
      impl->noteError(std::string("run store writer stopped: ") + e.what());
    } catch (...) {
      impl->noteError("run store writer stopped after an unknown error");
    }
  });
}

RunWriter::~RunWriter() {
  {
    std::lock_guard lock(m_impl->mutex);
    m_impl->stopping = true;
  }
  m_impl->wake.notify_one();
  m_impl->thread.join();
}

void RunWriter::Impl::run() {
  auto nextHeartbeat = Clock::now() + options.writer.heartbeatInterval;
  for (;;) {
    Batch batch;
    bool stop = false;
    {
      std::unique_lock lock(mutex);
      auto ready = [&] {
        return stopping || urgent ||
               pending.points >= static_cast<int64_t>(options.writer.batchPoints) ||
               (oldest && Clock::now() >= *oldest + options.writer.maxDelay);
      };
      while (!ready()) {
        auto deadline = nextHeartbeat;
        if (oldest) deadline = std::min(deadline, *oldest + options.writer.maxDelay);
        if (wake.wait_until(lock, deadline) == std::cv_status::timeout &&
            Clock::now() >= nextHeartbeat) {
          break;
        }
      }
      std::swap(batch, pending);
      oldest.reset();
      urgent = false;
      stop = stopping;
      stats.pointsPending = 0;
    }
    const bool heartbeatDue = Clock::now() >= nextHeartbeat;
    if (heartbeatDue) nextHeartbeat = Clock::now() + options.writer.heartbeatInterval;
    process(batch, heartbeatDue);
    if (stop) {
      std::lock_guard lock(mutex);
      if (pending.chunks.empty() && pending.commands.empty()) break;
    }
  }
  // Runs nobody finished: their recorder went away without a final status.
  try {
    detail::Transaction tx(db->db());
    db->interruptAll("the recorder closed the store before the run finished");
    tx.commit();
    db->afterCommit();
  } catch (const std::exception& e) {
    noteError(e.what());
  }
  db.reset();
}

void RunWriter::Impl::writeData(Batch& batch, bool heartbeatDue) {
  bool hasData = !batch.chunks.empty();
  for (const Command& c : batch.commands) {
    hasData = hasData || std::holds_alternative<EventCmd>(c) ||
              std::holds_alternative<CheckpointCmd>(c) || std::holds_alternative<FinishCmd>(c);
  }
  if (!hasData && !(heartbeatDue && db->hasLiveRuns())) return;

  std::string lastFailure;
  for (int attempt = 0; attempt < 3; ++attempt) {
    try {
      int64_t dropped = 0;
      detail::Transaction tx(db->db());
      for (const Chunk& chunk : batch.chunks) dropped += db->writePoints(chunk.runId, chunk.points);
      for (const Command& c : batch.commands) {
        bool known = true;
        if (auto* e = std::get_if<EventCmd>(&c)) known = db->writeEvent(e->runId, e->event);
        if (auto* k = std::get_if<CheckpointCmd>(&c))
          known = db->writeCheckpoint(k->runId, k->path, k->step);
        if (auto* f = std::get_if<FinishCmd>(&c)) known = db->finishRun(f->runId, f->finish);
        if (!known)
          lastFailure =
              "an event, checkpoint or finish for a run this writer does not record was ignored";
      }
      if (heartbeatDue) db->writeHeartbeats();
      db->flushLevels();
      tx.commit();
      db->afterCommit();
      std::lock_guard lock(mutex);
      stats.transactions += 1;
      stats.pointsWritten += batch.points - dropped;
      stats.pointsDropped += dropped;
      if (dropped > 0)
        lastFailure = std::to_string(dropped) +
                      " points for a run this writer does not record were dropped (createRun or "
                      "resumeRun first)";
      if (!lastFailure.empty()) {
        error = lastFailure;
        stats.lastError = lastFailure;
      }
      return;
    } catch (const std::exception& e) {
      db->afterRollback();
      lastFailure = e.what();
      std::this_thread::sleep_for(std::chrono::milliseconds(50 * (attempt + 1)));
    }
  }
  noteError("run store: a batch of " + std::to_string(batch.points) +
            " points was lost: " + lastFailure);
  std::lock_guard lock(mutex);
  stats.pointsDropped += batch.points;
}

void RunWriter::Impl::process(Batch& batch, bool heartbeatDue) {
  try {
    writeData(batch, heartbeatDue);
  } catch (const std::exception& e) {
    noteError(e.what());
  }
  for (Command& c : batch.commands) {
    if (auto* create = std::get_if<CreateCmd>(&c)) {
      try {
        create->done.set_value(db->createRun(create->run));
      } catch (...) {
        create->done.set_exception(std::current_exception());
      }
    } else if (auto* resume = std::get_if<ResumeCmd>(&c)) {
      try {
        db->resumeRun(resume->runId);
        resume->done.set_value();
      } catch (...) {
        resume->done.set_exception(std::current_exception());
      }
    }
  }
  // Flushes last: they promise that everything handed over before them is committed.
  for (Command& c : batch.commands) {
    if (auto* flush = std::get_if<FlushCmd>(&c)) {
      std::string failure;
      {
        std::lock_guard lock(mutex);
        failure = std::exchange(error, {});
      }
      if (failure.empty()) {
        flush->done.set_value();
      } else {
        flush->done.set_exception(std::make_exception_ptr(StoreError(failure)));
      }
    }
  }
}

int64_t RunWriter::createRun(const NewRun& run) {
  CreateCmd cmd{run, {}};
  auto result = cmd.done.get_future();
  m_impl->enqueue(std::move(cmd), true);
  return result.get();
}

void RunWriter::resumeRun(int64_t runId) {
  ResumeCmd cmd{runId, {}};
  auto result = cmd.done.get_future();
  m_impl->enqueue(std::move(cmd), true);
  result.get();
}

void RunWriter::appendPoints(int64_t runId, std::vector<PointInput>&& points) {
  if (points.empty()) return;
  bool wake = false;
  {
    std::lock_guard lock(m_impl->mutex);
    m_impl->pending.points += static_cast<int64_t>(points.size());
    m_impl->stats.pointsPending = m_impl->pending.points;
    m_impl->pending.chunks.push_back({runId, std::move(points)});
    // Wake the thread when the batch is full, or when it is the first thing pending: the
    // thread then sleeps until the delay of this point instead of the next heartbeat.
    if (!m_impl->oldest) {
      m_impl->oldest = Clock::now();
      wake = true;
    }
    wake =
        wake || m_impl->pending.points >= static_cast<int64_t>(m_impl->options.writer.batchPoints);
  }
  if (wake) m_impl->wake.notify_one();
}

void RunWriter::appendPoints(int64_t runId, const std::vector<PointInput>& points) {
  appendPoints(runId, std::vector<PointInput>(points));  // copy outside the lock
}

void RunWriter::appendEvent(int64_t runId, EventInput event) {
  m_impl->enqueue(EventCmd{runId, std::move(event)}, false);
}

void RunWriter::addCheckpoint(int64_t runId, std::string path, int64_t step) {
  m_impl->enqueue(CheckpointCmd{runId, std::move(path), step}, false);
}

void RunWriter::finishRun(int64_t runId, RunFinish finish) {
  if (finish.status == RunStatus::Running) {
    throw StoreError("finishRun(" + std::to_string(runId) +
                     "): the final status cannot be 'running'");
  }
  m_impl->enqueue(FinishCmd{runId, std::move(finish)}, false);
}

void RunWriter::flush() {
  FlushCmd cmd;
  auto result = cmd.done.get_future();
  m_impl->enqueue(std::move(cmd), true);
  result.get();
}

WriterStats RunWriter::stats() const {
  std::lock_guard lock(m_impl->mutex);
  return m_impl->stats;
}

}  // namespace stagewise::storage
