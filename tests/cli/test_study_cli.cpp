// stagewise-cli study as a user runs it: a small grid with seeds, runs that `train` would make bit
// for bit, shared runs, one-line errors before anything runs, list / show / export, and a study
// killed with SIGKILL in its second run, then resumed.
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>
#include <map>

#include "../storage/store_test_util.h"
#include "stagewise/storage/run_store.h"

using stagewise::storage::testing::rawInt;
using stagewise::storage::testing::rawQuery;

namespace {

const QString kCli = STAGEWISE_BINARY_DIR "/app/cli/stagewise-cli";

struct Result {
  int code = -1;
  QString out, err;
  QJsonObject lastJson() const {
    return QJsonDocument::fromJson(out.trimmed().split('\n').last().toUtf8()).object();
  }
};

Result runCli(const QStringList& args, int timeoutMs = 240000) {
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

const QByteArray kSmall =
    R"({"name":"study-test","dataset":{"kind":"synthetic","synthetic_train":1024,"synthetic_test":256},
  "model":{"hidden":[32,32,32]},"partition":{"cuts":[2]},"train":{"max_steps":60},"eval":{"interval":20},
  "probe":{"interval":20}})";

QJsonArray exportJson(const QString& db, int study) {
  Result r = runCli({"study", "export", QString::number(study), "--format", "json", "--db", db});
  return QJsonDocument::fromJson(r.out.toUtf8()).array();
}

/// A count read while the CLI writes the store: -1 until the file and its tables are there.
long long countNow(const QString& db, const char* sql) {
  if (!QFile::exists(db)) return -1;
  bool ok = false;
  const long long n = QString::fromStdString(rawQuery(db.toStdString(), sql)).toLongLong(&ok);
  return ok ? n : -1;
}

/// The export's rows per grid point.
std::map<int, std::vector<QJsonObject>> rowsByPoint(const QJsonArray& rows) {
  std::map<int, std::vector<QJsonObject>> out;
  for (const auto& v : rows) out[v.toObject()["point"].toInt()].push_back(v.toObject());
  return out;
}

}  // namespace

