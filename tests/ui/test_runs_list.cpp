// Issue 36 §3, the Runs list as a researcher reads it: the spec-key columns in the order runs
// are compared (mode and train.lr before eval.interval), long names that keep their end in
// view, and a live sorted list that holds still while the pointer is over it.

#include <QApplication>
#include <QEnterEvent>
#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QtTest>

#include "run_store_fixture.h"
#include "runs/run_history.h"
#include "runs/run_table_columns.h"
#include "runs/run_table_model.h"
#include "runs/runs_workspace.h"

using namespace stagewise;
using namespace stagewise::ui;
using test::addRun;
using test::runSpec;

class TestRunsList : public QObject {
  Q_OBJECT

  static void waitLoaded(RunsWorkspace& ws, int rows) {
    QTRY_COMPARE_WITH_TIMEOUT(ws.model()->rowCount(), rows, 5000);
    QTRY_VERIFY_WITH_TIMEOUT(ws.model()->isSettled() && ws.model()->runId(rows - 1) >= 0, 5000);
  }

  static void sendTo(QWidget* target, QEvent::Type type) {
    if (type == QEvent::Enter) {
      QEnterEvent event(QPointF(5, 5), target->mapToGlobal(QPointF(5, 5)),
                        target->mapToGlobal(QPointF(5, 5)));
      QCoreApplication::sendEvent(target, &event);
    } else {
      QEvent event(type);
      QCoreApplication::sendEvent(target, &event);
    }
  }

  static QString cell(RunTableModel* model, int64_t id, int column) {
    return model->data(model->index(model->rowOf(id), column), Qt::DisplayRole).toString();
  }

 private Q_SLOTS:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void keyRankPutsWhatIsComparedFirst_data() {
    QTest::addColumn<QString>("before");
    QTest::addColumn<QString>("after");
    QTest::newRow("mode before lr") << "mode"
                                    << "train.lr";
    QTest::newRow("lr before seed") << "train.lr"
                                    << "train.seed";
    QTest::newRow("seed before cuts") << "train.seed"
                                      << "partition.cuts";
    QTest::newRow("stages before batch") << "partition.stages"
                                         << "train.batch_size";
    QTest::newRow("batch before pipeline") << "train.batch_size"
                                           << "pipeline.schedule";
    QTest::newRow("pipeline before local") << "pipeline.micro_batches"
                                           << "local.overlap";
    QTest::newRow("local before model") << "local.overlap"
                                        << "model.hidden";
    QTest::newRow("model before the rest") << "model.hidden"
                                           << "train.max_steps";
    QTest::newRow("the rest before eval") << "train.max_steps"
                                          << "eval.interval";
    QTest::newRow("lr before probe.interval") << "train.lr"
                                              << "probe.interval";
    QTest::newRow("dataset before timeline") << "dataset.kind"
                                             << "timeline.interval";
  }
  void keyRankPutsWhatIsComparedFirst() {
    QFETCH(QString, before);
    QFETCH(QString, after);
    QVERIFY2(
        RunTableModel::keyRank(before.toStdString()) < RunTableModel::keyRank(after.toStdString()),
        qPrintable(before + QStringLiteral(" should come before ") + after));
  }

  void differingKeysPreferLrOverIntervals() {
    // The walkthrough's study: three runs with the learning rate, the mode and the intervals
    // differing. More runs differ in the intervals, yet train.lr and mode come first.
    test::TempStore t;
    for (int i = 0; i < 3; ++i) {
      auto spec = runSpec("r" + std::to_string(i), {2});
      spec.train.lr = i == 0 ? 1e-3 : 3e-3;                               // 2 values
      spec.mode = i == 2 ? engine::Mode::Pipeline : engine::Mode::Local;  // 2 values
      spec.eval.interval = 50 + 10 * i;                                   // 3 values
      spec.probe.interval = 20 + i;                                       // 3 values
      addRun(*t.store, spec, 0.5);
    }
    RunsWorkspace ws(t.store);
    ws.show();
    waitLoaded(ws, 3);
    QTRY_COMPARE_WITH_TIMEOUT(
        ws.model()->keyColumns(),
        (std::vector<std::string>{"train.lr", "eval.interval", "probe.interval"}), 5000);
    // The mode differs too, but the Mode column shows it: it is not a key column as well.
  }

