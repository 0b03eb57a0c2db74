// The assembled window: workspace shortcuts, Ctrl+R / Esc, undo/redo shortcuts, save and
// reopen, the About text, the theme switch, and closing the window during a run.

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProcess>
#include <QPushButton>
#include <QScreen>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QUrl>
#include <QtTest>

#include "bridge/engine_controller.h"
#include "common/about_dialog.h"
#include "common/app_settings.h"
#include "common/command_palette.h"
#include "common/fake_services.h"
#include "common/spec_io.h"
#include "designer/design_document.h"
#include "designer/design_workspace.h"
#include "designer/estimate_panel.h"
#include "designer/network_scene.h"
#include "designer/network_view.h"
#include "live/live_dashboard.h"
#include "live/plot_panel.h"
#include "live/timeline_panel.h"
#include "live/train_workspace.h"
#include "main_window.h"
#include "run_store_fixture.h"
#include "runs/runs_workspace.h"
#include "runs/study_groups.h"
#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"
#ifdef STAGEWISE_HAVE_RECORDER
#include "stagewise/recorder/recorder.h"
#endif

using namespace stagewise;
using namespace stagewise::ui;

class TestMainWindow : public QObject {
  Q_OBJECT

  static engine::ExperimentSpec quickSpec() {
    engine::ExperimentSpec s;
    s.name = "window-test";
    s.dataset.kind = "synthetic";
    s.model.hidden = {32, 32, 32, 32};
    s.partition.cuts = {2};
    s.train.maxSteps = 100000;
    return s;
  }

  static EngineServices services() {
    engine::FakeScript script;
    script.stepSeconds = 0.001;
    auto s = fakeEngineServices(script);
    s.engine.torchVersion = "9.9.9-test";
    return s;
  }

 private Q_SLOTS:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
  // Each window starts as a first start: no experiment, workspace or runs kept from a test
  // before it (session restore).
  void init() { AppSettings::setSession({}); }

  void aWindowSavedOnASmallScreenGrowsOnALargeOne() {
    // Issue 36 §3: a size remembered from a laptop stayed small on a large monitor.
    const QSize laptop(1366, 740), monitor(2560, 1400);
    const QSize grown = windowSizeForScreen(QSize(1200, 700), laptop, monitor);
    QVERIFY2(grown.width() > 2000 && grown.height() > 1250,
             qPrintable(QStringLiteral("%1x%2").arg(grown.width()).arg(grown.height())));
    QVERIFY(grown.width() <= monitor.width() && grown.height() <= monitor.height());
    // The same screen, or a slightly larger one: the user's size is kept.
    QCOMPARE(windowSizeForScreen(QSize(1000, 600), laptop, laptop), QSize(1000, 600));
    QCOMPARE(windowSizeForScreen(QSize(1000, 600), laptop, QSize(1440, 800)), QSize(1000, 600));
    // Saved on a larger screen: fitted to this one; no saved screen (older settings): fitted.
    QCOMPARE(windowSizeForScreen(QSize(2400, 1300), monitor, laptop), laptop);
    QCOMPARE(windowSizeForScreen(QSize(1000, 600), QSize(), monitor), QSize(1000, 600));
  }

  void reopensExactlyWhereItClosed() {
    // issue 36 §3: the window reopened ~20 px lower each time (restoreGeometry() moved a window
    // at the top of the screen below a title bar it assumed). Two reopens: the same rectangle.
    const QRect area = QGuiApplication::primaryScreen()->availableGeometry();
    QRect closed;
    {
      MainWindow window(services(), nullptr);
      window.show();
      QVERIFY(QTest::qWaitForWindowExposed(&window));
      // The frame at the very top of the screen, where restoreGeometry() moved it down.
      window.move(area.topLeft());
      QTRY_COMPARE(window.frameGeometry().topLeft(), area.topLeft());
      closed = window.geometry();  // the client area, inside the frame
      QVERIFY(closed.top() > area.top());
      QVERIFY(window.close());
    }
    for (int reopen = 1; reopen <= 2; ++reopen) {
      MainWindow window(services(), nullptr);
      QCOMPARE(window.geometry(), closed);
      window.show();
      QVERIFY(QTest::qWaitForWindowExposed(&window));
      QCOMPARE(window.geometry(), closed);
      QVERIFY(window.close());
    }
    QCOMPARE(AppSettings::windowRect(), closed);
    AppSettings::setWindowRect({}, false);  // the next tests start as before
  }

