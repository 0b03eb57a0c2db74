#include "connection.h"

#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "schema.h"

namespace stagewise::storage::detail {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[] = "SQLite format 3";  // 16 bytes with the terminating NUL

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
  throw StoreError("refusing to open '" + path + "': " + why +
                   ". The file was left untouched; choose another file with --db or "
                   "STAGEWISE_DB.");
}

uint32_t bigEndian32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return (uint32_t(u[0]) << 24) | (uint32_t(u[1]) << 16) | (uint32_t(u[2]) << 8) | uint32_t(u[3]);
}

// The cheap check for large files: the header agrees with the file's size, and the root and
// both ends of every table can be read.
void checkStructure(Database& db, const std::string& path, const std::array<char, 100>& header,
                    uintmax_t size) {
  const auto* u = reinterpret_cast<const unsigned char*>(header.data());
  const uint32_t pageSize =
      (uint32_t(u[16]) << 8 | u[17]) == 1 ? 65536 : (uint32_t(u[16]) << 8 | u[17]);
  if (pageSize < 512 || (pageSize & (pageSize - 1)) != 0 || size % pageSize != 0) {
    refuse(path, "it is damaged (its size does not fit its page size)");
  }
  // The page count in the header is valid when "version-valid-for" matches the change counter.
  const uint32_t pages = bigEndian32(header.data() + 28);
  if (bigEndian32(header.data() + 92) == bigEndian32(header.data() + 24) &&
      uintmax_t(pages) * pageSize > size) {
    refuse(path, "it is damaged (shorter than its header says: truncated?)");
  }
  std::vector<std::string> tables;
  {
    Statement st(db, "SELECT name FROM sqlite_schema WHERE type = 'table'");
    while (st.step()) tables.push_back(st.getText(0));
  }
  for (const std::string& table : tables) {
    std::string quoted = "\"";
    for (char c : table) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    quoted += '"';
    db.queryInt("SELECT count(*) FROM (SELECT 1 FROM " + quoted + " LIMIT 1)");
    // Walking to the last row reads the right edge of the b-tree too.
    Statement last(db, "SELECT * FROM " + quoted + " ORDER BY 1 DESC LIMIT 1");
    last.step();
  }
}

}  // namespace

bool checkExistingFile(const std::string& path, const StoreOptions& options) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec || status.type() == fs::file_type::not_found) return false;
  if (status.type() != fs::file_type::regular) refuse(path, "it is not a regular file");
  const auto size = fs::file_size(path, ec);
  if (ec) refuse(path, "cannot read its size (" + ec.message() + ")");
  if (size == 0) return false;

  std::array<char, 100> header{};
  std::ifstream in(path, std::ios::binary);
  if (!in) refuse(path, "it cannot be read");
  in.read(header.data(), header.size());
  if (in.gcount() < static_cast<std::streamsize>(header.size()) ||
      std::memcmp(header.data(), kMagic, sizeof(kMagic)) != 0) {
    refuse(path, "it is not a SQLite database");
  }

  // Read-only first: nothing below can modify the file.
  std::unique_ptr<Database> db;
  try {
    db = std::make_unique<Database>(path, SQLITE_OPEN_READONLY);
    db->setBusyTimeout(options.busyTimeoutMs);
    const int64_t version = db->queryInt("PRAGMA user_version");
    const int64_t appId = db->queryInt("PRAGMA application_id");
    const int64_t tables = db->queryInt("SELECT count(*) FROM sqlite_schema");
    if (version > kSchemaVersion) {
      refuse(path, "it was written by a newer Stagewise (schema version " +
                       std::to_string(version) + ", this build reads up to " +
                       std::to_string(kSchemaVersion) + "); update Stagewise to open it");
    }
    if (appId != kApplicationId && (appId != 0 || tables > 0 || version != 0)) {
      refuse(path, "it is a SQLite database of another program, not a Stagewise run store");
    }
    if (options.verifyOnOpen && static_cast<int64_t>(size) <= options.fullCheckMaxBytes) {
      const std::string result = db->queryText("PRAGMA quick_check(1)");
      if (result != "ok") refuse(path, "it is damaged (integrity check: " + result + ")");
    } else if (options.verifyOnOpen) {
      checkStructure(*db, path, header, size);
    }
  } catch (const SqlError& e) {
    // Another process holding the file is not damage: say so rather than "damaged".
    if (e.locked()) throw;
    refuse(path, std::string("it is damaged or unreadable (") + e.what() + ")");
  } catch (const StoreError& e) {
    const std::string what = e.what();
    if (what.rfind("refusing", 0) == 0) throw;
    refuse(path, "it is damaged or unreadable (" + what + ")");
  }
  return true;
}

std::unique_ptr<Database> openConnection(const std::string& path, const StoreOptions& options,
                                         Access access) {
  const int flags = access == Access::ReadOnly ? SQLITE_OPEN_READONLY
                                               : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  auto db = std::make_unique<Database>(path, flags);
  db->setBusyTimeout(options.busyTimeoutMs);
  db->exec("PRAGMA foreign_keys = ON");
  // Keep the -wal and -shm files when this connection closes last. POSIX locks belong to the
  // process, and a close() of *any* descriptor of the file drops them all: a file dialog that
  // peeks at runs.db in the workbench (Qt reads a file's first bytes for its type) silently
  // unlocks the workbench's connections. The next CLI process to close then believed it was the
  // last user, checkpointed, and deleted both files under the workbench, which went on reading
  // and writing the deleted ones (new runs unseen, saved notes lost until it quit). Kept files
  // stay shared, so every connection goes on seeing the same log (docs/architecture.md, "Store").
  int persist = 1;
  sqlite3_file_control(db->handle(), "main", SQLITE_FCNTL_PERSIST_WAL, &persist);
  if (access == Access::ReadWrite) {
    // journal_mode answers with the mode in force; a file on a filesystem without shared
    // memory (some network mounts) stays in its old mode, which would make readers block the
    // writer, so insist.
    const std::string mode = db->queryText("PRAGMA journal_mode = WAL");
    if (mode != "wal") {
      throw StoreError("run store '" + path +
                       "' cannot use write-ahead logging (journal mode is '" + mode +
                       "'); put it on a local disk");
    }
    db->exec("PRAGMA synchronous = NORMAL");
    // With the -wal file kept (below), the last connection to close still checkpoints; it then
    // truncates the log to nothing, so no stale (if valid) frames outlive the process: a store
    // damaged on disk is still found damaged on the next open.
    db->queryText("PRAGMA journal_size_limit = 0");
  }
  return db;
}

}  // namespace stagewise::storage::detail
