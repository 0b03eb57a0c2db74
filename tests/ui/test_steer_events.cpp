// What the workbench reads from the engine's steering events (the messages the LibTorch engine
// and the fake engine write): the applied change, the partition after a move, a paused stage, a
// refusal's reason; other events are not steering.

#include <QtTest>

#include "live/steer_events.h"
#include "runs/run_history.h"

using namespace stagewise;
using namespace stagewise::ui;
using Kind = SteerEvent::Kind;

Q_DECLARE_METATYPE(stagewise::ui::SteerEvent::Kind)

class TestSteerEvents : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void reads_data() {
    QTest::addColumn<bool>("warning");
    QTest::addColumn<int>("stage");
    QTest::addColumn<QString>("message");
    QTest::addColumn<int>("kind");  // -1: no steering event
    QTest::addColumn<qlonglong>("step");
    QTest::addColumn<QString>("label");
    QTest::addColumn<QString>("layout");  // "first-last " per stage
    QTest::addColumn<double>("pause");
    // Stages and layers numbered from 1 in the text, as on screen; the layout read back is by
    // index.
    QTest::newRow("engine move")
        << false << -1
        << "repartition at step 500: partition.cuts=[4] (was [2,4,6]); pause 0.021000 s (drain "
           "0.020000 s, rebuild 0.001000 s); 2 stage(s): S1: layers 1-4, S2: layers 5-9; new aux "
           "heads at cuts none, kept at cuts [4]"
        << int(Kind::Repartition) << 500LL << "cuts [2,4,6] → [4]"
        << "0-3 4-8 " << 0.021;
    QTest::newRow("fake move")
        << false << -1
        << "repartition at step 40: partition.cuts=[2] (was [1,2]); pause 0.000000 s (fake "
           "engine); 2 stage(s): S1: layers 1-2, S2: layers 3-4"
        << int(Kind::Repartition) << 40LL << "cuts [1,2] → [2]"
        << "0-1 2-3 " << 0.0;
    // Runs stored before numbered them from 0.
    QTest::newRow("stored move, numbered from 0")
        << false << -1
        << "repartition at step 40: partition.cuts=[2] (was [1,2]); pause 0.000000 s (fake "
           "engine); 2 stage(s): 0: layers 0-1, 1: layers 2-3"
        << int(Kind::Repartition) << 40LL << "cuts [1,2] → [2]"
        << "0-1 2-3 " << 0.0;
    QTest::newRow("delay") << false << 1 << "change at step 200: stages.1.delay_ms=20"
                           << int(Kind::Setting) << 200LL << "S2 delay_ms = 20"
                           << "" << 0.0;
    QTest::newRow("threads")
        << false << 0
        << "change at step 7: stages.0.threads=2; another thread count may change the last bits "
           "of later losses"
        << int(Kind::Setting) << 7LL << "S1 threads = 2"
        << "" << 0.0;
    QTest::newRow("stage paused") << false << 2 << "S3 paused at step 412"
                                  << int(Kind::StagePause) << 412LL << "S3 paused"
                                  << "" << 0.0;
    QTest::newRow("stage resumed")
        << false << 2 << "S3 resumed at step 415" << int(Kind::StageResume) << 415LL
        << "S3 resumed" << "" << 0.0;
    QTest::newRow("stored pause, numbered from 0")
        << false << 2 << "stage 2 paused" << int(Kind::StagePause) << -1LL << "S3 paused"
        << "" << 0.0;
    QTest::newRow("refused move")
        << true << -1 << "repartition to [1,3] refused: pipeline mode cannot re-partition"
        << int(Kind::Refused) << 0LL << "pipeline mode cannot re-partition"
        << "" << 0.0;
    QTest::newRow("refused setting")
        << true << 1 << "change of stages.1.lr_scale refused: lr_scale needs a number above 0"
        << int(Kind::Refused) << 0LL << "lr_scale needs a number above 0"
        << "" << 0.0;
    QTest::newRow("refused pause")
        << true << 1 << "pausing S2 refused: the pipeline is draining; pause it later"
        << int(Kind::Refused) << 0LL << "the pipeline is draining; pause it later"
        << "" << 0.0;
    // A refused scheduled change is a warning: never an applied change (nor replayed).
    QTest::newRow("refused scheduled")
        << true << -1
        << "change at step 5: stages.4.delay_ms=3 refused: the run has 2 stage(s) at that step"
        << int(Kind::Refused) << 0LL << "the run has 2 stage(s) at that step"
        << "" << 0.0;
    QTest::newRow("resumed run") << false << -1 << "resumed from x at step 3" << -1 << 0LL << ""
                                 << "" << 0.0;
    QTest::newRow("other warning")
        << true << -1 << "final evaluation failed: oom" << -1 << 0LL << ""
        << "" << 0.0;
  }

  void reads() {
    QFETCH(bool, warning);
    QFETCH(int, stage);
    QFETCH(QString, message);
    QFETCH(int, kind);
    QFETCH(qlonglong, step);
    QFETCH(QString, label);
    QFETCH(QString, layout);
    QFETCH(double, pause);
    const engine::RunEvent event{warning ? engine::EventKind::Warning : engine::EventKind::Info,
                                 1.5, stage, message.toStdString()};
    const auto e = steerEventFrom(event);
    QCOMPARE(e.has_value(), kind >= 0);
    if (!e) return;
    QCOMPARE(int(e->kind), kind);
    QCOMPARE(e->label(), label);
    if (e->kind == Kind::Refused) return;
    QCOMPARE(qlonglong(e->change.step), step);
    QString stages;
    for (const auto& [first, last] : e->layout)
      stages += QStringLiteral("%1-%2 ").arg(first).arg(last);
    QCOMPARE(stages, layout);
    QCOMPARE(e->change.pauseS, pause);
  }

  // The history Runs shows: the applied changes (replayed by Run again) and, as lines only, a
  // stage held and let go (timing, not what the steps compute: not replayed).
  void historyListsPausesWithoutReplayingThem() {
    auto info = [](int stage, const char* message) {
      storage::EventRecord e;
      e.kind = "info";
      e.stage = stage;
      e.message = message;
      return e;
    };
    engine::ExperimentSpec spec;
    spec.partition.cuts = {1, 2};
    const RunHistory h = runHistory(
        spec, {info(1, "S2 paused at step 30"), info(1, "S2 resumed at step 35"),
               info(-1, "repartition at step 40: partition.cuts=[2] (was [1,2]); pause 0.010000 "
                        "s (fake engine); 2 stage(s): S1: layers 1-2, S2: layers 3-4")});
    QCOMPARE(h.changes.size(), size_t{1});
    QCOMPARE(h.changes[0].key, std::string("partition.cuts"));
    QCOMPARE(h.lines.size(), 3);
    QCOMPARE(h.lines[0], QStringLiteral("step 30: S2 paused (not replayed)"));
    QCOMPARE(h.lines[1], QStringLiteral("step 35: S2 resumed (not replayed)"));
    QCOMPARE(h.partitions.last(), QStringLiteral("from step 40: S1 layers 1–2 · S2 layers 3–4"));
  }
};

QTEST_GUILESS_MAIN(TestSteerEvents)
#include "test_steer_events.moc"