  void longNamesKeepTheirEnd() {
    test::TempStore t;
    const std::string name = "walkgrid · train.lr=0.001, train.batch_size=64, seed 2";
    const int64_t id = addRun(*t.store, runSpec(name, {2}), 0.5);
    addRun(*t.store, runSpec("short", {2}), 0.5);
    RunsWorkspace ws(t.store);
    ws.resize(1366, 700);
    ws.show();
    waitLoaded(ws, 2);
    const QString full = QString::fromStdString(name);
    RunTableModel* model = ws.model();
    // The whole name is the cell's tooltip; the column grows to show it whole (it fits the
    // bound), so the lr and seed at its end are read without hovering.
    QCOMPARE(model->data(model->index(model->rowOf(id), RunTableModel::kName), Qt::ToolTipRole)
                 .toString(),
             full);
    // As wide as the name needs, up to the bound (then the middle elides).
    const int bound = ws.table()->fontMetrics().horizontalAdvance(QLatin1Char('x')) *
                      RunTableColumns::kNameColumnChars;
    QTRY_VERIFY2_WITH_TIMEOUT(
        ws.table()->horizontalHeader()->sectionSize(RunTableModel::kName) >=
            std::min(bound, ws.table()->fontMetrics().horizontalAdvance(full)),
        qPrintable(
            QString::number(ws.table()->horizontalHeader()->sectionSize(RunTableModel::kName))),
        5000);
    QCOMPARE(ws.table()->textElideMode(), Qt::ElideMiddle);
    // It grows only into the room the list has: the spec-key columns stay in view.
    const auto lastVisible = [&ws] {
      int last = 0;
      for (int c = 0; c < ws.model()->columnCount(); ++c)
        if (!ws.table()->isColumnHidden(c)) last = c;
      return last;
    };
    auto* header = ws.table()->horizontalHeader();
    QVERIFY(header->sectionViewportPosition(lastVisible()) < ws.table()->viewport()->width());
    // A width the user chose is kept through the list's refreshes.
    ws.table()->horizontalHeader()->resizeSection(RunTableModel::kName, 120);
    model->refreshLoadedPages();
    QTRY_VERIFY_WITH_TIMEOUT(model->isSettled(), 5000);
    QCOMPARE(ws.table()->horizontalHeader()->sectionSize(RunTableModel::kName), 120);
  }

  void longNamesLeaveTheKeyColumnsInView() {
    // The walkthrough's study at 1366 px: long names and differing keys. The Name column does
    // not push the key columns (lr, seed) out of view; its names elide their middle.
    test::TempStore t;
    for (int i = 0; i < 4; ++i) {
      auto spec = runSpec("walkgrid · train.lr=0.00" + std::to_string(i + 1) +
                              ", partition.cuts=[2,4,6], train.batch_size=32, seed " +
                              std::to_string(i % 2 + 1),
                          {2});
      spec.train.lr = 0.001 * (i + 1);
      spec.train.seed = uint64_t(i % 2 + 1);
      addRun(*t.store, spec, 0.5);
    }
    RunsWorkspace ws(t.store);
    ws.resize(1340, 600);
    ws.show();
    QVERIFY(QTest::qWaitForWindowExposed(&ws));
    waitLoaded(ws, 4);
    QTRY_COMPARE_WITH_TIMEOUT(int(ws.model()->keyColumns().size()), 2, 5000);
    auto* header = ws.table()->horizontalHeader();
    const int seed = RunTableModel::kColumnCount + 1;
    QVERIFY(!ws.table()->isColumnHidden(seed));
    QVERIFY2(header->sectionViewportPosition(seed) < ws.table()->viewport()->width(),
             qPrintable(QStringLiteral("seed column at %1, list %2 wide, name %3")
                            .arg(header->sectionViewportPosition(seed))
                            .arg(ws.table()->viewport()->width())
                            .arg(header->sectionSize(RunTableModel::kName))));
  }

