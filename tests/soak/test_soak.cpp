// The soak: `stagewise-cli train` on a small real configuration (the Fashion-MNIST MLP preset,
// narrowed to 2 stages of width 128, evaluating and probing as the preset does) with the run
// store on, for STAGEWISE_SOAK_SECONDS (default 1800). Its resident memory (VmRSS) is sampled
// every STAGEWISE_SOAK_SAMPLE_SECONDS (default 5); after a warm-up of max(60 s, 10 %) the RSS
// at the end must be within 5 % of the RSS at the start (medians of five samples each, so one
// evaluation's temporary buffers do not decide it). Then SIGTERM must end the run as `stopped`,
// exit 0, with the store intact and its points up to the end.
//
// Label `soak`: never in the default run or CI. ctest --test-dir BUILD -L soak --output-on-failure

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "../storage/store_test_util.h"
#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"

using namespace stagewise::storage;
using namespace stagewise::storage::testing;
using Clock = std::chrono::steady_clock;

namespace {

double envSeconds(const char* name, double fallback) {
  bool ok = false;
  const double v = qEnvironmentVariable(name).toDouble(&ok);
  return ok && v > 0 ? v : fallback;
}

// VmRSS of a process in KiB, 0 if it is gone.
long rssKiB(qint64 pid) {
  QFile status(QString("/proc/%1/status").arg(pid));
  if (!status.open(QIODevice::ReadOnly)) return 0;
  for (const QByteArray& line : status.readAll().split('\n')) {
    if (line.startsWith("VmRSS:")) return line.mid(6).trimmed().split(' ').first().toLong();
  }
  return 0;
}

double median(std::vector<long> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2.0;
}

struct Sample {
  double t;  // seconds since start
  long rss;  // KiB
};

}  // namespace

class TestSoak : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void memoryStaysFlatAndTheRunEndsStopped() {
    const double duration = envSeconds("STAGEWISE_SOAK_SECONDS", 1800);
    const double every = envSeconds("STAGEWISE_SOAK_SAMPLE_SECONDS", 5);
    const double warmUp = std::max(60.0, 0.1 * duration);
    QVERIFY2(duration > warmUp + 10 * every,
             "STAGEWISE_SOAK_SECONDS too short for a warm-up and ten samples after it");

    QTemporaryDir dir;
    const QString db = dir.filePath("soak.db");
    QStringList args{"train",
                     "--config",
                     STAGEWISE_SOURCE_DIR "/resources/experiments/mlp-fmnist-4stage.json",
                     "--db",
                     db,
                     "--json",
                     "--quiet",
                     "--set",
                     "model.hidden=[128,128,128,128]",
                     "--set",
                     "partition.cuts=[2]",
                     "--set",
                     "train.max_steps=1000000000",
                     "--set",
                     "name=soak"};
    if (!QDir("/usr/share/datasets/fashion-mnist").exists()) {
      qWarning("Fashion-MNIST is not installed; soaking on a synthetic set of the same shape");
      args << "--set"
           << "dataset={\"kind\":\"synthetic\",\"synthetic_train\":60000,"
              "\"synthetic_test\":10000,\"synthetic_features\":784,\"synthetic_classes\":10}";
    }
    QProcess cli;
    cli.setProcessChannelMode(QProcess::SeparateChannels);
    cli.start(STAGEWISE_CLI, args);
    QVERIFY(cli.waitForStarted(10000));
    const qint64 pid = cli.processId();
    const auto start = Clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };

    std::vector<Sample> samples;
    double nextReport = 60;
    while (elapsed() < duration) {
      QTest::qWait(int(every * 1000));
      if (cli.state() != QProcess::Running) {
        QFAIL(
            qPrintable("the CLI ended during the soak: " + cli.readAllStandardError().right(2000)));
      }
      samples.push_back({elapsed(), rssKiB(pid)});
      if (samples.back().t >= nextReport) {
        std::printf("soak: %5.0f s  RSS %6.1f MiB\n", samples.back().t,
                    samples.back().rss / 1024.0);
        std::fflush(stdout);
        nextReport += 60;
      }
    }

    // SIGTERM: the run ends as `stopped` after flushing, exit 0, JSON summary last.
    cli.terminate();
    QVERIFY2(cli.waitForFinished(60000), "no exit within 60 s of SIGTERM");
    QCOMPARE(cli.exitStatus(), QProcess::NormalExit);
    const QByteArray err = cli.readAllStandardError();
    QVERIFY2(cli.exitCode() == 0, err.right(2000).constData());
    const QList<QByteArray> lines = cli.readAllStandardOutput().trimmed().split('\n');
    const QJsonObject summary = QJsonDocument::fromJson(lines.last()).object();
    QCOMPARE(summary["status"].toString(), QString("stopped"));
    const int64_t id = summary["run_id"].toInteger();
    QVERIFY(id > 0);
    QVERIFY2(!err.contains("run store"), err.right(2000).constData());  // no store trouble

    // Memory: the end against the start, after the warm-up.
    std::vector<long> after;
    for (const Sample& s : samples)
      if (s.t >= warmUp) after.push_back(s.rss);
    QVERIFY(after.size() >= 10);
    const double first = median({after.begin(), after.begin() + 5});
    const double last = median({after.end() - 5, after.end()});
    const double peak = *std::max_element(after.begin(), after.end());
    const double growth = (last - first) / first;
    std::printf("soak: %.0f s, %zu samples every %.0f s, warm-up %.0f s\n", duration,
                samples.size(), every, warmUp);
    std::printf(
        "soak: RSS at the start of the run %.1f MiB, after warm-up %.1f MiB, at the end %.1f "
        "MiB, peak after warm-up %.1f MiB; growth %+.2f %% (limit 5 %%)\n",
        samples.front().rss / 1024.0, first / 1024.0, last / 1024.0, peak / 1024.0, 100 * growth);
    std::fflush(stdout);

    // The store: intact, the run `stopped`, its points reaching the end of the run.
    QCOMPARE(rawQuery(db.toStdString(), "PRAGMA integrity_check"), std::string("ok"));
    RunStore store(db.toStdString());
    RunReader reader(store);
    const auto run = reader.run(id);
    QVERIFY(run);
    QCOMPARE(toString(run->status), toString(RunStatus::Stopped));
    const auto loss = reader.findSeries(id, {"loss", 0, -1});
    QVERIFY(loss && loss->pointCount > 0);
    const auto lastPoints =
        reader.loadSeries(id, {"loss", 0, -1}, XAxis::Time, XRange{duration - 30, duration + 60});
    QVERIFY2(!lastPoints.empty(), "no loss points in the last 30 s of the run");
    std::printf(
        "soak: run %lld stopped at step %lld, %lld loss points for stage 0, store %.1f MiB\n",
        (long long)id, (long long)run->steps.value_or(-1), (long long)loss->pointCount,
        QFileInfo(db).size() / 1048576.0);

    QVERIFY2(
        growth <= 0.05,
        qPrintable(
            QString("resident memory grew %1 % after the warm-up").arg(100 * growth, 0, 'f', 2)));
  }
};

int main(int argc, char** argv) {
  // Qt Test's watchdog ends a test function after 5 minutes; this one runs for the soak.
  const double duration = envSeconds("STAGEWISE_SOAK_SECONDS", 1800);
  qputenv("QTEST_FUNCTION_TIMEOUT", QByteArray::number(qint64((duration + 600) * 1000)));
  QCoreApplication app(argc, argv);
  TestSoak test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_soak.moc"
