// The store locked by another process (store_lock_helper, as an sqlite3 shell with an open
// transaction): the writer neither hangs nor loses data; it says the store is locked by another
// process, naming the file, holds what it could not write and writes it once the lock is gone.
// Opening a locked store reads what is there, or, when even reading is locked out, refuses with
// that message (not "damaged") and leaves the file as it was.

#include <QProcess>
#include <QTest>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"
#include "stagewise/storage/run_writer.h"
#include "store_test_util.h"

using namespace stagewise::storage;
using namespace stagewise::storage::testing;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kBusyMs = 300;

StoreOptions shortBusy() {
  StoreOptions options;
  options.busyTimeoutMs = kBusyMs;
  options.writer.maxDelay = std::chrono::milliseconds(20);
  options.writer.retryInterval = std::chrono::milliseconds(100);
  return options;
}

/// Another process holding the store's lock until release().
class LockHolder {
 public:
  LockHolder(const std::string& db, const char* mode) {
    m_process.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    m_process.start(STORE_LOCK_HELPER, {QString::fromStdString(db), mode});
    while (m_process.waitForReadyRead(10000)) {
      m_out += m_process.readAll();
      if (m_out.contains("locked\n")) {
        m_locked = true;
        break;
      }
    }
  }
  ~LockHolder() { release(); }
  bool locked() const { return m_locked; }
  bool release() {
    if (m_process.state() == QProcess::NotRunning) return m_process.exitCode() == 0;
    m_process.write("release\n");
    m_process.closeWriteChannel();
    return m_process.waitForFinished(10000) && m_process.exitCode() == 0;
  }

 private:
  QProcess m_process;
  QByteArray m_out;
  bool m_locked = false;
};

void appendSteps(RunWriter& writer, int64_t runId, int64_t first, int64_t count) {
  for (int64_t s = first; s < first + count; s += 100) {
    std::vector<PointInput> chunk;
    for (int64_t i = s; i < std::min(first + count, s + 100); ++i)
      chunk.push_back({"loss", 0, -1, i, i * 0.01, 0.5});
    writer.appendPoints(runId, std::move(chunk));
  }
}

bool contiguous(RunReader& reader, int64_t runId, int64_t n) {
  const auto points = reader.loadSeries(runId, {"loss", 0, -1});
  if (points.size() != size_t(n)) {
    qWarning("%zu points, expected %lld", points.size(), (long long)n);
    return false;
  }
  for (size_t i = 0; i < points.size(); ++i)
    if (points[i].step != int64_t(i)) return false;
  return true;
}

}  // namespace

