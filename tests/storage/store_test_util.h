#pragma once
// Helpers shared by the storage tests: temporary stores, raw SQL peeks, file hashes, sample runs.

#include <sqlite3.h>

#include <QCryptographicHash>
#include <QFile>
#include <QString>
#include <QTemporaryDir>
#include <QTest>
#include <string>
#include <vector>

#include "stagewise/storage/options.h"
#include "stagewise/storage/records.h"

namespace stagewise::storage::testing {

inline QByteArray fileHash(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  QCryptographicHash h(QCryptographicHash::Sha256);
  h.addData(&f);
  return h.result().toHex();
}

/// One value from a raw read-only query (bypassing the library under test).
inline std::string rawQuery(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::string out;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0)) {
      out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    } else {
      out = std::string("<error: ") + sqlite3_errmsg(db) + ">";
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return out;
}

inline long long rawInt(const std::string& path, const std::string& sql) {
  return std::stoll(rawQuery(path, sql));
}

/// Runs SQL (a script) on a file with plain sqlite3, creating it.
inline bool rawExec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  bool ok = sqlite3_open(path.c_str(), &db) == SQLITE_OK &&
            sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK;
  if (!ok && db) qWarning("sqlite: %s", sqlite3_errmsg(db));
  sqlite3_close(db);
  return ok;
}

/// A store that keeps every point (no recording policy): for tests of lossless writing and of
/// reads over long raw series.
inline StoreOptions keepEveryPoint() {
  StoreOptions o;
  o.writer.rawPointsPerSeries = 0;
  return o;
}

inline NewRun sampleRun(const std::string& name = "sample") {
  NewRun run;
  run.name = name;
  run.mode = "local";
  run.specJson = R"({"name":")" + name + R"(","train":{"lr":0.001,"batch_size":32}})";
  run.modelKind = "mlp";
  run.totalSteps = 1000;
  run.batchSize = 32;
  run.blas = "openblas";
  run.torchVersion = "2.1.0";
  run.stages = {{0, 0, 3, "cpu", "linear", 1, 1000, 10, {}, {}, {}, {}, {}},
                {1, 4, 8, "cpu", "classifier", 2, 2000, 0, {}, {}, {}, {}, {}}};
  run.layers = {{0, "fc0", "Linear 784→512 + ReLU", {512}, 401920, 803840, 2048},
                {1, "classifier", "Linear 512→10", {10}, 5130, 10240, 40}};
  return run;
}

}  // namespace stagewise::storage::testing
