// `stagewise-cli runs trace` on real runs (local and pipeline): the file is trace-event JSON that
// Perfetto's importer takes, its spans are the stored spans one for one, waits stay out of
// step_seconds, and timeline.max_spans bounds what is stored.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <map>
#include <set>

#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"
#include "stagewise/storage/trace.h"

using namespace stagewise::storage;

namespace {

const QString kCli = STAGEWISE_BINARY_DIR "/app/cli/stagewise-cli";

struct Result {
  int code = -1;
  QString out, err;
};

Result runCli(const QStringList& args) {
  QProcess p;
  p.start(kCli, args);
  p.waitForFinished(300000);
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
          QString::fromUtf8(p.readAllStandardOutput()),
          QString::fromUtf8(p.readAllStandardError())};
}

const QByteArray kSmall =
    R"({"name":"trace-test","dataset":{"kind":"synthetic","synthetic_train":1024,"synthetic_test":256},
  "model":{"hidden":[32,32,32]},"partition":{"cuts":[2]},"train":{"max_steps":40},"eval":{"interval":0},
  "probe":{"interval":-1}})";

}  // namespace

class TestTraceCli : public QObject {
  Q_OBJECT

  QTemporaryDir m_dir;

  /// Trains kSmall with `sets` into the test's store; returns the run id (0 on failure).
  int train(const QStringList& sets) {
    const QString spec = m_dir.filePath("spec.json");
    QFile f(spec);
    f.open(QIODevice::WriteOnly);
    f.write(kSmall);
    f.close();
    QStringList args{"train", "--config", spec, "--json", "--db", db()};
    for (const QString& s : sets) args << "--set" << s;
    const Result r = runCli(args);
    if (r.code != 0) qWarning("%s", qPrintable(r.err));
    return QJsonDocument::fromJson(r.out.trimmed().split('\n').last().toUtf8())
        .object()["run_id"]
        .toInt();
  }
  QString db() const { return m_dir.filePath("runs.db"); }

  /// Writes run `id`'s trace and checks it against the store; returns its complete events' names.
  std::multiset<std::string> checkTrace(int id, const std::string& mode) {
    std::multiset<std::string> names;
    const QString file = m_dir.filePath(QString("run-%1.json").arg(id));
    const Result r = runCli({"runs", "trace", QString::number(id), "--out", file, "--db", db()});
    [&] { QVERIFY2(r.code == 0, qPrintable(r.err)); }();
    QFile f(file);
    if (!f.open(QIODevice::ReadOnly)) return names;
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &error);
    [&] {
      QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(error.errorString()));
      QVERIFY(doc.isObject() && doc.object()["traceEvents"].isArray());
    }();

    RunStore store(db().toStdString());
    RunReader reader(store);
    const auto stored = reader.spans(id);
    std::vector<QJsonObject> complete;
    std::set<int> threads;
    bool counters = false;
    for (const QJsonValue& v : doc.object()["traceEvents"].toArray()) {
      const QJsonObject e = v.toObject();
      const QString ph = e["ph"].toString();
      // Perfetto's JSON importer: ph and pid on every event; X: ts and dur (us, dur >= 0), tid.
      [&] {
        QVERIFY(ph == "X" || ph == "M" || ph == "C");
        QVERIFY(e["pid"].isDouble());
        if (ph != "M") QVERIFY(e["ts"].isDouble() && e["ts"].toDouble() >= 0);
        if (ph == "X")
          QVERIFY(e["dur"].isDouble() && e["dur"].toDouble() >= 0 && e["tid"].isDouble());
      }();
      if (ph == "X") complete.push_back(e);
      if (ph == "M" && e["name"] == "thread_name") threads.insert(e["tid"].toInt());
      if (ph == "C" && e["name"].toString().endsWith("bytes_sent")) counters = true;
    }
    [&] {
      QCOMPARE(complete.size(), stored.size());
      QVERIFY(!stored.empty());
      for (size_t i = 0; i < stored.size(); ++i) {
        const auto& s = stored[i];
        const QJsonObject& e = complete[i];
        QCOMPARE(e["name"].toString().toStdString(), traceEventName(s, mode));
        QCOMPARE(e["tid"].toInt(), s.stage);
        QCOMPARE(e["pid"].toInt(), 0);  // one process
        QVERIFY(std::abs(e["ts"].toDouble() - s.startS * 1e6) < 1e-2);
        QVERIFY(std::abs(e["dur"].toDouble() - (s.endS - s.startS) * 1e6) < 1e-2);
        QCOMPARE(e["args"].toObject()["stage"].toInt(), s.stage);  // 0-based, as in "PP:0F0"
        QCOMPARE(e["args"].toObject()["step"].toInteger(), s.step);
        QCOMPARE(e["args"].toObject()["micro"].toInt(), s.micro);
      }
      QCOMPARE(threads, (std::set<int>{0, 1}));
      QVERIFY(counters);  // stage 1 sends activations: a bytes counter track
      // Waits are spans, not compute: step_seconds has a point per compute span only.
      for (int k = 0; k < 2; ++k) {
        size_t compute = 0;
        for (const auto& s : stored)
          compute += s.stage == k && s.kind != "wait" && s.kind != "blocked";
        QCOMPARE(reader.loadSeries(id, {"step_seconds", k, -1}).size(), compute);
      }
    }();
    for (const auto& e : complete) names.insert(e["name"].toString().toStdString());
    return names;
  }

 private Q_SLOTS:
  void localRunTraces() {
    const int id = train({});
    QVERIFY(id > 0);
    const auto names = checkTrace(id, "local");
    QCOMPARE(names.count("PP:0local"), size_t(40));
    QCOMPARE(names.count("PP:1local"), size_t(40));
  }

  void pipelineRunTraces() {
    const int id = train({"mode=pipeline", "pipeline.micro_batches=4"});
    QVERIFY(id > 0);
    const auto names = checkTrace(id, "pipeline");
    for (const char* name : {"PP:0F0", "PP:0F3", "PP:1F3", "PP:1B0", "PP:0B3", "PP:0update"})
      QCOMPARE(names.count(name), size_t(40));
  }

  void maxSpansBoundsTheStore() {
    const int id = train({"mode=pipeline", "pipeline.micro_batches=4", "train.max_steps=120",
                          "timeline.max_spans=120"});
    QVERIFY(id > 0);
    RunStore store(db().toStdString());
    RunReader reader(store);
    const auto spans = reader.spans(id);
    QVERIFY2(spans.size() <= 120 && spans.size() >= 20, std::to_string(spans.size()).c_str());
    int64_t newest = 0;
    for (const auto& s : spans) newest = std::max(newest, s.step);
    QCOMPARE(newest, int64_t(119));
  }

  void olderRunWithoutSpansIsOneLine() {
    const Result none =
        runCli({"runs", "trace", "999", "--out", m_dir.filePath("x.json"), "--db", db()});
    QCOMPARE(none.code, 2);
    QVERIFY2(none.err.contains("there is no run 999"), qPrintable(none.err));
    QCOMPARE(none.err.trimmed().count('\n'), 0);
  }
};

QTEST_GUILESS_MAIN(TestTraceCli)
#include "test_trace_cli.moc"
