// The command palette (Ctrl+Shift+P): fuzzy matching, every enabled menu action listed with its
// shortcut, and Enter triggering the one found.

#include <QAction>
#include <QLineEdit>
#include <QStandardPaths>
#include <QTreeWidget>
#include <QtTest>

#include "common/app_settings.h"
#include "common/command_palette.h"
#include "common/fake_services.h"
#include "main_window.h"

using namespace stagewise;
using namespace stagewise::ui;

class TestCommandPalette : public QObject {
  Q_OBJECT

  static EngineServices services() {
    engine::FakeScript script;
    script.stepSeconds = 0.001;
    return fakeEngineServices(script);
  }

  static QStringList rows(CommandPalette* palette) {
    QStringList out;
    for (int i = 0; i < palette->list()->topLevelItemCount(); ++i)
      out << palette->list()->topLevelItem(i)->text(0);
    return out;
  }

 private Q_SLOTS:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
  // Each window starts as a first start: no experiment, workspace or runs kept from a test
  // before it (session restore).
  void init() { AppSettings::setSession({}); }

  void fuzzyScores_data() {
    QTest::addColumn<QString>("pattern");
    QTest::addColumn<QString>("better");
    QTest::addColumn<QString>("worse");
    QTest::newRow("word starts") << "rs"
                                 << "Run study"
                                 << "Replication report…";
    QTest::newRow("as typed") << "runs"
                              << "Runs"
                              << "Run study";
    QTest::newRow("consecutive") << "save"
                                 << "Save"
                                 << "Save as…";
    QTest::newRow("no match") << "pause"
                              << "Pause / resume"
                              << "Open…";
  }

  void fuzzyScores() {
    QFETCH(QString, pattern);
    QFETCH(QString, better);
    QFETCH(QString, worse);
    const int b = CommandPalette::fuzzyScore(pattern, better);
    const int w = CommandPalette::fuzzyScore(pattern, worse);
    QVERIFY2(b >= 0 && b > w, qPrintable(QStringLiteral("%1 vs %2").arg(b).arg(w)));
    QCOMPARE(CommandPalette::fuzzyScore(QStringLiteral("xyz"), better), -1);
  }

  void findsAnActionAndRunsIt() {
    MainWindow window(services(), nullptr);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.showWorkspace(MainWindow::kDesign);
    QTest::keyClick(&window, Qt::Key_P, Qt::ControlModifier | Qt::ShiftModifier);
    CommandPalette* palette = window.findChild<CommandPalette*>();
    QVERIFY(palette);
    QTRY_VERIFY(palette->isVisible());
    QVERIFY(palette->list()->topLevelItemCount() > 10);  // every enabled menu action

    QTest::keyClicks(palette->searchEdit(), QStringLiteral("runs"));
    QTRY_VERIFY(palette->list()->topLevelItemCount() > 0);
    QCOMPARE(palette->list()->topLevelItem(0)->text(0), QStringLiteral("Runs"));
    QCOMPARE(palette->list()->topLevelItem(0)->text(1), QStringLiteral("View"));
    QCOMPARE(palette->list()->topLevelItem(0)->text(2),
             QKeySequence(QStringLiteral("Ctrl+3")).toString(QKeySequence::NativeText));
    QTest::keyClick(palette->searchEdit(), Qt::Key_Return);
    QCOMPARE(window.currentWorkspace(), MainWindow::kRuns);
    QVERIFY(!palette->isVisible());

    // Disabled actions are left out: nothing runs, so Stop is not offered.
    QVERIFY(!window.stopAction()->isEnabled());
    QTest::keyClick(&window, Qt::Key_P, Qt::ControlModifier | Qt::ShiftModifier);
    QTRY_VERIFY(palette->isVisible());
    QVERIFY(palette->searchEdit()->text().isEmpty());
    for (int i = 0; i < palette->list()->topLevelItemCount(); ++i)
      QVERIFY(palette->actionAt(i) != window.stopAction());
    QVERIFY(rows(palette).contains(QStringLiteral("Run")));
    QVERIFY(!rows(palette).contains(QStringLiteral("Command palette…")));  // not itself

    // Arrows move in the list while typing stays in the field; Escape closes.
    QTest::keyClicks(palette->searchEdit(), QStringLiteral("theme"));
    QCOMPARE(palette->list()->topLevelItemCount(), 2);
    QTest::keyClick(palette->searchEdit(), Qt::Key_Down);
    QCOMPARE(palette->list()->currentItem(), palette->list()->topLevelItem(1));
    QTest::keyClick(palette->searchEdit(), Qt::Key_Escape);
    QVERIFY(!palette->isVisible());
  }
};

QTEST_MAIN(TestCommandPalette)
#include "test_command_palette.moc"
