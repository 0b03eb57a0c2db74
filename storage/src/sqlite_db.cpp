#include "sqlite_db.h"

#include <cstdio>
#include <limits>
#include <utility>

namespace stagewise::storage::detail {

bool SqlError::diskFull() const {
  return (m_code & 0xff) == SQLITE_FULL;
}

bool SqlError::ioError() const {
  return (m_code & 0xff) == SQLITE_IOERR;
}

bool SqlError::locked() const {
  const int primary = m_code & 0xff;
  return primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
}

std::string Database::describe(int rc, std::string_view what, std::string_view reason) const {
  const int primary = rc & 0xff;
  std::string detail(what);
  detail += ": ";
  detail += reason;
  if (primary == SQLITE_FULL) {
    return "run store '" + m_path + "': the disk is full (" + detail +
           "); free space on the disk that holds it";
  }
  if (primary == SQLITE_BUSY) {
    char waited[32];
    std::snprintf(waited, sizeof(waited), "%.1f", m_busyTimeoutMs / 1000.0);
    return "run store '" + m_path + "' is locked by another process (it held the lock for over " +
           waited + " s; " + detail +
           "); close the program that has it open in a transaction (an sqlite3 shell, a database "
           "browser or a stuck Stagewise)";
  }
  if (primary == SQLITE_IOERR) {
    return "run store '" + m_path + "': the disk reported an error (" + detail +
           "); check the disk and that it has space";
  }
  return "run store: " + detail;
}

Database::Database(const std::string& path, int flags) : m_path(path) {
  const int rc = sqlite3_open_v2(path.c_str(), &m_db, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = "cannot open run store '" + path +
                      "': " + (m_db ? sqlite3_errmsg(m_db) : sqlite3_errstr(rc));
    sqlite3_close_v2(m_db);
    m_db = nullptr;
    throw SqlError(msg, rc);
  }
  sqlite3_extended_result_codes(m_db, 1);
}

Database::~Database() {
  sqlite3_close_v2(m_db);
}

void Database::setBusyTimeout(int ms) {
  m_busyTimeoutMs = ms;
  sqlite3_busy_timeout(m_db, ms);
}

void Database::check(int rc, std::string_view what) const {
  const int primary = rc & 0xff;
  if (primary == SQLITE_OK || primary == SQLITE_ROW || primary == SQLITE_DONE) return;
  throw SqlError(describe(rc, what, m_db ? sqlite3_errmsg(m_db) : sqlite3_errstr(rc)), rc);
}

void Database::exec(std::string_view sql) {
  char* err = nullptr;
  const std::string text(sql);
  const int rc = sqlite3_exec(m_db, text.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    const std::string reason = err ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    throw SqlError(describe(rc, text.substr(0, 80), reason), rc);
  }
}

std::string Database::queryText(const std::string& sql) {
  Statement st(*this, sql);
  return st.step() ? st.getText(0) : std::string();
}

int64_t Database::queryInt(const std::string& sql) {
  Statement st(*this, sql);
  return st.step() ? st.getInt(0) : 0;
}

Statement::Statement(Database& db, std::string_view sql) : m_db(&db) {
  const int rc = sqlite3_prepare_v3(db.handle(), sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &m_stmt, nullptr);
  db.check(rc, std::string("prepare ") + std::string(sql.substr(0, 60)));
}

Statement::~Statement() {
  sqlite3_finalize(m_stmt);
}

Statement::Statement(Statement&& other) noexcept
    : m_db(other.m_db), m_stmt(std::exchange(other.m_stmt, nullptr)) {}

Statement& Statement::bind(int index, int64_t value) {
  m_db->check(sqlite3_bind_int64(m_stmt, index, value), "bind");
  return *this;
}

Statement& Statement::bind(int index, double value) {
  m_db->check(sqlite3_bind_double(m_stmt, index, value), "bind");
  return *this;
}

Statement& Statement::bind(int index, std::string_view value) {
  m_db->check(
      sqlite3_bind_text64(m_stmt, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
      "bind");
  return *this;
}

Statement& Statement::bindNull(int index) {
  m_db->check(sqlite3_bind_null(m_stmt, index), "bind");
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(m_stmt);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  const std::string sql = sqlite3_sql(m_stmt) ? sqlite3_sql(m_stmt) : "";
  sqlite3_reset(m_stmt);
  m_db->check(rc, sql.substr(0, 80));
  return false;
}

void Statement::run() {
  while (step()) {
  }
  reset();
}

void Statement::reset() {
  // Bindings are kept: every caller binds all parameters before each step.
  sqlite3_reset(m_stmt);
}

bool Statement::isNull(int column) const {
  return sqlite3_column_type(m_stmt, column) == SQLITE_NULL;
}

int64_t Statement::getInt(int column) const {
  return sqlite3_column_int64(m_stmt, column);
}

double Statement::getDouble(int column) const {
  if (isNull(column)) return std::numeric_limits<double>::quiet_NaN();
  return sqlite3_column_double(m_stmt, column);
}

std::string Statement::getText(int column) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(m_stmt, column));
  if (!text) return {};
  return std::string(text, static_cast<size_t>(sqlite3_column_bytes(m_stmt, column)));
}

std::optional<int64_t> Statement::getOptInt(int column) const {
  if (isNull(column)) return std::nullopt;
  return getInt(column);
}

std::optional<double> Statement::getOptDouble(int column) const {
  if (isNull(column)) return std::nullopt;
  return sqlite3_column_double(m_stmt, column);
}

Transaction::Transaction(Database& db, bool immediate) : m_db(db) {
  m_db.exec(immediate ? "BEGIN IMMEDIATE" : "BEGIN");
}

Transaction::~Transaction() {
  if (m_open) sqlite3_exec(m_db.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  m_db.exec("COMMIT");
  m_open = false;
}

}  // namespace stagewise::storage::detail
