// stagewise-cli as a user runs it: exit codes, one-line errors, the --json summary, inspect.
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>

#include "stagewise/engine/omp_wait.h"

namespace {

const QString kCli = STAGEWISE_BINARY_DIR "/app/cli/stagewise-cli";

struct Result {
  int code = -1;
  QString out, err;
};

Result runCli(const QStringList& args, int timeoutMs = 120000,
              const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment()) {
  QProcess p;
  p.setProcessEnvironment(env);
  p.start(kCli, args);
  p.waitForFinished(timeoutMs);
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
          QString::fromUtf8(p.readAllStandardOutput()),
          QString::fromUtf8(p.readAllStandardError())};
}

QString writeSpec(const QTemporaryDir& dir, const QByteArray& json) {
  const QString path = dir.filePath("spec.json");
  QFile f(path);
  f.open(QIODevice::WriteOnly);
  f.write(json);
  return path;
}

const QByteArray kSmall =
    R"({"name":"cli-test","dataset":{"kind":"synthetic","synthetic_train":1024,"synthetic_test":256},
  "model":{"hidden":[32,32,32]},"partition":{"cuts":[2]},"train":{"max_steps":60},"eval":{"interval":0},
  "probe":{"interval":20}})";

}  // namespace

class TestCli : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void trainPrintsJsonSummaryLast() {
    QTemporaryDir dir;
    Result r = runCli({"train", "--config", writeSpec(dir, kSmall), "--json", "--no-store", "--set",
                       "train.max_steps=50", "--set", "stages=[{},{}]"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QStringList lines = r.out.trimmed().split('\n');
    QJsonParseError error;
    QJsonObject o = QJsonDocument::fromJson(lines.last().toUtf8(), &error).object();
    QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(lines.last()));
    for (const char* key : {"run_id", "status", "mode", "samples_per_sec", "test_accuracy",
                            "wall_seconds", "blas", "threads", "stages"})
      QVERIFY2(o.contains(key), key);
    QCOMPARE(o["status"].toString(), QString("completed"));
    QCOMPARE(o["mode"].toString(), QString("local"));
    QCOMPARE(o["steps"].toInt(), 50);
    const QJsonArray stages = o["stages"].toArray();
    QCOMPARE(stages.size(), 2);
    for (const char* key : {"index", "device", "layers", "final_loss", "compute_fraction",
                            "bytes_sent", "grad_cosine"})
      QVERIFY2(stages[0].toObject().contains(key), key);
    QCOMPARE(stages[1].toObject()["layers"].toArray()[0].toInt(), 2);
    QVERIFY(std::abs(stages[1].toObject()["grad_cosine"].toDouble() - 1.0) < 1e-5);
  }

