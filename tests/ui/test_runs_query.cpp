// The Runs filter as a query (docs/query.md): typing a query filters the table, a query that
// does not parse outlines the field (its tooltip says the column) and keeps the last good
// result, and saved queries are kept in the settings and recalled from the Saved menu.

#include <QLineEdit>
#include <QMenu>
#include <QStandardPaths>
#include <QToolButton>
#include <QtTest>

#include "common/app_settings.h"
#include "common/invalid_outline.h"
#include "run_store_fixture.h"
#include "runs/run_table_model.h"
#include "runs/runs_workspace.h"

using namespace stagewise;
using namespace stagewise::ui;
using test::addRun;
using test::runSpec;

class TestRunsQuery : public QObject {
  Q_OBJECT

  static engine::ExperimentSpec spec(const std::string& name, double lr) {
    engine::ExperimentSpec s = runSpec(name, {2});
    s.train.lr = lr;
    return s;
  }

  static QStringList names(RunsWorkspace& ws) {
    QStringList out;
    for (int r = 0; r < ws.model()->rowCount(); ++r)
      out << ws.model()
                 ->data(ws.model()->index(r, RunTableModel::kName), Qt::DisplayRole)
                 .toString();
    out.sort();
    return out;
  }

  static void type(RunsWorkspace& ws, const QString& text) {
    ws.searchEdit()->clear();
    QTest::keyClicks(ws.searchEdit(), text);
  }

  static QAction* menuAction(RunsWorkspace& ws, const QString& objectNameOrText) {
    QMenu* menu = ws.savedQueriesButton()->menu();
    Q_EMIT menu->aboutToShow();  // what opening it does
    for (QAction* a : menu->actions())
      if (a->objectName() == objectNameOrText || a->text() == objectNameOrText) return a;
    return nullptr;
  }

 private Q_SLOTS:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
  void init() { AppSettings::setSavedQueries({}); }

  void typingAQueryFiltersTheTable() {
    test::TempStore t;
    addRun(*t.store, spec("alpha", 1e-4), 0.90);
    addRun(*t.store, spec("beta", 1e-2), 0.95);
    addRun(*t.store, spec("gamma", 5e-4), 0.50, 200, "backprop");
    RunsWorkspace ws(t.store);
    ws.show();
    QTRY_COMPARE_WITH_TIMEOUT(ws.model()->rowCount(), 3, 5000);

    type(ws, QStringLiteral("train.lr < 1e-3 and max(test_accuracy) > 0.8"));
    QTRY_COMPARE_WITH_TIMEOUT(names(ws), QStringList({QStringLiteral("alpha")}), 5000);
    QVERIFY(!hasInvalidOutline(ws.searchEdit()));

    type(ws, QStringLiteral("mode = \"local\" or train.lr = 5e-4"));
    QTRY_COMPARE_WITH_TIMEOUT(ws.model()->rowCount(), 3, 5000);
    type(ws, QStringLiteral("not mode = \"local\""));
    QTRY_COMPARE_WITH_TIMEOUT(names(ws), QStringList({QStringLiteral("gamma")}), 5000);

    // Plain text is still a search of names, notes and tags.
    type(ws, QStringLiteral("bet"));
    QTRY_COMPARE_WITH_TIMEOUT(names(ws), QStringList({QStringLiteral("beta")}), 5000);
  }

  void aBadQueryOutlinesTheFieldAndKeepsTheTable() {
    test::TempStore t;
    addRun(*t.store, spec("alpha", 1e-4), 0.90);
    addRun(*t.store, spec("beta", 1e-2), 0.95);
    RunsWorkspace ws(t.store);
    ws.show();
    QTRY_COMPARE_WITH_TIMEOUT(ws.model()->rowCount(), 2, 5000);
    type(ws, QStringLiteral("train.lr > 1e-3"));
    QTRY_COMPARE_WITH_TIMEOUT(names(ws), QStringList({QStringLiteral("beta")}), 5000);

    type(ws, QStringLiteral("train.lr > 1e-3 and mode = local"));
    QTRY_VERIFY_WITH_TIMEOUT(hasInvalidOutline(ws.searchEdit()), 5000);
    QVERIFY2(ws.searchEdit()->toolTip().startsWith(QStringLiteral("Column 28: ")),
             qPrintable(ws.searchEdit()->toolTip()));
    QVERIFY(ws.searchEdit()->toolTip().contains(QStringLiteral("double quotes")));
    QTest::qWait(400);  // past the typing delay: the last good query still holds
    QCOMPARE(names(ws), QStringList({QStringLiteral("beta")}));

    // Fixed, the outline goes and the query applies.
    ws.searchEdit()->setText(QStringLiteral("train.lr > 1e-3 and mode = \"backprop\""));
    QTRY_VERIFY_WITH_TIMEOUT(!hasInvalidOutline(ws.searchEdit()), 5000);
    QTRY_COMPARE_WITH_TIMEOUT(ws.model()->rowCount(), 0, 5000);
    QVERIFY(!ws.searchEdit()->toolTip().startsWith(QStringLiteral("Column")));
  }

  void savedQueriesAreKeptAndRecalled() {
    test::TempStore t;
    addRun(*t.store, spec("alpha", 1e-4), 0.90);
    addRun(*t.store, spec("beta", 1e-2), 0.95);
    const QString query = QStringLiteral("train.lr < 1e-3");
    {
      RunsWorkspace ws(t.store);
      ws.show();
      QTRY_COMPARE_WITH_TIMEOUT(ws.model()->rowCount(), 2, 5000);
      QAction* save = menuAction(ws, QStringLiteral("saveQuery"));
      QVERIFY(save && !save->isEnabled());  // nothing typed yet
      type(ws, query);
      QTRY_COMPARE_WITH_TIMEOUT(ws.model()->rowCount(), 1, 5000);
      save = menuAction(ws, QStringLiteral("saveQuery"));
      QVERIFY(save->isEnabled());
      save->trigger();
      QCOMPARE(AppSettings::savedQueries(), QStringList({query}));
      QVERIFY(!menuAction(ws, QStringLiteral("saveQuery"))->isEnabled());  // saved already
      QVERIFY(menuAction(ws, QStringLiteral("forgetQuery"))->isEnabled());
    }
    // A new workspace (the workbench restarted) recalls it from the settings.
    RunsWorkspace ws(t.store);
    ws.show();
    QTRY_COMPARE_WITH_TIMEOUT(ws.model()->rowCount(), 2, 5000);
    QAction* recall = menuAction(ws, query);
    QVERIFY(recall);
    recall->trigger();
    QCOMPARE(ws.searchEdit()->text(), query);
    QTRY_COMPARE_WITH_TIMEOUT(names(ws), QStringList({QStringLiteral("alpha")}), 5000);
    menuAction(ws, QStringLiteral("forgetQuery"))->trigger();
    QVERIFY(AppSettings::savedQueries().isEmpty());
    QVERIFY(!menuAction(ws, query));
  }
};

QTEST_MAIN(TestRunsQuery)
#include "test_runs_query.moc"
