// Session restore (issue 36 §4): closing the workbench and opening it again brings back the
// experiment (its file, or the design without one as JSON), the workspace, the runs selected
// in Runs and Train's plot settings; a file that is gone opens the default and says so.

#include <QCheckBox>
#include <QComboBox>
#include <QHeaderView>
#include <QLineEdit>
#include <QSettings>
#include <QSignalSpy>
#include <QSlider>
#include <QStatusBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include "common/app_settings.h"
#include "common/fake_services.h"
#include "common/spec_io.h"
#include "designer/design_document.h"
#include "designer/design_workspace.h"
#include "live/event_log.h"
#include "live/live_dashboard.h"
#include "live/plot_panel.h"
#include "live/train_workspace.h"
#include "main_window.h"
#include "run_store_fixture.h"
#include "runs/run_table_model.h"
#include "runs/runs_workspace.h"

using namespace stagewise;
using namespace stagewise::ui;
using test::addRun;
using test::runSpec;

class TestSessionRestore : public QObject {
  Q_OBJECT
  QTemporaryDir m_config;

  static EngineServices services() {
    engine::FakeScript script;
    script.stepSeconds = 0.001;
    return fakeEngineServices(script);
  }

  static void selectRows(RunsWorkspace* ws, const std::vector<int64_t>& ids) {
    QTRY_VERIFY_WITH_TIMEOUT(ws->model()->isSettled() && ws->model()->rowCount() > 0, 5000);
    const int rows = ws->model()->rowCount();
    for (int r = 0; r < rows; ++r) ws->model()->data(ws->model()->index(r, 0), Qt::DisplayRole);
    QTRY_VERIFY_WITH_TIMEOUT(ws->model()->isSettled() && ws->model()->runId(rows - 1) >= 0, 5000);
    auto* selection = ws->table()->selectionModel();
    selection->clearSelection();
    for (int64_t id : ids) {
      const int row = ws->model()->rowOf(id);
      QVERIFY2(row >= 0, "run not loaded in the table");
      selection->select(ws->model()->index(row, 0),
                        QItemSelectionModel::Select | QItemSelectionModel::Rows);
    }
  }

