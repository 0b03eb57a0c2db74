// The assembled window: workspace shortcuts, Ctrl+R / Esc, undo/redo shortcuts, save and
// reopen, the About text and the theme switch.

#include <QAction>
#include <QApplication>
#include <QMenuBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QtTest>

#include "bridge/engine_controller.h"
#include "common/about_dialog.h"
#include "common/app_settings.h"
#include "common/fake_services.h"
#include "common/spec_io.h"
#include "designer/design_document.h"
#include "designer/design_workspace.h"
#include "designer/network_scene.h"
#include "designer/network_view.h"
#include "live/train_workspace.h"
#include "main_window.h"

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

  void aboutNamesQtAndLibTorch() {
    auto s = services();
    const QString text = aboutText(s.engine, QStringLiteral("/tmp/x.db"));
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

QTEST_MAIN(TestMainWindow)
#include "test_main_window.moc"
