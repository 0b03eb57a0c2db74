// The Runs workspace on a real store: listing, filtering, comparing two runs, notes and tags,
// deleting with confirmation, CSV export, runs written elsewhere appearing, opening a run's
// spec back in Design, and resuming a stopped run from its checkpoint.

#include <qcustomplot.h>
#include <QApplication>
#include <QComboBox>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QTableView>
#include <QTableWidget>
#include <QtTest>
#include <cmath>

#include "common/app_settings.h"
#include "common/fake_services.h"
#include "common/theme.h"
#include "designer/design_document.h"
#include "designer/estimate_panel.h"
#include "live/event_log.h"
#include "live/live_dashboard.h"
#include "live/plot_panel.h"
#include "live/train_workspace.h"
#include "main_window.h"
#include "run_store_fixture.h"
#include "runs/compare_panel.h"
#include "runs/run_table_model.h"
#include "runs/runs_workspace.h"
#include "stagewise/engine/metrics.h"
#include "stagewise/storage/run_reader.h"
#ifdef STAGEWISE_HAVE_RECORDER
#include "stagewise/recorder/recorder.h"
#endif

using namespace stagewise;
using namespace stagewise::ui;
using test::addRun;
using test::runSpec;

class TestRunsWorkspace : public QObject {
  Q_OBJECT

  // A checkpoint folder as the engine writes it, as far as the workbench reads it
  // (state.json; no stage files when it says 0 stages). Returns the step-N folder.
  static std::string writeCheckpoint(const QString& dir, const engine::ExperimentSpec& spec,
                                     int64_t step) {
    const QString folder = dir + QStringLiteral("/step-%1").arg(step);
    QDir().mkpath(folder);
    QFile state(folder + QStringLiteral("/state.json"));
    if (!state.open(QIODevice::WriteOnly)) return {};
    state.write(
        QByteArray::fromStdString("{\"step\": " + std::to_string(step) +
                                  ", \"total_steps\": " + std::to_string(spec.train.maxSteps) +
                                  ", \"stages\": 0, \"spec\": " + engine::specToJson(spec) + "}"));
    return folder.toStdString();
  }

  // A run stopped at `steps`, with a checkpoint record there when `checkpoint` is given.
  // `finalProbe`: the stop's own probe at its step, as the engine measures it (issue 36).
  static int64_t addStoppedRun(storage::RunStore& store, const engine::ExperimentSpec& spec,
                               const std::string& checkpoint, int64_t steps,
                               double finalProbe = std::nan(""),
                               std::vector<storage::PointInput> more = {},
                               const std::vector<storage::EventInput>& events = {}) {
    storage::NewRun run;
    run.name = spec.name;
    run.mode = "local";
    run.specJson = engine::specToJson(spec);
    run.modelKind = "mlp";
    run.totalSteps = spec.train.maxSteps;
    for (int k = 0; k < spec.stageCount(); ++k) {
      storage::StageRecord stage;
      stage.index = k;
      run.stages.push_back(stage);
    }
    auto& writer = store.writer();
    const int64_t id = writer.createRun(run);
    std::vector<storage::PointInput> points;
    for (int64_t step = 0; step < steps; ++step)
      points.push_back({"loss", spec.stageCount() - 1, -1, step, step * 0.01, 1.0});
    if (!std::isnan(finalProbe))
      points.push_back({"grad_cosine", 0, -1, steps, steps * 0.01, finalProbe});
    points.insert(points.end(), more.begin(), more.end());
    writer.appendPoints(id, std::move(points));
    for (const auto& e : events) writer.appendEvent(id, e);
    if (!checkpoint.empty()) writer.addCheckpoint(id, checkpoint, steps);
    storage::RunFinish finish;
    finish.status = storage::RunStatus::Stopped;
    finish.steps = steps;
    writer.finishRun(id, finish);
    writer.flush();
    return id;
  }

  static void selectRows(RunsWorkspace& ws, const std::vector<int64_t>& ids) {
    auto* selection = ws.table()->selectionModel();
    selection->clearSelection();
    for (int64_t id : ids) {
      const int row = ws.model()->rowOf(id);
      QVERIFY2(row >= 0, "run not loaded in the table");
      selection->select(ws.model()->index(row, 0),
                        QItemSelectionModel::Select | QItemSelectionModel::Rows);
    }
  }

