// Experiment spec: parsing, overrides and validation messages a user acts on.
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QtTest>
#include <functional>

#include "stagewise/engine/spec.h"

using namespace stagewise::engine;

class TestSpec : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void defaultsWhenEmpty() {
    ExperimentSpec s = parseSpec("{}");
    QCOMPARE(s.model.kind, std::string("mlp"));
    QCOMPARE(s.train.batchSize, 32);
    QCOMPARE(s.stageCount(), 1);
    QVERIFY(s.mode == Mode::Local);
  }

  void readsEveryField() {
    ExperimentSpec s =
        parseSpec(R"({"name":"x","dataset":{"kind":"synthetic","synthetic_features":8},
      "model":{"hidden":[16,16,16]},"partition":{"cuts":[1,2]},"mode":"backprop",
      "stage_defaults":{"threads":2,"aux_head":"mlp"},"stages":[{},{"delay_ms":5},{"device":"cpu","lr_scale":0.5}],
      "train":{"batch_size":8,"max_steps":10,"optimizer":"sgd","lr":0.1,"seed":7,"queue_capacity":2},
      "eval":{"interval":0},"probe":{"interval":5,"batch_size":16},"debug":{"fail_at_step":3,"stage":1}})");
    QCOMPARE(s.stageCount(), 3);
    QCOMPARE(s.stageSettings(1).delayMs, 5);
    QCOMPARE(s.stageSettings(1).threads, 2);
    QCOMPARE(s.stageSettings(2).lrScale, 0.5);
    QCOMPARE(s.stageSettings(0).auxHead, std::string("mlp"));
    QVERIFY(s.mode == Mode::Backprop);
    QCOMPARE(s.train.seed, uint64_t{7});
    QCOMPARE(s.debug.failAtStep, int64_t{3});
    // canonical JSON round-trips
    ExperimentSpec again = parseSpec(specToJson(s));
    QCOMPARE(specToJson(again), specToJson(s));
  }

  void unknownKeySuggestsTheRightOne() {
    try {
      parseSpec(R"({"train":{"batchsize":64}})");
      QFAIL("accepted an unknown key");
    } catch (const SpecError& e) {
      QCOMPARE(e.field(), std::string("train.batchsize"));
      QVERIFY2(std::string(e.what()).find("did you mean 'train.batch_size'") != std::string::npos,
               e.what());
    }
  }

  void wrongTypeNamesFieldAndType() {
    try {
      parseSpec(R"({"train":{"lr":"fast"}})");
      QFAIL("accepted a string learning rate");
    } catch (const SpecError& e) {
      QCOMPARE(e.field(), std::string("train.lr"));
      QVERIFY(std::string(e.what()).find("expected a number") != std::string::npos);
    }
    QVERIFY_THROWS_EXCEPTION(SpecError, parseSpec(R"({"partition":{"cuts":[1.5]}})"));
    QVERIFY_THROWS_EXCEPTION(SpecError, parseSpec(R"({"mode":"pipelined"})"));
    QVERIFY_THROWS_EXCEPTION(SpecError, parseSpec("{not json"));
  }

  void overridesReadJsonOrString() {
    std::string json = applyOverrides(R"({"train":{"lr":0.1}})",
                                      {"train.max_steps=200", "mode=backprop", "partition.cuts=[4]",
                                       "name=my run", "stages.1.device=cpu"});
    ExperimentSpec s = parseSpec(json);
    QCOMPARE(s.train.maxSteps, int64_t{200});
    QVERIFY(s.mode == Mode::Backprop);
    QCOMPARE(s.partition.cuts, std::vector<int>{4});
    QCOMPARE(s.name, std::string("my run"));
    QCOMPARE(s.stages.size(), size_t{2});
    QCOMPARE(s.train.lr, 0.1);
    QVERIFY_THROWS_EXCEPTION(SpecError, applyOverrides("{}", {"no-equals-sign"}));
    QVERIFY_THROWS_EXCEPTION(SpecError, applyOverrides("{}", {"train..lr=1"}));
    // regression (fuzz_spec): a value that is not UTF-8 was an uncaught json::type_error
    QVERIFY_THROWS_EXCEPTION(SpecError, applyOverrides("{}", {"name=\xff\xfe"}));
    QVERIFY_THROWS_EXCEPTION(SpecError, parseSpec("{\"name\":\"\xff\"}"));
    // regression (fuzz_spec): a number too large for a double was an uncaught json::out_of_range
    QVERIFY_THROWS_EXCEPTION(SpecError, parseSpec("7777777777E7777"));
    QVERIFY_THROWS_EXCEPTION(SpecError, applyOverrides("7777777777E7777", {"a=1"}));
  }

  void stageListLengthMustMatch() {
    ExperimentSpec s = parseSpec(R"({"partition":{"cuts":[2,4,6]},"stages":[{},{},{}]})");
    auto problems = validateSpec(s, 9, {"cpu"});
    QVERIFY(!problems.empty());
    QCOMPARE(problems.front().field, std::string("stages"));
    const std::string& msg = problems.front().message;
    QVERIFY2(msg.find("3 stage entries") != std::string::npos &&
                 msg.find("4 stages") != std::string::npos,
             msg.c_str());
  }

  void missingDeviceListsAvailableOnes() {
    ExperimentSpec s = parseSpec(R"({"partition":{"cuts":[2]},"stages":[{},{"device":"cuda:1"}]})");
    auto problems = validateSpec(s, 9, {"cpu", "cuda:0"});
    QCOMPARE(problems.size(), size_t{1});
    QCOMPARE(problems[0].field, std::string("stages[1].device"));
    QVERIFY(problems[0].message.find("available: cpu, cuda:0") != std::string::npos);
  }

  void bashCompletionKnowsEveryKey() {
    // The completion's --set keys (resources/completion/stagewise-cli) cover every key of the
    // canonical spec, so a new key cannot be forgotten there.
    QFile file(QStringLiteral(STAGEWISE_SOURCE_DIR "/resources/completion/stagewise-cli"));
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(file.readAll());
    const int start = text.indexOf(QStringLiteral("local keys=\""));
    QVERIFY(start >= 0);
    const int end = text.indexOf(QLatin1Char('"'), start + 12);
    const QStringList listed =
        text.mid(start + 12, end - start - 12)
            .split(QRegularExpression(QStringLiteral("\\s+")), Qt::SkipEmptyParts);
    ExperimentSpec spec;
    spec.stages.resize(1);
    spec.dataset.randomLabels = true;  // keys written only where not the default
    spec.measure.budget = 0.1;
    spec.dataset.validation = 0.1;
    spec.model.init = "kaiming";
    spec.model.norm = "layernorm";
    spec.pipeline.chunks = 2;
    spec.pipeline.recompute = true;
    spec.timeline.maxSpans = 1000;
    const QJsonObject root =
        QJsonDocument::fromJson(QByteArray::fromStdString(specToJson(spec))).object();
    QStringList missing;
    std::function<void(const QJsonObject&, const QString&)> walk = [&](const QJsonObject& o,
                                                                       const QString& prefix) {
      for (auto it = o.begin(); it != o.end(); ++it) {
        const QString key = prefix.isEmpty() ? it.key() : prefix + QLatin1Char('.') + it.key();
        if (it.value().isObject())
          walk(it.value().toObject(), key);
        else if (!listed.contains(key))
          missing << key;
      }
    };
    walk(root, {});
    QVERIFY2(missing.isEmpty(), qPrintable(missing.join(QStringLiteral(", "))));
    QVERIFY(listed.size() > 40);
  }

  void badCutsNameTheStage() {
    ExperimentSpec s = parseSpec(R"({"partition":{"cuts":[2,2]}})");
    auto problems = validateSpec(s, 9, {"cpu"});
    QCOMPARE(problems.size(), size_t{1});
    QVERIFY2(problems[0].message.find("stage 2 is empty") != std::string::npos,
             problems[0].message.c_str());
    s = parseSpec(R"({"partition":{"cuts":[9]}})");
    problems = validateSpec(s, 9, {"cpu"});
    QCOMPARE(problems.size(), size_t{1});
    // One numbering: the first cut, after layer 9, of a model of 9 layers (cuts after 1 to 8).
    QVERIFY2(problems[0].message.find(
                 "cut 1 would lie after layer 9, but the model has 9 layers: a cut lies "
                 "after layer 1 to 8") != std::string::npos,
             problems[0].message.c_str());
  }

  void pipelineSchedulesAndRecompute_data() {
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("field");  // empty: valid
    QTest::addColumn<QString>("says");
    QTest::newRow("zb-h1") << R"({"mode":"pipeline","pipeline":{"schedule":"zb-h1"}})"
                           << ""
                           << "";
    QTest::newRow("recompute") << R"({"mode":"pipeline","pipeline":{"recompute":true}})"
                               << ""
                               << "";
    QTest::newRow("unknown schedule") << R"({"mode":"pipeline","pipeline":{"schedule":"zb-v"}})"
                                      << "pipeline.schedule"
                                      << "use gpipe, 1f1b, interleaved or zb-h1";
    QTest::newRow("interleaved") << R"({"mode":"pipeline","partition":{"cuts":[2,4,6]},
        "pipeline":{"schedule":"interleaved","chunks":2,"micro_batches":4}})"
                                 << ""
                                 << "";
    QTest::newRow("interleaved, stages not a multiple of chunks")
        << R"({"mode":"pipeline","partition":{"cuts":[2,4]},
        "pipeline":{"schedule":"interleaved","chunks":2}})"
        << "pipeline.chunks"
        << "3 stages do not split into 2 chunks";
    QTest::newRow("interleaved, micro-batches not in rounds")
        << R"({"mode":"pipeline","partition":{"cuts":[2,4,6]},
        "pipeline":{"schedule":"interleaved","chunks":2,"micro_batches":5}})"
        << "pipeline.micro_batches"
        << "use a multiple of 2";
    QTest::newRow("chunks without interleaved")
        << R"({"mode":"pipeline","pipeline":{"schedule":"1f1b","chunks":2}})"
        << "pipeline.chunks"
        << "need schedule interleaved";
    // Like every pipeline.* key, ignored in the other modes: the workbench sets the mode apart
    // from the Design's pipeline settings, and a study compares modes on one spec.
    QTest::newRow("recompute in local mode") << R"({"mode":"local","pipeline":{"recompute":true}})"
                                             << ""
                                             << "";
    QTest::newRow("interleaved in local mode") << R"({"mode":"local","partition":{"cuts":[2,4]},
        "pipeline":{"schedule":"interleaved","chunks":2}})"
                                               << ""
                                               << "";
  }
  /// zb-h1, interleaved and recomputation are accepted in pipeline mode; what the schedule cannot
  /// order is refused in one line naming the field.
  void pipelineSchedulesAndRecompute() {
    QFETCH(QString, json);
    QFETCH(QString, field);
    QFETCH(QString, says);
    const auto problems = validateSpec(parseSpec(json.toStdString()), 9, {"cpu"});
    if (field.isEmpty()) {
      QVERIFY2(problems.empty(), problems.empty() ? "" : problems[0].message.c_str());
      return;
    }
    QCOMPARE(problems.size(), size_t{1});
    QCOMPARE(QString::fromStdString(problems[0].field), field);
    QVERIFY2(problems[0].message.find(says.toStdString()) != std::string::npos,
             problems[0].message.c_str());
  }

  void rangeChecks() {
    ExperimentSpec s = parseSpec(R"({"train":{"batch_size":0,"lr":-1,"optimizer":"lbfgs"}})");
    auto problems = validateSpec(s, 9, {"cpu"});
    QStringList fields;
    for (auto& p : problems) fields << QString::fromStdString(p.field);
    QVERIFY(fields.contains("train.batch_size"));
    QVERIFY(fields.contains("train.lr"));
    QVERIFY(fields.contains("train.optimizer"));
    QVERIFY(validateSpec(parseSpec("{}"), 9, {"cpu"}).empty());
    // the methods' and schedules' keys
    ExperimentSpec m = parseSpec(R"({"mode":"pipeline","train":{"batch_size":8,"lr_schedule":"step",
        "warmup_steps":-1,"clip_norm":-0.5},"pipeline":{"micro_batches":9,"schedule":"zigzag"}})");
    QVERIFY(m.mode == Mode::Pipeline);
    fields.clear();
    for (auto& p : validateSpec(m, 9, {"cpu"})) fields << QString::fromStdString(p.field);
    for (const char* f : {"train.lr_schedule", "train.warmup_steps", "train.clip_norm",
                          "pipeline.micro_batches", "pipeline.schedule"})
      QVERIFY2(fields.contains(f), f);
    // and they round-trip
    ExperimentSpec r =
        parseSpec(R"({"mode":"pipeline","train":{"lr_schedule":"cosine","warmup_steps":5,
        "clip_norm":1.5},"pipeline":{"micro_batches":4,"schedule":"1f1b"}})");
    const ExperimentSpec back = parseSpec(specToJson(r));
    QVERIFY(back.mode == Mode::Pipeline);
    QCOMPARE(back.train.lrSchedule, std::string("cosine"));
    QCOMPARE(back.train.warmupSteps, int64_t{5});
    QCOMPARE(back.train.clipNorm, 1.5);
    QCOMPARE(back.pipeline.microBatches, 4);
    QCOMPARE(back.pipeline.schedule, std::string("1f1b"));
    QVERIFY(validateSpec(r, 9, {"cpu"}).empty());
  }

  void scheduleChunksRecomputeAndSpanBudget() {
    // Defaults: one chunk per worker, no recomputation, the default span budget; none written
    // to the canonical JSON then, so specs stored before these keys read back the same.
    const ExperimentSpec d = parseSpec("{}");
    QCOMPARE(d.pipeline.chunks, 1);
    QVERIFY(!d.pipeline.recompute);
    QCOMPARE(d.timeline.maxSpans, int64_t{0});
    const std::string text = specToJson(d);
    QVERIFY(text.find("chunks") == std::string::npos);
    QVERIFY(text.find("recompute") == std::string::npos);
    QVERIFY(text.find("timeline") == std::string::npos);
    // Set, they round-trip.
    const ExperimentSpec s =
        parseSpec(R"({"pipeline":{"chunks":2,"recompute":true},"timeline":{"max_spans":5000}})");
    const ExperimentSpec back = parseSpec(specToJson(s));
    QCOMPARE(back.pipeline.chunks, 2);
    QVERIFY(back.pipeline.recompute);
    QCOMPARE(back.timeline.maxSpans, int64_t{5000});
    // Wrong types and ranges name the field.
    try {
      parseSpec(R"({"pipeline":{"recompute":1}})");
      QFAIL("a number for pipeline.recompute was accepted");
    } catch (const SpecError& e) {
      QCOMPARE(e.field(), std::string("pipeline.recompute"));
    }
    QStringList fields;
    for (auto& p : validateSpec(
             parseSpec(R"({"pipeline":{"chunks":0},"timeline":{"max_spans":-1}})"), 9, {"cpu"}))
      fields << QString::fromStdString(p.field);
    QVERIFY2(fields.contains("pipeline.chunks"), qPrintable(fields.join(", ")));
    QVERIFY2(fields.contains("timeline.max_spans"), qPrintable(fields.join(", ")));
  }

  void measurementBudgetAndRandomLabels() {
    // Defaults: a 5 % budget, real labels; neither written to the canonical JSON then, so
    // specs stored before these keys existed read back the same.
    const ExperimentSpec d = parseSpec("{}");
    QCOMPARE(d.measure.budget, 0.05);
    QVERIFY(!d.dataset.randomLabels);
    QVERIFY(specToJson(d).find("measure") == std::string::npos);
    QVERIFY(specToJson(d).find("random_labels") == std::string::npos);
    const ExperimentSpec s =
        parseSpec(R"({"measure":{"budget":0},"dataset":{"random_labels":true}})");
    QCOMPARE(s.measure.budget, 0.0);
    QVERIFY(s.dataset.randomLabels);
    const ExperimentSpec back = parseSpec(specToJson(s));
    QCOMPARE(back.measure.budget, 0.0);
    QVERIFY(back.dataset.randomLabels);
    for (const char* bad : {R"({"measure":{"budget":1}})", R"({"measure":{"budget":-0.1}})"}) {
      const auto problems = validateSpec(parseSpec(bad), 9, {"cpu"});
      QCOMPARE(problems.size(), size_t{1});
      QCOMPARE(problems[0].field, std::string("measure.budget"));
    }
    try {
      parseSpec(R"({"dataset":{"random_labels":"yes"}})");
      QFAIL("a string was read as a boolean");
    } catch (const SpecError& e) {
      QCOMPARE(e.field(), std::string("dataset.random_labels"));
    }
    try {
      parseSpec(R"({"measure":{"budjet":0.1}})");
      QFAIL("an unknown key was accepted");
    } catch (const SpecError& e) {
      QCOMPARE(e.field(), std::string("measure.budjet"));
      QVERIFY(std::string(e.what()).find("measure.budget") != std::string::npos);
    }
  }

  void validationInitAndNorm() {
    // Defaults (no split, LibTorch's initialisation, no norm) are not written, so specs stored
    // before these keys existed read back byte for byte.
    const ExperimentSpec d = parseSpec("{}");
    QCOMPARE(d.dataset.validation, 0.0);
    QCOMPARE(d.model.init, std::string("default"));
    QCOMPARE(d.model.norm, std::string("none"));
    for (const char* key : {"validation", "init", "norm"})
      QVERIFY2(specToJson(d).find(std::string("\"") + key + "\"") == std::string::npos, key);
    const ExperimentSpec s =
        parseSpec(R"({"dataset":{"validation":0.2},"model":{"init":"xavier","norm":"batchnorm"}})");
    const ExperimentSpec back = parseSpec(specToJson(s));
    QCOMPARE(back.dataset.validation, 0.2);
    QCOMPARE(back.model.init, std::string("xavier"));
    QCOMPARE(back.model.norm, std::string("batchnorm"));
    QVERIFY(validateSpec(back, 9, {"cpu"}).empty());
    // Unknown values name the field and the values allowed.
    auto only = [](const std::string& json) {
      const auto problems = validateSpec(parseSpec(json), 9, {"cpu"});
      return problems.size() == 1 ? problems[0]
                                  : Problem{std::to_string(problems.size()) + " problems", ""};
    };
    Problem p = only(R"({"model":{"init":"he"}})");
    QCOMPARE(p.field, std::string("model.init"));
    QVERIFY(p.message.find("default, kaiming or xavier") != std::string::npos);
    p = only(R"({"model":{"norm":"groupnorm"}})");
    QCOMPARE(p.field, std::string("model.norm"));
    QVERIFY(p.message.find("none, layernorm or batchnorm") != std::string::npos);
    // A norm on the other families: refused (they have theirs built in).
    p = only(R"({"model":{"kind":"cnn","norm":"layernorm"}})");
    QCOMPARE(p.field, std::string("model.norm"));
    QVERIFY(p.message.find("set it to none") != std::string::npos);
    QVERIFY(validateSpec(parseSpec(R"({"model":{"kind":"vit","init":"kaiming"}})"), 9, {"cpu"})
                .empty());
    // Batch norm cannot train on one row: batches and micro-batches of 2 or more.
    p = only(R"({"model":{"norm":"batchnorm"},"train":{"batch_size":1},"probe":{"interval":-1}})");
    QCOMPARE(p.field, std::string("train.batch_size"));
    p = only(R"({"mode":"pipeline","model":{"norm":"batchnorm"},"train":{"batch_size":8},
                 "pipeline":{"micro_batches":5}})");
    QCOMPARE(p.field, std::string("pipeline.micro_batches"));
    QVERIFY(p.message.find("at most 4") != std::string::npos);
    p = only(R"({"model":{"norm":"batchnorm"},"probe":{"batch_size":1}})");
    QCOMPARE(p.field, std::string("probe.batch_size"));
    for (const char* bad :
         {R"({"dataset":{"validation":0.6}})", R"({"dataset":{"validation":-0.01}})"}) {
      p = only(bad);
      QCOMPARE(p.field, std::string("dataset.validation"));
      QVERIFY(p.message.find("between 0 and 0.5") != std::string::npos);
    }
    try {
      parseSpec(R"({"dataset":{"validation":"10%"}})");
      QFAIL("a string was read as a number");
    } catch (const SpecError& e) {
      QCOMPARE(e.field(), std::string("dataset.validation"));
    }
  }

  void ranksSpreadStagesOrFollowTheSpec() {
    // Default: contiguous blocks in order, one stage per rank when the counts match.
    ExperimentSpec s = parseSpec(R"({"partition":{"cuts":[2,4,6]}})");
    QCOMPARE(assignRanks(s, 4, 4), (std::vector<int>{0, 1, 2, 3}));
    QCOMPARE(assignRanks(s, 4, 2), (std::vector<int>{0, 0, 1, 1}));
    QCOMPARE(assignRanks(s, 4, 3), (std::vector<int>{0, 0, 1, 2}));
    QCOMPARE(assignRanks(s, 4, 1), (std::vector<int>{0, 0, 0, 0}));
    // interleaved: rank r is worker r and runs its chunks, stages r, r + W, ...
    s = parseSpec(R"({"mode":"pipeline","partition":{"cuts":[2,4,6]},
                      "pipeline":{"schedule":"interleaved","chunks":2}})");
    QCOMPARE(assignRanks(s, 4, 2), (std::vector<int>{0, 1, 0, 1}));
    QCOMPARE(assignRanks(s, 4, 1), (std::vector<int>{0, 0, 0, 0}));
    s = parseSpec(R"({"mode":"pipeline","partition":{"cuts":[1,2,3,4,5]},
                      "pipeline":{"schedule":"interleaved","chunks":2},"stages":[{},{"rank":1}]})");
    QCOMPARE(assignRanks(s, 6, 3), (std::vector<int>{0, 1, 2, 0, 1, 2}));
    // Explicit ranks, round trip through the canonical JSON.
    s = parseSpec(
        R"({"partition":{"cuts":[2,4,6]},"stages":[{"rank":1},{"rank":0},{"rank":1},{"rank":0}],
                      "distributed":{"timeout_s":5,"backend":"gloo"}})");
    QCOMPARE(assignRanks(s, 4, 2), (std::vector<int>{1, 0, 1, 0}));
    ExperimentSpec again = parseSpec(specToJson(s));
    QCOMPARE(again.stageSettings(0).rank, 1);
    QCOMPARE(again.distributed.timeoutS, 5.0);
    QCOMPARE(again.distributed.backend, std::string("gloo"));
    // A default spec's canonical JSON carries no distributed keys (older stored specs stay equal).
    QVERIFY(specToJson(parseSpec("{}")).find("rank") == std::string::npos);
    QVERIFY(specToJson(parseSpec("{}")).find("distributed") == std::string::npos);
  }

  void badRankMapsNameTheField() {
    auto message = [](const std::string& json, int stages, int world) {
      try {
        assignRanks(parseSpec(json), stages, world);
      } catch (const SpecError& e) {
        return std::string(e.what());
      }
      return std::string("no error");
    };
    QVERIFY(message(R"({"partition":{"cuts":[2]},"stages":[{},{"rank":2}]})", 2, 2)
                .find("stages[1].rank: rank 2 does not exist in a run of 2 processes") !=
            std::string::npos);
    QVERIFY(message(R"({"partition":{"cuts":[2]},"stages":[{"rank":0},{"rank":0}]})", 2, 2)
                .find("rank 1 would run no stage") != std::string::npos);
    QVERIFY(message(R"({"partition":{"cuts":[2]}})", 2, 3).find("needs at least 3 stages") !=
            std::string::npos);
    QVERIFY(message(R"({"mode":"backprop"})", 1, 1).find("backprop runs in one process") !=
            std::string::npos);
    QCOMPARE(message(R"({"partition":{"cuts":[2]},"mode":"pipeline"})", 2, 2),
             std::string("no error"));
    QCOMPARE(
        message(R"({"partition":{"cuts":[2]},"mode":"pipeline","train":{"clip_norm":1}})", 2, 2),
        std::string("no error"));  // the norm is summed across the processes
    // interleaved: one process per worker, and explicit ranks only where the placement puts them.
    const std::string interleaved =
        R"({"mode":"pipeline","partition":{"cuts":[2,4,6]},"pipeline":{"schedule":"interleaved",
            "chunks":2})";
    QCOMPARE(message(interleaved + "}", 4, 3),
             std::string("pipeline.chunks: interleaved with 2 chunks runs its 4 stages on 2 "
                         "workers, one process each: start 2 processes, not 3 (or change "
                         "pipeline.chunks)"));
    QVERIFY(message(interleaved + R"(,"stages":[{},{},{"rank":1}]})", 4, 2)
                .find("stages[2].rank: interleaved runs stage 2 on worker 0") != std::string::npos);
    QVERIFY(message(interleaved + R"(,"stage_defaults":{"rank":0}})", 4, 2)
                .find("stage_defaults.rank: interleaved runs stage 1 on worker 1") !=
            std::string::npos);
    QCOMPARE(message(interleaved + R"(,"stages":[{"rank":0},{"rank":1}]})", 4, 2),
             std::string("no error"));
    QVERIFY(message(R"({"partition":{"cuts":[2]},"checkpoint":{"interval":10}})", 2, 2)
                .find("checkpoint") != std::string::npos);
    auto problems =
        validateSpec(parseSpec(R"({"distributed":{"timeout_s":0,"backend":"mpi"}})"), 9, {"cpu"});
    QStringList fields;
    for (auto& p : problems) fields << QString::fromStdString(p.field);
    QVERIFY(fields.contains("distributed.timeout_s"));
    QVERIFY(fields.contains("distributed.backend"));
  }
};

QTEST_GUILESS_MAIN(TestSpec)
#include "test_spec.moc"
