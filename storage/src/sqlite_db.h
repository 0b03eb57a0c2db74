#pragma once
// Thin RAII layer over the sqlite3 C API: a connection, prepared statements with bound
// parameters only, and a transaction guard. Errors become StoreError naming the SQL.

#include <sqlite3.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "stagewise/storage/store_error.h"

namespace stagewise::storage::detail {

class Statement;

/// A failed SQLite call. `code()` is the extended result code, so callers can tell a full disk
/// or a file locked by another process (worth retrying) from a bad statement.
class SqlError : public StoreError {
 public:
  SqlError(const std::string& message, int code) : StoreError(message), m_code(code) {}
  int code() const { return m_code; }
  /// SQLITE_FULL: the disk (or a quota) has no room for the file to grow.
  bool diskFull() const;
  /// SQLITE_IOERR: the disk failed a read, write or sync.
  bool ioError() const;
  /// SQLITE_BUSY / SQLITE_LOCKED: another connection held the lock past the busy timeout.
  bool locked() const;
  /// Any of the above: the same transaction may succeed later, unchanged.
  bool transient() const { return diskFull() || ioError() || locked(); }

 private:
  int m_code;
};

/// One sqlite3 connection. Not thread-safe: each thread uses its own.
class Database {
 public:
  /// `flags`: SQLITE_OPEN_READONLY or SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE.
  Database(const std::string& path, int flags);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  sqlite3* handle() const { return m_db; }
  const std::string& path() const { return m_path; }
  /// Sets SQLite's busy timeout; remembered for the "locked by another process" message.
  void setBusyTimeout(int ms);

  /// Runs one or more statements without parameters (DDL, pragmas, BEGIN/COMMIT).
  void exec(std::string_view sql);
  /// First column of the first row as text / integer (pragmas).
  std::string queryText(const std::string& sql);
  int64_t queryInt(const std::string& sql);
  int64_t lastInsertId() const { return sqlite3_last_insert_rowid(m_db); }
  int changes() const { return sqlite3_changes(m_db); }

  /// Throws SqlError for `rc` unless it is SQLITE_OK / ROW / DONE.
  void check(int rc, std::string_view what) const;
  /// The message for a failed call: a full disk and a lock held by another process name the
  /// file and what to do; anything else names the statement and SQLite's reason.
  std::string describe(int rc, std::string_view what, std::string_view reason) const;

 private:
  sqlite3* m_db = nullptr;
  std::string m_path;
  int m_busyTimeoutMs = 0;
};

/// A prepared statement. Bind indices start at 1, column indices at 0. NULL reads as NaN for
/// doubles because SQLite stores a NaN value as NULL.
class Statement {
 public:
  Statement(Database& db, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement(Statement&& other) noexcept;

  Statement& bind(int index, int64_t value);
  Statement& bind(int index, int value) { return bind(index, static_cast<int64_t>(value)); }
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view value);
  Statement& bind(int index, const char* value) { return bind(index, std::string_view(value)); }
  Statement& bind(int index, const std::string& value) {
    return bind(index, std::string_view(value));
  }
  Statement& bindNull(int index);
  template <typename T>
  Statement& bind(int index, const std::optional<T>& value) {
    return value ? bind(index, *value) : bindNull(index);
  }

  /// True while there is a row; false when done.
  bool step();
  /// Steps to completion (INSERT/UPDATE/DELETE) and resets for the next use. Bindings stay:
  /// rebind every parameter before the next step.
  void run();
  void reset();

  bool isNull(int column) const;
  int64_t getInt(int column) const;
  double getDouble(int column) const;
  std::string getText(int column) const;
  std::optional<int64_t> getOptInt(int column) const;
  std::optional<double> getOptDouble(int column) const;

 private:
  Database* m_db = nullptr;
  sqlite3_stmt* m_stmt = nullptr;
};

/// BEGIN IMMEDIATE ... COMMIT, rolled back if not committed. IMMEDIATE takes the write lock at
/// once, so a busy database waits in the busy handler instead of failing on lock upgrade.
class Transaction {
 public:
  explicit Transaction(Database& db, bool immediate = true);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  Database& m_db;
  bool m_open = true;
};

}  // namespace stagewise::storage::detail
