// Liveness across processes: a writer killed with SIGKILL leaves a sound store whose run becomes
// `interrupted` on the next open with everything older than a second kept; a live writer in
// another process is left alone; two processes write one file at once and lose nothing.

#include <fcntl.h>
#include <unistd.h>

#include <QProcess>
#include <QTest>
#include <chrono>

#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"
#include "stagewise/storage/run_writer.h"
#include "store_test_util.h"

using namespace stagewise::storage;
using namespace stagewise::storage::testing;

namespace {

double unixSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Starts the helper and returns the id of the run it created (0 on failure).
int64_t startHelper(QProcess& p, const std::string& db, const QString& name, int points, int chunk,
                    int intervalMs, int series) {
  p.setProcessChannelMode(QProcess::ForwardedErrorChannel);
  p.start(STORE_WRITER_HELPER,
          {QString::fromStdString(db), name, QString::number(points), QString::number(chunk),
           QString::number(intervalMs), QString::number(series)});
  if (!p.waitForStarted(10000)) return 0;
  while (!p.canReadLine()) {
    if (!p.waitForReadyRead(10000)) return 0;
  }
  const QString line = QString::fromUtf8(p.readLine()).trimmed();
  return line.startsWith("run ") ? line.mid(4).toLongLong() : 0;
}

}  // namespace

