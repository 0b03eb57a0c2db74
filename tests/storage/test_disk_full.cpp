// The disk filling up while the writer records a run: what was committed stays intact, the
// writer says the disk is full (naming the file) without blocking the producer, holds what it
// could not write and writes it, in order and once, when space returns; if space never returns
// before the store closes, what was held is counted as lost and the run reads `interrupted`.
//
// The full disk is FullDiskVfs (SQLITE_FULL for any write that grows a file); where the test
// may mount a tmpfs (root), realFullFilesystem fills a real 512 KiB filesystem instead.

#include <sys/mount.h>

#include <QProcess>
#include <QTest>
#include <chrono>
#include <mutex>
#include <thread>

#include "full_disk_vfs.h"
#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"
#include "stagewise/storage/run_writer.h"
#include "store_test_util.h"

using namespace stagewise::storage;
using namespace stagewise::storage::testing;
using Clock = std::chrono::steady_clock;

namespace {

/// Collects the writer's notices.
struct Notices {
  std::mutex mutex;
  std::vector<WriterNotice> all;
  void add(const WriterNotice& n) {
    std::lock_guard lock(mutex);
    all.push_back(n);
  }
  std::vector<WriterNotice> of(WriterNotice::Kind kind) {
    std::lock_guard lock(mutex);
    std::vector<WriterNotice> out;
    for (const auto& n : all)
      if (n.kind == kind) out.push_back(n);
    return out;
  }
};

StoreOptions fastRetry() {
  StoreOptions options;
  options.writer.maxDelay = std::chrono::milliseconds(20);
  options.writer.retryInterval = std::chrono::milliseconds(100);
  options.writer.closeRetry = std::chrono::milliseconds(500);
  return options;
}

// `count` points of series ("loss", 0) with steps from `first`, handed over in chunks of 100;
// returns the slowest hand-over in milliseconds.
double appendSteps(RunWriter& writer, int64_t runId, int64_t first, int64_t count) {
  double slowest = 0;
  for (int64_t s = first; s < first + count; s += 100) {
    std::vector<PointInput> chunk;
    for (int64_t i = s; i < std::min(first + count, s + 100); ++i)
      chunk.push_back({"loss", 0, -1, i, i * 0.01, 1.0 / (1 + i)});
    const auto t0 = Clock::now();
    writer.appendPoints(runId, std::move(chunk));
    slowest =
        std::max(slowest, std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  return slowest;
}

// Every point of ("loss", 0) is there once, in order, steps 0..n-1.
bool contiguous(RunReader& reader, int64_t runId, int64_t n) {
  const auto points = reader.loadSeries(runId, {"loss", 0, -1});
  if (points.size() != size_t(n)) {
    qWarning("%zu points, expected %lld", points.size(), (long long)n);
    return false;
  }
  for (size_t i = 0; i < points.size(); ++i) {
    if (points[i].step != int64_t(i)) {
      qWarning("point %zu has step %lld", i, (long long)points[i].step);
      return false;
    }
  }
  return reader.findSeries(runId, {"loss", 0, -1})->pointCount == n;
}

bool mountTmpfs(const QString& dir, const QString& size, bool remount = false) {
  QProcess p;
  QStringList args{"-t", "tmpfs", "-o", (remount ? "remount,size=" : "size=") + size, "tmpfs", dir};
  p.start("mount", args);
  return p.waitForFinished(10000) && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
}

}  // namespace

class TestDiskFull : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir m_dir;
  int m_count = 0;
  std::string freshPath() {
    return m_dir.filePath(QString("full%1.db").arg(++m_count)).toStdString();
  }

 private Q_SLOTS:
  void initTestCase() { FullDiskVfs::install(); }
  void cleanup() { FullDiskVfs::setFull(false); }

  void fullDiskHoldsPointsAndWritesThemWhenSpaceReturns() {
    const std::string path = freshPath();
    RunStore store(path, fastRetry());
    RunWriter& writer = store.writer();
    Notices notices;
    writer.addNoticeHandler([&](const WriterNotice& n) { notices.add(n); });
    const int64_t id = writer.createRun(sampleRun("filling"));
    appendSteps(writer, id, 0, 1000);
    writer.flush();

    FullDiskVfs::setFull(true);
    const int64_t refusedBefore = FullDiskVfs::refused();
    // Training goes on: handing points over never waits for the disk.
    double slowest = appendSteps(writer, id, 1000, 3000);
    QTRY_VERIFY_WITH_TIMEOUT(writer.stats().pointsHeld > 0, 5000);
    slowest = std::max(slowest, appendSteps(writer, id, 4000, 2000));
    QVERIFY2(slowest < 50, qPrintable(QString("a hand-over took %1 ms").arg(slowest)));
    QVERIFY(FullDiskVfs::refused() > refusedBefore);

    // The user is told, once, naming the file and what to do.
    QTRY_VERIFY(!notices.of(WriterNotice::Kind::Problem).empty());
    const auto problems = notices.of(WriterNotice::Kind::Problem);
    QCOMPARE(problems.size(), size_t(1));
    const QString message = QString::fromStdString(problems[0].message);
    qInfo("the user sees: %s", qPrintable(message));
    QVERIFY2(message.contains("disk is full"), qPrintable(message));
    QVERIFY2(message.contains(QString::fromStdString(path)), qPrintable(message));
    QVERIFY2(message.contains("free space"), qPrintable(message));
    QVERIFY2(message.contains("kept in memory"), qPrintable(message));
    QVERIFY(QString::fromStdString(writer.stats().problem).contains("disk is full"));

    // flush() does not hang: it says the data is held, not lost.
    const auto t0 = Clock::now();
    try {
      writer.flush();
      QFAIL("flush succeeded on a full disk");
    } catch (const StoreError& e) {
      QVERIFY2(QString(e.what()).contains("disk is full"), e.what());
      QVERIFY2(QString(e.what()).contains("retried"), e.what());
    }
    QVERIFY(Clock::now() - t0 < std::chrono::seconds(3));

    // What was committed before is intact and readable while the disk is full.
    QCOMPARE(rawQuery(path, "PRAGMA integrity_check"), std::string("ok"));
    {
      RunReader reader(store);
      QVERIFY(contiguous(reader, id, 1000));
    }

    FullDiskVfs::setFull(false);
    QTRY_COMPARE_WITH_TIMEOUT(writer.stats().pointsHeld, int64_t(0), 5000);
    writer.flush();
    QTRY_COMPARE(notices.of(WriterNotice::Kind::Recovered).size(), size_t(1));
    QVERIFY(notices.of(WriterNotice::Kind::Lost).empty());
    QCOMPARE(writer.stats().pointsDropped, int64_t(0));
    QVERIFY(writer.stats().problem.empty());

    writer.finishRun(id, RunFinish{});
    writer.flush();
    QCOMPARE(rawQuery(path, "PRAGMA integrity_check"), std::string("ok"));
    RunReader reader(store);
    QVERIFY(contiguous(reader, id, 6000));
    QCOMPARE(toString(reader.run(id)->status), toString(RunStatus::Completed));
    // The run itself records that writing was delayed and that nothing was lost.
    bool noted = false;
    for (const auto& e : reader.events(id)) {
      noted =
          noted || (e.kind == "warning" && e.message.find("disk was full") != std::string::npos &&
                    e.message.find("none lost") != std::string::npos);
    }
    QVERIFY(noted);
    // The summary levels agree with the points: nothing counted twice by the retries.
    const DecimatedSeries decimated = reader.loadDecimated(id, {"loss", 0, -1}, 10);
    QVERIFY(decimated.level > 0);
    int64_t total = 0;
    for (const auto& column : decimated.buckets) total += column.count;
    QCOMPARE(total, int64_t(6000));
  }

  void finalStatusWaitsForSpaceUntilTheStoreCloses() {
    const std::string path = freshPath();
    int64_t id = 0;
    {
      StoreOptions options = fastRetry();
      options.writer.closeRetry = std::chrono::seconds(20);
      RunStore store(path, options);
      RunWriter& writer = store.writer();
      id = writer.createRun(sampleRun("ends-full"));
      appendSteps(writer, id, 0, 500);
      writer.flush();
      FullDiskVfs::setFull(true);
      appendSteps(writer, id, 500, 500);
      writer.finishRun(id, RunFinish{});
      QVERIFY_THROWS_EXCEPTION(StoreError, writer.flush());
      // Space comes back while the store is closing (the CLI exiting after its run).
      std::thread freeSpace([] {
        std::this_thread::sleep_for(std::chrono::milliseconds(700));
        FullDiskVfs::setFull(false);
      });
      freeSpace.detach();
    }
    RunStore store(path);
    RunReader reader(store);
    QCOMPARE(toString(reader.run(id)->status), toString(RunStatus::Completed));
    QVERIFY(contiguous(reader, id, 1000));
  }

  void spaceThatNeverReturnsIsCountedLost() {
    const std::string path = freshPath();
    int64_t id = 0;
    Notices notices;
    {
      RunStore store(path, fastRetry());  // closeRetry 0.5 s
      RunWriter& writer = store.writer();
      writer.addNoticeHandler([&](const WriterNotice& n) { notices.add(n); });
      id = writer.createRun(sampleRun("lost"));
      appendSteps(writer, id, 0, 700);
      writer.flush();
      FullDiskVfs::setFull(true);
      appendSteps(writer, id, 700, 300);
      writer.finishRun(id, RunFinish{});
    }
    const auto lost = notices.of(WriterNotice::Kind::Lost);
    QCOMPARE(lost.size(), size_t(1));
    QCOMPARE(lost[0].pointsLost, int64_t(300));
    const QString message = QString::fromStdString(lost[0].message);
    qInfo("the user sees: %s", qPrintable(message));
    QVERIFY2(message.contains("are lost") && message.contains("disk is full") &&
                 message.contains(QString::fromStdString(path)) && message.contains("interrupted"),
             qPrintable(message));

    FullDiskVfs::setFull(false);
    QCOMPARE(rawQuery(path, "PRAGMA integrity_check"), std::string("ok"));
    RunStore store(path);
    RunReader reader(store);
    QCOMPARE(store.recoveredRuns(), std::vector<int64_t>{id});
    QCOMPARE(toString(reader.run(id)->status), toString(RunStatus::Interrupted));
    QVERIFY(contiguous(reader, id, 700));
  }

  void memoryCapDropsAndCounts() {
    const std::string path = freshPath();
    StoreOptions options = fastRetry();
    options.writer.maxHeldPoints = 2000;
    RunStore store(path, options);
    RunWriter& writer = store.writer();
    Notices notices;
    writer.addNoticeHandler([&](const WriterNotice& n) { notices.add(n); });
    const int64_t id = writer.createRun(sampleRun("capped"));
    appendSteps(writer, id, 0, 100);
    writer.flush();
    FullDiskVfs::setFull(true);
    appendSteps(writer, id, 100, 1000);
    QTRY_VERIFY_WITH_TIMEOUT(writer.stats().pointsHeld >= 1000, 5000);
    // 1,000 more fit under the cap; the 5,000 after them do not.
    appendSteps(writer, id, 1100, 6000);
    QTRY_VERIFY_WITH_TIMEOUT(!notices.of(WriterNotice::Kind::Lost).empty(), 5000);
    const WriterStats stats = writer.stats();
    QCOMPARE(stats.pointsDropped, int64_t(5000));
    FullDiskVfs::setFull(false);
    try {
      writer.flush();
      QFAIL("a flush after dropped points must report them");
    } catch (const StoreError& e) {
      QVERIFY2(QString(e.what()).contains("dropped"), e.what());
    }
    writer.flush();  // reported once
    RunReader reader(store);
    QCOMPARE(reader.loadSeries(id, {"loss", 0, -1}).size(), size_t(2100));
  }

  // A real filesystem running out of space (ENOSPC), where this process may mount one.
  void realFullFilesystem() {
    QTemporaryDir mountDir;
    const QString dir = mountDir.path();
    if (!mountTmpfs(dir, "512k"))
      QSKIP("cannot mount a tmpfs here (needs root); FullDiskVfs covers it");
    struct Unmount {
      QString dir;
      ~Unmount() { umount2(dir.toLocal8Bit().constData(), MNT_DETACH); }
    } unmount{dir};
    FullDiskVfs::setFull(false);
    const std::string path = (dir + "/runs.db").toStdString();
    int64_t written = 0;
    {
      RunStore store(path, fastRetry());
      RunWriter& writer = store.writer();
      Notices notices;
      writer.addNoticeHandler([&](const WriterNotice& n) { notices.add(n); });
      const int64_t id = writer.createRun(sampleRun("tmpfs"));
      // Write until the filesystem is full (a few thousand points fill 512 KiB).
      const auto deadline = Clock::now() + std::chrono::seconds(30);
      while (writer.stats().pointsHeld == 0 && Clock::now() < deadline) {
        appendSteps(writer, id, written, 1000);
        written += 1000;
        QTest::qWait(30);
      }
      QVERIFY2(writer.stats().pointsHeld > 0, "512 KiB never filled up");
      appendSteps(writer, id, written, 1000);
      written += 1000;
      QTRY_VERIFY(!notices.of(WriterNotice::Kind::Problem).empty());
      const QString message =
          QString::fromStdString(notices.of(WriterNotice::Kind::Problem)[0].message);
      qInfo("after %lld points on a 512 KiB tmpfs: %s", (long long)written, qPrintable(message));
      QVERIFY2(message.contains("disk is full") || message.contains("disk reported an error"),
               qPrintable(message));
      QVERIFY(mountTmpfs(dir, "64m", /*remount=*/true));
      QTRY_COMPARE_WITH_TIMEOUT(writer.stats().pointsHeld, int64_t(0), 10000);
      writer.finishRun(id, RunFinish{});
      writer.flush();
      RunReader reader(store);
      QVERIFY(contiguous(reader, id, written));
    }
    QCOMPARE(rawQuery(path, "PRAGMA integrity_check"), std::string("ok"));
  }
};

QTEST_GUILESS_MAIN(TestDiskFull)
#include "test_disk_full.moc"
