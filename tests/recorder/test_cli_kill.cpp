// The real `stagewise-cli train` recording into a store, killed with SIGKILL mid-run: the store
// passes integrity_check, the run reads `interrupted` (with its event) on the next open, and
// every point committed before the kill is there, including those of its last second.

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <chrono>
#include <thread>

#include "../storage/store_test_util.h"
#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"

using namespace stagewise::storage;
using namespace stagewise::storage::testing;
using Clock = std::chrono::steady_clock;

namespace {

// A small synthetic run that trains thousands of steps a second until it is stopped.
const QByteArray kSpec =
    R"({"name":"kill-test","dataset":{"kind":"synthetic","synthetic_train":1024,
  "synthetic_test":256},"model":{"hidden":[32,32,32]},"partition":{"cuts":[2]},
  "train":{"max_steps":100000000},"eval":{"interval":0},"probe":{"interval":200}})";

struct Sample {
  int64_t runId = 0;
  int64_t points = 0;  // of ("loss", stage 0)
};

// What a reader sees in the store right now (another process is writing it).
Sample sampleStore(const std::string& db) {
  Sample s;
  try {
    StoreOptions options;
    options.recoverStaleRuns = false;  // only look
    options.verifyOnOpen = false;
    RunStore store(db, options);
    RunReader reader(store);
    const auto runs = reader.listRuns();
    if (runs.empty()) return s;
    s.runId = runs.front().id;
    if (auto series = reader.findSeries(s.runId, {"loss", 0, -1})) s.points = series->pointCount;
  } catch (const StoreError&) {
    // not created yet
  }
  return s;
}

}  // namespace

class TestCliKill : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void sigkillMidRunLeavesAnInterruptedRun() {
    QTemporaryDir dir;
    const QString spec = dir.filePath("spec.json");
    {
      QFile f(spec);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(kSpec);
    }
    const std::string db = dir.filePath("runs.db").toStdString();
    QProcess cli;
    cli.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    cli.start(STAGEWISE_CLI,
              {"train", "--config", spec, "--db", QString::fromStdString(db), "--quiet"});
    QVERIFY(cli.waitForStarted(10000));

    // Training and recording: points keep arriving in the store.
    QTRY_VERIFY_WITH_TIMEOUT(sampleStore(db).points > 1000, 60000);
    QTest::qWait(1500);
    const Sample secondBefore = sampleStore(db);
    QTest::qWait(1000);
    const Sample justBefore = sampleStore(db);
    QVERIFY(cli.state() == QProcess::Running);
    cli.kill();  // SIGKILL
    QVERIFY(cli.waitForFinished(10000));
    QCOMPARE(cli.exitStatus(), QProcess::CrashExit);
    QVERIFY(justBefore.points > secondBefore.points);  // it was recording up to the end
    const int64_t id = justBefore.runId;
    qInfo("loss points (stage 0) stored 1 s before the kill: %lld, just before: %lld",
          (long long)secondBefore.points, (long long)justBefore.points);

    QCOMPARE(rawQuery(db, "PRAGMA integrity_check"), std::string("ok"));
    RunStore store(db);
    QCOMPARE(store.recoveredRuns(), std::vector<int64_t>{id});
    RunReader reader(store);
    const auto run = reader.run(id);
    QCOMPARE(toString(run->status), toString(RunStatus::Interrupted));
    QVERIFY(run->finishedAtMs.has_value());
    QCOMPARE(reader.events(id).back().kind, std::string("interrupted"));
    QVERIFY(!QFile::exists(QString::fromStdString(db + ".run-" + std::to_string(id) + ".lock")));
    QVERIFY(!store.isLive(id));

    // Everything a reader saw committed before the kill is still there, in order, with no holes.
    const auto points = reader.loadSeries(id, {"loss", 0, -1});
    qInfo("after the kill: %zu", points.size());
    QVERIFY(int64_t(points.size()) >= justBefore.points);
    QCOMPARE(reader.findSeries(id, {"loss", 0, -1})->pointCount, int64_t(points.size()));
    for (size_t i = 1; i < points.size(); ++i) {
      if (points[i].step <= points[i - 1].step) QFAIL("points out of order or repeated");
    }
    // The stage's steps are all there up to the last one kept: the first 10,000 one by one; after
    // that the recording policy keeps each window's extremes (docs/storage.md), so two stored
    // steps are never more than two windows apart (W = 4, doubling every 10,000 rows).
    const size_t raw = std::min<size_t>(points.size(), 10000);
    QCOMPARE(points[raw - 1].step - points.front().step + 1, int64_t(raw));
    for (size_t i = raw; i < points.size(); ++i) {
      const int64_t window = int64_t{4} << ((i - 10000) / 10000);
      if (points[i].step - points[i - 1].step > 2 * window - 1)
        QFAIL(qPrintable(QString("a hole after step %1").arg(points[i - 1].step)));
    }
  }
};

QTEST_GUILESS_MAIN(TestCliKill)
#include "test_cli_kill.moc"