class TestLiveness : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir m_dir;

 private Q_SLOTS:
  void killedWriterIsInterruptedAndKeepsOlderPoints() {
    const std::string path = m_dir.filePath("kill.db").toStdString();
    QProcess helper;
    // 10 points every 5 ms in one series: ~2,000 points/s.
    const int64_t id = startHelper(helper, path, "doomed", 0, 10, 5, 1);
    QVERIFY(id > 0);
    QTest::qWait(1500);
    {
      // While it lives, another process's open leaves the run alone.
      RunStore store(path);
      QVERIFY(store.recoveredRuns().empty());
      QVERIFY(store.isLive(id));
      QCOMPARE(toString(RunReader(store).run(id)->status), toString(RunStatus::Running));
    }
    QTest::qWait(500);
    const double killTime = unixSeconds();
    helper.kill();  // SIGKILL
    QVERIFY(helper.waitForFinished(10000));
    QCOMPARE(helper.exitStatus(), QProcess::CrashExit);

    QCOMPARE(rawQuery(path, "PRAGMA integrity_check"), std::string("ok"));
    RunStore store(path);
    QCOMPARE(store.recoveredRuns(), std::vector<int64_t>{id});
    RunReader reader(store);
    const auto run = reader.run(id);
    QCOMPARE(toString(run->status), toString(RunStatus::Interrupted));
    QVERIFY(run->finishedAtMs.has_value());
    QCOMPARE(reader.events(id).back().kind, std::string("interrupted"));
    QVERIFY(!QFile::exists(QString::fromStdString(path + ".run-" + std::to_string(id) + ".lock")));

    const auto points = reader.loadSeries(id, {"loss", 0, -1});
    QVERIFY(points.size() > 1000);
    for (size_t i = 0; i < points.size(); ++i) {
      if (points[i].step != int64_t(i)) QFAIL("a hole in the committed points");
    }
    // The last kept point was handed over less than a second before the kill, so every point
    // older than that is there.
    const double lag = killTime - points.back().value;
    QVERIFY2(lag < 1.0, qPrintable(QString("last kept point %1 s before the kill").arg(lag)));
    QCOMPARE(reader.findSeries(id, {"loss", 0, -1})->pointCount, int64_t(points.size()));
  }

  // A descriptor of the file opened and closed anywhere in this process (a file dialog peeking
  // at runs.db) drops every POSIX lock the process holds on it. Another process that then
  // closes last must not delete the -wal and -shm files under this one: its run is seen here,
  // and a run written here afterwards reaches the file.
  void aForeignCloseDoesNotLoseTheLog() {
    const std::string path = m_dir.filePath("peek.db").toStdString();
    RunStore store(path);
    RunReader reader(store);
    QCOMPARE(reader.countRuns(), int64_t(0));
    {
      const int fd = ::open(path.c_str(), O_RDONLY);
      QVERIFY(fd >= 0);
      char head[16];
      QVERIFY(::read(fd, head, sizeof head) == ssize_t(sizeof head));
      ::close(fd);  // every lock of this process on the file is gone
    }
    QProcess helper;
    const int64_t id = startHelper(helper, path, "other", 20, 10, 1, 1);
    QVERIFY(id > 0);
    QVERIFY(helper.waitForFinished(20000));
    QCOMPARE(helper.exitCode(), 0);
    QVERIFY(QFile::exists(QString::fromStdString(path + "-wal")));
    QVERIFY(QFile::exists(QString::fromStdString(path + "-shm")));
    QVERIFY(reader.run(id).has_value());
    NewRun mine;
    mine.name = "mine";
    mine.mode = "local";
    mine.specJson = "{}";
    const int64_t own = store.writer().createRun(mine);
    store.writer().flush();
    QVERIFY(own > id);
    QCOMPARE(rawQuery(path, "SELECT count(*) FROM runs"), std::string("2"));
  }

  void deadWritersFoundByPidAndHeartbeat() {
    const std::string path = m_dir.filePath("stale.db").toStdString();
    { RunStore store(path); }
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    const long long now = (long long)(unixSeconds() * 1000);
    auto insert = [&](int id, long long pid, const std::string& h, long long heartbeat) {
      return "INSERT INTO runs (id, name, created_at_ms, status, mode, spec_json, writer_pid, "
             "writer_host, heartbeat_at_ms) VALUES (" +
             std::to_string(id) +
             ", 'r', 1, 'running', "
             "'local', '{}', " +
             std::to_string(pid) + ", '" + h + "', " + std::to_string(heartbeat) + ");";
    };
    // 999999999 is above any pid_max: no such process.
    QVERIFY(rawExec(path, insert(1, 999999999, host, now) +                // pid gone, this host
                              insert(2, getpid(), host, now) +             // this process: alive
                              insert(3, 1, "elsewhere", now) +             // other host, fresh
                              insert(4, 1, "elsewhere", now - 3600000)));  // other host, stale
    RunStore store(path);
    std::vector<int64_t> recovered = store.recoveredRuns();
    std::sort(recovered.begin(), recovered.end());
    QCOMPARE(recovered, (std::vector<int64_t>{1, 4}));
    RunReader reader(store);
    QCOMPARE(toString(reader.run(2)->status), toString(RunStatus::Running));
    QCOMPARE(toString(reader.run(3)->status), toString(RunStatus::Running));
  }

  void twoProcessesWriteOneFileAtOnce() {
    const std::string path = m_dir.filePath("two.db").toStdString();
    { RunStore store(path); }
    constexpr int kPoints = 120000;
    constexpr int kSeries = 4;
    QProcess a;
    QProcess b;
    const int64_t idA = startHelper(a, path, "proc-a", kPoints, 300, 0, kSeries);
    const int64_t idB = startHelper(b, path, "proc-b", kPoints, 300, 0, kSeries);
    QVERIFY(idA > 0 && idB > 0 && idA != idB);
    QVERIFY(a.waitForFinished(60000));
    QVERIFY(b.waitForFinished(60000));
    QCOMPARE(a.exitCode(), 0);
    QCOMPARE(b.exitCode(), 0);
    QCOMPARE(rawQuery(path, "PRAGMA integrity_check"), std::string("ok"));
    RunStore store(path);
    RunReader reader(store);
    for (int64_t id : {idA, idB}) {
      QCOMPARE(toString(reader.run(id)->status), toString(RunStatus::Completed));
      for (int s = 0; s < kSeries; ++s) {
        const auto points = reader.loadSeries(id, {"loss", s, -1});
        QCOMPARE(points.size(), size_t(kPoints / kSeries));
        for (size_t i = 0; i < points.size(); ++i) {
          if (points[i].step != int64_t(i)) QFAIL("points lost or reordered");
        }
      }
    }
  }
};

QTEST_GUILESS_MAIN(TestLiveness)
#include "test_liveness.moc"