  static void waitLoaded(RunsWorkspace& ws, int rows) {
    QTRY_COMPARE_WITH_TIMEOUT(ws.model()->rowCount(), rows, 5000);
    for (int r = 0; r < rows; ++r) ws.model()->data(ws.model()->index(r, 0), Qt::DisplayRole);
    QTRY_VERIFY_WITH_TIMEOUT(ws.model()->isSettled() && ws.model()->runId(rows - 1) >= 0, 5000);
  }

 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QSettings().remove(QStringLiteral("runs/overlay_x_axis"));  // the overlay's x: steps
  }
  // Each window starts as a first start: no experiment, workspace or runs kept from a test
  // before it (session restore).
  void init() {
    AppSettings::setSession({});
    ComparePanel::forgetOverlaySettings();  // the overlay's kept choices: the defaults
  }

  void listsFiltersAndSorts() {
    test::TempStore t;
    addRun(*t.store, runSpec("alpha", {2}), 0.80);
    addRun(*t.store, runSpec("beta", {1, 3}), 0.90);
    addRun(*t.store, runSpec("gamma", {2}), 0.70);
    RunsWorkspace ws(t.store);
    ws.show();
    waitLoaded(ws, 3);
    ws.table()->sortByColumn(RunTableModel::kAccuracy, Qt::DescendingOrder);
    waitLoaded(ws, 3);
    QCOMPARE(
        ws.model()->data(ws.model()->index(0, RunTableModel::kName), Qt::DisplayRole).toString(),
        QStringLiteral("beta"));
    // Issue 36 §3: names elide their middle (a study's lr and seed are at the end) and the
    // whole name is the cell's tooltip.
    QCOMPARE(ws.table()->textElideMode(), Qt::ElideMiddle);
    QCOMPARE(
        ws.model()->data(ws.model()->index(0, RunTableModel::kName), Qt::ToolTipRole).toString(),
        QStringLiteral("beta"));
    QCOMPARE(
        ws.model()->data(ws.model()->index(0, RunTableModel::kStages), Qt::DisplayRole).toInt(), 3);
    QTest::keyClicks(ws.searchEdit(), QStringLiteral("alp"));
    QTRY_COMPARE_WITH_TIMEOUT(ws.model()->rowCount(), 1, 5000);
    ws.searchEdit()->clear();
    QTRY_COMPARE_WITH_TIMEOUT(ws.model()->rowCount(), 3, 5000);
    ws.statusCombo()->setCurrentIndex(ws.statusCombo()->findData(QStringLiteral("failed")));
    QTRY_COMPARE_WITH_TIMEOUT(ws.model()->rowCount(), 0, 5000);
  }

  void selectionFollowsTheRunThroughARefresh() {
    // Sorted by samples/s, a run training elsewhere finishes fast and moves to the top: the
    // highlight, the panels and every action stay on the run the user chose.
    test::TempStore t;
    addRun(*t.store, runSpec("slow", {2}), 0.70);                              // 1200 samples/s
    const int64_t chosen = addRun(*t.store, runSpec("chosen", {1, 3}), 0.80);  // 1300
    storage::NewRun live;  // started by another process, still running
    live.name = "live";
    live.mode = "local";
    live.specJson = engine::specToJson(runSpec("live", {2}));
    live.modelKind = "mlp";
    auto& writer = t.store->writer();
    const int64_t liveId = writer.createRun(live);
    writer.appendPoints(liveId, {{"samples_per_sec", -1, -1, 10, 0.1, 50.0}});
    writer.flush();
    RunsWorkspace ws(t.store);
    ws.setPollInterval(100);
    ws.show();
    ws.table()->sortByColumn(RunTableModel::kSamplesPerSec, Qt::DescendingOrder);
    waitLoaded(ws, 3);
    // A running run shows its latest measured samples/s, not "—".
    const int liveRow = ws.model()->rowOf(liveId);
    QCOMPARE(ws.model()
                 ->data(ws.model()->index(liveRow, RunTableModel::kSamplesPerSec), Qt::DisplayRole)
                 .toString(),
             QStringLiteral("50"));
    selectRows(ws, {chosen});
    QCOMPARE(ws.selectedRunIds(), std::vector<int64_t>{chosen});
    const int rowBefore = ws.model()->rowOf(chosen);
    QTest::keyClicks(ws.notesEdit(), QStringLiteral("typed while shown"));

    storage::RunFinish finish;
    finish.status = storage::RunStatus::Completed;
    finish.samplesPerSec = 5000;  // now the fastest: moves to the top, the chosen run down
    writer.finishRun(liveId, finish);
    writer.flush();
    // The poll re-reads the loaded page: the rows move, the highlight must follow the id.
    QTRY_VERIFY2_WITH_TIMEOUT(
        ws.model()->rowOf(liveId) == 0 && ws.model()->rowOf(chosen) != rowBefore,
        qPrintable(QStringLiteral("live at %1, chosen at %2 (was %3)")
                       .arg(ws.model()->rowOf(liveId))
                       .arg(ws.model()->rowOf(chosen))
                       .arg(rowBefore)),
        5000);
    QTRY_VERIFY_WITH_TIMEOUT(ws.model()->isSettled(), 5000);
    QCOMPARE(ws.selectedRunIds(), std::vector<int64_t>{chosen});
    const auto rows = ws.table()->selectionModel()->selectedRows();
    QCOMPARE(rows.size(), qsizetype(1));
    QCOMPARE(ws.model()->runId(rows.front().row()), chosen);
    QCOMPARE(ws.notesEdit()->toPlainText(), QStringLiteral("typed while shown"));

    // Selecting another run saves the note to the run it was typed for, with a word.
    QSignalSpy messages(&ws, &RunsWorkspace::message);
    selectRows(ws, {liveId});
    QCOMPARE(ws.selectedRunIds(), std::vector<int64_t>{liveId});
    QTRY_VERIFY_WITH_TIMEOUT(storage::RunReader(*t.store).run(chosen)->notes == "typed while shown",
                             5000);
    QVERIFY(storage::RunReader(*t.store).run(liveId)->notes.empty());
    const auto said = [&] {
      for (const auto& m : messages)
        if (m.at(0).toString().contains(QStringLiteral("#%1").arg(chosen))) return true;
      return false;
    };
    QTRY_VERIFY_WITH_TIMEOUT(said(), 5000);

    // Delete acts on the run shown, and its confirmation names it.
    selectRows(ws, {chosen});
    QString asked;
    QTimer::singleShot(0, [&] {
      QTRY_VERIFY(QApplication::activeModalWidget());
      auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
      QVERIFY(box);
      asked = box->informativeText();
      box->button(QMessageBox::Yes)->click();
    });
    ws.deleteSelected(true);
    QVERIFY2(asked.contains(QStringLiteral("#%1").arg(chosen)) &&
                 asked.contains(QStringLiteral("chosen")),
             qPrintable(asked));
    QTRY_VERIFY_WITH_TIMEOUT(!storage::RunReader(*t.store).run(chosen).has_value(), 5000);
    QVERIFY(storage::RunReader(*t.store).run(liveId).has_value());
  }

  void notesTypedBeforeQuittingAreSaved() {
    test::TempStore t;
    const int64_t id = addRun(*t.store, runSpec("noted", {2}), 0.80);
    {
      MainWindow window(fakeEngineServices(), t.store);
      window.show();
      RunsWorkspace& ws = *window.runsWorkspace();
      waitLoaded(ws, 1);
      selectRows(ws, {id});
      QTest::keyClicks(ws.notesEdit(), QStringLiteral("typed, then quit"));
      QVERIFY(ws.hasUnsavedMeta());
      QVERIFY(window.close());
    }
    QCOMPARE(storage::RunReader(*t.store).run(id)->notes, std::string("typed, then quit"));
  }

  void filterMatchesModeStatusAndId() {
    test::TempStore t;
    const int64_t a = addRun(*t.store, runSpec("alpha", {2}), 0.80);
    addRun(*t.store, runSpec("beta", {2}), 0.90, 200, "backprop");
    RunsWorkspace ws(t.store);
    ws.show();
    waitLoaded(ws, 2);
    QTest::keyClicks(ws.searchEdit(), QStringLiteral("backprop"));
    QTRY_COMPARE_WITH_TIMEOUT(ws.model()->rowCount(), 1, 5000);
    ws.searchEdit()->clear();
    QTest::keyClicks(ws.searchEdit(), QStringLiteral("completed"));
    QTRY_COMPARE_WITH_TIMEOUT(ws.model()->rowCount(), 2, 5000);
    ws.searchEdit()->clear();
    QTest::keyClicks(ws.searchEdit(), QStringLiteral("#%1").arg(a));
    QTRY_COMPARE_WITH_TIMEOUT(ws.model()->rowCount(), 1, 5000);
    waitLoaded(ws, 1);
    QCOMPARE(ws.model()->runId(0), a);
    QCOMPARE(
        ws.model()->data(ws.model()->index(0, RunTableModel::kId), Qt::DisplayRole).toLongLong(),
        a);
    // Dates are short in the list (issue 36: room for the key columns at 1366 px); the tooltip
    // says the year and the second.
    const QString date =
        ws.model()->data(ws.model()->index(0, RunTableModel::kDate), Qt::DisplayRole).toString();
    QVERIFY2(
        QRegularExpression(QStringLiteral("^\\d\\d-\\d\\d \\d\\d:\\d\\d$")).match(date).hasMatch(),
        qPrintable(date));
    const QString whole =
        ws.model()->data(ws.model()->index(0, RunTableModel::kDate), Qt::ToolTipRole).toString();
    QVERIFY2(QRegularExpression(QStringLiteral("^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d$"))
                 .match(whole)
                 .hasMatch(),
             qPrintable(whole));
  }

  void overlaysTheCosineOfOneLayer() {
    // Layer 3 (fc3, index 2) is in stage 2 of the first run and in stage 3 of the second.
    test::TempStore t;
    const int64_t a = addRun(*t.store, runSpec("two-stage", {2}), 0.80, 200, "local", true);
    const int64_t b = addRun(*t.store, runSpec("three-stage", {1, 2}), 0.90, 200, "local", true);
    RunsWorkspace ws(t.store);
    ws.resize(1300, 900);
    ws.show();
    waitLoaded(ws, 2);
    ComparePanel* compare = ws.comparePanel();
    QVERIFY(!compare->selectMetric("grad_cosine", -1, 2));  // not listed before runs have it
    selectRows(ws, {a, b});
    QTRY_VERIFY_WITH_TIMEOUT(compare->isLoaded() && compare->runs().size() == 2, 5000);
    QStringList items;
    for (int i = 0; i < compare->metricCombo()->count(); ++i)
      items << compare->metricCombo()->itemText(i);
    QVERIFY2(items.contains(QStringLiteral("Gradient cosine · layer 3 (fc3)")) &&
                 items.contains(QStringLiteral("Gradient cosine · stage 3")) &&
                 items.contains(QStringLiteral("Gradient cosine · layer 5 (classifier)")),
             qPrintable(items.join(QLatin1Char('|'))));
    // One order: the cosines of stages 1, 2, 3 together, then the layers from 1.
    const int s1 = int(items.indexOf(QStringLiteral("Gradient cosine · stage 1")));
    QCOMPARE(items.indexOf(QStringLiteral("Gradient cosine · stage 2")), s1 + 1);
    QCOMPARE(items.indexOf(QStringLiteral("Gradient cosine · stage 3")), s1 + 2);
    QCOMPARE(items.indexOf(QStringLiteral("Gradient cosine · layer 1 (fc1)")), s1 + 3);
    QVERIFY(items.indexOf(QStringLiteral("Samples/s")) < s1);
    QVERIFY(compare->selectMetric("grad_cosine", -1, 2));
    QTRY_VERIFY_WITH_TIMEOUT(compare->isLoaded(), 5000);
    QCOMPARE(compare->metricCombo()->currentText(),
             QStringLiteral("Gradient cosine · layer 3 (fc3)"));
    QCustomPlot* overlay = compare->overlayPlot();
    QCOMPARE(overlay->graphCount(), 2);
    for (int g = 0; g < 2; ++g) {
      QVERIFY2(overlay->graph(g)->data()->size() >= 10,
               qPrintable(QString::number(overlay->graph(g)->data()->size())));
      // The fixture writes 0.3 + 0.1 * layer for every layer's cosine.
      QCOMPARE(overlay->graph(g)->data()->at(0)->value, 0.5);
    }
    // Choosing one run keeps the per-layer choice (and the list) in place.
    selectRows(ws, {b});
    QTRY_VERIFY_WITH_TIMEOUT(compare->isLoaded() && compare->runs().size() == 1, 5000);
    QCOMPARE(compare->metricCombo()->currentText(),
             QStringLiteral("Gradient cosine · layer 3 (fc3)"));
    QCOMPARE(overlay->graphCount(), 1);
    QVERIFY(overlay->graph(0)->data()->size() >= 10);
  }

  void comparesTwoRuns() {
    test::TempStore t;
    const int64_t a = addRun(*t.store, runSpec("two-stage", {2}), 0.80);
    const int64_t b = addRun(*t.store, runSpec("three-stage", {1, 3}), 0.90);
    addRun(*t.store, runSpec("other", {2}), 0.70);
    RunsWorkspace ws(t.store);
    ws.resize(1300, 900);
    ws.show();
    waitLoaded(ws, 3);
    QSignalSpy loaded(ws.comparePanel(), &ComparePanel::loaded);
    selectRows(ws, {a, b});
    QTRY_VERIFY_WITH_TIMEOUT(ws.comparePanel()->isLoaded() && loaded.count() > 0, 5000);
    QCOMPARE(ws.comparePanel()->runs(), std::vector<int64_t>({a, b}));
    QCustomPlot* overlay = ws.comparePanel()->overlayPlot();
    QCOMPARE(overlay->graphCount(), 2);
    QVERIFY(overlay->graph(0)->data()->size() > 50);
    QVERIFY(overlay->graph(1)->data()->size() > 50);
    QCOMPARE(ws.comparePanel()->summaryPlot()->plottableCount(), 2);
    // The spec keys that differ: the cut and the name, nothing else.
    QTableWidget* diff = ws.comparePanel()->diffTable();
    QStringList keys;
    for (int r = 0; r < diff->rowCount(); ++r) keys << diff->item(r, 0)->text();
    QVERIFY2(keys.contains(QStringLiteral("partition.cuts")),
             qPrintable(keys.join(QLatin1Char(','))));
    QVERIFY(keys.contains(QStringLiteral("name")));
    QCOMPARE(keys.size(), 2);
    // Every header ("#2 three-stage") is wide enough to read.
    for (int c = 0; c < diff->columnCount(); ++c) {
      const QString text = diff->horizontalHeaderItem(c)->text();
      QVERIFY2(diff->horizontalHeader()->sectionSize(c) >=
                   diff->horizontalHeader()->fontMetrics().horizontalAdvance(text),
               qPrintable(text));
    }
    // Wall-time alignment reloads the overlay.
    ws.comparePanel()->alignCombo()->setCurrentIndex(1);
    QTRY_VERIFY_WITH_TIMEOUT(ws.comparePanel()->isLoaded(), 5000);
    QVERIFY(overlay->xAxis->range().upper < 10);  // seconds, not steps
    // The x axis is kept for next time: back to steps for the tests that follow.
    ws.comparePanel()->alignCombo()->setCurrentIndex(ComparePanel::kXStep);
    QTRY_VERIFY_WITH_TIMEOUT(ws.comparePanel()->isLoaded(), 5000);
  }

  void sparseOverlaysArePointsWithMargins() {
    // Test accuracy at 4 evaluations: drawn as its 4 points, marked and joined, not a staircase
    // held across the grid; the axes leave room around the values; one run of one point shows.
    test::TempStore t;
    const int64_t a = addRun(*t.store, runSpec("a", {2}), 0.80);
    const int64_t b = addRun(*t.store, runSpec("b", {2}), 0.90);
    const int64_t one = addRun(*t.store, runSpec("one-eval", {2}), 0.60, 50);  // 1 evaluation
    RunsWorkspace ws(t.store);
    ws.resize(1300, 900);
    ws.show();
    waitLoaded(ws, 3);
    ComparePanel* compare = ws.comparePanel();
    QVERIFY(compare->selectMetric("test_accuracy", -1));
    selectRows(ws, {a, b});
    QTRY_VERIFY_WITH_TIMEOUT(compare->isLoaded() && compare->runs().size() == 2, 5000);
    QCustomPlot* overlay = compare->overlayPlot();
    QCOMPARE(overlay->graphCount(), 2);
    double lo = 1e9, hi = -1e9;
    for (int g = 0; g < 2; ++g) {
      QCOMPARE(overlay->graph(g)->data()->size(), 4);  // steps 49, 99, 149, 199
      QVERIFY(overlay->graph(g)->scatterStyle().shape() != QCPScatterStyle::ssNone);
      QVERIFY(overlay->graph(g)->lineStyle() == QCPGraph::lsLine);
      for (auto it = overlay->graph(g)->data()->constBegin();
           it != overlay->graph(g)->data()->constEnd(); ++it)
        lo = std::min(lo, it->value), hi = std::max(hi, it->value);
    }
    QVERIFY(overlay->yAxis->range().lower < lo && overlay->yAxis->range().upper > hi);
    QVERIFY(overlay->xAxis->range().lower < 49 && overlay->xAxis->range().upper > 199);
    QVERIFY(overlay->height() >= 200);  // room to read it
    selectRows(ws, {one});
    QTRY_VERIFY_WITH_TIMEOUT(compare->isLoaded() && compare->runs().size() == 1, 5000);
    QCOMPARE(overlay->graph(0)->data()->size(), 1);
    const double v = overlay->graph(0)->data()->constBegin()->value;
    const double x = overlay->graph(0)->data()->constBegin()->key;
    QVERIFY(overlay->yAxis->range().lower < v && overlay->yAxis->range().upper > v);
    QVERIFY(overlay->xAxis->range().lower < x && overlay->xAxis->range().upper > x);
    // Enlarge gives it the panel.
    const int before = overlay->height();
    compare->setOverlayEnlarged(true);
    QTRY_VERIFY(overlay->height() > before);
  }

  void comparePlotsFollowTheTheme() {
    test::TempStore t;
    RunsWorkspace ws(t.store);
    ws.show();
    QCustomPlot* overlay = ws.comparePanel()->overlayPlot();
    applyTheme(*qApp, Theme::Dark);
    QApplication::processEvents();
    QCOMPARE(overlay->xAxis->tickLabelColor(), QApplication::palette().color(QPalette::Text));
    QVERIFY(overlay->xAxis->tickLabelColor().lightness() > 128);
    DesignDocument doc{EngineDescription{}};
    EstimatePanel estimate(&doc);
    estimate.show();
    applyTheme(*qApp, Theme::Light);
    QApplication::processEvents();
    QVERIFY(overlay->xAxis->tickLabelColor().lightness() < 128);
    QVERIFY(estimate.plot()->yAxis->tickLabelColor().lightness() < 128);
    applyTheme(*qApp, Theme::Dark);
    QApplication::processEvents();
    QVERIFY(estimate.plot()->yAxis->tickLabelColor().lightness() > 128);
    applyTheme(*qApp, Theme::Light);
  }

  void aShownRunThatCompletesRedrawsItsOverlay() {
    // Issue 36 §1.2: a run selected while it trains elsewhere; its last points and the end
    // arrive: the overlay reaches its last step without selecting it again.
    test::TempStore t;
    storage::NewRun live;
    live.name = "live";
    live.mode = "local";
    live.specJson = engine::specToJson(runSpec("live", {2}));
    live.modelKind = "mlp";
    auto& writer = t.store->writer();
    const int64_t id = writer.createRun(live);
    std::vector<storage::PointInput> first;
    for (int step = 0; step < 100; ++step) first.push_back({"loss", 0, -1, step, step * 0.01, 1.0});
    writer.appendPoints(id, std::move(first));
    writer.flush();
    RunsWorkspace ws(t.store);
    ws.setPollInterval(100);
    ws.show();
    waitLoaded(ws, 1);
    ComparePanel* compare = ws.comparePanel();
    QVERIFY(compare->selectMetric(engine::series::kLoss, 0));
    selectRows(ws, {id});
    QTRY_VERIFY_WITH_TIMEOUT(compare->isLoaded() && compare->overlayPlot()->graphCount() == 1,
                             5000);
    const auto lastKey = [&] {
      const auto* g = compare->overlayPlot()->graph(0);
      return g->data()->isEmpty() ? -1.0 : (g->data()->constEnd() - 1)->key;
    };
    QCOMPARE(lastKey(), 99.0);
    std::vector<storage::PointInput> rest;
    for (int step = 100; step < 300; ++step)
      rest.push_back({"loss", 0, -1, step, step * 0.01, 0.5});
    writer.appendPoints(id, std::move(rest));
    storage::RunFinish finish;
    finish.status = storage::RunStatus::Completed;
    finish.steps = 300;
    writer.finishRun(id, finish);
    writer.flush();
    QTRY_COMPARE_WITH_TIMEOUT(lastKey(), 299.0, 5000);
  }

  void anExternalTagChangeSurvivesANotesEdit() {
    // Issue 36 §1.3: tags changed by `stagewise-cli runs tag` (another connection) while the run
    // is shown reach the editor; editing the notes writes the notes only; a field changed
    // outside since it was shown and edited here too is the user's choice, never overwritten
    // silently.
    test::TempStore t;
    const int64_t a = addRun(*t.store, runSpec("tagged", {2}), 0.80);
    const int64_t b = addRun(*t.store, runSpec("other", {2}), 0.85);
    t.store->setTags(a, {"old"});
    RunsWorkspace ws(t.store);
    ws.show();
    waitLoaded(ws, 2);
    std::vector<std::pair<QString, QString>> asked;  // (field, stored value shown to the user)
    bool keepMine = false;
    ws.setConflictChooser([&](const QString& field, const QString& stored, const QString&) {
      asked.emplace_back(field, stored);
      return keepMine;
    });
    selectRows(ws, {a});
    QCOMPARE(ws.tagsEdit()->text(), QStringLiteral("old"));
    {
      storage::RunStore cli(t.path());  // as the CLI would, through its own connection
      cli.setTags(a, {"from-cli"});
      cli.writer().flush();
    }
    QTRY_COMPARE_WITH_TIMEOUT(ws.tagsEdit()->text(), QStringLiteral("from-cli"), 8000);
    QTest::keyClicks(ws.notesEdit(), QStringLiteral("a note"));
    selectRows(ws, {b});  // moving on saves the edited notes
    ws.executor()->waitIdle();
    storage::RunReader reader(*t.store);
    QTRY_COMPARE_WITH_TIMEOUT(reader.run(a)->notes, std::string("a note"), 5000);
    QCOMPARE(reader.run(a)->tags, std::vector<std::string>{"from-cli"});
    QVERIFY(asked.empty());

    // Selected again at once (before the table's pages are re-read: CI once showed the page's
    // old tags here), it shows what the store holds.
    selectRows(ws, {a});
    QCOMPARE(ws.tagsEdit()->text(), QStringLiteral("from-cli"));
    QCOMPARE(ws.notesEdit()->toPlainText(), QStringLiteral("a note"));
    // Both sides change the tags: the user is asked; keeping the stored ones shows them.
    ws.tagsEdit()->setText(QStringLiteral("mine"));
    Q_EMIT ws.tagsEdit()->textEdited(ws.tagsEdit()->text());
    t.store->setTags(a, {"cli-again"});
    QTest::mouseClick(ws.saveMetaButton(), Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(int(asked.size()), 1, 5000);
    QCOMPARE(asked[0].first, QStringLiteral("tags"));
    QCOMPARE(asked[0].second, QStringLiteral("cli-again"));
    ws.executor()->waitIdle();
    QCOMPARE(reader.run(a)->tags, std::vector<std::string>{"cli-again"});
    QTRY_COMPARE_WITH_TIMEOUT(ws.tagsEdit()->text(), QStringLiteral("cli-again"), 5000);
    QCOMPARE(reader.run(a)->notes, std::string("a note"));  // not edited: untouched
    // The same, choosing mine.
    keepMine = true;
    ws.tagsEdit()->setText(QStringLiteral("mine"));
    Q_EMIT ws.tagsEdit()->textEdited(ws.tagsEdit()->text());
    t.store->setTags(a, {"cli-third"});
    QTest::mouseClick(ws.saveMetaButton(), Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(int(asked.size()), 2, 5000);
    QTRY_COMPARE_WITH_TIMEOUT(reader.run(a)->tags, std::vector<std::string>{"mine"}, 5000);
  }

  void notesTagsDeleteAndExport() {
    test::TempStore t;
    const int64_t a = addRun(*t.store, runSpec("keep", {2}), 0.80);
    const int64_t b = addRun(*t.store, runSpec("drop", {2}), 0.85);
    RunsWorkspace ws(t.store);
    ws.show();
    waitLoaded(ws, 2);
    selectRows(ws, {a});
    QVERIFY(ws.saveMetaButton()->isEnabled());
    ws.tagsEdit()->setText(QStringLiteral("baseline, fmnist"));
    ws.notesEdit()->setPlainText(QStringLiteral("first try"));
    QTest::mouseClick(ws.saveMetaButton(), Qt::LeftButton);
    ws.executor()->waitIdle();
    storage::RunReader reader(*t.store);
    QTRY_COMPARE_WITH_TIMEOUT(reader.run(a)->tags, std::vector<std::string>({"baseline", "fmnist"}),
                              5000);
    QCOMPARE(reader.run(a)->notes, std::string("first try"));
    // The tag is searchable.
    ws.searchEdit()->setText(QStringLiteral("fmnist"));
    QTRY_COMPARE_WITH_TIMEOUT(ws.model()->rowCount(), 1, 5000);
    ws.searchEdit()->clear();
    waitLoaded(ws, 2);

    const QString csv = QDir::temp().filePath(QStringLiteral("stagewise-test-export.csv"));
    QFile::remove(csv);
    selectRows(ws, {a});
    ws.exportCsv(csv);
    ws.executor()->waitIdle();
    QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(csv), 5000);
    QFile file(csv);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QStringList lines =
        QString::fromUtf8(file.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QVERIFY(lines.first().startsWith(QStringLiteral("run_id,")));
    QCOMPARE(lines.size(), 1 + 200 + 4);  // header, loss points, test accuracy points
    QFile::remove(csv);

    // Delete asks first; answering Yes deletes.
    selectRows(ws, {b});
    QTimer::singleShot(200, [] {
      for (QWidget* w : QApplication::topLevelWidgets())
        if (auto* box = qobject_cast<QMessageBox*>(w)) box->button(QMessageBox::Yes)->click();
    });
    QTest::mouseClick(ws.deleteButton(), Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(ws.model()->rowCount(), 1, 5000);
    QVERIFY(!reader.run(b).has_value());
    QVERIFY(reader.run(a).has_value());
  }

  void runsWrittenElsewhereAppear() {
    test::TempStore t;
    addRun(*t.store, runSpec("first", {2}), 0.8);
    RunsWorkspace ws(t.store);
    ws.setPollInterval(100);
    waitLoaded(ws, 1);
    // Another process: its own store object, connection and writer on the same file.
    storage::RunStore other(t.path());
    addRun(other, runSpec("from-elsewhere", {1}), 0.9);
    QTRY_COMPARE_WITH_TIMEOUT(ws.model()->rowCount(), 2, 5000);
  }

  void tenThousandRunsScrollWithoutBlocking() {
    test::TempStore t;
    {
      auto& writer = t.store->writer();
      const std::string spec = engine::specToJson(runSpec("bulk", {2}));
      for (int i = 0; i < 10000; ++i) {
        storage::NewRun run;
        run.name = "bulk " + std::to_string(i);
        run.mode = i % 3 ? "local" : "backprop";
        run.specJson = spec;
        run.modelKind = "mlp";
        const int64_t id = writer.createRun(run);
        storage::RunFinish finish;
        finish.testAccuracy = (i % 997) / 997.0;
        writer.finishRun(id, finish);
      }
      writer.flush();
    }
    RunsWorkspace ws(t.store);
    ws.resize(1200, 800);
    ws.show();
    QTRY_COMPARE_WITH_TIMEOUT(ws.model()->rowCount(), 10000, 10000);
    QTableView* table = ws.table();
    // Painting rows whose page has not arrived yet never waits for the store.
    double worstMs = 0;
    for (int step = 0; step <= 10; ++step) {
      table->verticalScrollBar()->setValue(table->verticalScrollBar()->maximum() * step / 10);
      QElapsedTimer timer;
      timer.start();
      table->viewport()->repaint();
      worstMs = std::max(worstMs, timer.nsecsElapsed() / 1e6);
    }
    QVERIFY2(worstMs < 100, qPrintable(QStringLiteral("a repaint took %1 ms").arg(worstMs)));
    // The pages that were looked at arrive; the others are never loaded.
    QTRY_VERIFY_WITH_TIMEOUT(ws.model()->runId(9999) >= 0, 5000);
    QVERIFY2(ws.model()->loadedPageCount() <= 20,
             qPrintable(QString::number(ws.model()->loadedPageCount())));
    // Sorting 10,000 runs happens in SQL, off the UI thread.
    ws.table()->sortByColumn(RunTableModel::kAccuracy, Qt::AscendingOrder);
    table->scrollToTop();
    QTRY_VERIFY_WITH_TIMEOUT(ws.model()->isSettled() && ws.model()->runId(0) >= 0, 5000);
    QVERIFY(ws.model()->record(0)->testAccuracy.value_or(1) == 0.0);
  }

#ifdef STAGEWISE_HAVE_RECORDER
  void aFailedRunIsRecordedAndListed() {
    test::TempStore t;
    EngineServices services = fakeEngineServices();
    auto store = t.store;
    services.createRecorder =
        [store](RecordRequest request) -> std::unique_ptr<engine::RunObserver> {
      recorder::RecorderOptions options;
      options.tags = request.tags;
      return std::make_unique<recorder::Recorder>(*store, options);
    };
    MainWindow window(services, t.store);
    window.runsWorkspace()->setPollInterval(100);
    auto spec = runSpec("will-fail", {1, 2});
    spec.train.maxSteps = 300;
    spec.debug.failAtStep = 40;
    spec.debug.stage = 2;
    window.document()->load(spec);
    QSignalSpy finished(window.trainWorkspace(), &TrainWorkspace::runFinished);
    window.startRun();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 10000);
    // The workbench recorded it as failed, naming the stage; the Runs table shows it.
    RunsWorkspace* ws = window.runsWorkspace();
    waitLoaded(*ws, 1);
    QCOMPARE(ws->model()
                 ->data(ws->model()->index(0, RunTableModel::kStatus), Qt::DisplayRole)
                 .toString(),
             QStringLiteral("failed"));
    storage::RunReader reader(*t.store);
    const auto run = reader.run(ws->model()->runId(0));
    QVERIFY(run.has_value());
    QCOMPARE(run->failedStage.value_or(-1), 2);
    QVERIFY2(run->error.find("stage 2") != std::string::npos, run->error.c_str());
    QVERIFY(reader.loadSeries(run->id, {"loss", 0, -1}).size() >= 30);
  }
#endif

#ifdef STAGEWISE_HAVE_RECORDER
  void runAgainReplaysTheRecordedChanges() {
    // A run that moved its cut at step 40 and changed S1's learning rate at step 60 (made by
    // the replay mechanism itself, so the steps are known), recorded into the store.
    test::TempStore t;
    EngineServices services = fakeEngineServices();
    auto store = t.store;
    services.createRecorder =
        [store](RecordRequest request) -> std::unique_ptr<engine::RunObserver> {
      recorder::RecorderOptions options;
      options.tags = request.tags;
      return std::make_unique<recorder::Recorder>(*store, options);
    };
    MainWindow window(services, t.store);
    window.show();
    RunsWorkspace* ws = window.runsWorkspace();
    ws->setPollInterval(100);
    auto spec = runSpec("steered", {1, 3});
    spec.train.maxSteps = 120;
    auto change = [](int64_t step, const char* key, const char* value) {
      engine::RunChange c;
      c.step = step;
      c.key = key;
      c.value = value;
      return c;
    };
    QSignalSpy finished(window.trainWorkspace(), &TrainWorkspace::runFinished);
    QVERIFY(window.trainWorkspace()->replayRun(
        spec, {change(40, "partition.cuts", "[2]"), change(60, "stages.0.lr_scale", "0.5")},
        QStringLiteral("steered")));
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 10000);
    window.showWorkspace(MainWindow::kRuns);
    waitLoaded(*ws, 1);
    const int64_t first = ws->model()->runId(0);

    // The details show the change history and the partition history.
    selectRows(*ws, {first});
    QVERIFY(ws->historyLabel()->isVisible());
    QTRY_VERIFY_WITH_TIMEOUT(!ws->historyLabel()->text().isEmpty(), 5000);
    const QString history = ws->historyLabel()->text();
    QVERIFY2(history.contains(QStringLiteral("step 40: cuts [1,3] → [2], training paused")),
             qPrintable(history));
    QVERIFY2(history.contains(QStringLiteral("step 60: S1 lr_scale = 0.5")), qPrintable(history));
    QVERIFY2(history.contains(QStringLiteral("from step 0: cuts [1,3]")), qPrintable(history));
    QVERIFY2(history.contains(QStringLiteral("from step 40: S1 layers 1–2 · S2 layers 3–5")),
             qPrintable(history));
    // Issue 36 §3: a selected run shows its settings (those not at the format's defaults).
    QVERIFY2(history.contains(QStringLiteral("train.max_steps = 120")), qPrintable(history));
    QVERIFY2(history.contains(QStringLiteral("partition.cuts = [1,3]")), qPrintable(history));
    QVERIFY2(!history.contains(QStringLiteral("train.optimizer")), qPrintable(history));

    // Run again: a new record with the same changes at the same steps.
    QVERIFY(ws->runAgainButton()->isEnabled());
    QTest::mouseClick(ws->runAgainButton(), Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(window.currentWorkspace(), MainWindow::kTrain, 5000);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, 10000);
    storage::RunReader reader(*t.store);
    QCOMPARE(reader.countRuns(), int64_t(2));
    std::vector<std::string> applied[2];
    int i = 0;
    for (const int64_t id : {first, first + 1}) {
      for (const auto& e : reader.events(id))
        if (e.kind == "info" && engine::changeFromEvent(e.message))
          applied[i].push_back(e.message.substr(0, e.message.find(" (")));
      ++i;
    }
    QCOMPARE(applied[0].size(), size_t(2));
    QCOMPARE(applied[1], applied[0]);
    // The stored stages are the end's partition (two stages, layers 0-1 and 2-4, with their
    // parameters), and the run list counts them; the start's cuts are in the spec.
    const auto stages = reader.stages(first);
    QCOMPARE(stages.size(), size_t(2));
    QCOMPARE(stages[0].firstLayer, 0);
    QCOMPARE(stages[0].lastLayer, 1);
    QCOMPARE(stages[1].firstLayer, 2);
    QCOMPARE(stages[1].lastLayer, 4);
    QVERIFY(stages[0].params > 0 && stages[1].params > 0);
    QCOMPARE(stages[1].auxHead, std::string("classifier"));
    QCOMPARE(reader.run(first)->stageCount, 2);
    QCOMPARE(applied[1][0], std::string("repartition at step 40: partition.cuts=[2]"));
  }

  void resumesAStoppedRunFromItsCheckpoint() {
    test::TempStore t;
    QTemporaryDir checkpoints;
    auto spec = runSpec("resumable", {2});
    spec.train.maxSteps = 300;
    const std::string folder =
        writeCheckpoint(checkpoints.filePath(QStringLiteral("a")), spec, 120);
    QVERIFY(!folder.empty());
    // Before the stop: a change at step 60 and periodic test points; the stop's evaluation on
    // the whole test set (0.8646) is the test series' last point, at the stop's step.
    const int64_t stopped =
        addStoppedRun(*t.store, spec, folder, 120, 0.4242,
                      {{"test_accuracy", -1, -1, 40, 0.4, 0.5},
                       {"test_accuracy", -1, -1, 80, 0.8, 0.6},
                       {"test_accuracy", -1, -1, 120, 1.2, 0.8646}},
                      {{"info", 0.6, 0, "change at step 60: stages.0.delay_ms=20"},
                       {"stopped", 1.2, -1, "stopped after 120 steps"}});
    const int64_t completed = addRun(*t.store, runSpec("finished", {2}), 0.8);
    const int64_t bare = addStoppedRun(*t.store, runSpec("no-checkpoint", {2}), {}, 50);
    auto other = runSpec("other-resumable", {1, 3});
    other.train.maxSteps = 200;
    const std::string otherFolder =
        writeCheckpoint(checkpoints.filePath(QStringLiteral("b")), other, 80);
    const int64_t second = addStoppedRun(*t.store, other, otherFolder, 80);

    // The fake engine has no checkpoints: the resume factory notes where it was asked to
    // continue from and trains a fake run, so the test sees the workbench's side of resuming.
    EngineServices services = fakeEngineServices();
    auto resumedFrom = std::make_shared<std::vector<std::string>>();
    services.resumeRun = [create = services.createRun, resumedFrom](const engine::ExperimentSpec& s,
                                                                    engine::RunObserver* observer,
                                                                    const std::string& checkpoint) {
      resumedFrom->push_back(checkpoint);
      return create(s, observer);
    };
    auto store = t.store;
    services.createRecorder =
        [store](RecordRequest request) -> std::unique_ptr<engine::RunObserver> {
      recorder::RecorderOptions options;
      options.resumeRunId = request.continueRunId;
      return std::make_unique<recorder::Recorder>(*store, options);
    };
    MainWindow window(services, t.store);
    // The legend names its series in full at the walkthrough's width (Design no longer widens
    // the window past the offscreen screen's 800 px to 1273).
    window.resize(1366, 740);
    window.show();
    window.showWorkspace(MainWindow::kRuns);
    RunsWorkspace* ws = window.runsWorkspace();
    waitLoaded(*ws, 4);
    QPushButton* resume = ws->resumeButton();
    QVERIFY(resume->isVisible());

    selectRows(*ws, {completed});
    QTRY_VERIFY_WITH_TIMEOUT(resume->toolTip().contains(QStringLiteral("completed")), 5000);
    QVERIFY(!resume->isEnabled());
    selectRows(*ws, {bare});
    QTRY_VERIFY_WITH_TIMEOUT(resume->toolTip().contains(QStringLiteral("no checkpoint")), 5000);
    QVERIFY(!resume->isEnabled());
    selectRows(*ws, {stopped});
    QTRY_VERIFY_WITH_TIMEOUT(resume->isEnabled(), 5000);
    QVERIFY2(resume->toolTip().contains(QStringLiteral("step 120")), qPrintable(resume->toolTip()));

    QSignalSpy finished(window.trainWorkspace(), &TrainWorkspace::runFinished);
    QTest::mouseClick(resume, Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(window.currentWorkspace(), MainWindow::kTrain, 5000);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 15000);
    QCOMPARE(*resumedFrom, std::vector<std::string>({folder}));
    QVERIFY(window.trainWorkspace()
                ->eventLog()
                ->messages()
                .join(QLatin1Char('\n'))
                .contains(QStringLiteral("Resuming run #%1 resumable").arg(stopped)));
    // It went on in the same record: no new run, the stopped one is now completed, and its
    // series continue after the 120 points it had (the fake run adds 300 of its own).
    storage::RunReader reader(*t.store);
    QCOMPARE(reader.countRuns(), int64_t(4));
    QVERIFY(reader.run(stopped)->status == storage::RunStatus::Completed);
    QCOMPARE(reader.loadSeries(stopped, {"loss", 1, -1}).size(), size_t(120 + 300));
    // Train shows the probe the stop measured at the checkpoint's step (the resumed run does
    // not measure it again), beside the points before it.
    {
      const SeriesBuffer* cosine =
          window.trainWorkspace()->data()->series({0, engine::series::kGradCosine, 0, -1});
      QVERIFY(cosine);
      bool atStop = false;
      for (size_t i = 0; i < cosine->size(); ++i)
        atStop |= cosine->x(i, XAxisKind::Step) == 120.0 && float(cosine->rawY(i)) == 0.4242f;
      QVERIFY2(atStop, "the probe at the stop's step 120 is missing after the resume");
      // Issue 36: the change before the stop keeps its line after the resume, and the stop's
      // whole-test-set evaluation is a marker of its own, not a point of the periodic line.
      TrainWorkspace* train = window.trainWorkspace();
      bool changeShown = false;
      for (const LiveMarker& m : train->data()->markers())
        changeShown |= m.step == 60 && m.label == QStringLiteral("S1 delay_ms = 20");
      QVERIFY2(changeShown, "the change at step 60 is gone after the resume");
      const SeriesBuffer* test = train->data()->series({0, engine::series::kTestAccuracy, -1, -1});
      QVERIFY(test);
      bool periodic = false;
      for (size_t i = 0; i < test->size(); ++i) {
        QVERIFY2(float(test->rawY(i)) != 0.8646f, "the stop's whole-set evaluation joins the line");
        periodic |= test->x(i, XAxisKind::Step) == 80.0;
      }
      QVERIFY(periodic);
      QCPGraph* diamonds =
          train->dashboard()->accuracyPanel()->finalGraph(0, engine::series::kTestAccuracy);
      QVERIFY(diamonds);
      bool stopDiamond = false;
      for (auto it = diamonds->data()->constBegin(); it != diamonds->data()->constEnd(); ++it)
        stopDiamond |= it->key == 120.0 && float(it->value) == 0.8646f;
      QVERIFY2(stopDiamond, "no marker for the stop's whole-set evaluation at step 120");
      QCOMPARE(diamonds->name(), QStringLiteral("whole test set"));
    }

    // Run → Resume from checkpoint… with the folder that holds step-80: its newest step, in
    // the record of the run that wrote it.
    window.resumeFromCheckpoint(checkpoints.filePath(QStringLiteral("b")));
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, 15000);
    QCOMPARE(resumedFrom->back(), otherFolder);
    QCOMPARE(reader.countRuns(), int64_t(4));
    QVERIFY(reader.run(second)->status == storage::RunStatus::Completed);
    QCOMPARE(reader.loadSeries(second, {"loss", 2, -1}).size(), size_t(80 + 200));

    // A folder that is not a checkpoint is refused with the reason, nothing starts.
    QTimer::singleShot(300, [] {
      for (QWidget* w : QApplication::topLevelWidgets())
        if (auto* box = qobject_cast<QMessageBox*>(w)) box->button(QMessageBox::Ok)->click();
    });
    QSignalSpy started(window.trainWorkspace(), &TrainWorkspace::runStarted);
    window.resumeFromCheckpoint(checkpoints.path());
    QTest::qWait(800);
    QCOMPARE(started.count(), 0);
  }

#endif

  void openingARunLoadsItsSpecInDesign() {
    test::TempStore t;
    const int64_t id = addRun(*t.store, runSpec("reopen-me", {1, 2, 3}), 0.8);
    MainWindow window(fakeEngineServices(), t.store);
    window.show();
    RunsWorkspace* ws = window.runsWorkspace();
    QVERIFY(ws);
    window.showWorkspace(MainWindow::kRuns);
    waitLoaded(*ws, 1);
    QVERIFY(!ws->resumeButton()->isVisible());  // the fake engine cannot resume
    QVERIFY(window.document()->spec().name != "reopen-me");
    selectRows(*ws, {id});
    QVERIFY(ws->openButton()->isEnabled());
    QTest::mouseClick(ws->openButton(), Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(window.document()->spec().name, std::string("reopen-me"), 5000);
    QCOMPARE(window.document()->spec().partition.cuts, std::vector<int>({1, 2, 3}));
    QCOMPARE(window.currentWorkspace(), MainWindow::kDesign);
    QVERIFY(window.document()->canRun());
  }
};

QTEST_MAIN(TestRunsWorkspace)
#include "test_runs_workspace.moc"
