// stagewise-cli report as a user runs it: bad input is one line and stores nothing; the quick
// report end to end on synthetic data (every finding judged, report.html well-formed and
// self-contained, report.json with the fixed ids, one study per finding in the store), and a
// second report that trains only the throughput runs. Built twice: test_report_cli (fast, a
// small base) and test_report_quick (slow, the quick protocol on a base shaped like the default
// preset; STAGEWISE_REPORT_QUICK).
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtTest>
#include <map>

#include "../storage/store_test_util.h"

using stagewise::storage::testing::rawInt;

namespace {

const QString kCli = STAGEWISE_BINARY_DIR "/app/cli/stagewise-cli";

struct Result {
  int code = -1;
  QString out, err;
};

#ifdef STAGEWISE_REPORT_QUICK
// The quick protocol with its learning-rate search (issue 32 §5) on 2 cores: about twice the
// runs of the protocol before it.
constexpr int kCliTimeoutMs = 1800000;
#else
constexpr int kCliTimeoutMs = 600000;
#endif

Result runCli(const QStringList& args, int timeoutMs = kCliTimeoutMs) {
  QProcess p;
  p.start(kCli, args);
  p.waitForFinished(timeoutMs);
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
          QString::fromUtf8(p.readAllStandardOutput()),
          QString::fromUtf8(p.readAllStandardError())};
}

QString writeFile(const QTemporaryDir& dir, const QString& name, const QByteArray& text) {
  const QString path = dir.filePath(name);
  QFile f(path);
  f.open(QIODevice::WriteOnly);
  f.write(text);
  return path;
}

#ifdef STAGEWISE_REPORT_QUICK
// The default preset's shape (8 x 512, 4 stages, batch 32, one epoch) on synthetic data.
const QByteArray kBase =
    R"({"name":"quick","dataset":{"kind":"synthetic","synthetic_train":8192,"synthetic_test":1024,
  "synthetic_features":64,"synthetic_classes":10},"model":{"hidden":[512,512,512,512,512,512,512,512]},
  "partition":{"cuts":[2,4,6]},"train":{"batch_size":32,"epochs":1},"eval":{"interval":25},
  "probe":{"interval":25}})";
#else
const QByteArray kBase =
    R"({"name":"small","dataset":{"kind":"synthetic","synthetic_train":2048,"synthetic_test":256},
  "model":{"hidden":[32,32,32,32,32]},"partition":{"cuts":[2,4]},"train":{"epochs":1},
  "eval":{"interval":10},"probe":{"interval":10}})";
#endif

/// The number in "(N reused from the store, M to train)".
int toTrain(const QString& err) {
  const auto m = QRegularExpression(QStringLiteral("(\\d+) reused from the store, (\\d+) to train"))
                     .match(err);
  return m.hasMatch() ? m.captured(2).toInt() : -1;
}

}  // namespace