  void aTinySavedWindowGrowsOnThisScreen() {
    // A size saved on a screen far smaller than this one reopens grown, and on the screen.
    const QRect area(0, 0, 2560, 1400);
    const QRect grown = windowRectForScreen(QRect(30, 40, 600, 380), QSize(700, 450),
                                            area.size() - QSize(16, 40), area);
    QVERIFY2(grown.width() > 1800 && grown.height() > 1000,
             qPrintable(QStringLiteral("%1x%2").arg(grown.width()).arg(grown.height())));
    QVERIFY(area.contains(grown));
    QCOMPARE(grown.topLeft(), QPoint(30, 40));  // it fits where it was: not moved
    // The same screen: exactly as saved; off the screen's edge: moved the least onto it.
    QCOMPARE(windowRectForScreen(QRect(30, 40, 600, 380), area.size() - QSize(16, 40),
                                 area.size() - QSize(16, 40), area),
             QRect(30, 40, 600, 380));
    QCOMPARE(windowRectForScreen(QRect(2400, -50, 600, 380), area.size() - QSize(16, 40),
                                 area.size() - QSize(16, 40), area),
             QRect(2560 - 600, 0, 600, 380));
    // The window itself: saved from a screen far smaller than this one, it opens larger.
    const QRect here = QGuiApplication::primaryScreen()->availableGeometry();
    const QSize smallScreen = here.size() / 3;
    AppSettings::setWindow({}, {}, smallScreen);
    const QRect saved(here.topLeft() + QPoint(40, 30), smallScreen - QSize(20, 20));
    AppSettings::setWindowRect(saved, false);
    MainWindow window(services(), nullptr);
    QVERIFY2(window.width() > 2 * saved.width() && window.height() > 2 * saved.height(),
             qPrintable(QStringLiteral("%1x%2").arg(window.width()).arg(window.height())));
    QCOMPARE(window.geometry().topLeft(), saved.topLeft());
    QVERIFY(here.contains(window.geometry()));
    AppSettings::setWindowRect({}, false);
  }

#ifdef STAGEWISE_HAVE_RECORDER
  void paletteFindsAndRunsEveryExport() {
    // issue 36: "export" in the palette found only the run list. File › Export holds every
    // export (the Timeline's trace, a plot, the tables), and the palette finds and runs them.
    test::TempStore t;
    EngineServices s = services();
    auto store = t.store;
    s.createRecorder = [store](RecordRequest request) -> std::unique_ptr<engine::RunObserver> {
      recorder::RecorderOptions options;
      options.onRecordCreated = request.onRecorded;  // as the workbench's services do
      return std::make_unique<recorder::Recorder>(*store, options);
    };
    MainWindow window(s, t.store);
    auto spec = quickSpec();
    spec.train.maxSteps = 200;
    window.document()->load(spec);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QStringList menu;
    for (QAction* a : window.exportMenu()->actions()) menu << a->text().remove(QLatin1Char('&'));
    QVERIFY2(menu.filter(QStringLiteral("trace")).size() == 1 &&
                 menu.filter(QStringLiteral("plot")).size() == 1 &&
                 menu.filter(QStringLiteral("run list")).size() == 1 &&
                 menu.filter(QStringLiteral("Groups table")).size() == 1,
             qPrintable(menu.join(QStringLiteral(" | "))));
    QVERIFY(!window.exportTraceAction()->isEnabled() || window.trainWorkspace()->traceRunId() >= 0);
    QSignalSpy finished(window.trainWorkspace(), &TrainWorkspace::runFinished);
    window.startRun();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 20000);
    QTRY_VERIFY_WITH_TIMEOUT(window.trainWorkspace()->traceRunId() > 0, 5000);

