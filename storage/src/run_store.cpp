#include "stagewise/storage/run_store.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>

#include "connection.h"
#include "liveness.h"
#include "schema.h"
#include "stagewise/storage/run_writer.h"

namespace stagewise::storage {

using detail::Database;
using detail::Statement;
using detail::Transaction;

struct RunStore::Impl {
  std::string path;
  StoreOptions options;
  int foundVersion = 0;
  std::vector<int64_t> recovered;
  mutable std::mutex adminMutex;  // guards `admin`: edits may come from any thread
  std::unique_ptr<Database> admin;
  std::mutex writerMutex;
  std::unique_ptr<RunWriter> writer;
  std::map<int64_t, detail::RunLock> studyLocks;  // studies this store is running (adminMutex)

  void requireStudy(int64_t studyId) {
    Statement st(*admin, "SELECT 1 FROM studies WHERE id = ?1");
    if (!st.bind(1, studyId).step())
      throw StoreError("no study " + std::to_string(studyId) + " in the store");
  }

  /// Whether a `running` study's process is alive (false for any other status). A dead verdict
  /// comes with the lock.
  detail::WriterProbe probeStudy(int64_t studyId) {
    Statement st(*admin,
                 "SELECT status, writer_pid, writer_host, heartbeat_at_ms FROM studies "
                 "WHERE id = ?1");
    if (!st.bind(1, studyId).step() || st.getText(0) != "running") return {false, std::nullopt};
    if (studyLocks.count(studyId)) return {true, std::nullopt};
    const WriterInfo info{st.getInt(1), st.getText(2), 0, st.getInt(3)};
    return detail::probeLockHolder(detail::studyLockPathFor(path, studyId), info,
                                   options.staleHeartbeat.count());
  }

  void recoverStudiesLocked() {
    std::vector<int64_t> running;
    {
      Statement st(*admin, "SELECT id FROM studies WHERE status = 'running'");
      while (st.step()) running.push_back(st.getInt(0));
    }
    for (int64_t id : running) {
      auto probe = probeStudy(id);
      if (probe.alive) continue;
      Statement(*admin,
                "UPDATE studies SET status = 'interrupted', "
                "finished_at_ms = coalesce(heartbeat_at_ms, ?2) WHERE id = ?1 AND "
                "status = 'running'")
          .bind(1, id)
          .bind(2, nowMs())
          .run();
    }
  }

  /// Takes the study's lock for this process and records it as the writer.
  void ownStudy(int64_t studyId) {
    auto lock = detail::RunLock::tryAcquire(detail::studyLockPathFor(path, studyId));
    if (!lock)
      throw StoreError("study " + std::to_string(studyId) +
                       " is being run by another process; stop it there first");
    Statement(*admin,
              "UPDATE studies SET status = 'running', finished_at_ms = NULL, writer_pid = ?2, "
              "writer_host = ?3, heartbeat_at_ms = ?4 WHERE id = ?1")
        .bind(1, studyId)
        .bind(2, detail::currentPid())
        .bind(3, detail::hostName())
        .bind(4, nowMs())
        .run();
    studyLocks.erase(studyId);
    studyLocks.emplace(studyId, std::move(*lock));
  }

  void requireRun(int64_t runId) {
    Statement st(*admin, "SELECT 1 FROM runs WHERE id = ?1");
    if (!st.bind(1, runId).step())
      throw StoreError("no run " + std::to_string(runId) + " in the store");
  }

  bool liveLocked(int64_t runId) const {
    Statement st(*admin,
                 "SELECT status, writer_pid, writer_host, heartbeat_at_ms FROM runs WHERE id = ?1");
    if (!st.bind(1, runId).step() || st.getText(0) != "running") return false;
    const WriterInfo info{st.getInt(1), st.getText(2), 0, st.getInt(3)};
    return detail::probeWriter(path, runId, info, options.staleHeartbeat.count()).alive;
  }

