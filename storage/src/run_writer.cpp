#include "stagewise/storage/run_writer.h"

#include "run_writer_impl.h"

#include <thread>
#include "stagewise/storage/store_error.h"

namespace stagewise::storage {

using namespace writer;

RunWriter::RunWriter(std::string path, const StoreOptions& options)
    : m_impl(std::make_unique<Impl>()) {
  m_impl->path = path;
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
  const WriterOptions& opt = options.writer;
  auto nextHeartbeat = Clock::now() + opt.heartbeatInterval;
  std::optional<Clock::time_point> closeDeadline;
  for (;;) {
    Batch batch;
    bool stop = false;
    {
      std::unique_lock lock(mutex);
      // While something is held, new data waits for the next retry: failing fast in a loop
      // would only burn CPU.
      const bool holding = !held.empty();
      auto ready = [&] {
        if (urgent) return true;
        if (holding) return Clock::now() >= nextRetry;
        return stopping || pending.points >= static_cast<int64_t>(opt.batchPoints) ||
               (oldest && Clock::now() >= *oldest + opt.maxDelay);
      };
      while (!ready()) {
        auto deadline = nextHeartbeat;
        if (holding) {
          deadline = std::min(deadline, nextRetry);
        } else if (oldest) {
          deadline = std::min(deadline, *oldest + opt.maxDelay);
        }
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
    if (heartbeatDue) nextHeartbeat = Clock::now() + opt.heartbeatInterval;
    if (stop && !closeDeadline) closeDeadline = Clock::now() + opt.closeRetry;
    process(batch, heartbeatDue);

    int64_t overCap = 0;
    {
      std::lock_guard lock(mutex);
      overCap = std::exchange(droppedOverCap, 0);
    }
    if (overCap > 0) {
      notify({WriterNotice::Kind::Lost,
              "run store '" + path + "': " + std::to_string(overCap) +
                  " points were dropped: the store could not be written and more than " +
                  std::to_string(opt.maxHeldPoints) + " were waiting in memory",
              held.points, overCap});
    }
    if (stop) {
      std::lock_guard lock(mutex);
      if (pending.empty() && (held.empty() || Clock::now() >= *closeDeadline)) break;
    }
  }
  if (!held.empty()) giveUp();
  // Runs nobody finished: their recorder went away without a final status.
  try {
    detail::Transaction tx(db->db());
    db->interruptAll("the recorder closed the store before the run finished");
    tx.commit();
    db->afterCommit();
  } catch (const std::exception& e) {
    noteError(e.what());
    db->abandonAll();
  }
  db.reset();
}

void RunWriter::Impl::process(Batch& batch, bool heartbeatDue) {
  // What failed before goes first, then this batch's points and records, in order.
  Batch data = std::exchange(held, Batch{});
  data.points += batch.points;
  for (Chunk& c : batch.chunks) data.chunks.push_back(std::move(c));
  std::vector<Command> control;
  for (Command& c : batch.commands) (isData(c) ? data.commands : control).push_back(std::move(c));
  try {
    writeData(data, heartbeatDue);
  } catch (const std::exception& e) {
    noteError(e.what());
  }
  for (Command& c : control) {
    if (auto* create = std::get_if<CreateCmd>(&c)) {
      createWithRetry(*create);
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
  for (Command& c : control) {
    if (auto* flush = std::get_if<FlushCmd>(&c)) {
      std::string failure;
      {
        std::lock_guard lock(mutex);
        failure = std::exchange(error, {});
        if (!problem.empty()) failure += (failure.empty() ? "" : "; ") + problem;
      }
      if (failure.empty()) {
        flush->done.set_value();
      } else {
        flush->done.set_exception(std::make_exception_ptr(StoreError(failure)));
      }
    }
  }
}

void RunWriter::Impl::createWithRetry(writer::CreateCmd& create) {
  // A lock held by another process when a run starts is waited out like one met during a run:
  // retried every retryInterval (the store said so once, and says when it recovered), for at
  // most createRetry, so the run is not left unrecorded for a lock that goes away.
  const WriterOptions& opt = options.writer;
  const auto giveUpAt = Clock::now() + opt.createRetry;
  bool said = false;
  for (;;) {
    try {
      create.done.set_value(db->createRun(create.run));
      if (said)
        notify({WriterNotice::Kind::Recovered,
                "run store '" + path + "': the new run '" + create.run.name + "' is recorded", 0,
                0});
      return;
    } catch (const detail::SqlError& e) {
      bool stop = false;
      {
        std::lock_guard lock(mutex);
        stop = stopping;
      }
      if (!e.transient() || stop || Clock::now() + opt.retryInterval > giveUpAt) {
        create.done.set_exception(std::current_exception());
        return;
      }
      if (!said)
        notify({WriterNotice::Kind::Problem,
                std::string(e.what()) + "; the new run '" + create.run.name +
                    "' is recorded as soon as it can be (retrying)",
                0, 0});
      said = true;
      std::this_thread::sleep_for(opt.retryInterval);
    } catch (...) {
      create.done.set_exception(std::current_exception());
      return;
    }
  }
}

std::future<int64_t> RunWriter::createRunLater(const NewRun& run) {
  CreateCmd cmd{run, {}};
  auto result = cmd.done.get_future();
  m_impl->enqueue(std::move(cmd), true);
  return result;
}

int64_t RunWriter::createRun(const NewRun& run) {
  return createRunLater(run).get();
}

void RunWriter::resumeRun(int64_t runId) {
  ResumeCmd cmd{runId, {}};
  auto result = cmd.done.get_future();
  m_impl->enqueue(std::move(cmd), true);
  result.get();
}

void RunWriter::appendPoints(int64_t runId, std::vector<PointInput>&& points) {
  m_impl->append(runId, std::move(points), {});
}

void RunWriter::appendSpans(int64_t runId, std::vector<SpanInput>&& spans) {
  m_impl->append(runId, {}, std::move(spans));
}

void RunWriter::Impl::append(int64_t runId, std::vector<PointInput>&& points,
                             std::vector<SpanInput>&& spans) {
  if (points.empty() && spans.empty()) return;
  bool wakeUp = false;
  {
    std::lock_guard lock(mutex);
    const auto count = static_cast<int64_t>(points.size() + spans.size());
    // While nothing commits, memory is the only place for points; past the cap they are lost.
    if (heldPoints > 0 &&
        heldPoints + pending.points + count > static_cast<int64_t>(options.writer.maxHeldPoints)) {
      stats.pointsDropped += count;
      droppedOverCap += count;
      if (error.empty()) {
        error = "run store '" + path +
                "': points were dropped because the store could not be written and "
                "too many were waiting in memory (" +
                problem + ")";
      }
      return;
    }
    pending.points += count;
    stats.pointsPending = pending.points;
    pending.chunks.push_back({runId, std::move(points), std::move(spans)});
    // Wake the thread when the batch is full, or when it is the first thing pending: the
    // thread then sleeps until the delay of this point instead of the next heartbeat.
    if (!oldest) {
      oldest = Clock::now();
      wakeUp = true;
    }
    wakeUp = wakeUp || pending.points >= static_cast<int64_t>(options.writer.batchPoints);
  }
  if (wakeUp) wake.notify_one();
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

int RunWriter::addNoticeHandler(std::function<void(const WriterNotice&)> handler) {
  std::lock_guard lock(m_impl->noticeMutex);
  const int id = m_impl->nextHandlerId++;
  m_impl->handlers.emplace(id, std::move(handler));
  return id;
}

void RunWriter::removeNoticeHandler(int id) {
  std::lock_guard lock(m_impl->noticeMutex);
  m_impl->handlers.erase(id);
}

}  // namespace stagewise::storage
