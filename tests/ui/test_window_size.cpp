// The window's size (issue 36 walkthrough, a 1366x768 screen): a window closed at 1200x680
// reopened 32 px taller (Train's least height, not a frame read back wrong), and opening Design
// then widened it to 1273 px (the canvas's one-line summary) and that grown size was saved.
// Every workspace fits a 1200x680 window, and the size saved is the size restored.

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QScreen>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include "common/app_settings.h"
#include "common/fake_services.h"
#include "designer/design_workspace.h"
#include "main_window.h"
#include "run_store_fixture.h"

using namespace stagewise;
using namespace stagewise::ui;

class TestWindowSize : public QObject {
  Q_OBJECT
  QTemporaryDir m_config;

  static EngineServices services() {
    engine::FakeScript script;
    script.stepSeconds = 0.001;
    return fakeEngineServices(script);
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(m_config.isValid());
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_config.path());
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, m_config.path());
  }
  void init() { QSettings().clear(); }

  void everyWorkspaceFitsA1200x680Window() {
    test::TempStore t;
    MainWindow window(services(), t.store);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    for (auto workspace : {MainWindow::kDesign, MainWindow::kTrain, MainWindow::kRuns}) {
      window.showWorkspace(workspace);
      const QSize least = window.minimumSizeHint();
      QVERIFY2(least.width() <= 1200 && least.height() <= 680,
               qPrintable(QStringLiteral("workspace %1 needs %2x%3")
                              .arg(int(workspace))
                              .arg(least.width())
                              .arg(least.height())));
    }
    // Design itself, inside what a 1200-px window gives it.
    const int chrome = window.width() - window.designWorkspace()->width();
    QVERIFY2(window.designWorkspace()->minimumSizeHint().width() <= 1200 - chrome,
             qPrintable(QString::number(window.designWorkspace()->minimumSizeHint().width())));
  }

  void theSizeSavedIsTheSizeRestored() {
    test::TempStore t;
    const QRect area = QGuiApplication::primaryScreen()->availableGeometry();
    QVERIFY2(area.width() >= 1250 && area.height() >= 740,
             "the screen is too small for a 1200x680 window: run with main()'s offscreen screen");
    const QRect chosen(area.topLeft() + QPoint(40, 30), QSize(1200, 680));
    {
      MainWindow window(services(), t.store);
      window.show();
      QVERIFY(QTest::qWaitForWindowExposed(&window));
      window.showWorkspace(MainWindow::kTrain);
      window.setGeometry(chosen);
      QTRY_COMPARE(window.geometry(), chosen);
      QVERIFY(window.close());
    }
    QCOMPARE(AppSettings::windowRect(), chosen);
    for (int reopen = 0; reopen < 2; ++reopen) {
      MainWindow window(services(), t.store);
      window.show();
      QVERIFY(QTest::qWaitForWindowExposed(&window));
      QCOMPARE(window.currentWorkspace(), MainWindow::kTrain);
      QCOMPARE(window.geometry(), chosen);
      // Design does not widen it (then saved grown).
      window.showWorkspace(MainWindow::kDesign);
      QTest::qWait(20);
      QCOMPARE(window.geometry(), chosen);
      window.showWorkspace(MainWindow::kTrain);
      QVERIFY(window.close());
      QCOMPARE(AppSettings::windowRect(), chosen);
    }
  }
};

int main(int argc, char** argv) {
  // The walkthrough's 1366x768 screen: the offscreen platform's own is 800x800, smaller than the
  // window the test restores.
  QTemporaryDir dir;
  if (qgetenv("QT_QPA_PLATFORM") == "offscreen" && dir.isValid()) {
    const QString config = QDir(dir.path()).filePath(QStringLiteral("screen.json"));
    QFile file(config);
    if (file.open(QIODevice::WriteOnly))
      file.write(R"({"screens": [{"name": "walkthrough", "x": 0, "y": 0, "width": 1366,
                 "height": 768, "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]})");
    file.close();
    qputenv("QT_QPA_PLATFORM", "offscreen:configfile=" + config.toLocal8Bit());
  }
  QApplication app(argc, argv);
  QStandardPaths::setTestModeEnabled(true);
  TestWindowSize test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_window_size.moc"
