// The writer thread: batching by size and delay, many producers, errors surfaced on flush,
// resumed runs, heartbeats, and readers that never block it.

#include <QElapsedTimer>
#include <QTest>
#include <atomic>
#include <cmath>
#include <map>
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
  void longSeriesKeepFewRowsAndEverySpike() {
    // The recording policy: a 10^6-step series keeps < 100,000 rows, its first 10,000 points as
    // they came, every spike, NaN and its last point; the smallest and largest value of any
    // stretch of steps are kept within the widest window of the policy (128 points here).
    const std::string path = freshPath();
    RunStore store(path);
    RunWriter& w = store.writer();
    const int64_t id = w.createRun(sampleRun("long"));
    const int64_t n = 1'000'000;
    std::vector<double> raw(n);
    uint64_t rng = 12345;
    auto next = [&] { return (rng = rng * 6364136223846793005ULL + 1442695040888963407ULL) >> 11; };
    std::vector<int64_t> spikes, nans;
    for (int64_t i = 0; i < n; ++i) {
      raw[i] = 1.0 + 0.001 * static_cast<double>(next() % 1000);
      // Spikes up and down, more than a window apart; a few NaNs.
      if (i % 4999 == 17) raw[i] = 100.0 + static_cast<double>(i), spikes.push_back(i);
      if (i % 7001 == 33) raw[i] = -100.0 - static_cast<double>(i), spikes.push_back(i);
      if (i % 190001 == 1234) raw[i] = std::nan(""), nans.push_back(i);
    }
    raw[n - 1] = 1.0005;  // the last value, an ordinary one
    for (int64_t start = 0; start < n; start += 50'000) {
      std::vector<PointInput> batch;
      for (int64_t i = start; i < std::min(n, start + 50'000); ++i)
        batch.push_back({"loss", 0, -1, i, i * 0.001, raw[i]});
      w.appendPoints(id, std::move(batch));
    }
    w.finishRun(id, RunFinish{});
    w.flush();
    RunReader reader(store);
    const auto stored = reader.loadSeries(id, {"loss", 0, -1});
    qInfo("10^6 points kept as %zu rows", stored.size());
    QVERIFY2(stored.size() < 100'000, qPrintable(QString::number(stored.size())));
    QVERIFY(stored.size() > 50'000);
    QCOMPARE(reader.findSeries(id, {"loss", 0, -1})->pointCount, int64_t(stored.size()));
    for (int64_t i = 0; i < 10'000; ++i) {
      QCOMPARE(stored[i].step, i);
      if (!std::isnan(raw[i])) QCOMPARE(stored[i].value, raw[i]);
    }
    std::map<int64_t, double> byStep;
    for (size_t i = 1; i < stored.size(); ++i) QVERIFY(stored[i].step > stored[i - 1].step);
    for (const auto& p : stored) byStep[p.step] = p.value;
    QVERIFY(spikes.size() > 100);
    for (int64_t i : spikes)
      QVERIFY2(byStep.count(i) && byStep[i] == raw[i], qPrintable(QString::number(i)));
    QVERIFY(!nans.empty());
    for (int64_t i : nans)
      QVERIFY2(byStep.count(i) && std::isnan(byStep[i]), qPrintable(QString::number(i)));
    QCOMPARE(stored.back().step, n - 1);
    QCOMPARE(stored.back().value, 1.0005);
    // Any stretch [a, b]: the rows within 128 steps of it hold a value <= its minimum and one
    // >= its maximum (a window never spans more than 128 points here).
    for (int trial = 0; trial < 2000; ++trial) {
      const int64_t a = static_cast<int64_t>(next() % n);
      const int64_t b = std::min(n - 1, a + static_cast<int64_t>(next() % 20000));
      double lo = INFINITY, hi = -INFINITY;
      for (int64_t i = a; i <= b; ++i)
        if (!std::isnan(raw[i])) lo = std::min(lo, raw[i]), hi = std::max(hi, raw[i]);
      double slo = INFINITY, shi = -INFINITY;
      for (auto it = byStep.lower_bound(a - 128); it != byStep.end() && it->first <= b + 128; ++it)
        if (!std::isnan(it->second))
          slo = std::min(slo, it->second), shi = std::max(shi, it->second);
      QVERIFY(slo <= lo);
      QVERIFY(shi >= hi);
    }
    // Summary levels of the stored rows are exact: the plot's tallest column is the top spike.
    const auto plot = reader.loadDecimated(id, {"loss", 0, -1}, 500);
    double top = 0;
    for (const auto& bucket : plot.buckets) top = std::max(top, bucket.max);
    QCOMPARE(top, 100.0 + static_cast<double>(n - 1 - (n - 1 - 17) % 4999));
  }

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
    RunStore store(freshPath(), keepEveryPoint());
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
    RunStore store(freshPath(), keepEveryPoint());
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
