// Session restore (issue 36 §4): closing the workbench and opening it again brings back the
// experiment (its file, or the design without one as JSON), the workspace, the runs selected
// in Runs and Train's plot settings; a file that is gone opens the default and says so.

#include <QCheckBox>
#include <QComboBox>
#include <QSettings>
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
};

QTEST_MAIN(TestSessionRestore)
#include "test_session_restore.moc"