class TestStoreLocked : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir m_dir;
  int m_count = 0;
  std::string freshPath() {
    return m_dir.filePath(QString("locked%1.db").arg(++m_count)).toStdString();
  }

 private Q_SLOTS:
  void writerWaitsOutAnotherProcesssLock() {
    const std::string path = freshPath();
    RunStore store(path, shortBusy());
    RunWriter& writer = store.writer();
    std::mutex mutex;
    std::vector<WriterNotice> notices;
    writer.addNoticeHandler([&](const WriterNotice& n) {
      std::lock_guard lock(mutex);
      notices.push_back(n);
    });
    const int64_t id = writer.createRun(sampleRun("contended"));
    appendSteps(writer, id, 0, 500);
    writer.flush();

    LockHolder holder(path, "write");
    QVERIFY(holder.locked());
    const auto t0 = Clock::now();
    appendSteps(writer, id, 500, 1000);
    // Handing over never waits for the lock.
    QVERIFY(Clock::now() - t0 < std::chrono::milliseconds(100));
    QTRY_VERIFY_WITH_TIMEOUT(writer.stats().pointsHeld > 0, 5000);
    appendSteps(writer, id, 1500, 1000);
    auto noticeCount = [&] {
      std::lock_guard lock(mutex);
      return notices.size();
    };
    QTRY_VERIFY_WITH_TIMEOUT(noticeCount() > 0, 5000);
    {
      std::lock_guard lock(mutex);
      QCOMPARE(notices.size(), size_t(1));
      QCOMPARE(int(notices[0].kind), int(WriterNotice::Kind::Problem));
      const QString message = QString::fromStdString(notices[0].message);
      qInfo("the user sees: %s", qPrintable(message));
      QVERIFY2(message.contains("locked by another process"), qPrintable(message));
      QVERIFY2(message.contains(QString::fromStdString(path)), qPrintable(message));
      QVERIFY2(message.contains("kept in memory"), qPrintable(message));
    }
    // flush() gives up after one more wait for the lock instead of hanging.
    const auto t1 = Clock::now();
    try {
      writer.flush();
      QFAIL("flush succeeded while another process held the lock");
    } catch (const StoreError& e) {
      QVERIFY2(QString(e.what()).contains("locked by another process"), e.what());
    }
    QVERIFY(Clock::now() - t1 < std::chrono::milliseconds(kBusyMs * 10));
    {
      // Reading goes on meanwhile: the committed points are there.
      RunReader reader(store);
      QVERIFY(contiguous(reader, id, 500));
    }

    QVERIFY(holder.release());
    QTRY_COMPARE_WITH_TIMEOUT(writer.stats().pointsHeld, int64_t(0), 5000);
    writer.finishRun(id, RunFinish{});
    writer.flush();
    QTRY_COMPARE(noticeCount(), size_t(2));
    {
      std::lock_guard lock(mutex);
      QCOMPARE(int(notices.back().kind), int(WriterNotice::Kind::Recovered));
    }
    QCOMPARE(writer.stats().pointsDropped, int64_t(0));
    QCOMPARE(rawQuery(path, "PRAGMA integrity_check"), std::string("ok"));
    RunReader reader(store);
    QVERIFY(contiguous(reader, id, 2500));
    QCOMPARE(toString(reader.run(id)->status), toString(RunStatus::Completed));
    bool noted = false;
    for (const auto& e : reader.events(id))
      noted = noted || e.message.find("another process held its lock") != std::string::npos;
    QVERIFY(noted);
  }

  void openingWhileAnotherProcessWrites() {
    const std::string path = freshPath();
    int64_t id = 0;
    {
      RunStore store(path);
      id = store.writer().createRun(sampleRun("before"));
      store.writer().finishRun(id, RunFinish{});
      store.writer().flush();
    }
    LockHolder holder(path, "write");
    QVERIFY(holder.locked());
    // Browsing works while the other process writes...
    StoreOptions noCreateRetry = shortBusy();
    noCreateRetry.writer.createRetry = std::chrono::milliseconds(0);
    RunStore store(path, noCreateRetry);
    RunReader reader(store);
    QCOMPARE(reader.listRuns().size(), size_t(1));
    // ...and, with no retry asked for, starting a run says why it cannot after the busy
    // timeout, not later.
    const auto t0 = Clock::now();
    try {
      store.writer().createRun(sampleRun("blocked"));
      QFAIL("createRun succeeded while another process held the lock");
    } catch (const StoreError& e) {
      const QString message = e.what();
      QVERIFY2(message.contains("locked by another process"), e.what());
      QVERIFY2(message.contains(QString::fromStdString(path)), e.what());
    }
    QVERIFY(Clock::now() - t0 < std::chrono::milliseconds(kBusyMs * 10));
    QVERIFY(holder.release());
    const int64_t next = store.writer().createRun(sampleRun("after"));
    QVERIFY(next > id);
  }

  void aRunStartingWhileLockedIsRecordedOnceTheLockGoes() {
    // The default: a new run's record waits out another process's lock (retried, said once,
    // and its recovery said), instead of leaving the run unrecorded.
    const std::string path = freshPath();
    { RunStore store(path); }
    LockHolder holder(path, "write");
    QVERIFY(holder.locked());
    StoreOptions options = shortBusy();
    options.writer.createRetry = std::chrono::milliseconds(20000);
    RunStore store(path, options);
    std::mutex mutex;
    std::vector<WriterNotice> notices;
    store.writer().addNoticeHandler([&](const WriterNotice& n) {
      std::lock_guard lock(mutex);
      notices.push_back(n);
    });
    std::atomic<int64_t> id{-1};
    std::thread starter([&] { id = store.writer().createRun(sampleRun("waits")); });
    std::this_thread::sleep_for(std::chrono::milliseconds(kBusyMs * 4));
    QCOMPARE(id.load(), int64_t(-1));  // still waiting, not failed
    QVERIFY(holder.release());
    starter.join();
    QVERIFY(id.load() > 0);
    store.writer().finishRun(id, RunFinish{});
    store.writer().flush();
    QCOMPARE(RunReader(store).run(id)->name, std::string("waits"));
    std::lock_guard lock(mutex);
    QVERIFY(notices.size() >= 2);
    QCOMPARE(int(notices.front().kind), int(WriterNotice::Kind::Problem));
    QVERIFY2(
        QString::fromStdString(notices.front().message).contains("recorded as soon as it can be"),
        notices.front().message.c_str());
    QCOMPARE(int(notices.back().kind), int(WriterNotice::Kind::Recovered));
  }

  void openingAStoreLockedOutright() {
    const std::string path = freshPath();
    {
      RunStore store(path);
      store.writer().createRun(sampleRun("kept"));
    }
    LockHolder holder(path, "exclusive");
    QVERIFY(holder.locked());
    const QByteArray before = fileHash(QString::fromStdString(path));
    try {
      RunStore store(path, shortBusy());
      QFAIL("opened a store another process holds exclusively");
    } catch (const StoreError& e) {
      const QString message = e.what();
      qInfo("the user sees: %s", e.what());
      QVERIFY2(message.contains("locked by another process"), e.what());
      QVERIFY2(message.contains(QString::fromStdString(path)), e.what());
      QVERIFY2(!message.contains("damaged"), e.what());
    }
    QCOMPARE(fileHash(QString::fromStdString(path)), before);
    QVERIFY(holder.release());
    RunStore store(path, shortBusy());
    QCOMPARE(RunReader(store).listRuns().size(), size_t(1));
  }
};

QTEST_GUILESS_MAIN(TestStoreLocked)
#include "test_store_locked.moc"