  void keyColumnsFollowNameAndFitAt1366() {
    // Issue 36 walkthrough (01-runs.png): at 1366 px the differing keys were past the right
    // edge (only `mode`, again, and a clipped `t…`). Three keys and the mode differ; the key
    // columns come right after Name, whole in view, and `mode` is only the Mode column.
    test::TempStore t;
    for (int i = 0; i < 8; ++i) {
      auto spec = runSpec(
          "walkgrid · train.lr=0.00" + std::to_string(i % 2 + 1) +
              ", partition.cuts=[2,4,6], train.batch_size=" + std::to_string(32 << (i / 2 % 2)) +
              ", seed " + std::to_string(i / 4 + 1),
          {2});
      spec.train.lr = 0.001 * (i % 2 + 1);
      spec.train.batchSize = 32 << (i / 2 % 2);
      spec.train.seed = uint64_t(i / 4 + 1);
      spec.mode = i == 7 ? engine::Mode::Pipeline : engine::Mode::Local;
      addRun(*t.store, spec, 0.5, 200, i == 7 ? "pipeline" : "local");
    }
    RunsWorkspace ws(t.store);
    ws.resize(1366, 768);
    ws.show();
    QVERIFY(QTest::qWaitForWindowExposed(&ws));
    waitLoaded(ws, 8);
    QTRY_COMPARE_WITH_TIMEOUT(
        ws.model()->keyColumns(),
        (std::vector<std::string>{"train.lr", "train.seed", "train.batch_size"}), 5000);
    QApplication::processEvents();
    auto* header = ws.table()->horizontalHeader();
    QStringList shown;
    for (int v = 0; v < header->count(); ++v)
      if (!header->isSectionHidden(header->logicalIndex(v)))
        shown << ws.model()
                     ->headerData(header->logicalIndex(v), Qt::Horizontal, Qt::DisplayRole)
                     .toString();
    QCOMPARE(shown.count(QStringLiteral("mode")) + shown.count(QStringLiteral("Mode")), 1);
    for (int k = 0; k < 3; ++k) {
      const int column = RunTableModel::kColumnCount + k;
      QCOMPARE(header->visualIndex(column), header->visualIndex(RunTableModel::kName) + 1 + k);
      QVERIFY2(
          header->sectionViewportPosition(column) + header->sectionSize(column) <=
              ws.table()->viewport()->width(),
          qPrintable(QStringLiteral("%1 ends at %2 in a list %3 wide (shown: %4)")
                         .arg(shown.at(header->visualIndex(column)))
                         .arg(header->sectionViewportPosition(column) + header->sectionSize(column))
                         .arg(ws.table()->viewport()->width())
                         .arg(shown.join(QLatin1Char(' ')))));
    }
    // Then what a comparison reads, in view too: the mode and the test accuracy (they were past
    // the edge once the keys came first); date, model, stages and devices go last.
    for (const int column : {int(RunTableModel::kMode), int(RunTableModel::kAccuracy)})
      QVERIFY2(header->sectionViewportPosition(column) + header->sectionSize(column) <=
                   ws.table()->viewport()->width(),
               qPrintable(shown.join(QLatin1Char(' '))));
    QCOMPARE(header->visualIndex(RunTableModel::kDevices), header->count() - 1);
    // The names stay readable beside them (not squeezed to make room for the keys).
    QVERIFY(header->sectionSize(RunTableModel::kName) >=
            ws.table()->fontMetrics().horizontalAdvance(QLatin1Char('x')) *
                RunTableColumns::kNameLeastChars);
    // The short fixed columns are narrow: the date without year and seconds fits its column.
    QVERIFY(header->sectionSize(RunTableModel::kDate) <
            ws.table()->fontMetrics().horizontalAdvance(QStringLiteral("2026-12-01 20:44:31")));
  }