    QTemporaryDir dir;
    QStringList asked;
    int plotChoices = 0;
    QString chosenTitle;
    window.setExportAnswers(
        {[&](const QString& caption, const QString& proposed) {
           asked << caption;
           const bool trace = caption.contains(QStringLiteral("trace"));
           return dir.filePath(trace ? QFileInfo(proposed).fileName() : QStringLiteral("plot.csv"));
         },
         [&](const QStringList& titles) {
           plotChoices = int(titles.size());
           const int i = int(titles.indexOf(QRegularExpression(QStringLiteral("^Loss"))));
           chosenTitle = titles.value(std::max(i, 0));
           return std::max(i, 0);
         }});
    const auto runFromPalette = [&](const QString& typed, const QString& expected) {
      window.showCommandPalette();
      CommandPalette* palette = window.findChild<CommandPalette*>();
      QVERIFY(palette && palette->isVisible());
      QTest::keyClicks(palette->searchEdit(), typed);
      QVERIFY(palette->list()->topLevelItemCount() > 0);
      QCOMPARE(palette->list()->topLevelItem(0)->text(0), expected);
      QCOMPARE(palette->list()->topLevelItem(0)->text(1), QStringLiteral("File › Export"));
      QTest::keyClick(palette->searchEdit(), Qt::Key_Return);
    };
    window.showWorkspace(MainWindow::kTrain);
    runFromPalette(QStringLiteral("export trace"),
                   QStringLiteral("Export the Timeline trace (Perfetto JSON)…"));
    const int64_t run = window.trainWorkspace()->traceRunId();
    QFile trace(dir.filePath(QStringLiteral("run-%1.trace.json").arg(run)));
    QVERIFY2(trace.open(QIODevice::ReadOnly), qPrintable(asked.join(QLatin1Char(','))));
    const QJsonDocument doc = QJsonDocument::fromJson(trace.readAll());
    QVERIFY(doc.object()[QStringLiteral("traceEvents")].toArray().size() > 10);

    runFromPalette(QStringLiteral("export plot"),
                   QStringLiteral("Export a plot (PNG, SVG, PDF or CSV)…"));
    QVERIFY2(plotChoices >= 3, qPrintable(window.exportablePlots().join(QLatin1Char(','))));
    QFile plot(dir.filePath(QStringLiteral("plot.csv")));
    QVERIFY(plot.open(QIODevice::ReadOnly));
    QVERIFY2(plot.readAll().count('\n') > 10, qPrintable(chosenTitle));
    QCOMPARE(asked.size(), 2);
    QVERIFY(asked[1].contains(chosenTitle));

    // The run list's export is listed once (in File › Export, no longer beside it).
    window.showCommandPalette();
    CommandPalette* palette = window.findChild<CommandPalette*>();
    QTest::keyClicks(palette->searchEdit(), QStringLiteral("run list"));
    int runList = 0;
    for (int i = 0; i < palette->list()->topLevelItemCount(); ++i)
      runList += palette->list()->topLevelItem(i)->text(0).contains(QStringLiteral("run list"));
    QCOMPARE(runList, 1);
    QTest::keyClick(palette->searchEdit(), Qt::Key_Escape);
  }