 private Q_SLOTS:
  void initTestCase() {
    // Settings in a folder of this test's own, so neither the user's nor other tests' count.
    QVERIFY(m_config.isValid());
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_config.path());
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, m_config.path());
  }
  void init() { QSettings().clear(); }

  void reopensFileWorkspaceRunsAndPlotSettings() {
    test::TempStore t;
    addRun(*t.store, runSpec("alpha", {2}), 0.8);
    const int64_t beta = addRun(*t.store, runSpec("beta", {1, 3}), 0.9);
    const int64_t gamma = addRun(*t.store, runSpec("gamma", {2}), 0.7);
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("session.json"));
    auto spec = runSpec("restored-from-file", {1, 2});
    QVERIFY(writeSpecFile(file, spec, {}).isEmpty());
    {
      MainWindow window(services(), t.store);
      window.show();
      QVERIFY(window.designWorkspace() != nullptr);
      window.document()->load(readSpecFile(file), file);
      selectRows(window.runsWorkspace(), {beta, gamma});
      QCOMPARE(window.runsWorkspace()->selectedRunIds(), (std::vector<int64_t>{beta, gamma}));
      window.showWorkspace(MainWindow::kRuns);
      LiveDashboard* d = window.trainWorkspace()->dashboard();
      d->smoothingSlider()->setValue(25);
      d->xAxisCombo()->setCurrentIndex(1);
      d->logLossCheck()->setChecked(true);
      window.trainWorkspace()->modeCombo()->setCurrentIndex(6);  // Local, pipeline, backprop
      QVERIFY(window.close());
    }
    // The store the session used (as given with --db) is the one the next start opens.
    QCOMPARE(AppSettings::storePath(), QString::fromStdString(t.store->path()));
    MainWindow window(services(), t.store);
    window.show();
    QCOMPARE(window.document()->filePath(), file);
    QCOMPARE(window.document()->spec().name, std::string("restored-from-file"));
    QVERIFY(!window.document()->isModified());
    QCOMPARE(window.currentWorkspace(), MainWindow::kRuns);
    QTRY_COMPARE_WITH_TIMEOUT(window.runsWorkspace()->selectedRunIds(),
                              (std::vector<int64_t>{beta, gamma}), 5000);
    QTRY_COMPARE_WITH_TIMEOUT(
        window.runsWorkspace()->table()->selectionModel()->selectedRows().size(), 2, 5000);
    LiveDashboard* d = window.trainWorkspace()->dashboard();
    QCOMPARE(d->smoothingSlider()->value(), 25);
    QCOMPARE(d->xAxisCombo()->currentIndex(), 1);
    QVERIFY(d->logLossCheck()->isChecked());
    QVERIFY(d->lossPanel()->logY());
    QCOMPARE(window.trainWorkspace()->modeCombo()->currentIndex(), 6);
  }

  void reopensADesignWithoutAFileFromItsJson() {
    {
      MainWindow window(services(), nullptr);
      window.show();
      auto spec = runSpec("never-saved", {1, 3});
      spec.train.maxSteps = 321;
      window.document()->load(spec);  // as Runs' "open spec in Design" does: no file
      window.showWorkspace(MainWindow::kTrain);
      QVERIFY(window.close());
    }
    MainWindow window(services(), nullptr);
    QCOMPARE(window.document()->spec().name, std::string("never-saved"));
    QCOMPARE(window.document()->spec().train.maxSteps, int64_t(321));
    QCOMPARE(window.document()->spec().partition.cuts, (std::vector<int>{1, 3}));
    QVERIFY(window.document()->filePath().isEmpty());
    QCOMPARE(window.currentWorkspace(), MainWindow::kTrain);
  }

  void aMissingFileOpensTheDefaultAndSaysSo() {
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("gone.json"));
    QVERIFY(writeSpecFile(file, runSpec("soon-gone", {2}), {}).isEmpty());
    {
      MainWindow window(services(), nullptr);
      window.document()->load(readSpecFile(file), file);
      window.showWorkspace(MainWindow::kTrain);
      QVERIFY(window.close());
    }
    QVERIFY(QFile::remove(file));
    MainWindow window(services(), nullptr);
    QCOMPARE(window.document()->spec().name, defaultSpec().name);
    QVERIFY(window.document()->filePath().isEmpty());
    QVERIFY2(window.statusBar()->currentMessage().contains(QStringLiteral("gone")),
             qPrintable(window.statusBar()->currentMessage()));
    QVERIFY(window.statusBar()->currentMessage().contains(file));
    QCOMPARE(window.currentWorkspace(), MainWindow::kTrain);  // the rest is still restored
  }

  void unreadableSessionJsonOpensTheDefault() {
    SessionState broken;
    broken.designJson = QStringLiteral("{\"model\": {\"kind\": 12");
    broken.workspace = 7;  // out of range: Design
    AppSettings::setSession(broken);
    MainWindow window(services(), nullptr);
    QCOMPARE(window.document()->spec().name, defaultSpec().name);
    QCOMPARE(window.currentWorkspace(), MainWindow::kDesign);
    QVERIFY(window.statusBar()->currentMessage().contains(QStringLiteral("did not read")));
  }
  void aStoreThatIsGoneIsNotReopened() {
    // A store given once with --db in a folder that has since gone: the next start opens the
    // chosen (or default) store, not a new empty one at the old path.
    QTemporaryDir dir;
    AppSettings::setStorePath(dir.filePath("chosen.db"));
    SessionState state = AppSettings::session();
    state.storePath = dir.filePath("gone/runs.db");
    AppSettings::setSession(state);
    QCOMPARE(AppSettings::storePath(), dir.filePath("chosen.db"));
    QFile kept(dir.filePath("kept.db"));
    QVERIFY(kept.open(QIODevice::WriteOnly));
    kept.close();
    state.storePath = dir.filePath("kept.db");
    AppSettings::setSession(state);
    QCOMPARE(AppSettings::storePath(), dir.filePath("kept.db"));
  }
  void openingAFileKeepsTheRestoredModeComparison() {
    // issue 36: the session restored "Local, pipeline, backprop", and File › Open reset it to
    // the file's single mode. A comparison that includes the file's mode is kept; a single
    // mode (or a comparison without the file's mode) follows the file.
    QTemporaryDir dir;
    const auto fileWith = [&](const char* name, engine::Mode mode) {
      auto spec = runSpec(name, {1, 2});
      spec.mode = mode;
      const QString file = dir.filePath(QString::fromLatin1(name) + QStringLiteral(".json"));
      if (!writeSpecFile(file, spec, {}).isEmpty()) return QString();
      return file;
    };
    const QString pipeline = fileWith("pipeline-file", engine::Mode::Pipeline);
    const QString backprop = fileWith("backprop-file", engine::Mode::Backprop);
    QVERIFY(!pipeline.isEmpty() && !backprop.isEmpty());
    {
      MainWindow window(services(), nullptr);
      window.trainWorkspace()->modeCombo()->setCurrentIndex(6);  // Local, pipeline, backprop
      QVERIFY(window.close());
    }
    MainWindow window(services(), nullptr);
    QComboBox* modes = window.trainWorkspace()->modeCombo();
    QCOMPARE(modes->currentIndex(), 6);
    QVERIFY(window.designWorkspace()->openFile(pipeline));
    QCOMPARE(modes->currentIndex(), 6);  // kept: it includes pipeline
    QVERIFY(window.designWorkspace()->openFile(backprop));
    QCOMPARE(modes->currentIndex(), 6);
    // A single mode follows the file's.
    modes->setCurrentIndex(0);  // Local
    QVERIFY(window.designWorkspace()->openFile(pipeline));
    QCOMPARE(TrainWorkspace::planAfterOpening(window.trainWorkspace()->currentPlan(),
                                              engine::Mode::Pipeline),
             (RunPlan{engine::Mode::Pipeline}));
    QCOMPARE(window.trainWorkspace()->currentPlan(), (RunPlan{engine::Mode::Pipeline}));
    // A comparison without the file's mode (local, then backprop; a pipeline file) follows it.
    modes->setCurrentIndex(2);
    QVERIFY(window.designWorkspace()->openFile(pipeline));
    QCOMPARE(window.trainWorkspace()->currentPlan(), (RunPlan{engine::Mode::Pipeline}));
  }

  void reopensTheRunsFilterAndScrollsToTheSelection() {
    // issue 36: the selection came back, the filter text and the study filter did not, and a
    // selected run far down the list was out of sight.
    test::TempStore t;
    std::vector<int64_t> alphas;
    for (int i = 0; i < 60; ++i)
      alphas.push_back(addRun(
          *t.store,
          runSpec(QStringLiteral("alpha-%1").arg(i, 2, 10, QLatin1Char('0')).toStdString(), {2}),
          0.5 + i / 200.0));
    const int64_t beta = addRun(*t.store, runSpec("beta", {2}), 0.9);
    storage::NewStudy ns;
    ns.name = "the alphas";
    ns.baseSpecJson = "{}";
    ns.keys = {{"train.lr", "[0.001,0.003]"}};
    ns.runsTotal = int(alphas.size());
    const int64_t study = t.store->createStudy(ns);
    for (int i = 0; i < int(alphas.size()); ++i) {
      storage::StudyRunRecord link;
      link.point = i;
      link.runId = alphas[size_t(i)];
      link.valuesJson = "[0.001]";
      t.store->linkStudyRun(study, link);
    }
    t.store->finishStudy(study, storage::StudyStatus::Completed);
    // The run far from the top: the list shows the newest first.
    const int64_t far = alphas[1];
    {
      MainWindow window(services(), t.store);
      window.resize(1200, 680);
      window.show();
      window.showWorkspace(MainWindow::kRuns);
      RunsWorkspace* ws = window.runsWorkspace();
      QTRY_COMPARE_WITH_TIMEOUT(ws->studyCombo()->count(), 2, 5000);
      ws->studyCombo()->setCurrentIndex(1);
      QTest::keyClicks(ws->searchEdit(), QStringLiteral("alpha-0"));
      QTRY_COMPARE_WITH_TIMEOUT(ws->model()->rowCount(), 10, 5000);
      selectRows(ws, {far});
      QCOMPARE(ws->selectedRunIds(), (std::vector<int64_t>{far}));
      QVERIFY(window.close());
    }
    {
      MainWindow window(services(), t.store);
      window.resize(1200, 680);
      window.show();
      RunsWorkspace* ws = window.runsWorkspace();
      QCOMPARE(ws->searchEdit()->text(), QStringLiteral("alpha-0"));
      QTRY_COMPARE_WITH_TIMEOUT(ws->studyCombo()->currentData().toLongLong(), study, 5000);
      QTRY_COMPARE_WITH_TIMEOUT(ws->model()->filter().study, std::optional<int64_t>(study), 5000);
      QTRY_COMPARE_WITH_TIMEOUT(ws->model()->rowCount(), 10, 5000);
      QTRY_COMPARE_WITH_TIMEOUT(ws->selectedRunIds(), (std::vector<int64_t>{far}), 5000);
      // The study filter alone: beta (in no study) stays out, the selection is scrolled to.
      QTest::keyClick(ws->searchEdit(), Qt::Key_A, Qt::ControlModifier);
      QTest::keyClick(ws->searchEdit(), Qt::Key_Backspace);
      QVERIFY(window.close());
    }
    MainWindow window(services(), t.store);
    window.resize(1200, 680);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    RunsWorkspace* ws = window.runsWorkspace();
    QVERIFY(ws->searchEdit()->text().isEmpty());
    QTRY_COMPARE_WITH_TIMEOUT(ws->model()->rowCount(), 60, 5000);
    QTRY_VERIFY_WITH_TIMEOUT(ws->model()->rowOf(beta) < 0 && ws->model()->isSettled(), 5000);
    QTRY_COMPARE_WITH_TIMEOUT(ws->selectedRunIds(), (std::vector<int64_t>{far}), 5000);
    QTableView* table = ws->table();
    const QModelIndex shown = ws->model()->index(ws->model()->rowOf(far), 0);
    QVERIFY(shown.isValid());
    QVERIFY2(ws->model()->rowOf(far) * table->verticalHeader()->defaultSectionSize() >
                 table->viewport()->height(),
             "the run would be in sight without scrolling: the test proves nothing");
    QTRY_VERIFY_WITH_TIMEOUT(table->viewport()->rect().intersects(table->visualRect(shown)), 5000);
  }

  void aResumeKeepsTheModeSet() {
    // issue 36: resuming a local run switched the mode box from "Local, then backprop" to
    // "Local (parallel stages)". The run goes on in its mode; the set stays and the log says
    // what runs.
    EngineServices fake = services();
    fake.resumeRun = [create = fake.createRun](const engine::ExperimentSpec& s,
                                               engine::RunObserver* observer,
                                               const std::string&) { return create(s, observer); };
    MainWindow window(fake, nullptr);
    TrainWorkspace* train = window.trainWorkspace();
    QComboBox* modes = train->modeCombo();
    modes->setCurrentIndex(modes->findText(QStringLiteral("Local, then backprop")));
    QVERIFY(modes->currentIndex() >= 0);
    auto spec = runSpec("resumed", {1, 2});
    spec.mode = engine::Mode::Local;
    QSignalSpy finished(train, &TrainWorkspace::runFinished);
    QVERIFY(
        train->resumeRun(spec, ResumePoint{"checkpoint", std::nullopt}, QStringLiteral("run #1")));
    QCOMPARE(modes->currentText(), QStringLiteral("Local, then backprop"));
    const QString log = train->eventLog()->messages().join(QLatin1Char('\n'));
    QVERIFY2(log.contains(QStringLiteral("its mode, local, alone")), qPrintable(log));
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 15000);
    // A set without the run's mode (or a single other mode) shows what runs, as opening does.
    modes->setCurrentIndex(modes->findText(QStringLiteral("Pipelined backprop")));
    QVERIFY(
        train->resumeRun(spec, ResumePoint{"checkpoint", std::nullopt}, QStringLiteral("run #1")));
    QCOMPARE(train->currentPlan(), (RunPlan{engine::Mode::Local}));
    QVERIFY(
        !train->eventLog()->messages().join(QLatin1Char('\n')).contains(QStringLiteral("alone")));
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, 15000);
  }
};

QTEST_MAIN(TestSessionRestore)
#include "test_session_restore.moc"
