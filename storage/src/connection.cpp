#include "connection.h"

#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>

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
    sqlite3_busy_timeout(db->handle(), options.busyTimeoutMs);
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
    if (options.verifyOnOpen) {
      const std::string result = db->queryText("PRAGMA quick_check(1)");
      if (result != "ok") refuse(path, "it is damaged (integrity check: " + result + ")");
    }
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
  sqlite3_busy_timeout(db->handle(), options.busyTimeoutMs);
  db->exec("PRAGMA foreign_keys = ON");
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
  }
  return db;
}

}  // namespace stagewise::storage::detail