#endif

  void paletteExportsTheGroupsTable() {
    // The Groups table's CSV is in File › Export too (greyed until a study's groups show).
    test::TempStore t;
    const int64_t a = test::addRun(*t.store, test::runSpec("lr 0.001", {2}), 0.7);
    const int64_t b = test::addRun(*t.store, test::runSpec("lr 0.003", {2}), 0.8);
    storage::NewStudy ns;
    ns.name = "lr sweep";
    ns.baseSpecJson = R"({"mode":"local"})";
    ns.keys = {{"train.lr", "[0.001,0.003]"}};
    ns.runsTotal = 2;
    const int64_t study = t.store->createStudy(ns);
    storage::StudyRunRecord link;
    link.point = 0, link.runId = a, link.seed = 1, link.valuesJson = "[0.001]";
    t.store->linkStudyRun(study, link);
    link.point = 1, link.runId = b, link.valuesJson = "[0.003]";
    t.store->linkStudyRun(study, link);
    MainWindow window(services(), t.store);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.showWorkspace(MainWindow::kRuns);
    QAction* groups = nullptr;
    for (QAction* action : window.exportMenu()->actions())
      if (action->text().contains(QStringLiteral("Groups table"))) groups = action;
    QVERIFY(groups);
    window.showCommandPalette();
    QVERIFY(!groups->isEnabled());  // no study chosen
    window.findChild<CommandPalette*>()->hide();
    RunsWorkspace* runs = window.runsWorkspace();
    QTRY_COMPARE_WITH_TIMEOUT(runs->studyCombo()->count(), 2, 5000);
    runs->studyCombo()->setCurrentIndex(1);
    QTRY_VERIFY_WITH_TIMEOUT(
        runs->groupTable()->isLoaded() && runs->groupTable()->table()->rowCount() == 2, 5000);
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("groups.csv"));
    window.setExportAnswers({[&](const QString&, const QString&) { return path; }, {}});
    window.showCommandPalette();
    CommandPalette* palette = window.findChild<CommandPalette*>();
    QTest::keyClicks(palette->searchEdit(), QStringLiteral("groups"));
    QVERIFY(palette->list()->topLevelItemCount() > 0);
    QCOMPARE(palette->list()->topLevelItem(0)->text(0),
             QStringLiteral("Export the Groups table as CSV…"));
    QTest::keyClick(palette->searchEdit(), Qt::Key_Return);
    QFile csv(path);
    QVERIFY(csv.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(csv.readAll()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 3);  // the header and the two groups
    QVERIFY2(lines[0].contains(QStringLiteral("train.lr")), qPrintable(lines[0]));
  }

  void shortcutsSwitchRunAndStop() {
    MainWindow window(services(), nullptr);
    window.document()->load(quickSpec());
    window.show();
    QApplication::setActiveWindow(&window);
    QVERIFY(QTest::qWaitForWindowActive(&window));
    QTest::keyClick(&window, Qt::Key_3, Qt::ControlModifier);
    QCOMPARE(window.currentWorkspace(), MainWindow::kRuns);
    QTest::keyClick(&window, Qt::Key_1, Qt::ControlModifier);
    QCOMPARE(window.currentWorkspace(), MainWindow::kDesign);

    QSignalSpy finished(window.trainWorkspace(), &TrainWorkspace::runFinished);
    QTest::keyClick(&window, Qt::Key_R, Qt::ControlModifier);
    QCOMPARE(window.currentWorkspace(), MainWindow::kTrain);
    QVERIFY(window.controller()->isBusy());
    QVERIFY(!window.runAction()->isEnabled());
    QTRY_COMPARE_WITH_TIMEOUT(window.controller()->state(), EngineController::State::Running, 5000);
    QTest::keyClick(&window, Qt::Key_Escape);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 3000);
    QVERIFY(window.trainWorkspace()->summaries().back().status == engine::RunStatus::Stopped);
    QVERIFY(window.runAction()->isEnabled());
  }

#ifdef STAGEWISE_HAVE_RECORDER
  // Clicks `button` of the stop-and-quit question as soon as it is shown.
  static void answerStopAndQuit(const QString& button) {
    auto* timer = new QTimer;
    QObject::connect(timer, &QTimer::timeout, timer, [timer, button] {
      auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
      if (!box || box->objectName() != QLatin1String("stopAndQuitBox")) return;
      for (QAbstractButton* b : box->buttons())
        if (b->text() == button) {
          timer->deleteLater();
          b->click();
          return;
        }
    });
    timer->start(20);
  }

  void closingDuringARunAsksThenStopsAndSaves() {
    test::TempStore t;
    EngineServices s = services();
    auto store = t.store;
    s.createRecorder = [store](RecordRequest) -> std::unique_ptr<engine::RunObserver> {
      return std::make_unique<recorder::Recorder>(*store);
    };
    MainWindow window(s, t.store);
    window.document()->load(quickSpec());
    window.show();
    QSignalSpy finished(window.trainWorkspace(), &TrainWorkspace::runFinished);
    window.startRun();
    PlotPanel* loss = window.trainWorkspace()->dashboard()->lossPanel();
    QTRY_VERIFY_WITH_TIMEOUT(loss->graphCount() > 0 && loss->receivedPoints(0) > 50, 5000);

    // Cancel: the window stays and the run goes on.
    answerStopAndQuit(QStringLiteral("Cancel"));
    QVERIFY(!window.close());
    QVERIFY(window.isVisible());
    QCOMPARE(window.controller()->state(), EngineController::State::Running);
    const int before = loss->receivedPoints(0);
    QTRY_VERIFY_WITH_TIMEOUT(loss->receivedPoints(0) > before + 20, 5000);
    QCOMPARE(finished.count(), 0);

    // Stop and quit: the run stops, the store records it, then the window closes.
    answerStopAndQuit(QStringLiteral("Stop and quit"));
    QElapsedTimer timer;
    timer.start();
    window.close();
    QCOMPARE(window.controller()->state(), EngineController::State::Stopping);
    QTRY_VERIFY_WITH_TIMEOUT(!window.isVisible(), 5000);
    QVERIFY2(timer.elapsed() < 3000, qPrintable(QString::number(timer.elapsed())));
    QCOMPARE(finished.count(), 1);
    QCOMPARE(window.controller()->state(), EngineController::State::Idle);
    QVERIFY(window.trainWorkspace()->summaries().back().status == engine::RunStatus::Stopped);

    storage::RunReader reader(*t.store);
    const auto runs = reader.listRuns();
    QCOMPARE(runs.size(), size_t(1));
    QVERIFY2(runs[0].status == storage::RunStatus::Stopped,
             storage::toString(runs[0].status).c_str());
    const int64_t steps = window.trainWorkspace()->summaries().back().steps;
    QVERIFY(steps > 50 && steps < 100000);
    QCOMPARE(runs[0].steps.value_or(-1), steps);
    // Every step of the last stage is in the store, not just what was shown.
    const auto points = reader.loadSeries(runs[0].id, {"loss", 1, -1});
    QCOMPARE(int64_t(points.size()), steps);
    QCOMPARE(points.back().step, steps - 1);
  }
