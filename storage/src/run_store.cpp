#include "stagewise/storage/run_store.h"

#include <algorithm>
#include <filesystem>
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
  if (options.recoverStaleRuns) m_impl->recovered = m_impl->recoverLocked();
}

RunStore::~RunStore() {
  // The writer goes first: it may still commit final statuses through its own connection.
  std::lock_guard lock(m_impl->writerMutex);
  m_impl->writer.reset();
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
  return m_impl->recoverLocked();
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

}  // namespace stagewise::storage