class TestStudyCli : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void runsTheGridWithSeedsAndGroupsIt() {
    QTemporaryDir dir;
    const QString db = dir.filePath("runs.db");
    Result r =
        runCli({"study", "run", "--config", writeFile(dir, "spec.json", kSmall), "--vary",
                "train.lr=[0.001,0.003]", "--seeds", "2", "--name", "lr", "--db", db, "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.err.contains("[run 2 of 4, study ETA"), qPrintable(r.err.left(2000)));
    const QJsonObject show = r.lastJson();
    QCOMPARE(show["name"].toString(), QString("lr"));
    QCOMPARE(show["status"].toString(), QString("completed"));
    QVERIFY(show["target"].toDouble() > 0);
    const QJsonArray groups = show["groups"].toArray();
    QCOMPARE(groups.size(), 2);
    for (const auto& g : groups) {
      const QJsonObject o = g.toObject();
      QCOMPARE(o["n"].toInt(), 2);
      QCOMPARE(o["runs"].toArray().size(), 2);
      for (const char* k :
           {"test_accuracy", "samples_per_sec", "wall_seconds", "train_flops", "time_to_target_s"})
        QVERIFY2(o[k].isObject(), k);
      QVERIFY(o["test_accuracy"].toObject()["std"].isDouble());  // n = 2: a sample std
      QVERIFY(o["train_flops"].toObject()["mean"].toDouble() > 0);
      QVERIFY(o.contains("on_front"));
    }
    QCOMPARE(groups[0].toObject()["keys"].toObject()["train.lr"].toDouble(), 0.001);

    // The group's mean and sample std are those of its runs' stored accuracies.
    const QJsonArray rows = exportJson(db, show["study_id"].toInt());
    QCOMPARE(rows.size(), 4);
    std::vector<double> acc;
    for (const auto& v : rows)
      if (v.toObject()["keys"].toObject()["train.lr"].toDouble() == 0.001)
        acc.push_back(v.toObject()["test_accuracy"].toDouble());
    QCOMPARE(acc.size(), size_t(2));
    const double mean = (acc[0] + acc[1]) / 2;
    const double sd =
        std::sqrt((acc[0] - mean) * (acc[0] - mean) + (acc[1] - mean) * (acc[1] - mean));
    const QJsonObject first = groups[0].toObject()["test_accuracy"].toObject();
    QVERIFY(std::abs(first["mean"].toDouble() - mean) < 1e-12);
    QVERIFY(std::abs(first["std"].toDouble() - sd) < 1e-12);

    Result list = runCli({"study", "list", "--db", db, "--json"});
    QVERIFY2(list.code == 0, qPrintable(list.err));
    const QJsonObject s = QJsonDocument::fromJson(list.out.toUtf8()).array()[0].toObject();
    for (const char* k :
         {"id", "name", "status", "created_at_ms", "keys", "runs_total", "runs_completed"})
      QVERIFY2(s.contains(k), k);
    QCOMPARE(s["runs_total"].toInt(), 4);
    QCOMPARE(s["runs_completed"].toInt(), 4);
    QCOMPARE(s["runs_distinct_total"].toInt(), 4);
    QCOMPARE(s["runs_distinct_completed"].toInt(), 4);
    QCOMPARE(s["keys"].toArray()[0].toString(), QString("train.lr"));

    Result csv = runCli({"study", "export", "1", "--db", db});
    QVERIFY2(csv.code == 0, qPrintable(csv.err));
    const QStringList lines = csv.out.trimmed().split('\n');
    QCOMPARE(lines.size(), 5);
    QVERIFY2(lines[0].startsWith("run_id,study_id,point,seed,train.lr,status"),
             qPrintable(lines[0]));

    Result table = runCli({"study", "show", "1", "--db", db, "--target", "0.9999"});
    QVERIFY2(table.code == 0, qPrintable(table.err));
    QVERIFY2(table.out.contains("target accuracy 0.9999"), qPrintable(table.out));
  }

  void aStudyRunIsTheRunTrainWouldMake() {
    QTemporaryDir dir;
    const QString db = dir.filePath("runs.db");
    const QString spec = writeFile(dir, "spec.json", kSmall);
    Result r = runCli({"study", "run", "--config", spec, "--vary", "train.lr=[0.001,0.003]", "--db",
                       db, "--json", "--quiet"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const int runId = r.lastJson()["groups"].toArray()[1].toObject()["runs"].toArray()[0].toInt();
    Result show = runCli({"runs", "show", QString::number(runId), "--json", "--db", db});
    const QJsonObject stored = QJsonDocument::fromJson(show.out.toUtf8()).object();
    Result train = runCli({"train", "--config", spec, "--set", "train.lr=0.003", "--set",
                           "train.seed=1", "--json", "--no-store", "--quiet"});
    QVERIFY2(train.code == 0, qPrintable(train.err));
    const QJsonArray a = stored["summary"].toObject()["stages"].toArray();
    const QJsonArray b = train.lastJson()["stages"].toArray();
    QVERIFY2(a.size() == 2 && b.size() == 2, qPrintable(show.out.left(500)));
    for (int k = 0; k < 2; ++k)
      QCOMPARE(a[k].toObject()["param_checksum"].toDouble(),
               b[k].toObject()["param_checksum"].toDouble());
  }

  void identicalResolvedSpecsShareARun() {
    QTemporaryDir dir;
    const QString db = dir.filePath("runs.db");
    Result r = runCli({"study", "run", "--config", writeFile(dir, "spec.json", kSmall), "--vary",
                       "mode=[\"local\",\"backprop\"]", "--vary", "partition.cuts=[[1],[2]]",
                       "--db", db, "--json", "--quiet"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const auto points = rowsByPoint(exportJson(db, 1));
    QCOMPARE(points.size(), size_t(4));
    // backprop ignores the cut: points 2 and 3 name one run
    QCOMPARE(points.at(2)[0]["run_id"].toInt(), points.at(3)[0]["run_id"].toInt());
    QVERIFY(points.at(0)[0]["run_id"].toInt() != points.at(1)[0]["run_id"].toInt());
    QCOMPARE(rawInt(db.toStdString(), "SELECT count(*) FROM runs"), 3LL);
  }

  void theExperimentsStudyObjectGivesTheSettings() {
    QTemporaryDir dir;
    const QString db = dir.filePath("runs.db");
    QByteArray spec = kSmall;
    spec.chop(1);
    spec +=
        R"(, "study": {"vary": {"train.lr": [0.001, 0.002]}, "seeds": 2, "name": "from file"}})";
    const QString path = writeFile(dir, "spec.json", spec);
    Result r = runCli({"study", "run", "--config", path, "--db", db, "--json", "--quiet"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QCOMPARE(r.lastJson()["name"].toString(), QString("from file"));
    QCOMPARE(r.lastJson()["runs_total"].toInt(), 4);
    // train reads the same file and ignores the study
    Result t = runCli({"train", "--config", path, "--no-store", "--quiet", "--json"});
    QVERIFY2(t.code == 0, qPrintable(t.err));
  }

  void listNeverCutsNamesToLookAlike() {
    // issue 36: names were cut at 28 characters, so two report studies both read
    // "report mlp-fmnist-4stage 20...". Every name is listed whole.
    QTemporaryDir dir;
    const QString db = dir.filePath("names.db");
    const std::string stem = "report mlp-fmnist-4stage 2026-12-06 15:04";
    {
      stagewise::storage::RunStore store(db.toStdString());
      for (const char* finding : {": gradient similarity", ": communication"}) {
        stagewise::storage::NewStudy study;
        study.name = stem + finding;
        study.baseSpecJson = kSmall.toStdString();
        study.runsTotal = 1;
        store.createStudy(study);
      }
    }
    const Result r = runCli({"study", "list", "--db", db});
    QCOMPARE(r.code, 0);
    for (const char* finding : {": gradient similarity", ": communication"})
      QVERIFY2(r.out.contains(QString::fromStdString(stem + finding)), qPrintable(r.out));
    // The columns after the name still line up.
    const QStringList rows = r.out.split('\n', Qt::SkipEmptyParts);
    QCOMPARE(rows.size(), 3);
    const int status = rows[0].indexOf(QStringLiteral("status"));
    QCOMPARE(status, 5 + 2 + int(stem.size() + std::string(": gradient similarity").size()) + 2);
    for (int i : {1, 2}) {
      QCOMPARE(rows[i].mid(status - 2, 2), QStringLiteral("  "));
      QVERIFY2(rows[i].at(status) != QLatin1Char(' '), qPrintable(r.out));
    }
  }

  void badInputIsOneLineAndStoresNothing() {
    QTemporaryDir dir;
    const QString db = dir.filePath("runs.db");
    const QString spec = writeFile(dir, "spec.json", kSmall);
    struct Case {
      QStringList args;
      QString says;
    };
    const std::vector<Case> cases = {
        {{"--vary", "train.lr=0.1"}, "--vary train.lr: '0.1' is not a JSON list"},
        {{"--vary", "train.lr=[]"}, "the list of values is empty"},
        {{"--vary", "train.lrr=[0.1]"}, "train.lrr: unknown key"},
        {{"--vary", "partition.cuts=[[1],[9]]"}, "grid point 2 (partition.cuts=[9], seed 1)"},
        {{"--vary", "train.lr=[0.1]", "--seeds", "0"}, "--seeds needs a whole number"},
        {{"--vary", "train.lr=[0.1]", "--target", "2"}, "--target is a test accuracy"},
        {{}, "a study varies or searches something"},
    };
    for (const auto& c : cases) {
      Result r = runCli(QStringList{"study", "run", "--config", spec, "--db", db} + c.args);
      QVERIFY2(r.code == 2, qPrintable(c.args.join(' ') + ": " + r.err));
      QVERIFY2(r.err.contains(c.says), qPrintable(r.err));
      QCOMPARE(r.err.trimmed().count('\n'), 0);
      QVERIFY2(!QFile::exists(db), qPrintable(c.args.join(' ')));
    }
    // Reading a store that is not there says so and creates nothing.
    for (const char* sub : {"show", "export", "resume"}) {
      Result none = runCli({"study", sub, "7", "--db", db});
      QCOMPARE(none.code, 2);
      QVERIFY2(none.err.contains("there is no run store at"), qPrintable(none.err));
      QVERIFY(!QFile::exists(db));
    }
    QVERIFY(runCli({"study", "run", "--config", spec, "--db", db, "--vary", "train.lr=[0.001]",
                    "--quiet"})
                .code == 0);
    Result none = runCli({"study", "show", "7", "--db", db});
    QCOMPARE(none.code, 2);
    QVERIFY(none.err.contains("no study 7"));
  }

  void killedInItsSecondRunThenResumed_data() {
    QTest::addColumn<bool>("checkpoints");
    QTest::newRow("no checkpoint: run again") << false;
    QTest::newRow("checkpoint: continue") << true;
  }

  void killedInItsSecondRunThenResumed() {
    QFETCH(bool, checkpoints);
    QTemporaryDir dir;
    const QString db = dir.filePath("runs.db");
    QStringList args = {"study",    "run",
                        "--config", writeFile(dir, "spec.json", kSmall),
                        "--vary",   "train.lr=[0.001,0.002,0.003]",
                        "--db",     db,
                        "--set",    "train.max_steps=400",
                        "--set",    "stage_defaults.delay_ms=3"};
    if (checkpoints)
      args << "--set"
           << "checkpoint.interval=100"
           << "--set"
           << "checkpoint.dir=" + dir.filePath("ck");
    QProcess p;
    p.start(kCli, args);
    QVERIFY(p.waitForStarted());
    const std::string path = db.toStdString();
    // In the second run, past its first checkpoint where there are any.
    const char* ready = checkpoints
                            ? "SELECT count(*) FROM checkpoints WHERE run_id = 2"
                            : "SELECT count(*) FROM points p JOIN series s ON s.id = p.series_id "
                              "WHERE s.run_id = 2";
    QTRY_VERIFY_WITH_TIMEOUT(countNow(db, ready) > 0, 120000);
    QCOMPARE(p.state(), QProcess::Running);
    p.kill();  // SIGKILL
    QVERIFY(p.waitForFinished(10000));

    Result listed = runCli({"study", "list", "--db", db, "--json"});
    QCOMPARE(
        QJsonDocument::fromJson(listed.out.toUtf8()).array()[0].toObject()["status"].toString(),
        QString("interrupted"));
    QCOMPARE(QString::fromStdString(rawQuery(path, "SELECT status FROM runs WHERE id = 2")),
             QString("interrupted"));
    const QString firstRunEnd =
        QString::fromStdString(rawQuery(path, "SELECT finished_at_ms FROM runs WHERE id = 1"));

    Result resumed = runCli({"study", "resume", "1", "--db", db, "--json"});
    QVERIFY2(resumed.code == 0, qPrintable(resumed.err.right(2000)));
    QCOMPARE(resumed.lastJson()["status"].toString(), QString("completed"));
    QCOMPARE(resumed.lastJson()["runs_completed"].toInt(), 3);
    QCOMPARE(QString::fromStdString(rawQuery(path, "PRAGMA integrity_check")), QString("ok"));

    const auto points = rowsByPoint(exportJson(db, 1));
    QCOMPARE(points.size(), size_t(3));
    for (const auto& [point, rows] : points) {
      int completed = 0;
      for (const auto& row : rows)
        completed += row["status"].toString() == "completed" && !row["replaced"].toBool();
      QVERIFY2(completed == 1, qPrintable(QString("point %1").arg(point)));
    }
    // The completed first run was not repeated.
    QCOMPARE(points.at(0).size(), size_t(1));
    QCOMPARE(points.at(0)[0]["run_id"].toInt(), 1);
    QCOMPARE(QString::fromStdString(rawQuery(path, "SELECT finished_at_ms FROM runs WHERE id = 1")),
             firstRunEnd);
    if (checkpoints) {
      // The killed run continued from its checkpoint, in the same record.
      QCOMPARE(points.at(1).size(), size_t(1));
      QCOMPARE(points.at(1)[0]["run_id"].toInt(), 2);
      QCOMPARE(rawInt(path, "SELECT steps FROM runs WHERE id = 2"), 400LL);
      QVERIFY(resumed.err.contains("continuing run 2"));
    } else {
      // It ran again; the killed record stays, linked, marked replaced.
      QCOMPARE(points.at(1).size(), size_t(2));
      QCOMPARE(points.at(1)[0]["run_id"].toInt(), 2);
      QVERIFY(points.at(1)[0]["replaced"].toBool());
      QCOMPARE(points.at(1)[0]["status"].toString(), QString("interrupted"));
    }
    // Nothing left: a second resume repeats nothing.
    const long long runs = rawInt(path, "SELECT count(*) FROM runs");
    Result again = runCli({"study", "resume", "1", "--db", db});
    QCOMPARE(again.code, 0);
    QVERIFY(again.err.contains("nothing to resume"));
    QCOMPARE(rawInt(path, "SELECT count(*) FROM runs"), runs);
  }

  void searchPrunesTunesAndComparesAtTheirBest() {
    // The issue's study, small: each method's learning rate searched (Sobol, 4 trials), pruned
    // at 20, 40 and 80 steps (halving), each method's best re-run on 2 fresh seeds.
    QTemporaryDir dir;
    const QString db = dir.filePath("runs.db");
    const QByteArray spec = QByteArray(kSmall).replace(
        R"("train":{"max_steps":60})",
        R"("train":{"max_steps":120},"study":{"vary":{"mode":["local","backprop"]},
           "search":{"train.lr":{"log_uniform":[1e-4,0.3]}},"trials":4,"sampler":"sobol",
           "prune":{"min_steps":20,"reduction":2},"tune":{"seeds":2}})");
    // Without a validation split nothing can choose: refused before anything is stored.
    Result refused =
        runCli({"study", "run", "--config", writeFile(dir, "s.json", spec), "--db", db});
    QCOMPARE(refused.code, 2);
    QVERIFY2(refused.err.contains("dataset.validation"), qPrintable(refused.err));
    QVERIFY(!QFile::exists(db));

    // A few milliseconds a step, so that a pruned trial is stopped before its end.
    Result r = runCli({"study", "run", "--config", writeFile(dir, "s.json", spec), "--set",
                       "dataset.validation=0.25", "--set", "stage_defaults.delay_ms=3", "--db", db,
                       "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.err.right(3000)));
    const QJsonObject show = r.lastJson();
    QCOMPARE(show["runs_total"].toInt(), 2 * (4 + 2));
    const QJsonArray tuned = show["tuned"].toArray();
    QCOMPARE(tuned.size(), 2);
    const QJsonArray rows = exportJson(db, show["study_id"].toInt());
    int pruned = 0;
    for (const auto& t : tuned) {
      const QJsonObject o = t.toObject();
      const QString mode = o["keys"].toObject()["mode"].toString();
      QCOMPARE(o["trials"].toInt(), 4);
      QCOMPARE(o["completed"].toInt() + o["pruned"].toInt() + o["failed"].toInt(), 4);
      pruned += o["pruned"].toInt();
      QCOMPARE(o["metric"].toString(), QString("val_accuracy"));
      const QJsonObject test = o["test_accuracy"].toObject();
      QCOMPARE(test["n"].toInt(), 2);
      QVERIFY(test["ci95"].isArray());
      QVERIFY(test["ci95"].toArray()[0].toDouble() <= test["mean"].toDouble());
      // The best is the completed trial of this mode with the highest validation accuracy.
      double bestVal = -1, bestLr = 0;
      for (const auto& v : rows) {
        const QJsonObject row = v.toObject();
        if (row["keys"].toObject()["mode"].toString() != mode || row["point"].toInt() >= 8)
          continue;
        if (row["status"].toString() == "completed" && row["val_accuracy"].toDouble() > bestVal)
          bestVal = row["val_accuracy"].toDouble(),
          bestLr = row["keys"].toObject()["train.lr"].toDouble();
        if (row["status"].toString() == "pruned") {
          // Stopped at a rung, before the end.
          const int at = row["pruned_at"].toInt();
          QVERIFY2(at == 20 || at == 40 || at == 80, qPrintable(QString::number(at)));
        }
      }
      QCOMPARE(o["best"].toObject()["train.lr"].toDouble(), bestLr);
      QCOMPARE(o["best_value"].toDouble(), bestVal);
      // The tuned runs ran the chosen rate on seeds 2 and 3.
      int tunedRows = 0;
      for (const auto& v : rows) {
        const QJsonObject row = v.toObject();
        if (row["point"].toInt() < 8 || row["keys"].toObject()["mode"].toString() != mode) continue;
        ++tunedRows;
        QCOMPARE(row["keys"].toObject()["train.lr"].toDouble(), bestLr);
        QVERIFY(row["seed"].toInt() == 2 || row["seed"].toInt() == 3);
        QCOMPARE(row["status"].toString(), QString("completed"));
      }
      QCOMPARE(tunedRows, 2);
    }
    QVERIFY2(pruned > 0, "no trial was pruned: the test no longer exercises pruning");
    QCOMPARE(show["runs_pruned"].toInt(), pruned);
    // Every trial drew its rate from the distribution, the same four for both modes (Sobol).
    std::map<int, double> lrOfTrial;
    for (const auto& v : rows) {
      const QJsonObject row = v.toObject();
      const int point = row["point"].toInt();
      if (point >= 8) continue;
      const double lr = row["keys"].toObject()["train.lr"].toDouble();
      QVERIFY(lr >= 1e-4 && lr <= 0.3);
      if (lrOfTrial.count(point / 2)) QCOMPARE(lrOfTrial[point / 2], lr);
      lrOfTrial[point / 2] = lr;
    }
    QCOMPARE(lrOfTrial.size(), size_t(4));
    // The table says what was chosen, and on what.
    Result table = runCli({"study", "show", QString::number(show["study_id"].toInt()), "--db", db});
    QVERIFY(table.out.contains("test acc (tuned)"));
    QVERIFY(table.out.contains("chosen on val_accuracy"));
    // Issue 32's walkthrough: every trial is listed, the pruned ones with their rung's step,
    // and `runs list` says where each pruned run stopped; learning rates to 3 significant
    // digits (issue 36 §1.5).
    std::map<int, int> prunedAtOf;  // run id -> step
    for (const auto& v : rows) {
      const QJsonObject row = v.toObject();
      if (row["status"].toString() == "pruned")
        prunedAtOf[row["run_id"].toInt()] = row["pruned_at"].toInt();
    }
    QCOMPARE(int(prunedAtOf.size()), pruned);
    QCOMPARE(int(table.out.count("pruned at step ")), pruned);
    // Every learning rate the table prints, the chosen ones ("train.lr=...") and the trials'
    // (the second cell of each line under "every trial:"), has at most 3 significant digits:
    // they were 17 before. (Other cells may carry more: a mean is printed to the decimal place
    // its spread supports, and a wall time's spread can be tiny.)
    QStringList rates;
    auto chosen = QRegularExpression("train\\.lr=(\\S+)").globalMatch(table.out);
    while (chosen.hasNext()) rates << chosen.next().captured(1);
    const QStringList lines = table.out.split('\n');
    const qsizetype trials = lines.indexOf("every trial:");
    QVERIFY2(trials > 0, qPrintable(table.out));
    for (qsizetype i = trials + 2; i < lines.size(); ++i) {
      const QStringList cells = lines[i].split(' ', Qt::SkipEmptyParts);
      if (cells.size() > 1 && (cells[0] == "local" || cells[0] == "backprop")) rates << cells[1];
    }
    QVERIFY2(rates.size() >= 2 + 8, qPrintable(table.out));
    const QRegularExpression threeDigits("^0\\.0*[1-9]\\d{0,2}$");
    for (QString rate : rates)
      QVERIFY2(threeDigits.match(rate.remove(',')).hasMatch(), qPrintable(rate + "\n" + table.out));
    Result list = runCli({"runs", "list", "--db", db, "--limit", "100"});
    QVERIFY2(list.code == 0, qPrintable(list.err));
    for (const auto& [id, at] : prunedAtOf) {
      const QRegularExpression line(QStringLiteral("^\\s*%1 .*pruned at %2\\b").arg(id).arg(at),
                                    QRegularExpression::MultilineOption);
      QVERIFY2(list.out.contains(line), qPrintable(list.out));
    }
  }

  void searchKilledThenResumedDrawsTheSameTrials() {
    QTemporaryDir dir;
    const QString db = dir.filePath("runs.db");
    const QStringList args = {"study",     "run",
                              "--config",  writeFile(dir, "spec.json", kSmall),
                              "--set",     "dataset.validation=0.25",
                              "--set",     "train.max_steps=300",
                              "--set",     "stage_defaults.delay_ms=2",
                              "--search",  "train.lr=log_uniform:1e-4:0.3",
                              "--trials",  "4",
                              "--sampler", "random",
                              "--prune",   "--tune-seeds",
                              "1",         "--db",
                              db};
    QProcess p;
    p.start(kCli, args);
    QVERIFY(p.waitForStarted());
    // Killed in its third trial (two trials ended: completed or pruned).
    QTRY_VERIFY_WITH_TIMEOUT(
        countNow(db,
                 "SELECT count(*) FROM points p JOIN series s ON s.id = p.series_id "
                 "WHERE s.run_id = 3") > 0,
        180000);
    p.kill();
    QVERIFY(p.waitForFinished(10000));
    const std::string path = db.toStdString();
    const QJsonArray before = exportJson(db, 1);
    std::map<int, QJsonObject> ended;
    for (const auto& v : before) {
      const QJsonObject row = v.toObject();
      if (row["status"].toString() == "completed" || row["status"].toString() == "pruned")
        ended[row["point"].toInt()] = row;
    }
    QCOMPARE(ended.size(), size_t(2));

    Result resumed = runCli({"study", "resume", "1", "--db", db, "--json"});
    QVERIFY2(resumed.code == 0, qPrintable(resumed.err.right(2000)));
    QCOMPARE(QString::fromStdString(rawQuery(path, "PRAGMA integrity_check")), QString("ok"));
    const auto points = rowsByPoint(exportJson(db, 1));
    QCOMPARE(points.size(), size_t(4 + 1));
    for (const auto& [point, row] : ended) {
      // Ended trials were not repeated, and a pruned one stays pruned.
      QCOMPARE(points.at(point).size(), size_t(1));
      QCOMPARE(points.at(point)[0]["run_id"].toInt(), row["run_id"].toInt());
      QCOMPARE(points.at(point)[0]["status"].toString(), row["status"].toString());
    }
    // The killed trial ran again with the same drawn rate; every trial drew what a fresh
    // study with the same sample seed draws.
    for (const auto& v : before) {
      const QJsonObject row = v.toObject();
      for (const auto& again : points.at(row["point"].toInt()))
        QCOMPARE(again["keys"].toObject()["train.lr"].toDouble(),
                 row["keys"].toObject()["train.lr"].toDouble());
    }
    QCOMPARE(points.at(2)[0]["status"].toString(), QString("interrupted"));
    QVERIFY(points.at(2)[0]["replaced"].toBool());
    QCOMPARE(resumed.lastJson()["tuned"]
                 .toArray()[0]
                 .toObject()["test_accuracy"]
                 .toObject()["n"]
                 .toInt(),
             1);
  }

  void aFailedRunIsReportedAndTheStudyGoesOn() {
    QTemporaryDir dir;
    const QString db = dir.filePath("runs.db");
    Result r = runCli({"study", "run", "--config", writeFile(dir, "spec.json", kSmall), "--vary",
                       "debug.fail_at_step=[10,-1]", "--set", "debug.stage=1", "--db", db, "--json",
                       "--quiet"});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains("[failed] debug.fail_at_step=10"), qPrintable(r.err.right(1500)));
    const QJsonObject show = r.lastJson();
    QCOMPARE(show["status"].toString(), QString("completed"));
    QCOMPARE(show["runs_completed"].toInt(), 1);
    const auto points = rowsByPoint(exportJson(db, 1));
    QCOMPARE(points.at(0)[0]["status"].toString(), QString("failed"));
    QCOMPARE(points.at(1)[0]["status"].toString(), QString("completed"));
  }

  void sigtermStopsTheStudy() {
    QTemporaryDir dir;
    const QString db = dir.filePath("runs.db");
    QProcess p;
    p.start(kCli, {"study", "run", "--config", writeFile(dir, "spec.json", kSmall), "--vary",
                   "train.lr=[0.001,0.002]", "--db", db, "--set", "train.max_steps=100000"});
    QVERIFY(p.waitForStarted());
    QTRY_VERIFY_WITH_TIMEOUT(countNow(db, "SELECT count(*) FROM runs") > 0, 60000);
    QTest::qWait(500);
    p.terminate();
    QVERIFY(p.waitForFinished(20000));
    QCOMPARE(p.exitCode(), 130);
    QCOMPARE(QString::fromStdString(rawQuery(db.toStdString(), "SELECT status FROM studies")),
             QString("stopped"));
    QCOMPARE(QString::fromStdString(rawQuery(db.toStdString(), "SELECT status FROM runs")),
             QString("stopped"));
    QCOMPARE(rawInt(db.toStdString(), "SELECT count(*) FROM runs"), 1LL);  // the second never ran
  }
};

QTEST_GUILESS_MAIN(TestStudyCli)
#include "test_study_cli.moc"