#endif

  void closingWithUnsavedChangesAsksOnceAndStops() {
    // A short run and an edited design: one question for both, the run held while it is up,
    // and "Stop and quit without saving" ends the run as stopped, never completed behind a
    // second prompt.
    MainWindow window(services(), nullptr);
    auto spec = quickSpec();
    spec.train.maxSteps = 3000;  // about 3 s of fake training: it would complete behind a dialog
    window.document()->load(spec);
    window.document()->edit(spec, QStringLiteral("touch"));
    QVERIFY(window.document()->isModified());
    window.show();
    QSignalSpy finished(window.trainWorkspace(), &TrainWorkspace::runFinished);
    window.startRun();
    QTRY_COMPARE_WITH_TIMEOUT(window.controller()->state(), EngineController::State::Running, 5000);
    QTRY_VERIFY_WITH_TIMEOUT(window.controller()->progress().step > 20, 5000);

    QStringList boxes;  // every modal question, in order
    int64_t stepHeld = -1, stepLater = -1;
    auto* timer = new QTimer(&window);
    connect(timer, &QTimer::timeout, timer, [&] {
      auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
      if (!box) return;
      if (boxes.isEmpty() || boxes.back() != box->objectName()) {
        boxes << box->objectName();
        return;  // answer on a later tick
      }
      if (stepLater < 0) {
        // The progress the window sees lags by a drain (250 ms): read it after two, then
        // again 600 ms later. A run that went on behind the question would move ~600 steps.
        QTest::qWait(600);
        stepHeld = window.controller()->progress().step;
        QTest::qWait(600);
        stepLater = window.controller()->progress().step;
      }
      for (QAbstractButton* b : box->buttons())
        if (b->text() == QStringLiteral("Stop and quit without saving")) b->click();
    });
    timer->start(30);
    window.close();
    timer->stop();
    QCOMPARE(boxes, QStringList{QStringLiteral("stopAndQuitBox")});
    QVERIFY2(stepHeld > 0 && stepLater <= stepHeld + 2,
             qPrintable(QStringLiteral("%1 -> %2").arg(stepHeld).arg(stepLater)));
    QTRY_VERIFY_WITH_TIMEOUT(!window.isVisible(), 5000);
    QCOMPARE(finished.count(), 1);
    QVERIFY(window.trainWorkspace()->summaries().back().status == engine::RunStatus::Stopped);
  }

  void fitsA1366x768ScreenAtAnyStageCount() {
    // Nine stages on a 1366x768 screen (less a panel and the title bar): the window's minimum
    // fits, and the estimate's table, chart and balance row do not overlap.
    MainWindow window(services(), nullptr);
    auto spec = quickSpec();
    spec.model.hidden = {32, 32, 32, 32, 32, 32, 32, 32};  // 9 layers
    spec.partition.cuts = {1, 2, 3, 4, 5, 6, 7, 8};
    window.document()->load(spec);
    QCOMPARE(window.document()->spec().stageCount(), 9);
    const QSize screen(1366, 768 - 24 - 30);
    const QSize minimum = window.minimumSizeHint().expandedTo(window.minimumSize());
    QVERIFY2(minimum.width() <= screen.width() && minimum.height() <= screen.height(),
             qPrintable(QStringLiteral("%1x%2").arg(minimum.width()).arg(minimum.height())));
    window.resize(screen);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QCOMPARE(window.size(), screen);
    auto* estimate = window.designWorkspace()->estimatePanel();
    const auto rectOf = [&](QWidget* w) {
      return QRect(w->mapTo(&window, QPoint(0, 0)), w->size());
    };
    QVERIFY(!rectOf(estimate->bytesTable()).intersects(rectOf(estimate->chartWidget())));
    QVERIFY(!rectOf(estimate->bytesTable()).intersects(rectOf(estimate->balanceButton())));
    for (MainWindow::Workspace w : {MainWindow::kTrain, MainWindow::kDesign}) {
      window.showWorkspace(w);
      QApplication::processEvents();
      QCOMPARE(window.size(), screen);
    }
  }

  // A text design shows Train's Sample panel: the window still fits a 1366x768 screen (it grew
  // to 813 px tall when the panel sat above the event log).
  void aTextDesignStillFitsA1366x768Screen() {
    MainWindow window(services(), nullptr);
    auto spec = quickSpec();
    spec.dataset.kind = "text";
    window.document()->load(spec);
    window.showWorkspace(MainWindow::kTrain);
    window.trainWorkspace()->updateControls();
    const QSize screen(1366, 768 - 24 - 30);
    const QSize minimum = window.minimumSizeHint().expandedTo(window.minimumSize());
    QVERIFY2(minimum.width() <= screen.width() && minimum.height() <= screen.height(),
             qPrintable(QStringLiteral("%1x%2").arg(minimum.width()).arg(minimum.height())));
  }

  void shortcutsAreFixedAndListed() {
    MainWindow window(services(), nullptr);
    QStringList shortcuts;
    QAction* stop = window.stopAction();
    QCOMPARE(stop->shortcut(), QKeySequence(Qt::Key_Escape));  // what the menu shows
    bool saveAs = false;
    for (QAction* menu : window.menuBar()->actions())
      for (QAction* a : menu->menu()->actions())
        if (a->text().contains(QStringLiteral("as…")))
          saveAs = a->shortcut() == QKeySequence(QStringLiteral("Ctrl+Shift+S"));
    QVERIFY(saveAs);
    const QString list = window.shortcutsText();
    for (const char* key : {"Ctrl+Shift+S", "Ctrl+R", "Esc", "Ctrl+P", "Ctrl+1", "Ctrl+Z"})
      QVERIFY2(list.contains(QLatin1String(key)), key);
    QVERIFY(list.contains(QStringLiteral("Save as")));
    QVERIFY(list.contains(QStringLiteral("(the Timeline, once clicked)")));  // its own keys
    // issue 36 §2.5: "Ctrl+Z or F14 — Undo Study seeds": the action, not the command, and the
    // keys a keyboard has.
    auto spec = window.document()->spec();
    spec.train.seed += 1;
    window.document()->edit(spec, QStringLiteral("Study seeds"));
    const QString after = window.shortcutsText();
    QVERIFY2(
        !after.contains(QStringLiteral("F14")) && !after.contains(QStringLiteral("Study seeds")),
        qPrintable(after));
    QVERIFY2(after.contains(QStringLiteral("<td>Undo</td>")), qPrintable(after));
    QVERIFY(!MainWindow::userGuidePath().isEmpty());  // found in the source tree of this build
    QVERIFY(MainWindow::userGuidePath().endsWith(QStringLiteral("docs/user-guide.md")));
  }

  void dropAndRecentOpenExperiments() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("dropped.stagewise.json"));
    auto spec = quickSpec();
    spec.name = "dropped";
    spec.partition.cuts = {1, 3};
    QCOMPARE(writeSpecFile(path, spec), QString());
    AppSettings::clearRecentFiles();
    MainWindow window(services(), nullptr);
    window.show();
    QVERIFY(window.acceptDrops());
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(path)});
    QCOMPARE(MainWindow::droppedSpec(&mime), path);
    QMimeData notSpec;
    notSpec.setUrls({QUrl::fromLocalFile(dir.filePath(QStringLiteral("picture.png")))});
    QVERIFY(MainWindow::droppedSpec(&notSpec).isEmpty());
    // A TorchScript model is taken too: it is imported (File → Import model…).
    QMimeData model;
    model.setUrls({QUrl::fromLocalFile(dir.filePath(QStringLiteral("net.pt")))});
    QCOMPARE(MainWindow::droppedSpec(&model), dir.filePath(QStringLiteral("net.pt")));
    // A drop, as a file manager makes it: the experiment opens in Design.
    window.showWorkspace(MainWindow::kRuns);
    QVERIFY(!window.openDropped(&notSpec));
    QVERIFY(window.openDropped(&mime));
    QTRY_COMPARE(window.document()->spec().name, std::string("dropped"));
    QCOMPARE(window.currentWorkspace(), MainWindow::kDesign);
    // It is first in File → Open Recent, and choosing it there opens it again.
    QCOMPARE(AppSettings::recentFiles().value(0), QFileInfo(path).absoluteFilePath());
    window.document()->load(quickSpec());
    QMenu* recent = window.recentMenu();
    Q_EMIT recent->aboutToShow();
    QAction* first = recent->actions().value(0);
    QVERIFY(first && first->text().contains(QStringLiteral("dropped.stagewise.json")));
    first->trigger();
    QCOMPARE(window.document()->spec().name, std::string("dropped"));
    AppSettings::clearRecentFiles();
  }