  void studyNamesStayDistinctWhenElided() {
    // Issue 36 walkthrough (21-cleared.png): a report's runs elided to four identical rows
    // "report 2026-12-…tches=1, seed 1". The items every run of the study shares are left out
    // of the shown name; the whole name is the tooltip; the elided rows read apart.
    const std::string head = "report 2026-12-06 09:31 · throughput_vs_stages: mode=local, ";
    const std::vector<std::string> cuts = {"[]", "[3]", "[1,5]", "[1,2,5]"};
    test::TempStore t;
    std::vector<int64_t> ids;
    for (const auto& c : cuts)
      ids.push_back(addRun(
          *t.store,
          runSpec(head + "partition.cuts=" + c + ", pipeline.micro_batches=1, seed 1", {2}), 0.5));
    addRun(*t.store, runSpec("nine-stage-walk", {2}), 0.5);
    RunsWorkspace ws(t.store);
    ws.resize(1366, 768);
    ws.show();
    waitLoaded(ws, 5);
    RunTableModel* model = ws.model();
    QVERIFY(ws.table()->itemDelegateForColumn(RunTableModel::kName));  // draws elideName()
    QStringList elided;
    const int width = ws.table()->horizontalHeader()->sectionSize(RunTableModel::kName) - 8;
    for (size_t i = 0; i < ids.size(); ++i) {
      const QString shown = cell(model, ids[i], RunTableModel::kName);
      QCOMPARE(shown, QStringLiteral("report 2026-12-06 09:31 · partition.cuts=%1")
                          .arg(QString::fromStdString(cuts[i])));
      QVERIFY(model->data(model->index(model->rowOf(ids[i]), RunTableModel::kName), Qt::ToolTipRole)
                  .toString()
                  .startsWith(QString::fromStdString(head)));
      elided << RunTableColumns::elideName(shown, ws.table()->fontMetrics(), width);
    }
    elided.removeDuplicates();
    QCOMPARE(elided.size(), int(ids.size()));
    // A search's tuned runs share no item: what differs (the mode) is early in the name. Its
    // end is kept, and the study part, not the middle (two rows read the same that way).
    const QFontMetrics metrics = ws.table()->fontMetrics();
    const int narrow = metrics.horizontalAdvance(QLatin1Char('x')) * 40;
    const QString local =
        QStringLiteral("walkb-search · tuned: mode=local, train.lr=0.0001813, seed 3");
    const QString backprop =
        QStringLiteral("walkb-search · tuned: mode=backprop, train.lr=0.0001813, seed 3");
    QVERIFY(metrics.horizontalAdvance(local) > narrow);
    const QString a = RunTableColumns::elideName(local, metrics, narrow);
    const QString b = RunTableColumns::elideName(backprop, metrics, narrow);
    const QString b2 = RunTableColumns::elideName(
        QString(backprop).replace(QStringLiteral("seed 3"), QStringLiteral("seed 2")), metrics,
        narrow);
    QVERIFY2(a != b && b != b2, qPrintable(a + QLatin1Char('|') + b + QLatin1Char('|') + b2));
    QVERIFY2(
        a.startsWith(QStringLiteral("walkb-search · ")) && a.endsWith(QStringLiteral("seed 3")),
        qPrintable(a));
    QVERIFY(metrics.horizontalAdvance(a) <= narrow);
    QCOMPARE(RunTableColumns::elideName(QStringLiteral("short"), metrics, narrow),
             QStringLiteral("short"));
    // A name of no study, or alone of its study, is shown whole.
    const auto alone = RunTableModel::shortNames({{1, "a · x=1, seed 1"}, {2, "b · x=1, seed 1"}});
    QVERIFY(alone.empty());
  }

  void microBatchesZeroSaysTheMUsed() {
    // Issue 36: pipeline.micro_batches showed 0 where the run used one per stage (M = K).
    test::TempStore t;
    auto spec = runSpec("pipe-default", {1, 2, 3});  // 4 stages
    spec.mode = engine::Mode::Pipeline;
    spec.pipeline.microBatches = 0;
    const int64_t zero = addRun(*t.store, spec, 0.5, 200, "pipeline");
    spec.name = "pipe-two";
    spec.pipeline.microBatches = 2;
    const int64_t two = addRun(*t.store, spec, 0.5, 200, "pipeline");
    RunsWorkspace ws(t.store);
    ws.show();
    waitLoaded(ws, 2);
    QTRY_COMPARE_WITH_TIMEOUT(ws.model()->keyColumns(),
                              (std::vector<std::string>{"pipeline.micro_batches"}), 5000);
    QCOMPARE(cell(ws.model(), zero, RunTableModel::kColumnCount), QStringLiteral("0 (M=4)"));
    QCOMPARE(cell(ws.model(), two, RunTableModel::kColumnCount), QStringLiteral("2"));
    // The selected run's settings say it too (0 is the default, so it was not listed).
    spec.pipeline.microBatches = 0;
    QVERIFY(settingsDifferingFromDefaults(spec).contains(
        QStringLiteral("pipeline.micro_batches = 0 (M=4)")));
    spec.mode = engine::Mode::Local;
    for (const QString& line : settingsDifferingFromDefaults(spec))
      QVERIFY2(!line.contains(QStringLiteral("M=")), qPrintable(line));
  }

  void selectingARunKeepsTheListHeight() {
    // Issue 36 walkthrough: the list showed 8 rows, then 5 once a run was selected (its settings
    // appeared below and took the height). The list keeps its height.
    test::TempStore t;
    std::vector<int64_t> ids;
    for (int i = 0; i < 12; ++i) {
      auto spec = runSpec("run " + std::to_string(i), {2});
      spec.train.lr = 0.001 * (i + 1);  // settings that differ from the defaults: shown
      spec.train.weightDecay = 0.01;
      ids.push_back(addRun(*t.store, spec, 0.5));
    }
    RunsWorkspace ws(t.store);
    ws.resize(1366, 640);  // what the main window gives it at 1366x768 (menu, tabs, status)
    ws.show();
    QVERIFY(QTest::qWaitForWindowExposed(&ws));
    waitLoaded(ws, 12);
    QTest::qWait(300);  // the layout settles
    const int before = ws.table()->viewport()->height();
    ws.table()->selectRow(ws.model()->rowOf(ids[3]));
    QTRY_VERIFY_WITH_TIMEOUT(ws.historyLabel()->text().contains(QStringLiteral("train.lr")), 5000);
    QTest::qWait(300);
    // Not smaller (the compare panel's least height is a few pixels less with runs shown).
    QVERIFY2(
        ws.table()->viewport()->height() >= before,
        qPrintable(
            QStringLiteral("%1 px, was %2").arg(ws.table()->viewport()->height()).arg(before)));
    ws.table()->clearSelection();
    QTRY_VERIFY_WITH_TIMEOUT(ws.historyLabel()->text().isEmpty(), 5000);
    QTest::qWait(300);
    QVERIFY2(
        ws.table()->viewport()->height() >= before,
        qPrintable(
            QStringLiteral("%1 px, was %2").arg(ws.table()->viewport()->height()).arg(before)));
  }