  void backpropModeByOverride() {
    QTemporaryDir dir;
    Result r = runCli({"train", "--config", writeSpec(dir, kSmall), "--json", "--no-store", "--set",
                       "mode=backprop"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QJsonObject o = QJsonDocument::fromJson(r.out.trimmed().split('\n').last().toUtf8()).object();
    QCOMPARE(o["mode"].toString(), QString("backprop"));
    QCOMPARE(o["stages"].toArray().size(), 1);
    // issue 36 §1.8: the machine's load at the start and the end, with its online cores.
    for (const char* key : {"load_start", "load_end"}) {
      const QJsonObject load = o[key].toObject();
      QVERIFY2(load.contains("load_average") && load.contains("steal_share"), key);
      QVERIFY2(load["cores"].toInt() >= 1, key);
    }
    // issue 36 §2.5: backprop has no gradient cosine: the table says "-", never "nan".
    Result table = runCli({"train", "--config", writeSpec(dir, kSmall), "--no-store", "--set",
                           "mode=backprop", "--set", "train.max_steps=20"});
    QVERIFY2(table.code == 0, qPrintable(table.err));
    QVERIFY2(table.out.contains(QStringLiteral("grad-cos")) &&
                 !table.out.contains(QStringLiteral("nan")),
             qPrintable(table.out));
    // issue 36: bytes in IEC units, stages and layers from 1 as in the workbench (S1, 1..N).
    QVERIFY2(table.out.contains(QStringLiteral("sent(MiB)")) &&
                 !table.out.contains(QStringLiteral("(MB)")),
             qPrintable(table.out));
    QVERIFY2(table.out.contains(QRegularExpression(QStringLiteral("\\n +S1 +1\\.\\.[0-9]"))),
             qPrintable(table.out));
    // 20 steps end with the warm-up: no throughput was measured, and the line says so.
    QVERIFY2(table.out.contains(QStringLiteral("samples/s not measured")), qPrintable(table.out));
  }

  void badInputGetsOneLineError_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("expected");
    QTest::newRow("no command") << QStringList{} << "usage";
    QTest::newRow("unknown command") << QStringList{"fly"} << "unknown command 'fly'";
    QTest::newRow("missing config") << QStringList{"train"} << "missing --config";
    QTest::newRow("no such file") << QStringList{"train", "--config", "/nonexistent.json"}
                                  << "cannot open";
    QTest::newRow("unknown option")
        << QStringList{"train", "--confg", "x"} << "unknown option --confg";
    QTest::newRow("bad set") << QStringList{"train", "--config", "SPEC", "--set", "oops"}
                             << "dotted.key=value";
    QTest::newRow("unknown key") << QStringList{"train", "--config", "SPEC", "--set",
                                                "train.batchsize=3"}
                                 << "did you mean 'train.batch_size'";
    QTest::newRow("empty stage") << QStringList{"train", "--config", "SPEC", "--set",
                                                "partition.cuts=[2,2]"}
                                 << "stage 2 is empty";
    QTest::newRow("stage count") << QStringList{"train", "--config", "SPEC", "--set",
                                                "stages=[{},{},{}]"}
                                 << "3 stage entries but the partition makes 2 stages";
    QTest::newRow("device") << QStringList{"train", "--config", "SPEC", "--set",
                                           "stage_defaults.device=cuda:3"}
                            << "available: cpu";
    QTest::newRow("bad change") << QStringList{"train", "--config", "SPEC", "--change", "oops"}
                                << "STEP:KEY=VALUE";
    QTest::newRow("change key") << QStringList{"train", "--config", "SPEC", "--change",
                                               "5:stages.0.device=cpu"}
                                << "use delay_ms, lr_scale or threads";
    QTest::newRow("change cuts") << QStringList{"train", "--config", "SPEC", "--change",
                                                "20:partition.cuts=[9]"}
                                 << "partition.cuts=[9] at step 20";
    QTest::newRow("change mode") << QStringList{"train",
                                                "--config",
                                                "SPEC",
                                                "--set",
                                                "mode=backprop",
                                                "--change",
                                                "20:partition.cuts=[1]"}
                                 << "backprop mode cannot re-partition";
    QTest::newRow("dataset") << QStringList{"train",
                                            "--config",
                                            "SPEC",
                                            "--set",
                                            "dataset.kind=idx",
                                            "--set",
                                            "dataset.path=/nonexistent"}
                             << "/nonexistent";
    QTest::newRow("sample image") << QStringList{"train", "--config", "SPEC", "--sample", "hi"}
                                  << "--sample needs a language model (model.kind gpt)";
    QTest::newRow("temperature alone")
        << QStringList{"train", "--config", "SPEC", "--temperature", "0.5"}
        << "--temperature only applies with --sample PROMPT";
  }
  void badInputGetsOneLineError() {
    QFETCH(QStringList, args);
    QFETCH(QString, expected);
    QTemporaryDir dir;
    const QString spec = writeSpec(dir, kSmall);
    for (auto& a : args)
      if (a == "SPEC") a = spec;
    if (args.contains("--config") && args[0] == "train") args << "--no-store";
    Result r = runCli(args);
    QVERIFY2(r.code != 0, qPrintable(r.out));
    QVERIFY2(r.err.contains(expected) || r.out.contains(expected), qPrintable(r.err));
    if (!args.isEmpty() && expected != "usage") QCOMPARE(r.err.trimmed().count('\n'), 0);
  }

  void trainSamplesALanguageModel() {
    QTemporaryDir dir;
    QFile corpus(dir.filePath("corpus.txt"));
    corpus.open(QIODevice::WriteOnly);
    for (int i = 0; i < 300; ++i) corpus.write("the cat sat on the mat. the dog ran far.\n");
    corpus.close();
    const QByteArray spec = QByteArray(R"({"dataset":{"kind":"text","path":"CORPUS","context":16},
      "model":{"kind":"gpt","dim":16,"depth":2,"heads":2,"mlp_ratio":2},"partition":{"cuts":[2]},
      "stage_defaults":{"aux_head":"lm"},"train":{"batch_size":8,"max_steps":15},
      "eval":{"interval":0,"max_samples":16},"probe":{"interval":-1}})")
                                .replace("CORPUS", corpus.fileName().toUtf8());
    const QString path = writeSpec(dir, spec);
    auto sampleOf = [&](const QStringList& extra) {
      Result r = runCli(
          QStringList{"train", "--config", path, "--json", "--no-store", "--sample", "the "} +
          extra);
      [&] { QVERIFY2(r.code == 0, qPrintable(r.err)); }();
      const QJsonObject o =
          QJsonDocument::fromJson(r.out.trimmed().split('\n').last().toUtf8()).object();
      return o["sample"].toObject()["text"].toString();
    };
    const QString greedy = sampleOf({"--sample-length", "20"});
    QVERIFY(!greedy.isEmpty());
    QCOMPARE(sampleOf({"--sample-length", "20"}), greedy);  // the same run, the same text
    Result table = runCli({"train", "--config", path, "--no-store", "--sample", "the ",
                           "--sample-length", "20", "--temperature", "0.7"});
    QVERIFY2(table.code == 0, qPrintable(table.err));
    QVERIFY2(table.out.contains("sample (temperature 0.7, 20 bytes):\nthe "),
             qPrintable(table.out));
    Result bad =
        runCli({"train", "--config", path, "--no-store", "--sample", "x", "--temperature", "-1"});
    QVERIFY(bad.code != 0);
    QVERIFY2(bad.err.contains("--temperature must be 0 (greedy) or more"), qPrintable(bad.err));
  }

