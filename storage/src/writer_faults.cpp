// What the writer does when a commit fails. A full disk, a lock held by another process or an
// I/O error leaves the database as it was (the transaction rolls back), so the same batch is
// kept, in order, and retried until it commits; everything else is tried three times, then the
// batch is dropped and counted. Either way the user hears of it through the notices.

#include <cstdio>
#include <iostream>

#include "run_writer_impl.h"

namespace stagewise::storage {

using namespace writer;

namespace {

std::string oneDecimal(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", value);
  return text;
}

double secondsSince(writer::Clock::time_point t) {
  return std::chrono::duration<double>(writer::Clock::now() - t).count();
}

// "1,000 points and 2 records (events, checkpoints, final statuses)"
std::string describeBatch(const writer::Batch& batch) {
  std::string text = std::to_string(batch.points) + (batch.points == 1 ? " point" : " points");
  if (!batch.commands.empty()) {
    text += " and " + std::to_string(batch.commands.size()) +
            (batch.commands.size() == 1 ? " record" : " records") +
            " (events, checkpoints, final statuses)";
  }
  return text;
}

}  // namespace

void RunWriter::Impl::writeData(Batch& data, bool heartbeatDue) {
  if (data.empty() && !(heartbeatDue && db->hasLiveRuns())) return;

  // After a failure, each run gets an event saying what was delayed, in the same commit.
  std::string recoveryNote;
  std::map<int64_t, double> lastTime;
  if (problemSince) {
    const char* what = problemCode == SQLITE_FULL   ? "the disk was full"
                       : problemCode == SQLITE_BUSY ? "another process held its lock"
                                                    : "the disk reported errors";
    recoveryNote = "the run store could not be written for " +
                   oneDecimal(secondsSince(*problemSince)) + " s (" + what + "); " +
                   describeBatch(data) + " were kept in memory and written afterwards, none lost";
    for (const Chunk& c : data.chunks) {
      if (!c.points.empty()) {
        double& t = lastTime.try_emplace(c.runId, c.points.back().timeS).first->second;
        t = std::max(t, c.points.back().timeS);
      }
    }
  }

  std::string lastFailure;
  for (int attempt = 0; attempt < 3; ++attempt) {
    try {
      int64_t dropped = 0;
      std::string ignored;
      detail::Transaction tx(db->db());
      for (const Chunk& chunk : data.chunks) {
        dropped += db->writePoints(chunk.runId, chunk.points);
        dropped += db->writeSpans(chunk.runId, chunk.spans);
      }
      if (!recoveryNote.empty()) db->noteInLiveRuns("warning", recoveryNote, lastTime);
      for (const Command& c : data.commands) {
        bool known = true;
        if (auto* e = std::get_if<EventCmd>(&c)) known = db->writeEvent(e->runId, e->event);
        if (auto* k = std::get_if<CheckpointCmd>(&c))
          known = db->writeCheckpoint(k->runId, k->path, k->step);
        if (auto* f = std::get_if<FinishCmd>(&c)) known = db->finishRun(f->runId, f->finish);
        if (!known)
          ignored =
              "an event, checkpoint or finish for a run this writer does not record was ignored";
      }
      if (heartbeatDue) db->writeHeartbeats();
      db->flushLevels();
      tx.commit();
      db->afterCommit();
      {
        std::lock_guard lock(mutex);
        stats.transactions += 1;
        stats.pointsWritten += data.points - dropped;
        stats.pointsDropped += dropped;
        if (dropped > 0)
          ignored = std::to_string(dropped) +
                    " points for a run this writer does not record were dropped (createRun or "
                    "resumeRun first)";
        if (!ignored.empty()) {
          error = ignored;
          stats.lastError = ignored;
        }
      }
      if (problemSince) recovered(data);
      return;
    } catch (const detail::SqlError& e) {
      db->afterRollback();
      // Full disk, lock held elsewhere, I/O error: the same batch can succeed later.
      if (e.transient()) {
        hold(std::move(data), e);
        return;
      }
      lastFailure = e.what();
    } catch (const std::exception& e) {
      db->afterRollback();
      lastFailure = e.what();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50 * (attempt + 1)));
  }
  const std::string message = "run store '" + path + "': " + describeBatch(data) +
                              " could not be written and are lost: " + lastFailure;
  {
    std::lock_guard lock(mutex);
    error = message;
    stats.lastError = message;
    stats.pointsDropped += data.points;
    stats.failedCommits += 1;
  }
  if (problemSince) recovered({});  // nothing is held any more
  notify({WriterNotice::Kind::Lost, message, 0, data.points});
}

void RunWriter::Impl::hold(Batch&& data, const detail::SqlError& e) {
  held = std::move(data);
  nextRetry = Clock::now() + options.writer.retryInterval;
  const int code = e.code() & 0xff;
  const bool announce = !problemSince || code != problemCode;
  if (!problemSince) problemSince = Clock::now();
  problemCode = code;
  problemWhy = e.what();
  const std::string message = problemWhy + "; " + describeBatch(held) +
                              " are kept in memory and retried every " +
                              oneDecimal(options.writer.retryInterval.count() / 1000.0) +
                              " s; everything committed before is intact";
  {
    std::lock_guard lock(mutex);
    heldPoints = held.points;
    problem = message;
    stats.pointsHeld = held.points;
    stats.failedCommits += 1;
    stats.problem = message;
    stats.lastError = message;
  }
  if (announce) notify({WriterNotice::Kind::Problem, message, held.points, 0});
}

void RunWriter::Impl::recovered(const Batch& written) {
  const double seconds = secondsSince(*problemSince);
  problemSince.reset();
  {
    std::lock_guard lock(mutex);
    heldPoints = 0;
    problem.clear();
    stats.pointsHeld = 0;
    stats.problem.clear();
  }
  if (!written.empty()) {
    notify({WriterNotice::Kind::Recovered,
            "run store '" + path + "': writing again after " + oneDecimal(seconds) + " s; " +
                describeBatch(written) + " written, none lost",
            0, 0});
  }
}

void RunWriter::Impl::giveUp() {
  const std::string message =
      "run store '" + path + "': " + describeBatch(held) +
      " could not be written before the store closed and are lost; the cause: " + problemWhy +
      ". Everything committed before is intact; a run left without its final status reads as "
      "'interrupted'";
  const int64_t lost = held.points;
  held = {};
  {
    std::lock_guard lock(mutex);
    error = message;
    stats.lastError = message;
    stats.pointsDropped += lost;
    stats.pointsHeld = 0;
    stats.problem.clear();
    heldPoints = 0;
    problem.clear();
  }
  // Nobody may be listening any more (the recorder is gone); this must not vanish silently.
  if (!notify({WriterNotice::Kind::Lost, message, 0, lost})) {
    std::cerr << "stagewise: " << message << "\n";
  }
}

bool RunWriter::Impl::notify(const WriterNotice& notice) {
  std::lock_guard lock(noticeMutex);
  for (auto& [id, handler] : handlers) {
    try {
      handler(notice);
    } catch (...) {
      // A handler that throws must not stop the writer; the notice stays in stats.
    }
  }
  return !handlers.empty();
}

}  // namespace stagewise::storage
