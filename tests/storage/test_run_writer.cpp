// The writer thread: batching by size and delay, many producers, errors surfaced on flush,
// resumed runs, heartbeats, and readers that never block it.

#include <QElapsedTimer>
#include <QTest>
#include <atomic>
#include <thread>

#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"
#include "stagewise/storage/run_writer.h"
#include "store_test_util.h"

using namespace stagewise::storage;
using namespace stagewise::storage::testing;

namespace {

const SeriesKey kLoss{"loss", 0, -1};

std::vector<PointInput> points(int n, int64_t firstStep = 0, const std::string& name = "loss") {
  std::vector<PointInput> out;
  for (int i = 0; i < n; ++i) out.push_back({name, 0, -1, firstStep + i, 0.01 * i, double(i)});
  return out;
}

int64_t visibleCount(RunReader& reader, int64_t runId) {
  const auto s = reader.findSeries(runId, kLoss);
  return s ? s->pointCount : 0;
}

}  // namespace

class TestRunWriter : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir m_dir;
  int m_count = 0;
  std::string freshPath() { return m_dir.filePath(QString("w%1.db").arg(++m_count)).toStdString(); }

 private Q_SLOTS:
  void commitsWithinTheDelayWithoutFlush() {
    RunStore store(freshPath());
    const int64_t id = store.writer().createRun(sampleRun());
    RunReader reader(store);
    QTest::qWait(100);  // the thread is asleep again, waiting for work or the next heartbeat
    QElapsedTimer timer;
    timer.start();
    store.writer().appendPoints(id, points(10));
    while (visibleCount(reader, id) < 10 && timer.elapsed() < 5000) QTest::qWait(10);
    QCOMPARE(visibleCount(reader, id), int64_t(10));
    QVERIFY2(timer.elapsed() < 1000, qPrintable(QString::number(timer.elapsed())));
  }

  void commitsEarlyWhenTheBatchIsFull() {
    StoreOptions options;
    options.writer.batchPoints = 1000;
    options.writer.maxDelay = std::chrono::seconds(30);
    RunStore store(freshPath(), options);
    const int64_t id = store.writer().createRun(sampleRun());
    RunReader reader(store);
    store.writer().appendPoints(id, points(10));
    QTest::qWait(400);
    QCOMPARE(visibleCount(reader, id), int64_t(0));  // waits for more points (or the delay)
    store.writer().appendPoints(id, points(990, 10));
    QElapsedTimer timer;
    timer.start();
    while (visibleCount(reader, id) < 1000 && timer.elapsed() < 5000) QTest::qWait(10);
    QCOMPARE(visibleCount(reader, id), int64_t(1000));
  }

  void manyProducersLoseNothing() {
    RunStore store(freshPath());
    RunWriter& w = store.writer();
    const int64_t id = w.createRun(sampleRun());
    constexpr int kThreads = 6;
    constexpr int kChunks = 500;
    constexpr int kPerChunk = 40;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&w, id, t] {
        for (int c = 0; c < kChunks; ++c) {
          std::vector<PointInput> chunk;
          for (int i = 0; i < kPerChunk; ++i) {
            const int64_t step = int64_t(c) * kPerChunk + i;
            chunk.push_back({"loss", t, -1, step, step * 0.001, double(step)});
          }
          w.appendPoints(id, std::move(chunk));
        }
      });
    }
    for (auto& t : threads) t.join();
    w.flush();
    RunReader reader(store);
    for (int t = 0; t < kThreads; ++t) {
      const auto got = reader.loadSeries(id, {"loss", t, -1});
      QCOMPARE(got.size(), size_t(kChunks * kPerChunk));
      for (size_t i = 0; i < got.size(); ++i) {
        if (got[i].step != int64_t(i)) QFAIL("points of one producer out of order");
      }
    }
    const WriterStats stats = w.stats();
    QCOMPARE(stats.pointsWritten, int64_t(kThreads * kChunks * kPerChunk));
    QCOMPARE(stats.pointsDropped, int64_t(0));
    // 3,000 hand-overs, far fewer transactions.
    QVERIFY2(stats.transactions < 100, qPrintable(QString::number(stats.transactions)));
  }

  void pointsForUnknownRunsAreReportedOnFlush() {
    RunStore store(freshPath());
    RunWriter& w = store.writer();
    w.appendPoints(4242, points(5));
    try {
      w.flush();
      QFAIL("flush did not report the dropped points");
    } catch (const StoreError& e) {
      QVERIFY2(std::string(e.what()).find("does not record") != std::string::npos, e.what());
    }
    w.flush();  // reported once
    QCOMPARE(w.stats().pointsDropped, int64_t(5));
  }

  void finishReleasesTheRun() {
    RunStore store(freshPath());
    RunWriter& w = store.writer();
    const int64_t id = w.createRun(sampleRun());
    QVERIFY(store.isLive(id));
    QVERIFY(QFile::exists(
        QString::fromStdString(store.path() + ".run-" + std::to_string(id) + ".lock")));
    w.appendPoints(id, points(3));
    w.finishRun(id, {});
    w.flush();
    QVERIFY(!store.isLive(id));
    QVERIFY(!QFile::exists(
        QString::fromStdString(store.path() + ".run-" + std::to_string(id) + ".lock")));
    w.appendPoints(id, points(3, 100));  // after finish: not written
    QVERIFY_THROWS_EXCEPTION(StoreError, w.flush());
    RunReader reader(store);
    QCOMPARE(visibleCount(reader, id), int64_t(3));
  }

  void closingTheStoreInterruptsUnfinishedRuns() {
    const std::string path = freshPath();
    int64_t id = 0;
    {
      RunStore store(path);
      id = store.writer().createRun(sampleRun());
      store.writer().appendPoints(id, points(100));
    }
    RunStore store(path);
    RunReader reader(store);
    const auto run = reader.run(id);
    QCOMPARE(toString(run->status), toString(RunStatus::Interrupted));
    QVERIFY(run->error.find("before the run finished") != std::string::npos);
    QVERIFY(run->finishedAtMs.has_value());
    QCOMPARE(visibleCount(reader, id), int64_t(100));  // pending points were written first
  }

  void resumeContinuesTheSameRecord() {
    const std::string path = freshPath();
    int64_t id = 0;
    {
      RunStore store(path);
      id = store.writer().createRun(sampleRun());
      store.writer().appendPoints(id, points(1000));
      RunFinish f;
      f.status = RunStatus::Stopped;
      store.writer().finishRun(id, f);
      store.writer().flush();
    }
    RunStore store(path);
    RunWriter& w = store.writer();
    QVERIFY_THROWS_EXCEPTION(StoreError, w.resumeRun(id + 1));
    w.resumeRun(id);
    RunReader reader(store);
    QCOMPARE(toString(reader.run(id)->status), toString(RunStatus::Running));
    QVERIFY(!reader.run(id)->finishedAtMs);
    QVERIFY(store.isLive(id));
    {
      // A second store in this process cannot take the run over while this one records it.
      RunStore other(path);
      QVERIFY_THROWS_EXCEPTION(StoreError, other.writer().resumeRun(id));
      QCOMPARE(toString(reader.run(id)->status),
               toString(RunStatus::Running));  // and its open did not interrupt it
    }
    auto more = points(1000, 1000);
    more[500].value = 1e6;
    w.appendPoints(id, std::move(more));
    w.finishRun(id, {});
    w.flush();
    const auto all = reader.loadSeries(id, kLoss);
    QCOMPARE(all.size(), size_t(2000));
    for (size_t i = 0; i < all.size(); ++i) QCOMPARE(all[i].step, int64_t(i));
    QCOMPARE(toString(reader.run(id)->status), toString(RunStatus::Completed));
    // Levels carried across the resume: bucket 31 at level 32 holds seqs 992..1023.
    QCOMPARE(rawInt(path, "SELECT count FROM series_levels WHERE level = 32 AND bucket = 31"),
             32LL);
    QCOMPARE(rawQuery(path, "SELECT v_max FROM series_levels WHERE level = 1024 AND bucket = 1"),
             std::string("1000000.0"));
    const auto plot = reader.loadDecimated(id, kLoss, 10);
    QCOMPARE(plot.pointCount, int64_t(2000));
  }

  void heartbeatAdvancesWhileIdle() {
    StoreOptions options;
    options.writer.heartbeatInterval = std::chrono::milliseconds(100);
    RunStore store(freshPath(), options);
    const int64_t id = store.writer().createRun(sampleRun());
    RunReader reader(store);
    const TimestampMs first = reader.run(id)->writer.heartbeatAtMs;
    QTest::qWait(600);
    QVERIFY(reader.run(id)->writer.heartbeatAtMs >= first + 300);
  }

  void readersDoNotBlockTheWriter() {
    RunStore store(freshPath());
    RunWriter& w = store.writer();
    const int64_t a = w.createRun(sampleRun("a"));
    const int64_t b = w.createRun(sampleRun("b"));
    w.appendPoints(a, points(50000));
    w.flush();
    RunReader reader(store);
    const auto series = reader.findSeries(a, kLoss);
    int64_t seen = 0;
    QElapsedTimer timer;
    timer.start();
    // Mid-read (an open read transaction), the writer commits twice.
    reader.forEachPoint(series->id, [&](const SeriesPoint&) {
      if (seen++ == 100) {
        w.appendPoints(b, points(20000));
        w.flush();
        w.appendPoints(b, points(10, 20000));
        w.flush();
      }
    });
    QCOMPARE(seen, int64_t(50000));
    QVERIFY(timer.elapsed() < 5000);
    QCOMPARE(visibleCount(reader, b), int64_t(20010));
  }
};

QTEST_GUILESS_MAIN(TestRunWriter)
#include "test_run_writer.moc"