  void failedRunExitsNonZeroWithStage() {
    QTemporaryDir dir;
    Result r = runCli({"train", "--config", writeSpec(dir, kSmall), "--json", "--no-store", "--set",
                       "debug.fail_at_step=5", "--set", "debug.stage=1"});
    QCOMPARE(r.code, 1);
    QJsonObject o = QJsonDocument::fromJson(r.out.trimmed().split('\n').last().toUtf8()).object();
    QCOMPARE(o["status"].toString(), QString("failed"));
    QCOMPARE(o["failed_stage"].toInt(), 1);
    QVERIFY(o["error"].toString().contains("stage 1"));
  }

  void aModelTooLargeForMemoryIsOneLine() {
    // Issue 36 §1.9: four 65,536-wide layers under a 6 GiB address-space limit. The check
    // before building refuses in one line that says what is needed and what to reduce; with
    // the check switched off, LibTorch's allocation failure is one line too, never its stack
    // trace.
    QTemporaryDir dir;
    const QString spec = writeSpec(dir, kSmall);
    const QString train = QStringLiteral(
                              "ulimit -v 6291456 && exec \"%1\" train --config \"%2\" "
                              "--no-store --set 'model.hidden=[65536,65536,65536,65536]'")
                              .arg(kCli, spec);
    for (const bool check : {true, false}) {
      QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
      if (!check) env.insert("STAGEWISE_MEMORY_CHECK", "0");
      QProcess p;
      p.setProcessEnvironment(env);
      p.start("/bin/sh", {"-c", train});
      QVERIFY(p.waitForFinished(120000));
      const QString err = QString::fromUtf8(p.readAllStandardError()).trimmed();
      QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() != 0, qPrintable(err));
      QVERIFY2(err.count('\n') == 0, qPrintable(err));
      QVERIFY2(err.startsWith("error: "), qPrintable(err));
      QVERIFY2(!err.contains("frame #") && !err.contains("enforce fail"), qPrintable(err));
      if (check) {
        QVERIFY2(err.contains("needs at least") && err.contains("model.hidden"), qPrintable(err));
      } else {
        QVERIFY2(err.contains("out of memory"), qPrintable(err));
      }
    }
  }

  void sigtermStopsCleanly() {
    QTemporaryDir dir;
    QProcess p;
    p.start(kCli, {"train", "--config", writeSpec(dir, kSmall), "--json", "--no-store", "--set",
                   "train.max_steps=1000000"});
    QVERIFY(p.waitForStarted());
    QByteArray err;
    QTRY_VERIFY_WITH_TIMEOUT((err += p.readAllStandardError()).contains("step"), 30000);
    p.terminate();
    QVERIFY(p.waitForFinished(5000));
    QCOMPARE(p.exitCode(), 0);
    QJsonObject o =
        QJsonDocument::fromJson(
            QString::fromUtf8(p.readAllStandardOutput()).trimmed().split('\n').last().toUtf8())
            .object();
    QCOMPARE(o["status"].toString(), QString("stopped"));
  }

  void datasetRemovedWhileTrainingIsHarmless() {
    // An IDX dataset written here, deleted once training is under way: the run goes on to the
    // end, because the engine reads the whole dataset into memory before the first step.
    QTemporaryDir dir;
    QDir(dir.path()).mkdir("data");
    auto idx = [&](const QString& name, int count, bool images) {
      QFile f(dir.filePath("data/" + name));
      QVERIFY(f.open(QIODevice::WriteOnly));
      QByteArray b;
      auto be32 = [&](quint32 v) {
        for (int i = 3; i >= 0; --i) b.append(char((v >> (8 * i)) & 0xFF));
      };
      be32(images ? 0x00000803 : 0x00000801);
      be32(quint32(count));
      if (images) be32(8), be32(8);
      for (int i = 0; i < count; ++i) {
        if (images)
          for (int p = 0; p < 64; ++p) b.append(char((p * 7 + i * 13) % 256));
        else
          b.append(char(i % 4));
      }
      f.write(b);
    };
    idx("train-images-idx3-ubyte", 512, true);
    idx("train-labels-idx1-ubyte", 512, false);
    idx("t10k-images-idx3-ubyte", 64, true);
    idx("t10k-labels-idx1-ubyte", 64, false);
    QProcess p;
    p.start(kCli, {"train", "--config", writeSpec(dir, kSmall), "--json", "--no-store", "--set",
                   "dataset.kind=idx", "--set", "dataset.path=" + dir.filePath("data"), "--set",
                   "train.max_steps=3000", "--set",
                   "stage_defaults.delay_ms=1"});  // at least 3 s: the files go mid-run
    QVERIFY(p.waitForStarted());
    QByteArray err;
    QTRY_VERIFY_WITH_TIMEOUT((err += p.readAllStandardError()).contains("step "), 30000);
    QVERIFY(QDir(dir.filePath("data")).removeRecursively());
    QCOMPARE(p.state(), QProcess::Running);
    QVERIFY(p.waitForFinished(120000));
    err += p.readAllStandardError();
    QVERIFY2(p.exitCode() == 0, err.constData());
    QJsonObject o =
        QJsonDocument::fromJson(
            QString::fromUtf8(p.readAllStandardOutput()).trimmed().split('\n').last().toUtf8())
            .object();
    QCOMPARE(o["status"].toString(), QString("completed"));
    QCOMPARE(o["steps"].toInt(), 3000);
  }

  void sigtermKeepsTheRunInTheStore() {
    QTemporaryDir dir;
    const QString db = dir.filePath("runs.db");
    QProcess p;
    p.start(kCli, {"train", "--config", writeSpec(dir, kSmall), "--json", "--db", db, "--set",
                   "train.max_steps=1000000"});
    QVERIFY(p.waitForStarted());
    QByteArray err;
    QTRY_VERIFY_WITH_TIMEOUT((err += p.readAllStandardError()).contains("step "), 30000);
    QTest::qWait(1500);
    p.terminate();
    QVERIFY(p.waitForFinished(10000));
    QCOMPARE(p.exitCode(), 0);
    QJsonObject summary =
        QJsonDocument::fromJson(
            QString::fromUtf8(p.readAllStandardOutput()).trimmed().split('\n').last().toUtf8())
            .object();
    const int id = summary["run_id"].toInt();
    QVERIFY(id > 0);
    Result show = runCli({"runs", "show", QString::number(id), "--json", "--db", db});
    QVERIFY2(show.code == 0, qPrintable(show.err));
    QJsonObject run = QJsonDocument::fromJson(show.out.toUtf8()).object();
    QVERIFY2(run["status"].toString().startsWith("stopped"), qPrintable(show.out.left(300)));
    QVERIFY(run["steps"].toInt() >= summary["steps"].toInt() - 1);
    Result exported =
        runCli({"runs", "export", QString::number(id), "--format", "csv", "--db", db});
    QVERIFY2(exported.code == 0, qPrintable(exported.err));
    QVERIFY(exported.out.count('\n') > 100);  // the loss points are there
  }

  // --change schedules changes by step; --json lists them and describes the partition at the
  // end; the store keeps them and --replay trains the run again with them, to the same losses.
  void trainChangesAndReplays() {
    QTemporaryDir dir;
    const QString db = dir.filePath("runs.db");
    Result first = runCli({"train", "--config", writeSpec(dir, kSmall), "--json", "--db", db,
                           "--change", "20:partition.cuts=[1]", "--change",
                           "30:stages.0.lr_scale=0.5", "--set", "probe.interval=-1"});
    QVERIFY2(first.code == 0, qPrintable(first.err));
    const QJsonObject a =
        QJsonDocument::fromJson(first.out.trimmed().split('\n').last().toUtf8()).object();
    const QJsonArray changes = a["changes"].toArray();
    QCOMPARE(changes.size(), 2);
    QCOMPARE(changes[0].toObject()["step"].toInt(), 20);
    QCOMPARE(changes[0].toObject()["key"].toString(), QString("partition.cuts"));
    QCOMPARE(changes[0].toObject()["value"].toArray()[0].toInt(), 1);
    QVERIFY(changes[0].toObject()["pause_s"].toDouble() > 0);
    QCOMPARE(changes[1].toObject()["key"].toString(), QString("stages.0.lr_scale"));
    QCOMPARE(changes[1].toObject()["value"].toDouble(), 0.5);
    const QJsonArray stages = a["stages"].toArray();
    QCOMPARE(stages.size(), 2);
    QCOMPARE(stages[1].toObject()["layers"].toArray()[0].toInt(), 1);

    Result again =
        runCli({"train", "--replay", QString::number(a["run_id"].toInt()), "--db", db, "--json"});
    QVERIFY2(again.code == 0, qPrintable(again.err));
    QVERIFY(again.err.contains("with 2 change(s)"));
    const QJsonObject b =
        QJsonDocument::fromJson(again.out.trimmed().split('\n').last().toUtf8()).object();
    QVERIFY(b["run_id"].toInt() != a["run_id"].toInt());  // a run of its own
    QCOMPARE(b["changes"].toArray().size(), 2);
    for (int k = 0; k < 2; ++k)
      QCOMPARE(b["stages"].toArray()[k].toObject()["final_loss"].toDouble(),
               stages[k].toObject()["final_loss"].toDouble());
    Result none = runCli({"train", "--replay", "999", "--db", db});
    QVERIFY(none.code != 0);
    QVERIFY2(none.err.contains("no run 999"), qPrintable(none.err));
  }

  void runsResumeContinuesTheSameRecord() {
    QTemporaryDir dir;
    const QString db = dir.filePath("runs.db");
    const QString checkpoints = dir.filePath("checkpoints");
    Result first = runCli({"train", "--config", writeSpec(dir, kSmall), "--json", "--db", db,
                           "--set", "train.max_steps=40", "--set", "checkpoint.interval=20",
                           "--set", "checkpoint.dir=" + checkpoints});
    QVERIFY2(first.code == 0, qPrintable(first.err));
    const int id = QJsonDocument::fromJson(first.out.trimmed().split('\n').last().toUtf8())
                       .object()["run_id"]
                       .toInt();
    QVERIFY(QDir(checkpoints + "/step-20").exists());
    // The newest checkpoint, which the resume continues from, and the training time it holds.
    QStringList steps = QDir(checkpoints).entryList({"step-*"}, QDir::Dirs);
    std::sort(steps.begin(), steps.end(), [](const QString& a, const QString& b) {
      return a.mid(5).toInt() < b.mid(5).toInt();
    });
    QFile state(checkpoints + "/" + steps.last() + "/state.json");
    QVERIFY(state.open(QIODevice::ReadOnly));
    const double elapsed =
        QJsonDocument::fromJson(state.readAll()).object()["elapsed_s"].toDouble();
    QVERIFY(elapsed > 0);
    Result resumed = runCli({"runs", "resume", QString::number(id), "--db", db, "--json", "--set",
                             "train.max_steps=60"});
    QVERIFY2(resumed.code == 0, qPrintable(resumed.err));
    QJsonObject o =
        QJsonDocument::fromJson(resumed.out.trimmed().split('\n').last().toUtf8()).object();
    QCOMPARE(o["run_id"].toInt(), id);  // the same record
    QCOMPARE(o["steps"].toInt(), 60);
    QCOMPARE(o["status"].toString(), QString("completed"));
    // Its clock continued from the checkpoint's training time.
    QVERIFY2(o["wall_seconds"].toDouble() > elapsed,
             qPrintable(QString("%1 vs %2").arg(o["wall_seconds"].toDouble()).arg(elapsed)));
    // Every stage's steps are the whole run's (issue 36 §1.2: they were the resumed part's),
    // in the summary and in the stored stage rows that `runs show` lists.
    const QJsonArray stages = o["stages"].toArray();
    QVERIFY(!stages.isEmpty());
    for (const auto& st : stages) QCOMPARE(st.toObject()["steps"].toInt(), 60);
    Result exported =
        runCli({"runs", "--db", db, "export", QString::number(id), "--format", "json"});
    QVERIFY2(exported.code == 0, qPrintable(exported.err));
    const QJsonArray stored = QJsonDocument::fromJson(exported.out.toUtf8())
                                  .object()["runs"]
                                  .toArray()
                                  .first()
                                  .toObject()["stages"]
                                  .toArray();
    QCOMPARE(stored.size(), stages.size());
    for (const auto& st : stored) QCOMPARE(st.toObject()["steps"].toInt(), 60);
    Result none = runCli({"runs", "resume", "999", "--db", db});
    QVERIFY(none.code != 0);
    QVERIFY(none.err.contains("no run 999"));
  }

  void versionIsPrinted() {
    Result r = runCli({"--version"});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.out.startsWith(
                 QStringLiteral("stagewise-cli %1\n").arg(QLatin1String(STAGEWISE_TEST_VERSION))),
             qPrintable(r.out));
    QVERIFY(r.out.contains(QStringLiteral("LibTorch 1.")) ||
            r.out.contains(QStringLiteral("LibTorch 2.")));
  }

  void inspectShowsLayersAndStages() {
    QTemporaryDir dir;
    Result r = runCli({"inspect", "--config", writeSpec(dir, kSmall), "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(o["layers"].toArray().size(), 4);
    QCOMPARE(o["stages"].toArray().size(), 2);
    QVERIFY(o["predicted_speedup"].toDouble() > 0);
    Result text = runCli({"inspect", "--config", writeSpec(dir, kSmall)});
    QVERIFY(text.out.contains("classifier"));
    QVERIFY(text.out.contains("predicted speed-up"));
    // issue 36: layers and stages from 1 as in the workbench (S1, layers 1..N), bytes in IEC
    // units (the activation column was a raw byte count).
    QVERIFY2(text.out.contains(QRegularExpression(QStringLiteral("\\n +1  fc"))) &&
                 text.out.contains(QRegularExpression(QStringLiteral("\\n +S1 +1\\.\\.[0-9]"))) &&
                 !text.out.contains(QRegularExpression(QStringLiteral("\\n +0  "))),
             qPrintable(text.out));
    QVERIFY2(text.out.contains(QRegularExpression(QStringLiteral("[0-9] (B|KiB|MiB)\\n"))),
             qPrintable(text.out));
    // inspect knows the mode: pipelined backprop's bytes both ways and its bubble
    Result pipe = runCli({"inspect", "--config", writeSpec(dir, kSmall), "--json", "--set",
                          "mode=pipeline", "--set", "pipeline.micro_batches=6"});
    QVERIFY2(pipe.code == 0, qPrintable(pipe.err));
    const QJsonObject p = QJsonDocument::fromJson(pipe.out.toUtf8()).object();
    QCOMPARE(p["mode"].toString(), QStringLiteral("pipeline"));
    const QJsonObject pl = p["pipeline"].toObject();
    QCOMPARE(pl["bubble_fraction"].toDouble(), 1.0 / 7.0);  // (K - 1) / (M + K - 1), K = 2
    QCOMPARE(pl["backward_bytes_per_batch"].toArray()[0].toInteger(), qint64(32 * 32 * 4));
    QCOMPARE(pl["forward_bytes_per_batch"].toArray()[0].toInteger(), qint64(32 * (32 * 4 + 8)));
    // Every schedule planned (docs/metrics.md, "Bubble: planned against measured"): GPipe holds
    // all 6 micro-batches' activations at stage 0, 1F1B 2 (one per stage from there down);
    // zb-h1 fills 1F1B's idle time with its deferred W's.
    const QJsonArray plans = pl["schedules"].toObject()["plans"].toArray();
    QCOMPARE(plans.size(), 4);
    QStringList names;
    for (const auto& e : plans) names << e.toObject()["schedule"].toString();
    QCOMPARE(names, (QStringList{"gpipe", "1f1b", "interleaved", "zb-h1"}));
    const auto peak0 = [&](int i) {
      return plans[i].toObject()["peak_activation_bytes"].toArray()[0].toInteger();
    };
    QVERIFY(peak0(1) > 0);
    QCOMPARE(peak0(0), 3 * peak0(1));
    QVERIFY(plans[3].toObject()["bubble"].toDouble() < plans[1].toObject()["bubble"].toDouble());
    Result pipeText = runCli({"inspect", "--config", writeSpec(dir, kSmall), "--set",
                              "mode=pipeline", "--set", "pipeline.micro_batches=6"});
    // Interleaved runs the 2 stages as chunks of 1 worker: the line says so, and that the 2
    // chunks are an example where the spec asks for none.
    QVERIFY2(pipeText.out.contains("zb-h1") &&
                 pipeText.out.contains("interleaved (1 worker x 2 chunks, e.g.)"),
             qPrintable(pipeText.out));
    QVERIFY(plans[2].toObject()["chunks_example"].toBool());
    // The two bubbles are labelled apart: the balanced fill-drain figure and the plan's own.
    QVERIFY2(pipeText.out.contains("fill-drain bubble 14% if the 2 stages took equal time") &&
                 pipeText.out.contains("planned bubble: the schedule alone"),
             qPrintable(pipeText.out));
    QVERIFY(!o.contains("pipeline"));
    QCOMPARE(o["warnings"].toArray().size(), 0);
    // Issue 36 §3: an aux head larger than the whole model is worth a warning (not an error).
    Result big = runCli({"inspect", "--config", writeSpec(dir, kSmall), "--set",
                         R"(stages=[{"aux_head":"mlp","aux_hidden":4096},{}])"});
    QVERIFY2(big.code == 0, qPrintable(big.err));
    QVERIFY2(big.out.contains("warning: stages.0.aux_head: stage 1's mlp head has"),
             qPrintable(big.out));
    QVERIFY(big.out.contains("over 4x the whole model's"));
    // Bytes in IEC units (one system everywhere).
    QVERIFY2(pipe.code == 0 && text.out.contains(QStringLiteral("KiB")), qPrintable(text.out));
  }

  // Issue 37: interleaved is planned with the spec's pipeline.chunks (4 stages as 4 chunks of
  // one worker), not always 2.
  void inspectPlansInterleavedWithTheSpecsChunks() {
    QTemporaryDir dir;
    const QStringList sets = {"--set", "mode=pipeline",
                              "--set", "partition.cuts=[1,2,3]",
                              "--set", "pipeline.schedule=interleaved",
                              "--set", "pipeline.chunks=4"};
    Result r = runCli(QStringList{"inspect", "--config", writeSpec(dir, kSmall), "--json"} + sets);
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QJsonObject plan = QJsonDocument::fromJson(r.out.toUtf8())
                                 .object()["pipeline"]
                                 .toObject()["schedules"]
                                 .toObject()["plans"]
                                 .toArray()[2]
                                 .toObject();
    QCOMPARE(plan["schedule"].toString(), QStringLiteral("interleaved"));
    QCOMPARE(plan["chunks"].toInt(), 4);
    QVERIFY(!plan.contains("chunks_example") && !plan.contains("refused"));
    Result text = runCli(QStringList{"inspect", "--config", writeSpec(dir, kSmall)} + sets);
    QVERIFY2(text.out.contains("interleaved (1 worker x 4 chunks)") && !text.out.contains("e.g."),
             qPrintable(text.out));
  }

  // Issue 37: the plan counts what the engine holds (zb-h1's B keeps its layers' output
  // gradients until W): each stage's planned peak is within 10 % of a real run's
  // peak_activation_bytes, 4 stages of 2 layers as the default preset, M = 4 and 8.
  void inspectPlansThePeakTheRunHolds_data() {
    QTest::addColumn<QString>("schedule");
    QTest::addColumn<int>("micro");
    for (const char* s : {"zb-h1", "1f1b", "gpipe"})
      for (int m : {4, 8}) QTest::newRow(qPrintable(QString("%1 M=%2").arg(s).arg(m))) << s << m;
  }
  void inspectPlansThePeakTheRunHolds() {
    QFETCH(QString, schedule);
    QFETCH(int, micro);
    QTemporaryDir dir;
    const QString spec = writeSpec(
        dir,
        R"({"name":"peak","dataset":{"kind":"synthetic","synthetic_train":256,"synthetic_test":64},
  "model":{"hidden":[128,128,128,128,128,128,128,128]},"partition":{"cuts":[2,4,6]},
  "train":{"batch_size":32,"max_steps":3},"eval":{"interval":0},"probe":{"interval":0}})");
    const QStringList sets = {"--set", "mode=pipeline",
                              "--set", "pipeline.schedule=" + schedule,
                              "--set", "pipeline.micro_batches=" + QString::number(micro)};
    Result plan = runCli(QStringList{"inspect", "--config", spec, "--json"} + sets);
    QVERIFY2(plan.code == 0, qPrintable(plan.err));
    QJsonArray planned;
    for (const auto& e : QJsonDocument::fromJson(plan.out.toUtf8())
                             .object()["pipeline"]
                             .toObject()["schedules"]
                             .toObject()["plans"]
                             .toArray())
      if (e.toObject()["schedule"].toString() == schedule)
        planned = e.toObject()["peak_activation_bytes"].toArray();
    Result run = runCli(QStringList{"train", "--config", spec, "--json", "--no-store"} + sets);
    QVERIFY2(run.code == 0, qPrintable(run.err));
    const QJsonArray stages = QJsonDocument::fromJson(run.out.trimmed().split('\n').last().toUtf8())
                                  .object()["stages"]
                                  .toArray();
    QCOMPARE(planned.size(), 4);
    QCOMPARE(stages.size(), 4);
    for (int k = 0; k < 4; ++k) {
      const double want = stages[k].toObject()["peak_activation_bytes"].toDouble();
      const double got = planned[k].toDouble();
      QVERIFY2(
          want > 0 && std::abs(got - want) <= 0.1 * want,
          qPrintable(QString("stage %1: planned %2, the run held %3").arg(k).arg(got).arg(want)));
    }
  }

  /// inspect --profile times each method's work and predicts samples/s per method.
  void inspectProfilePredictsEachMethod() {
    QTemporaryDir dir;
    Result r = runCli({"inspect", "--config", writeSpec(dir, kSmall), "--profile", "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QJsonObject m = QJsonDocument::fromJson(r.out.toUtf8()).object()["methods"].toObject();
    for (const char* key :
         {"local_samples_per_sec", "pipeline_samples_per_sec", "backprop_samples_per_sec"})
      QVERIFY2(m[key].toDouble() > 0, key);
    QVERIFY(std::abs(m["local_speedup"].toDouble() - m["local_samples_per_sec"].toDouble() /
                                                         m["backprop_samples_per_sec"].toDouble()) <
            1e-9 * m["local_speedup"].toDouble());
    QCOMPARE(m["micro_batches"].toInt(), 2);  // one per stage by default
    QVERIFY(m["bubble_fraction"].toDouble() > 0 && m["bubble_fraction"].toDouble() < 1);
    Result text = runCli({"inspect", "--config", writeSpec(dir, kSmall), "--profile"});
    QVERIFY2(text.out.contains("predicted samples/s"), qPrintable(text.out));
  }

  // Commands that train re-execute themselves with a short libgomp spin (omp_wait.cpp), and
  // leave a wait policy or spin count the user chose alone. OMP_DISPLAY_ENV=verbose makes libgomp
  // itself print the spin count it read; the last process to start is the one that runs.
  void openmpWorkersSpinBrieflyUnlessTold() {
    QTemporaryDir dir;
    const QString spec = writeSpec(dir, kSmall);
    struct Seen {
      QString described, libgomp;
    };
    auto waitWith = [&](const QString& name, const QString& value) {
      QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
      env.remove("OMP_WAIT_POLICY");
      env.remove("GOMP_SPINCOUNT");
      env.insert("OMP_DISPLAY_ENV", "verbose");
      if (!name.isEmpty()) env.insert(name, value);
      Result r = runCli({"inspect", "--config", spec, "--json"}, 120000, env);
      if (r.code != 0) qWarning("%s", qPrintable(r.err));
      Seen seen;
      const QStringList lines = (r.out + r.err).split('\n');
      for (const QString& line : lines)
        if (line.trimmed().startsWith("GOMP_SPINCOUNT = ")) seen.libgomp = line.trimmed().mid(17);
      // libgomp prints its report on stderr; should it share stdout with the JSON, the object
      // still starts at the first line that opens with '{'.
      const QString out = r.out.mid(r.out.indexOf(QStringLiteral("\n{")) + 1);
      seen.described = QJsonDocument::fromJson(out.toUtf8()).object()["openmp_wait"].toString();
      return seen;
    };
    Seen byDefault = waitWith({}, {});
    QCOMPARE(byDefault.libgomp, QStringLiteral("'" STAGEWISE_GOMP_SPINCOUNT_DEFAULT "'"));
    QCOMPARE(byDefault.described, QStringLiteral("spin " STAGEWISE_GOMP_SPINCOUNT_DEFAULT
                                                 ", then sleep (Stagewise default)"));
    Seen chosen = waitWith("GOMP_SPINCOUNT", "1234");
    QCOMPARE(chosen.libgomp, QStringLiteral("'1234'"));
    QCOMPARE(chosen.described, QStringLiteral("spin 1234, then sleep (GOMP_SPINCOUNT)"));
    Seen active = waitWith("OMP_WAIT_POLICY", "active");
    QCOMPARE(active.described, QStringLiteral("OMP_WAIT_POLICY=active"));
    QVERIFY2(active.libgomp != QStringLiteral("'" STAGEWISE_GOMP_SPINCOUNT_DEFAULT "'"),
             qPrintable(active.libgomp));
  }
};

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
