// The workbench's launcher of local multi-process runs (app/gui/local_ranks), with the real
// engine and the real stagewise-cli: rank 0 in this process reports the whole run with the
// in-process run's weights bit for bit, and no child process is left, whether the run
// completes, a rank dies mid-run, a rank dies before joining, or the wait is stopped.
#include <signal.h>
#include <unistd.h>

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <cstring>
#include <mutex>

#include "local_ranks.h"
#include "proc_children.h"
#include "stagewise/engine/engine.h"

using namespace stagewise;

namespace {

const std::string kCli = STAGEWISE_BINARY_DIR "/app/cli/stagewise-cli";

// Small and fast, with probes and evaluations so snapshots cross processes too (as test_dist).
engine::ExperimentSpec smallSpec() {
  engine::ExperimentSpec s;
  s.name = "local-ranks-test";
  s.dataset.kind = "synthetic";
  s.dataset.syntheticTrain = 2048;
  s.dataset.syntheticTest = 256;
  s.model.hidden = {64, 64, 64, 64};
  s.partition.cuts = {1, 3};  // 3 stages: with 2 processes, stages 0-1 here, stage 2 in rank 1
  s.train.maxSteps = 150;
  s.eval.interval = 50;
  s.probe.interval = 40;
  return s;
}

/// Collects what rank 0's observer is told.
struct Collector : engine::RunObserver {
  std::mutex mutex;
  bool started = false;
  int lossPoints = 0;
  std::vector<engine::RunEvent> events;
  std::optional<engine::RunSummary> summary;
  void onStart(const engine::RunInfo&) override {
    std::lock_guard lock(mutex);
    started = true;
  }
  void onMetrics(const std::vector<engine::MetricPoint>& points) override {
    std::lock_guard lock(mutex);
    for (const auto& p : points) lossPoints += p.name == engine::series::kLoss && p.layer < 0;
  }
  void onSpans(const std::vector<engine::StepSpan>&) override {}
  void onEvent(const engine::RunEvent& e) override {
    std::lock_guard lock(mutex);
    events.push_back(e);
  }
  void onFinish(const engine::RunSummary& s) override {
    std::lock_guard lock(mutex);
    summary = s;
  }
  QString eventText() {
    std::lock_guard lock(mutex);
    QStringList out;
    for (const auto& e : events) out << QString::fromStdString(e.message);
    return out.join('\n');
  }
};

/// This process's children (zombies included): what a launcher left behind.
QList<pid_t> childProcesses() { return childrenOf(::getpid()); }

/// Per-stage parameter checksums of `spec` trained in one process by stagewise-cli.
std::vector<double> inProcessChecksums(const engine::ExperimentSpec& spec) {
  QTemporaryDir dir;
  const QString path = dir.filePath("spec.json");
  QFile f(path);
  f.open(QIODevice::WriteOnly);
  f.write(QByteArray::fromStdString(engine::specToJson(spec)));
  f.close();
  QProcess p;
  p.start(QString::fromStdString(kCli),
          {"train", "--config", path, "--no-store", "--json", "--quiet"});
  p.waitForFinished(120000);
  const QByteArray last = p.readAllStandardOutput().trimmed().split('\n').last();
  std::vector<double> out;
  for (const QJsonValue& stage : QJsonDocument::fromJson(last).object()["stages"].toArray())
    out.push_back(stage.toObject()["param_checksum"].toDouble());
  return out;
}

bool sameBits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

/// A stand-in for stagewise-cli: a shell script.
std::string script(const QTemporaryDir& dir, const QByteArray& body) {
  const QString path = dir.filePath("fake-cli.sh");
  QFile f(path);
  f.open(QIODevice::WriteOnly);
  f.write("#!/bin/sh\n" + body + "\n");
  f.close();
  f.setPermissions(f.permissions() | QFile::ExeOwner);
  return path.toStdString();
}

struct Launcher {
  std::mutex mutex;
  QStringList lines;
  gui::LocalRankLauncher launcher;
  explicit Launcher(const std::string& cli)
      : launcher({[](const engine::ExperimentSpec& s, engine::RunObserver* o,
                     const engine::RunOptions& opts) { return engine::createRun(s, o, opts); },
                  cli,
                  {},
                  [this](const std::string& line) {
                    std::lock_guard lock(mutex);
                    lines << QString::fromStdString(line);
                  }}) {}
  QString log() {
    std::lock_guard lock(mutex);
    return lines.join('\n');
  }
};

}  // namespace

