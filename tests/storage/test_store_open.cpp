// Opening a store: a new file is set up in WAL mode at the current schema; anything that is not
// a healthy Stagewise store of this version or older is refused and left byte-for-byte alone.

#include <QFile>
#include <QTest>
#include <filesystem>
#include <fstream>

#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"
#include "stagewise/storage/run_writer.h"
#include "store_test_util.h"

using namespace stagewise::storage;
using namespace stagewise::storage::testing;

class TestStoreOpen : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir m_dir;
  int m_count = 0;
  std::string freshPath() { return m_dir.filePath(QString("s%1.db").arg(++m_count)).toStdString(); }

  // Opening must throw a StoreError whose message contains `expected` and names the file, and
  // the file must be exactly as before.
  void expectRefused(const std::string& path, const std::string& expected) {
    const QByteArray before = fileHash(QString::fromStdString(path));
    const auto sizeBefore = std::filesystem::file_size(path);
    QVERIFY(!before.isEmpty());
    try {
      RunStore store(path);
      QFAIL(qPrintable(QString::fromStdString("opened " + path + " instead of refusing it")));
    } catch (const StoreError& e) {
      const std::string msg = e.what();
      QVERIFY2(msg.find(expected) != std::string::npos, msg.c_str());
      QVERIFY2(msg.find(path) != std::string::npos, msg.c_str());
    }
    QCOMPARE(fileHash(QString::fromStdString(path)), before);
    QCOMPARE(std::filesystem::file_size(path), sizeBefore);
  }

  // A store with one finished run of 5,000 points, closed (WAL checkpointed into the file).
  std::string storeWithData() {
    const std::string path = freshPath();
    RunStore store(path);
    RunWriter& w = store.writer();
    const int64_t id = w.createRun(sampleRun());
    std::vector<PointInput> points;
    for (int i = 0; i < 5000; ++i) points.push_back({"loss", 0, -1, i, i * 0.01, 1.0 / (1 + i)});
    w.appendPoints(id, std::move(points));
    w.finishRun(id, RunFinish{});
    w.flush();
    return path;
  }

 private Q_SLOTS:
  void newStoreIsWalAtCurrentVersion() {
    const std::string path = m_dir.filePath("nested/deeper/runs.db").toStdString();
    {
      RunStore store(path);
      QCOMPARE(store.schemaVersionFound(), 0);
      QCOMPARE(rawQuery(path, "PRAGMA journal_mode"), std::string("wal"));
    }
    QCOMPARE(rawInt(path, "PRAGMA user_version"), 6LL);
    QCOMPARE(rawInt(path, "PRAGMA application_id"), 0x53575253LL);
    // Header bytes 18/19 are 2 for a WAL database.
    std::ifstream in(path, std::ios::binary);
    char header[20] = {};
    in.read(header, sizeof(header));
    QCOMPARE(int(header[18]), 2);
    QCOMPARE(int(header[19]), 2);
    RunStore again(path);
    QCOMPARE(again.schemaVersionFound(), 6);
  }

  void emptyFileBecomesStore() {
    const std::string path = freshPath();
    std::ofstream(path).close();
    RunStore store(path);
    QCOMPARE(rawInt(path, "PRAGMA user_version"), 6LL);
  }

  void refusesNewerSchema() {
    const std::string path = freshPath();
    QVERIFY(rawExec(path,
                    "CREATE TABLE runs (id INTEGER PRIMARY KEY); "
                    "PRAGMA application_id = 1398231635; PRAGMA user_version = 99;"));
    expectRefused(path, "newer Stagewise (schema version 99");
  }

  void refusesNewerSchemaInWalMode() {
    const std::string path = storeWithData();
    QVERIFY(rawExec(path, "PRAGMA user_version = 7;"));
    expectRefused(path, "schema version 7");
  }

  void refusesTextFile() {
    const std::string path = freshPath();
    std::ofstream(path) << std::string(300, 'x') << "\nnot a database at all\n";
    expectRefused(path, "not a SQLite database");
  }

  void refusesTinyFile() {
    const std::string path = freshPath();
    std::ofstream(path) << "SQLite format 3";  // the magic, but nothing after it
    expectRefused(path, "not a SQLite database");
  }

  void refusesOtherProgramsDatabase() {
    const std::string path = freshPath();
    QVERIFY(rawExec(path, "CREATE TABLE contacts (name TEXT); INSERT INTO contacts VALUES ('a');"));
    expectRefused(path, "another program");
  }

  void refusesCorruptPages() {
    const std::string path = storeWithData();
    const auto size = std::filesystem::file_size(path);
    QVERIFY(size > 64 * 1024);
    {
      // Garbage over the middle of the file: b-tree pages of points and levels.
      std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(static_cast<std::streamoff>(size / 2));
      const std::string junk(3 * 4096, '\xA5');
      f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
    }
    expectRefused(path, "damaged");
  }

  void refusesCorruptHeader() {
    const std::string path = storeWithData();
    {
      std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(16);  // page size field: 0xFFFF... is invalid
      const char junk[4] = {'\x03', '\x03', '\x7f', '\x7f'};
      f.write(junk, sizeof(junk));
    }
    expectRefused(path, "damaged");
  }

  void refusesTruncatedFile() {
    const std::string path = storeWithData();
    std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
    expectRefused(path, "damaged");
  }

  void largeFileCheckRefusesTruncationAndBadHeader() {
    // Files above fullCheckMaxBytes get the structural check instead of a full read.
    StoreOptions structural;
    structural.fullCheckMaxBytes = 0;
    const std::string truncated = storeWithData();
    std::filesystem::resize_file(truncated, std::filesystem::file_size(truncated) / 2);
    const QByteArray before = fileHash(QString::fromStdString(truncated));
    QVERIFY_THROWS_EXCEPTION(StoreError, RunStore(truncated, structural));
    QCOMPARE(fileHash(QString::fromStdString(truncated)), before);

    const std::string odd = storeWithData();
    std::filesystem::resize_file(odd, std::filesystem::file_size(odd) + 100);  // not whole pages
    QVERIFY_THROWS_EXCEPTION(StoreError, RunStore(odd, structural));

    const std::string healthy = storeWithData();
    RunStore store(healthy, structural);
    QCOMPARE(RunReader(store).countRuns(), int64_t(1));
  }

  void refusesDirectory() {
    const std::string path = m_dir.filePath("adir").toStdString();
    std::filesystem::create_directory(path);
    try {
      RunStore store(path);
      QFAIL("opened a directory");
    } catch (const StoreError& e) {
      QVERIFY2(std::string(e.what()).find("not a regular file") != std::string::npos, e.what());
    }
  }

  void healthyStoreReopensWithData() {
    const std::string path = storeWithData();
    RunStore store(path);
    RunReader reader(store);
    QCOMPARE(reader.countRuns(), int64_t(1));
    QCOMPARE(reader.listSeries(reader.listRuns().front().id).front().pointCount, int64_t(5000));
  }
};

QTEST_GUILESS_MAIN(TestStoreOpen)
#include "test_store_open.moc"
