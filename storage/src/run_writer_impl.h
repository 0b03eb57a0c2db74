#pragma once
// RunWriter's inside, shared by run_writer.cpp (the thread, its queue and the public methods)
// and writer_faults.cpp (a commit that fails: hold, retry, tell, give up).

#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "sqlite_db.h"
#include "stagewise/storage/run_writer.h"
#include "writer_db.h"

namespace stagewise::storage {

namespace writer {

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
  std::vector<SpanInput> spans;  ///< counted with the points (batch size, memory cap)
};

struct Batch {
  std::vector<Chunk> chunks;
  std::vector<Command> commands;
  int64_t points = 0;
  bool empty() const { return chunks.empty() && commands.empty(); }
};

// Events, checkpoints and final statuses are written with the points, in one transaction;
// create, resume and flush are answered around it.
inline bool isData(const Command& c) {
  return std::holds_alternative<EventCmd>(c) || std::holds_alternative<CheckpointCmd>(c) ||
         std::holds_alternative<FinishCmd>(c);
}

}  // namespace writer

struct RunWriter::Impl {
  using Batch = writer::Batch;
  using Clock = writer::Clock;
  using Command = writer::Command;

  std::string path;
  StoreOptions options;
  std::unique_ptr<detail::WriterDb> db;  // touched only by the thread

  // Shared with producers, under `mutex`.
  mutable std::mutex mutex;
  std::condition_variable wake;
  Batch pending;
  std::optional<Clock::time_point> oldest;  // of anything pending
  bool urgent = false;                      // a caller waits (create, resume, flush)
  bool stopping = false;
  std::string error;           // data lost or ignored since the last flush
  std::string problem;         // why `held` is not committed, with what is held; else empty
  int64_t heldPoints = 0;      // held.points, for appendPoints' memory cap
  int64_t droppedOverCap = 0;  // by appendPoints, not yet announced
  WriterStats stats;

  // The writer thread's own: what failed to commit for a transient reason, oldest first.
  Batch held;
  std::optional<Clock::time_point> problemSince;
  int problemCode = 0;     // primary SQLite code of the problem last announced
  std::string problemWhy;  // its message: the file, what happened, what to do
  Clock::time_point nextRetry;

  std::mutex noticeMutex;  // held while handlers run, so removal waits for a call in progress
  std::map<int, std::function<void(const WriterNotice&)>> handlers;
  int nextHandlerId = 1;

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

  /// Hands points and spans of a run over under the lock (appendPoints, appendSpans).
  void append(int64_t runId, std::vector<PointInput>&& points, std::vector<SpanInput>&& spans);
  void run();
  void process(Batch& batch, bool heartbeatDue);
  void writeData(Batch& data, bool heartbeatDue);
  void hold(Batch&& data, const detail::SqlError& e);
  void recovered(const Batch& written);
  void giveUp();
  bool notify(const WriterNotice& notice);
  /// Creates a run's record, waiting out a lock (or full disk) for up to createRetry.
  void createWithRetry(writer::CreateCmd& create);
  void noteError(const std::string& message) {
    std::lock_guard lock(mutex);
    error = message;
    stats.lastError = message;
  }
};

}  // namespace stagewise::storage