class TestLocalRanks : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // The first engine run of this process (Qt Test runs the functions in order): see
  // aRunAfterADistributedOneInThisProcessIsTheSame for why.
  void twoProcessesGiveTheInProcessRunBitForBit() {
    const engine::ExperimentSpec spec = smallSpec();
    // The in-process run (stages as threads) as stagewise-cli trains it, in a process of its own.
    const std::vector<double> reference = inProcessChecksums(spec);
    QCOMPARE(reference.size(), size_t(3));

    Launcher l(kCli);
    Collector many;
    QElapsedTimer t;
    t.start();
    auto run = l.launcher.createRun(spec, &many, 2);
    qInfo("2 processes joined in %lld ms", t.elapsed());
    QCOMPARE(childProcesses().size(), 1);  // rank 1, a real stagewise-cli
    run->start();
    const engine::RunSummary b = run->wait();
    QVERIFY2(b.status == engine::RunStatus::Completed, b.error.c_str());
    qInfo("2-process run: %.2f s, %.0f samples/s", b.wallSeconds, b.samplesPerSec);
    QVERIFY(childProcesses().isEmpty());  // wait() returns once rank 1 has ended too
    run.reset();
    QVERIFY(many.started);
    QVERIFY(many.summary.has_value());
    QCOMPARE(many.lossPoints, 3 * 150);  // every stage's loss, rank 1's too, reached rank 0
    QCOMPARE(b.steps, int64_t(150));
    QCOMPARE(b.stages.size(), size_t(3));
    for (size_t k = 0; k < 3; ++k) {
      // Bit for bit: local training is timing-invariant, and c10d moves exact copies.
      QVERIFY2(sameBits(b.stages[k].paramChecksum, reference[k]),
               qPrintable(QString("stage %1: %2 in 2 processes, %3 in one")
                              .arg(k)
                              .arg(b.stages[k].paramChecksum, 0, 'g', 17)
                              .arg(reference[k], 0, 'g', 17)));
      QVERIFY(sameBits(many.summary->stages[k].paramChecksum, reference[k]));
    }
    QVERIFY(childProcesses().isEmpty());
  }

  void aRunAfterADistributedOneInThisProcessIsTheSame() {
    // Runs another run came before in this process (the workbench is such a process) must give a
    // fresh process's weights. They did not until the engine built the data and the model with a
    // fixed intra-op thread count: this thread inherited the count the last run left behind, and
    // the dataset's normalisation (a parallel reduction) came out different in the last bits.
    const engine::ExperimentSpec spec = smallSpec();
    const std::vector<double> reference = inProcessChecksums(spec);
    Collector one;
    auto local = engine::createRun(spec, &one);
    local->start();
    const engine::RunSummary a = local->wait();
    QVERIFY(a.status == engine::RunStatus::Completed);
    QVERIFY2(sameBits(a.stages[0].paramChecksum, reference[0]),
             qPrintable(QString("%1 vs %2")
                            .arg(a.stages[0].paramChecksum, 0, 'g', 17)
                            .arg(reference[0], 0, 'g', 17)));
  }

  void findsTheCliNextToTheWorkbench() {
    // The build tree: the workbench in app/gui, the CLI in app/cli.
    const std::string found = gui::findCli(STAGEWISE_BINARY_DIR "/app/gui");
    QCOMPARE(QFileInfo(QString::fromStdString(found)).canonicalFilePath(),
             QFileInfo(QString::fromStdString(kCli)).canonicalFilePath());
    const QByteArray path = qgetenv("PATH");
    qputenv("PATH", "/nonexistent");
    QString error;
    try {
      gui::findCli("/nonexistent/bin");
    } catch (const std::runtime_error& e) {
      error = e.what();
    }
    qputenv("PATH", path);
    QVERIFY2(error.contains("stagewise-cli was not found") &&
                 error.contains("/nonexistent/bin/../cli/stagewise-cli"),
             qPrintable(error));
  }

  void aRankThatDiesBeforeJoiningIsAClearErrorAtOnce() {
    QTemporaryDir dir;
    Launcher l(script(dir, "echo 'error: cannot open experiment file' >&2\nexit 3"));
    auto spec = smallSpec();
    spec.distributed.timeoutS = 4;
    Collector observer;
    QElapsedTimer t;
    t.start();
    QString error;
    try {
      l.launcher.createRun(spec, &observer, 2);
    } catch (const std::runtime_error& e) {
      error = e.what();
    }
    // Long before rank 0's own timeout: the launcher saw rank 1 end.
    QVERIFY2(t.elapsed() < 3000, qPrintable(QString::number(t.elapsed())));
    QVERIFY2(error.contains("rank 1") && error.contains("exited with code 3") &&
                 error.contains("before the run started") &&
                 error.contains("error: cannot open experiment file"),
             qPrintable(error));
    QVERIFY2(l.log().contains("[rank 1] error: cannot open experiment file"), qPrintable(l.log()));
    QVERIFY(childProcesses().isEmpty());
    // Rank 0's creation, given up on, ends by itself after its timeout; nothing reaches the
    // observer meanwhile.
    QCOMPARE(l.launcher.pendingStarts(), 1);
    QTRY_COMPARE_WITH_TIMEOUT(l.launcher.pendingStarts(), 0, 15000);
    QVERIFY(!observer.started);
  }

  void stopWhileWaitingEndsTheWaitAndTheProcesses() {
    QTemporaryDir dir;
    Launcher l(script(dir, "exec sleep 120"));  // a rank that never joins
    Collector observer;
    auto spec = smallSpec();
    spec.distributed.timeoutS = 5;
    QElapsedTimer t;
    t.start();
    QString error;
    try {
      l.launcher.createRun(spec, &observer, 2, [&t] { return t.elapsed() > 500; });
    } catch (const std::runtime_error& e) {
      error = e.what();
    }
    QVERIFY2(t.elapsed() < 3000, qPrintable(QString::number(t.elapsed())));
    QVERIFY2(error.contains("stopped while waiting"), qPrintable(error));
    QVERIFY(childProcesses().isEmpty());  // the sleeping rank got SIGTERM
  }

  void stopEndsEveryRank() {
    Launcher l(kCli);
    auto spec = smallSpec();
    spec.train.maxSteps = 1000000;
    spec.eval.interval = 0;
    Collector observer;
    auto run = l.launcher.createRun(spec, &observer, 2);
    QCOMPARE(childProcesses().size(), 1);
    run->start();
    QTRY_VERIFY_WITH_TIMEOUT(run->progress().step > 20, 30000);
    QElapsedTimer t;
    t.start();
    run->requestStop();
    const engine::RunSummary s = run->wait();
    qInfo("stopped: every rank ended in %lld ms", t.elapsed());
    QVERIFY2(s.status == engine::RunStatus::Stopped, s.error.c_str());
    QVERIFY(childProcesses().isEmpty());  // rank 1 stopped by itself, well before the timeout
    QVERIFY(t.elapsed() < 10000);
    QVERIFY2(!l.log().contains("exited with code") && !l.log().contains("killed"),
             qPrintable(l.log()));
  }

  void aRankKilledMidRunFailsTheRunAndNothingIsLeft() {
    Launcher l(kCli);
    auto spec = smallSpec();
    spec.train.maxSteps = 1000000;
    spec.eval.interval = 0;
    spec.distributed.timeoutS = 5;
    Collector observer;
    auto run = l.launcher.createRun(spec, &observer, 2);
    const QList<pid_t> ranks = childProcesses();
    QCOMPARE(ranks.size(), 1);
    run->start();
    QTRY_VERIFY_WITH_TIMEOUT(run->progress().step > 20, 30000);
    QElapsedTimer t;
    t.start();
    ::kill(ranks[0], SIGKILL);
    const engine::RunSummary s = run->wait();
    qInfo("rank 1 killed: run over in %lld ms", t.elapsed());
    QVERIFY(t.elapsed() < 5000 + 5000);
    QVERIFY(s.status == engine::RunStatus::Failed);
    QVERIFY2(QString::fromStdString(s.error).contains("rank 1"), s.error.c_str());
    QVERIFY(childProcesses().isEmpty());
    // The event log hears how rank 1 ended.
    QVERIFY2(observer.eventText().contains("was killed by signal 9"),
             qPrintable(observer.eventText()));
    run.reset();
    QVERIFY(childProcesses().isEmpty());
  }
};

QTEST_GUILESS_MAIN(TestLocalRanks)
#include "test_local_ranks.moc"