  void theListHoldsStillUnderThePointer() {
    // Sorted by samples/s, a live run becomes the fastest while the pointer is over the list:
    // its numbers change in place, its row stays; once the pointer leaves, it moves up.
    test::TempStore t;
    addRun(*t.store, runSpec("slow", {2}), 0.70);
    const int64_t chosen = addRun(*t.store, runSpec("chosen", {1, 3}), 0.80);
    storage::NewRun live;
    live.name = "live";
    live.mode = "local";
    live.specJson = engine::specToJson(runSpec("live", {2}));
    live.modelKind = "mlp";
    auto& writer = t.store->writer();
    const int64_t liveId = writer.createRun(live);
    writer.appendPoints(liveId, {{"samples_per_sec", -1, -1, 10, 0.1, 50.0}});
    writer.flush();
    RunsWorkspace ws(t.store);
    ws.setPollInterval(50);
    ws.setClickHold(300);
    ws.show();
    ws.table()->sortByColumn(RunTableModel::kSamplesPerSec, Qt::DescendingOrder);
    waitLoaded(ws, 3);
    RunTableModel* model = ws.model();
    const int liveRow = model->rowOf(liveId);
    QCOMPARE(liveRow, 2);  // the slowest
    ws.table()->selectRow(model->rowOf(chosen));
    QCOMPARE(ws.selectedRunIds(), std::vector<int64_t>{chosen});
    const int chosenRow = model->rowOf(chosen);

    QWidget* rows = ws.table()->viewport();
    sendTo(rows, QEvent::Enter);
    QVERIFY(model->isOrderFrozen());
    // A new run written elsewhere would add a row under the pointer: it waits too.
    storage::RunFinish finish;
    finish.status = storage::RunStatus::Completed;
    finish.samplesPerSec = 5000;
    writer.finishRun(liveId, finish);
    writer.flush();
    QTRY_COMPARE_WITH_TIMEOUT(cell(model, liveId, RunTableModel::kStatus),
                              QStringLiteral("completed"), 5000);
    QTRY_VERIFY_WITH_TIMEOUT(model->isSettled(), 5000);
    const int64_t added = addRun(*t.store, runSpec("added", {2}), 0.9);
    QTest::qWait(300);  // several polls
    QCOMPARE(model->rowOf(liveId), liveRow);
    QCOMPARE(model->rowOf(chosen), chosenRow);
    QCOMPARE(model->rowCount(), 3);
    QCOMPARE(model->rowOf(added), -1);
    QCOMPARE(ws.selectedRunIds(), std::vector<int64_t>{chosen});

    // The pointer leaves: the list takes its sorted order, the selection stays on its run.
    sendTo(rows, QEvent::Leave);
    QVERIFY(!model->isOrderFrozen());
    QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), 4, 5000);
    QTRY_VERIFY_WITH_TIMEOUT(model->isSettled() && model->rowOf(liveId) == 0, 5000);
    QCOMPARE(ws.selectedRunIds(), std::vector<int64_t>{chosen});
    const auto selected = ws.table()->selectionModel()->selectedRows();
    QCOMPARE(selected.size(), qsizetype(1));
    QCOMPARE(model->runId(selected.front().row()), chosen);

    // A click holds the order a moment even if the pointer leaves at once.
    QMouseEvent press(QEvent::MouseButtonPress, QPointF(5, 5), rows->mapToGlobal(QPointF(5, 5)),
                      Qt::LeftButton, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(rows, &press);
    sendTo(rows, QEvent::Leave);
    QVERIFY(model->isOrderFrozen());
    QTRY_VERIFY_WITH_TIMEOUT(!model->isOrderFrozen(), 2000);
  }
};

QTEST_MAIN(TestRunsList)
#include "test_runs_list.moc"