  std::vector<int64_t> recoverLocked() {
    struct Candidate {
      int64_t id;
      WriterInfo writer;
    };
    std::vector<Candidate> candidates;
    {
      Statement st(*admin,
                   "SELECT id, writer_pid, writer_host, heartbeat_at_ms FROM runs "
                   "WHERE status = 'running'");
      while (st.step())
        candidates.push_back({st.getInt(0), {st.getInt(1), st.getText(2), 0, st.getInt(3)}});
    }
    std::vector<int64_t> marked;
    for (const Candidate& c : candidates) {
      auto probe = detail::probeWriter(path, c.id, c.writer, options.staleHeartbeat.count());
      if (probe.alive) continue;
      Transaction tx(*admin);
      // The status test makes this a no-op for a run that finished since the SELECT above.
      Statement update(*admin,
                       "UPDATE runs SET status = 'interrupted', "
                       "finished_at_ms = coalesce(heartbeat_at_ms, ?2) "
                       "WHERE id = ?1 AND status = 'running'");
      update.bind(1, c.id).bind(2, nowMs()).run();
      if (admin->changes() > 0) {
        Statement event(*admin,
                        "INSERT INTO events (run_id, t, kind, stage, message, wall_ms) "
                        "VALUES (?1, coalesce((SELECT max(t) FROM events WHERE run_id = ?1), 0), "
                        "'interrupted', -1, ?2, ?3)");
        event.bind(1, c.id)
            .bind(2, "its writer (pid " + std::to_string(c.writer.pid) + " on " +
                         (c.writer.host.empty() ? "an unknown host" : c.writer.host) +
                         ") is gone; marked interrupted when the store was opened")
            .bind(3, nowMs())
            .run();
        marked.push_back(c.id);
      }
      tx.commit();
      // probe.lock (if any) is released here, removing the stale lock file.
    }
    return marked;
  }
};

RunStore::RunStore(std::string path, StoreOptions options) : m_impl(std::make_unique<Impl>()) {
  if (path.empty()) throw StoreError("no run store path given (use --db PATH)");
  m_impl->path = std::move(path);
  m_impl->options = options;
  const std::string& p = m_impl->path;
  if (!detail::checkExistingFile(p, options)) {
    const auto parent = std::filesystem::path(p).parent_path();
    std::error_code ec;
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  }
  m_impl->admin = detail::openConnection(p, options, detail::Access::ReadWrite);
  m_impl->foundVersion = detail::migrate(*m_impl->admin);
  if (options.recoverStaleRuns) {
    m_impl->recovered = m_impl->recoverLocked();
    m_impl->recoverStudiesLocked();
  }
}

RunStore::~RunStore() {
  {
    // The writer goes first: it may still commit final statuses through its own connection.
    std::lock_guard lock(m_impl->writerMutex);
    m_impl->writer.reset();
  }
  // A study this store still runs was not finished: it reads `interrupted` (resumable).
  std::lock_guard lock(m_impl->adminMutex);
  for (auto& [id, studyLock] : m_impl->studyLocks) {
    try {
      Statement(*m_impl->admin,
                "UPDATE studies SET status = 'interrupted', finished_at_ms = ?2 WHERE id = ?1 "
                "AND status = 'running'")
          .bind(1, id)
          .bind(2, nowMs())
          .run();
    } catch (const StoreError&) {
      // the next open finds the lock free and marks it
    }
    studyLock.release();
  }
}

const std::string& RunStore::path() const {
  return m_impl->path;
}
const StoreOptions& RunStore::options() const {
  return m_impl->options;
}
int RunStore::schemaVersionFound() const {
  return m_impl->foundVersion;
}
const std::vector<int64_t>& RunStore::recoveredRuns() const {
  return m_impl->recovered;
}

std::vector<int64_t> RunStore::recoverStaleRuns() {
  std::lock_guard lock(m_impl->adminMutex);
  auto marked = m_impl->recoverLocked();
  m_impl->recoverStudiesLocked();
  return marked;
}

bool RunStore::isLive(int64_t runId) const {
  std::lock_guard lock(m_impl->adminMutex);
  return m_impl->liveLocked(runId);
}

RunWriter& RunStore::writer() {
  std::lock_guard lock(m_impl->writerMutex);
  if (!m_impl->writer) m_impl->writer.reset(new RunWriter(m_impl->path, m_impl->options));
  return *m_impl->writer;
}

void RunStore::renameRun(int64_t runId, const std::string& name) {
  std::lock_guard lock(m_impl->adminMutex);
  m_impl->requireRun(runId);
  Statement(*m_impl->admin, "UPDATE runs SET name = ?2 WHERE id = ?1")
      .bind(1, runId)
      .bind(2, name)
      .run();
}

void RunStore::setNotes(int64_t runId, const std::string& notes) {
  std::lock_guard lock(m_impl->adminMutex);
  m_impl->requireRun(runId);
  Statement(*m_impl->admin, "UPDATE runs SET notes = ?2 WHERE id = ?1")
      .bind(1, runId)
      .bind(2, notes)
      .run();
}

namespace {

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

void insertTags(Database& db, int64_t runId, const std::vector<std::string>& tags) {
  Statement insert(db, "INSERT OR IGNORE INTO run_tags (run_id, tag) VALUES (?1, ?2)");
  for (const std::string& tag : tags) {
    const std::string t = trimmed(tag);
    if (!t.empty()) insert.bind(1, runId).bind(2, t).run();
  }
}

}  // namespace

void RunStore::addTags(int64_t runId, const std::vector<std::string>& tags) {
  std::lock_guard lock(m_impl->adminMutex);
  m_impl->requireRun(runId);
  Transaction tx(*m_impl->admin);
  insertTags(*m_impl->admin, runId, tags);
  tx.commit();
}

void RunStore::removeTags(int64_t runId, const std::vector<std::string>& tags) {
  std::lock_guard lock(m_impl->adminMutex);
  m_impl->requireRun(runId);
  Transaction tx(*m_impl->admin);
  Statement remove(*m_impl->admin, "DELETE FROM run_tags WHERE run_id = ?1 AND tag = ?2");
  for (const std::string& tag : tags) remove.bind(1, runId).bind(2, trimmed(tag)).run();
  tx.commit();
}

void RunStore::setTags(int64_t runId, const std::vector<std::string>& tags) {
  std::lock_guard lock(m_impl->adminMutex);
  m_impl->requireRun(runId);
  Transaction tx(*m_impl->admin);
  Statement(*m_impl->admin, "DELETE FROM run_tags WHERE run_id = ?1").bind(1, runId).run();
  insertTags(*m_impl->admin, runId, tags);
  tx.commit();
}

void RunStore::deleteRuns(const std::vector<int64_t>& runIds) {
  std::lock_guard lock(m_impl->adminMutex);
  for (int64_t id : runIds) {
    m_impl->requireRun(id);
    if (m_impl->liveLocked(id)) {
      throw StoreError("run " + std::to_string(id) +
                       " is still being recorded; stop it before deleting it");
    }
  }
  Transaction tx(*m_impl->admin);
  Statement remove(*m_impl->admin, "DELETE FROM runs WHERE id = ?1");
  for (int64_t id : runIds) remove.bind(1, id).run();
  tx.commit();
  for (int64_t id : runIds) {
    std::error_code ec;
    std::filesystem::remove(detail::lockPathFor(m_impl->path, id), ec);
  }
}

int64_t RunStore::createStudy(const NewStudy& study) {
  std::lock_guard lock(m_impl->adminMutex);
  Database& db = *m_impl->admin;
  int64_t id = 0;
  {
    Transaction tx(db);
    Statement(db,
              "INSERT INTO studies (name, created_at_ms, status, base_spec_json, seeds, sample, "
              "sample_seed, target, runs_total, writer_pid, writer_host, heartbeat_at_ms, "
              "search_json) VALUES "
              "(?1, ?2, 'running', ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?2, ?11)")
        .bind(1, study.name)
        .bind(2, nowMs())
        .bind(3, study.baseSpecJson)
        .bind(4, study.seeds)
        .bind(5, study.sample)
        .bind(6, study.sampleSeed)
        .bind(7, study.target)
        .bind(8, study.runsTotal)
        .bind(9, detail::currentPid())
        .bind(10, detail::hostName())
        .bind(11, study.searchJson.empty() ? std::optional<std::string>()
                                           : std::optional<std::string>(study.searchJson))
        .run();
    id = db.lastInsertId();
    Statement key(db,
                  "INSERT INTO study_keys (study_id, position, key, values_json) "
                  "VALUES (?1, ?2, ?3, ?4)");
    for (size_t i = 0; i < study.keys.size(); ++i)
      key.bind(1, id)
          .bind(2, static_cast<int64_t>(i))
          .bind(3, study.keys[i].key)
          .bind(4, study.keys[i].valuesJson)
          .run();
    tx.commit();
  }
  m_impl->ownStudy(id);
  return id;
}

void RunStore::resumeStudy(int64_t studyId) {
  std::lock_guard lock(m_impl->adminMutex);
  m_impl->requireStudy(studyId);
  m_impl->recoverStudiesLocked();
  Statement st(*m_impl->admin, "SELECT status FROM studies WHERE id = ?1");
  st.bind(1, studyId).step();
  const std::string status = st.getText(0);
  if (status == "running")
    throw StoreError("study " + std::to_string(studyId) +
                     " is being run by another process; stop it there first");
  m_impl->ownStudy(studyId);
}

void RunStore::linkStudyRun(int64_t studyId, const StudyRunRecord& link) {
  std::lock_guard lock(m_impl->adminMutex);
  m_impl->requireStudy(studyId);
  m_impl->requireRun(link.runId);
  Statement(*m_impl->admin,
            "INSERT OR IGNORE INTO study_runs (study_id, point, run_id, seed, values_json, "
            "replaced) VALUES (?1, ?2, ?3, ?4, ?5, 0)")
      .bind(1, studyId)
      .bind(2, link.point)
      .bind(3, link.runId)
      .bind(4, link.seed)
      .bind(5, link.valuesJson)
      .run();
  Statement(*m_impl->admin, "UPDATE studies SET heartbeat_at_ms = ?2 WHERE id = ?1")
      .bind(1, studyId)
      .bind(2, nowMs())
      .run();
}

void RunStore::markStudyRunReplaced(int64_t studyId, int64_t runId) {
  std::lock_guard lock(m_impl->adminMutex);
  m_impl->requireStudy(studyId);
  Statement(*m_impl->admin,
            "UPDATE study_runs SET replaced = 1 WHERE study_id = ?1 AND run_id = ?2")
      .bind(1, studyId)
      .bind(2, runId)
      .run();
}

void RunStore::markRunPruned(int64_t studyId, int64_t runId, int64_t rung,
                             const std::string& message) {
  std::lock_guard lock(m_impl->adminMutex);
  m_impl->requireStudy(studyId);
  m_impl->requireRun(runId);
  Transaction tx(*m_impl->admin);
  // A run the pruner stopped, whether the stop took effect (stopped) or the run reached its end
  // first (completed): the decision at the rung is what counts. A failed run stays failed.
  Statement(*m_impl->admin,
            "UPDATE runs SET status = 'pruned' WHERE id = ?1 AND status IN ('stopped', "
            "'completed', 'pruned')")
      .bind(1, runId)
      .run();
  if (m_impl->admin->changes() > 0) {
    Statement(*m_impl->admin,
              "UPDATE study_runs SET pruned_at = ?3 WHERE study_id = ?1 AND run_id = ?2")
        .bind(1, studyId)
        .bind(2, runId)
        .bind(3, rung)
        .run();
    Statement(*m_impl->admin,
              "INSERT INTO events (run_id, t, kind, stage, message, wall_ms) VALUES "
              "(?1, COALESCE((SELECT wall_seconds FROM runs WHERE id = ?1), 0), 'info', -1, ?2, "
              "?3)")
        .bind(1, runId)
        .bind(2, message)
        .bind(3, nowMs())
        .run();
  }
  tx.commit();
}

void RunStore::finishStudy(int64_t studyId, StudyStatus status) {
  std::lock_guard lock(m_impl->adminMutex);
  m_impl->requireStudy(studyId);
  Statement(*m_impl->admin,
            "UPDATE studies SET status = ?2, finished_at_ms = ?3, heartbeat_at_ms = ?3 "
            "WHERE id = ?1")
      .bind(1, studyId)
      .bind(2, toString(status))
      .bind(3, nowMs())
      .run();
  if (status != StudyStatus::Running) {
    auto it = m_impl->studyLocks.find(studyId);
    if (it != m_impl->studyLocks.end()) {
      it->second.release();
      m_impl->studyLocks.erase(it);
    }
  }
}

void RunStore::deleteStudies(const std::vector<int64_t>& studyIds) {
  std::lock_guard lock(m_impl->adminMutex);
  for (int64_t id : studyIds) {
    m_impl->requireStudy(id);
    if (m_impl->probeStudy(id).alive)
      throw StoreError("study " + std::to_string(id) +
                       " is still being run; stop it before deleting it");
  }
  Transaction tx(*m_impl->admin);
  Statement remove(*m_impl->admin, "DELETE FROM studies WHERE id = ?1");
  for (int64_t id : studyIds) remove.bind(1, id).run();
  tx.commit();
}

}  // namespace stagewise::storage