#ifdef STAGEWISE_GUI_BINARY
  void aFileArgumentOpensThatExperiment() {
    // `stagewise FILE.json`, as the desktop entry runs it: trained here with --run on the fake
    // engine, so the run store says which experiment was open.
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("from-argument.stagewise.json"));
    auto spec = quickSpec();
    spec.name = "from-argument";
    spec.train.maxSteps = 30;
    QCOMPARE(writeSpecFile(path, spec), QString());
    QProcess app;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    env.insert(QStringLiteral("STAGEWISE_DB"), dir.filePath(QStringLiteral("runs.db")));
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), dir.filePath(QStringLiteral("config")));
    app.setProcessEnvironment(env);
    app.start(QStringLiteral(STAGEWISE_GUI_BINARY),
              {QStringLiteral("--fake"), QStringLiteral("--run"),
               QStringLiteral("--quit-after-run"), path});
    QVERIFY(app.waitForFinished(60000));
    QCOMPARE(app.exitCode(), 0);
    storage::RunStore store(dir.filePath(QStringLiteral("runs.db")).toStdString());
    const auto runs = storage::RunReader(store).listRuns();
    QCOMPARE(runs.size(), size_t(1));
    QCOMPARE(runs.front().name, std::string("from-argument"));
  }
#endif

  void undoRedoShortcuts() {
    MainWindow window(services(), nullptr);
    window.document()->load(quickSpec());
    window.show();
    QApplication::setActiveWindow(&window);
    QVERIFY(QTest::qWaitForWindowActive(&window));
    auto* view = window.designWorkspace()->view();
    view->resetZoom();
    const QPointF gap = window.designWorkspace()->scene()->gapCenter(3);
    view->centerOn(gap);
    QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, view->mapFromScene(gap));
    QCOMPARE(window.document()->spec().partition.cuts, std::vector<int>({2, 3}));
    QVERIFY(window.windowTitle().contains(QStringLiteral("window-test")));
    QVERIFY(window.isWindowModified());
    QTest::keyClick(&window, Qt::Key_Z, Qt::ControlModifier);
    QCOMPARE(window.document()->spec().partition.cuts, std::vector<int>({2}));
    QTest::keyClick(&window, Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier);
    QCOMPARE(window.document()->spec().partition.cuts, std::vector<int>({2, 3}));
  }

  void invalidDesignDisablesRunEverywhere() {
    MainWindow window(services(), nullptr);
    auto spec = quickSpec();
    spec.train.batchSize = 0;
    window.document()->load(spec);
    QVERIFY(!window.runAction()->isEnabled());
    QVERIFY(window.runAction()->toolTip().contains(QStringLiteral("train.batch_size")));
    QVERIFY(!window.trainWorkspace()->runButton()->isEnabled());
    QVERIFY(window.trainWorkspace()->runButton()->toolTip().contains(
        QStringLiteral("train.batch_size")));
    QVERIFY(!window.trainWorkspace()->startRun());
    QVERIFY(!window.controller()->isBusy());
  }

  void saveAndReopen() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("saved.json"));
    MainWindow window(services(), nullptr);
    auto spec = quickSpec();
    spec.partition.cuts = {1, 3};
    window.document()->load(spec);
    window.document()->setFilePath(path);
    window.document()->edit(spec, QStringLiteral("touch"));  // something to save
    QVERIFY(window.designWorkspace()->save());
    QVERIFY(!window.document()->isModified());
    const auto back = readSpecFile(path);
    QCOMPARE(engine::specToJson(back), engine::specToJson(spec));
    window.document()->load(quickSpec());
    QVERIFY(window.designWorkspace()->openFile(path));
    QCOMPARE(window.document()->spec().partition.cuts, std::vector<int>({1, 3}));
  }

  void reportSaysTheUnsavedEditsItUsed() {
    // Issue 36 §1.7: the GUI's report took the design's unsaved max_steps=300 where the CLI,
    // reading the file, took 597, and said nothing.
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("saved.json"));
    MainWindow window(services(), nullptr);
    auto spec = quickSpec();
    spec.train.maxSteps = 597;
    window.document()->load(spec);
    window.document()->setFilePath(path);
    window.document()->edit(spec, QStringLiteral("touch"));
    QVERIFY(window.designWorkspace()->save());
    QVERIFY(window.unsavedEditsNote().isEmpty());  // saved: nothing to say
    spec.train.maxSteps = 300;
    window.document()->edit(spec, QStringLiteral("shorter"));
    const QStringList note = window.unsavedEditsNote();
    QCOMPARE(note.size(), 1);
    QVERIFY2(note[0].contains(QStringLiteral("unsaved edits")) &&
                 note[0].contains(QStringLiteral("train.max_steps=300 (saved: 597)")),
             qPrintable(note[0]));
  }

  void aboutNamesQtAndLibTorch() {
    auto s = services();
    s.engine.openmpWait = "spin 4321, then sleep";
    s.engine.malloc = "mmap threshold 1 KiB";
    const QString text = aboutText(s.engine, QStringLiteral("/tmp/x.db"));
    QVERIFY(text.contains(QStringLiteral("spin 4321, then sleep")));
    QVERIFY(text.contains(QStringLiteral("mmap threshold 1 KiB")));
    QVERIFY(text.contains(QStringLiteral("/tmp/x.db</td>")));  // the placeholders line up
    QVERIFY(text.contains(QString::fromLatin1(qVersion())));
    QVERIFY(text.contains(QStringLiteral("9.9.9-test")));
    QVERIFY(text.contains(QStringLiteral("/tmp/x.db")));
  }

  void themeSwitchesAndPersists() {
    MainWindow window(services(), nullptr);
    QAction* dark = nullptr;
    for (QAction* menu : window.menuBar()->actions())
      for (QAction* a : menu->menu()->actions())
        if (a->text().contains(QStringLiteral("ark theme"))) dark = a;
    QVERIFY(dark);
    dark->trigger();
    QVERIFY(isDarkPalette());
    QVERIFY(AppSettings::theme() == Theme::Dark);
    applyTheme(*qApp, Theme::Light);
    QVERIFY(!isDarkPalette());
    AppSettings::setTheme(Theme::Light);
  }
};

// A 1920x1080 offscreen screen (the platform's default is 800x600, smaller than the window's
// minimum), with the platform's window frame: restoring the window is checked on a screen it
// fits, client area against frame.
int main(int argc, char** argv) {
  QTemporaryDir config;
  if (qgetenv("QT_QPA_PLATFORM") == "offscreen" && config.isValid()) {
    QFile json(config.filePath(QStringLiteral("screens.json")));
    if (json.open(QIODevice::WriteOnly)) {
      json.write(R"({"windowFrameMargins": true, "screens": [{"name": "OffscreenScreen",
        "x": 0, "y": 0, "width": 1920, "height": 1080, "logicalDpi": 96, "logicalBaseDpi": 96,
        "dpr": 1}]})");
      json.close();
      qputenv("QT_QPA_PLATFORM", "offscreen:configfile=" + json.fileName().toLocal8Bit());
    }
  }
  QApplication app(argc, argv);
  app.setAttribute(Qt::AA_Use96Dpi, true);
  TestMainWindow test;
  QTEST_SET_MAIN_SOURCE_PATH
  return QTest::qExec(&test, argc, argv);
}
#include "test_main_window.moc"