class TestReportCli : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void badInputIsOneLineAndStoresNothing() {
    QTemporaryDir dir;
    const QString base = writeFile(dir, "base.json", kBase);
    const QString db = dir.filePath("runs.db");
    for (const QStringList& args :
         {QStringList{"report", "--config", base, "--set", "train.batchsize=8", "--db", db},
          QStringList{"report", "--config", dir.filePath("missing.json"), "--db", db},
          QStringList{"report", "--config", base, "--set", "partition.cuts=[99]", "--db", db},
          QStringList{"report", "--config", base, "--db", db, "extra"},
          QStringList{"report", "--config", base, "--db", db, "--out", "/proc/nope/report"}}) {
      const Result r = runCli(args);
      QVERIFY2(r.code == 2, qPrintable(args.join(' ') + ": " + r.err));
      QCOMPARE(r.err.trimmed().count('\n'), 0);  // one line
      QVERIFY(r.err.startsWith(QStringLiteral("error: ")));
    }
    QVERIFY(!QFile::exists(db));  // nothing stored
    const Result help = runCli({"report", "--help"});
    QCOMPARE(help.code, 0);
    QVERIFY(help.out.contains(QStringLiteral("--quick")));
  }

  void quickReportEndToEnd() {
    QTemporaryDir dir;
    const QString base = writeFile(dir, "base.json", kBase);
    const QString db = dir.filePath("runs.db"), out = dir.filePath("report");
    QElapsedTimer clock;
    clock.start();
    const Result r =
        runCli({"report", "--quick", "--config", base, "--db", db, "--out", out, "--quiet"});
    QVERIFY2(r.code == 0, qPrintable(r.err.right(3000)));
    qInfo("quick report: %.0f s", double(clock.elapsed()) / 1000);
    QVERIFY(clock.elapsed() < 10 * 60 * 1000);
    const int trained = toTrain(r.err);
    QVERIFY2(trained > 20, qPrintable(r.err.left(400)));

    QFile json(out + "/report.json");
    QVERIFY(json.open(QIODevice::ReadOnly));
    const QJsonObject doc = QJsonDocument::fromJson(json.readAll()).object();
    QCOMPARE(doc["version"].toInt(), 1);
    QCOMPARE(doc["quick"].toBool(), true);
    QVERIFY(doc["machine"].toObject()["cores"].toInt() >= 1);
    QVERIFY(!doc["machine"].toObject()["blas"].toString().isEmpty());
    const QStringList ids = {"gradient_similarity", "communication",        "memory",
                             "memory_recompute",    "throughput_vs_stages", "accuracy",
                             "overlap",             "compute_time_front",   "random_labels"};
    const QJsonArray findings = doc["findings"].toArray();
    QCOMPARE(findings.size(), ids.size());
    for (int i = 0; i < findings.size(); ++i) {
      const QJsonObject f = findings[i].toObject();
      QCOMPARE(f["id"].toString(), ids[i]);
      QVERIFY(QStringList({"reproduced", "not_reproduced", "inconclusive", "holds_by_construction"})
                  .contains(f["verdict"].toString()));
      QCOMPARE(f["kind"].toString(),
               ids[i] == "random_labels" ? QStringLiteral("extra") : QStringLiteral("paper"));
      QVERIFY(!f["rule"].toString().isEmpty() && !f["why"].toString().isEmpty());
      QVERIFY2(!f["runs"].toArray().isEmpty(), qPrintable(ids[i]));
      QVERIFY(f["study_id"].toInt() > 0);
    }
    // issue 37: the paper's sixth finding (recomputation) is tested, by memory_recompute.
    QCOMPARE(doc["paper_findings"].toArray()[5].toObject()["tested_by"].toArray(),
             QJsonArray({QStringLiteral("memory_recompute")}));
    QCOMPARE(findings[3].toObject()["paper_finding"].toInt(), 6);
    // The bytes are the method's (half, with the labels on top): by construction, not evidence.
    QCOMPARE(findings[1].toObject()["verdict"].toString(), QStringLiteral("holds_by_construction"));
    QCOMPARE(findings[1].toObject()["reason"].toString(), QStringLiteral("by_construction"));
    // issue 32 §5: each method's rate searched on validation; the learning findings at the
    // chosen rates, the shared rate's result beside.
    const QJsonObject search = doc["search"].toObject();
    QCOMPARE(search["metric"].toString(), QStringLiteral("val_accuracy"));
    QCOMPARE(search["methods"].toArray().size(), 2);
    std::map<QString, double> chosen;
    for (const auto& m : search["methods"].toArray()) {
      const QJsonObject method = m.toObject();
      QCOMPARE(method["trials"].toArray().size(), 6);
      QVERIFY2(method["chosen"].isObject(), qPrintable(method["mode"].toString()));
      chosen[method["mode"].toString()] = method["chosen"].toObject()["train.lr"].toDouble();
    }
    for (const int i : {0, 5, 6, 7, 8}) {
      const QJsonObject f = findings[i].toObject();
      QVERIFY2(f["tuned"].isObject() && f["shared_lr"].isObject(), qPrintable(ids[i]));
      QCOMPARE(f["tuned"].toObject()["verdict"], f["verdict"]);
      const QJsonObject settings = f["tuned"].toObject()["settings"].toObject();
      for (const auto& mode : settings.keys())
        QCOMPARE(settings[mode].toObject()["train.lr"].toDouble(), chosen[mode]);
    }
    QVERIFY(r.out.contains(QStringLiteral("shared lr")));
    // The tuned runs trained at the chosen rates, the accuracy ones once per method and seed.
    for (const auto& [mode, lr] : chosen) {
      const std::string sql = "SELECT count(*) FROM runs WHERE name LIKE '%accuracy (tuned lr%' "
                              "AND mode='" + mode.toStdString() + "' AND abs(json_extract(spec_json, "
                              "'$.train.lr') / " + QString::number(lr, 'g', 17).toStdString() +
                              " - 1) < 1e-9";
      QCOMPARE(rawInt(db.toStdString(), sql), 2LL);
    }
    // One study per finding, the search, and each learning finding's tuned twin; completed.
    // issue 37: and the parts the findings' grids cannot hold: the throughput's other schedules,
    // interleaved where the stage count allows it (the quick base's 4 stages, not the small
    // base's 3); memory_recompute is a study of its own.
#ifdef STAGEWISE_REPORT_QUICK
    constexpr long long kStudies = 17;
#else
    constexpr long long kStudies = 16;
#endif
    QCOMPARE(rawInt(db.toStdString(), "SELECT count(*) FROM studies"), kStudies);
    QCOMPARE(rawInt(db.toStdString(), "SELECT count(*) FROM studies WHERE status='completed'"),
             kStudies);
    // The page: well-formed, every plot inline, nothing fetched from elsewhere.
    QFile html(out + "/report.html");
    QVERIFY(html.open(QIODevice::ReadOnly));
    const QString page = QString::fromUtf8(html.readAll());
    QXmlStreamReader xml(page);
    int svgs = 0;
    while (!xml.atEnd()) {
      if (xml.readNext() != QXmlStreamReader::StartElement) continue;
      if (xml.name() == QStringLiteral("svg")) ++svgs;
      QVERIFY(xml.name() != QStringLiteral("script") && xml.name() != QStringLiteral("link") &&
              xml.name() != QStringLiteral("img"));
      for (const auto& a : xml.attributes())
        if (a.name() == QStringLiteral("href") || a.name() == QStringLiteral("src"))
          QVERIFY2(a.value().startsWith('#'), qPrintable(a.value().toString()));
    }
    QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
    QVERIFY(svgs >= 10);
    QVERIFY(page.contains(QStringLiteral("Quick report")));
    QVERIFY(r.out.contains(QStringLiteral("random_labels")));  // the verdict table

    // Again: everything is reused but the throughput and memory runs, measured anew (a run is
    // named after the first finding that needs it: memory's own are its larger settings and
    // memory_recompute's the runs with recomputation).
    const Result again =
        runCli({"report", "--quick", "--config", base, "--db", db, "--out", out, "--quiet"});
    QVERIFY2(again.code == 0, qPrintable(again.err.right(2000)));
    const int fresh =
        int(rawInt(db.toStdString(),
                   "SELECT count(*) FROM runs WHERE name LIKE '%throughput_vs_stages%' OR "
                   "name LIKE '%· memory:%' OR name LIKE '%· memory_recompute:%'")) /
        2;
    QCOMPARE(toTrain(again.err), fresh);
    QVERIFY(fresh < trained);
  }
};

QTEST_GUILESS_MAIN(TestReportCli)
#include "test_report_cli.moc"
