// A separate process that holds a run store's lock, as an sqlite3 shell with an open transaction
// would, for the locked-store tests.
//
//   store_lock_helper DB write|exclusive
//
// `write`: BEGIN EXCLUSIVE (in WAL mode, readers go on; writers wait). `exclusive`: also
// locking_mode=EXCLUSIVE, which keeps readers out too. Prints "locked" once it holds the lock,
// then holds it until a line (or end of file) arrives on stdin, rolls back and prints "released".
// Gives up after 120 s so a crashed test leaves nothing behind.

#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
  if (argc != 3 || (std::strcmp(argv[2], "write") != 0 && std::strcmp(argv[2], "exclusive") != 0)) {
    std::fprintf(stderr, "usage: %s DB write|exclusive\n", argv[0]);
    return 2;
  }
  alarm(120);
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    std::fprintf(stderr, "store_lock_helper: %s\n", sqlite3_errmsg(db));
    return 1;
  }
  sqlite3_busy_timeout(db, 10000);
  std::string sql =
      std::strcmp(argv[2], "exclusive") == 0 ? "PRAGMA locking_mode = EXCLUSIVE;" : "";
  // A write makes sure the lock is really taken (and, in exclusive mode, kept on the file).
  sql += "BEGIN EXCLUSIVE; UPDATE runs SET notes = notes WHERE id = (SELECT min(id) FROM runs);";
  char* err = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::fprintf(stderr, "store_lock_helper: %s\n", err ? err : "?");
    return 1;
  }
  std::printf("locked\n");
  std::fflush(stdout);
  char line[64];
  (void)std::fgets(line, sizeof(line), stdin);
  sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  std::printf("released\n");
  return 0;
}
