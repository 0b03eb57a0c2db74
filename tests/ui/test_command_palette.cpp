// The command palette (Ctrl+Shift+P): fuzzy matching, every enabled menu action listed with its
// shortcut, and Enter triggering the one found.

#include <QAction>
#include <QLineEdit>
#include <QPushButton>
#include <QStandardPaths>
#include <QTreeWidget>
#include <QtTest>

#include "common/app_settings.h"
#include "common/command_palette.h"
#include "common/fake_services.h"
#include "main_window.h"
#include "run_store_fixture.h"
#include "runs/run_table_model.h"
#include "runs/runs_workspace.h"

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

  void shortPatternsMatchWordStartsAndRunsOnly() {
    // issue 36: "csv" found "Design's cuts steer the live run" (c-s-v scattered in it).
    const auto score = [](const char* pattern, const char* text) {
      return CommandPalette::fuzzyScore(QString::fromUtf8(pattern), QString::fromUtf8(text));
    };
    QCOMPARE(score("csv", "Run Design's cuts steer the live run"), -1);
    QVERIFY(score("csv", "File › Export Export the run list as CSV…") >= 0);
    QVERIFY(score("rs", "Run study") >= 0);         // word starts
    QVERIFY(score("paus", "Pause / resume") >= 0);  // a run of letters
    QCOMPARE(score("ese", "Save notes and tags"), -1);
    // A longer pattern leaves room for a typo: most of its letters still start words or follow
    // the one before.
    QVERIFY(score("exprt", "Export CSV…") >= 0);
    QCOMPARE(score("aeiou", "Design's cuts steer the live run"), -1);
  }

  void findsTheSelectedRunsActions() {
    // issue 36: the Runs buttons (Export CSV…, Save notes and tags, Resume, Run again) were not
    // in the palette. They are, enabled as the buttons are.
    test::TempStore t;
    const int64_t id = test::addRun(*t.store, test::runSpec("one", {2}), 0.8);
    MainWindow window(services(), t.store);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.showWorkspace(MainWindow::kRuns);
    RunsWorkspace* runs = window.runsWorkspace();
    QTRY_VERIFY_WITH_TIMEOUT(runs->model()->rowCount() == 1 && runs->model()->isSettled(), 5000);
    const auto open = [&](const QString& pattern) {
      window.showCommandPalette();
      CommandPalette* palette = window.findChild<CommandPalette*>();
      if (!palette) return QStringList{};
      QTest::keyClicks(palette->searchEdit(), pattern);
      const QStringList found = rows(palette);
      palette->hide();
      return found;
    };
    // Nothing selected: the points export (every listed run) is there, not the run's own.
    QVERIFY(!runs->saveMetaButton()->isEnabled());
    QStringList found = open(QStringLiteral("csv"));
    QVERIFY2(found.contains(QStringLiteral("Export the selected runs' points as CSV…")),
             qPrintable(found.join(QLatin1Char('|'))));
    QVERIFY(!found.contains(QStringLiteral("Design's cuts steer the live run")));
    QVERIFY(!open(QStringLiteral("notes")).contains(QStringLiteral("Save notes and tags")));
    QVERIFY(!open(QStringLiteral("again")).contains(QStringLiteral("Run the selected run again")));

    runs->selectRuns({id});
    QTRY_VERIFY_WITH_TIMEOUT(runs->saveMetaButton()->isEnabled(), 5000);
    QTRY_VERIFY_WITH_TIMEOUT(runs->runAgainButton()->isEnabled(), 5000);
    found = open(QStringLiteral("notes"));
    QVERIFY2(!found.isEmpty() && found.front() == QStringLiteral("Save notes and tags"),
             qPrintable(found.join(QLatin1Char('|'))));
    QVERIFY(open(QStringLiteral("again")).contains(QStringLiteral("Run the selected run again")));
    // Resume follows its button: shown and enabled only for a stopped run with a checkpoint.
    QCOMPARE(open(QStringLiteral("resume sel")).contains(QStringLiteral("Resume the selected run")),
             runs->resumeButton()->isEnabled() && runs->resumeButton()->isVisibleTo(runs));
    // Chosen in the palette, the action does what its button does.
    QTest::keyClicks(runs->tagsEdit(), QStringLiteral("from-palette"));
    window.showCommandPalette();
    CommandPalette* palette = window.findChild<CommandPalette*>();
    QVERIFY(palette);
    QTest::keyClicks(palette->searchEdit(), QStringLiteral("save notes"));
    QCOMPARE(palette->list()->topLevelItem(0)->text(0), QStringLiteral("Save notes and tags"));
    QCOMPARE(palette->list()->topLevelItem(0)->text(1), QStringLiteral("Runs"));
    QTest::keyClick(palette->searchEdit(), Qt::Key_Return);
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
          storage::RunReader reader(*t.store);
          const auto run = reader.run(id);
          return run && run->tags == std::vector<std::string>{"from-palette"};
        }(),
        5000);
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
