// Issue 36, the Runs workspace's tables and overlay: CSV export and Ctrl+C of every table (one
// helper, common/table_export), the run list's columns for the spec keys that differ, the
// overlay's read-out at stored points, and its x axis (step, wall time, samples, compute).

#include <qcustomplot.h>
#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QStandardItemModel>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTimer>
#include <QTreeWidget>
#include <QtTest>
#include <cmath>
#include <functional>
#include <map>

#include "common/app_settings.h"
#include "common/command_palette.h"
#include "common/plot_frame.h"
#include "common/table_export.h"
#include "live/steer_events.h"
#include "run_store_fixture.h"
#include "runs/compare_panel.h"
#include "runs/run_table_model.h"
#include "runs/runs_workspace.h"
#include "runs/study_groups.h"

using namespace stagewise;
using namespace stagewise::ui;
using test::addRun;
using test::runSpec;

class TestRunsTables : public QObject {
  Q_OBJECT

  /// A minimal RFC 4180 reader: the test's own, to read the helper's output back.
  static std::vector<QStringList> parseCsv(const QString& text) {
    std::vector<QStringList> rows;
    QStringList row;
    QString field;
    bool quoted = false, any = false;
    for (int i = 0; i < text.size(); ++i) {
      const QChar c = text[i];
      if (quoted) {
        if (c == QLatin1Char('"') && i + 1 < text.size() && text[i + 1] == QLatin1Char('"'))
          field += QLatin1Char('"'), ++i;
        else if (c == QLatin1Char('"'))
          quoted = false;
        else
          field += c;
      } else if (c == QLatin1Char('"')) {
        quoted = true, any = true;
      } else if (c == QLatin1Char(',')) {
        row << field, field.clear(), any = true;
      } else if (c == QLatin1Char('\n')) {
        row << field, rows.push_back(row), row.clear(), field.clear(), any = false;
      } else {
        field += c, any = true;
      }
    }
    if (any) row << field, rows.push_back(row);
    return rows;
  }

  static void moveTo(QCustomPlot* plot, QPoint p) {
    QMouseEvent event(QEvent::MouseMove, QPointF(p), plot->mapToGlobal(QPointF(p)), Qt::NoButton,
                      Qt::NoButton, Qt::NoModifier);
    QApplication::sendEvent(plot, &event);
  }

  /// The folder the file dialog `open` shows starts in; `answer` (a path) is what the dialog
  /// then returns (empty: cancelled).
  static QString dialogFolder(const std::function<void()>& open, const QString& answer = {}) {
    QString folder;
    QTimer poll;
    poll.setInterval(20);
    QObject::connect(&poll, &QTimer::timeout, [&] {
      auto* dialog = qobject_cast<QFileDialog*>(QApplication::activeModalWidget());
      if (!dialog || !folder.isEmpty()) return;
      folder = dialog->directory().absolutePath();
      if (answer.isEmpty()) {
        dialog->reject();
      } else {
        // Typed as a user would: selectFile() with another folder's path races the dialog's
        // own folder change and sometimes kept the proposed name.
        if (auto* name = dialog->findChild<QLineEdit*>(QStringLiteral("fileNameEdit")))
          name->setText(answer);
        else
          dialog->selectFile(answer);
        static_cast<QDialog*>(dialog)->accept();  // QFileDialog::accept() is protected
      }
    });
    poll.start();
    open();
    poll.stop();
    return folder;
  }

  static void waitLoaded(RunsWorkspace& ws, int rows) {
    QTRY_COMPARE_WITH_TIMEOUT(ws.model()->rowCount(), rows, 5000);
    QTRY_VERIFY_WITH_TIMEOUT(ws.model()->isSettled() && ws.model()->runId(rows - 1) >= 0, 5000);
  }

  /// A finished run whose last-stage loss is stored every `every` steps with value
  /// 1 + step / 1000, so every stored step reads as its own value.
  static int64_t addSteppedRun(storage::RunStore& store, int steps, int every) {
    auto spec = runSpec("stepped", {2});
    storage::NewRun run;
    run.name = spec.name;
    run.mode = "local";
    run.specJson = engine::specToJson(spec);
    run.modelKind = "mlp";
    run.totalSteps = steps;
    run.batchSize = 32;
    for (int k = 0; k < spec.stageCount(); ++k) {
      storage::StageRecord s;
      s.index = k;
      run.stages.push_back(s);
    }
    auto& writer = store.writer();
    const int64_t id = writer.createRun(run);
    std::vector<storage::PointInput> points;
    for (int step = 0; step < steps; step += every)
      points.push_back({"loss", spec.stageCount() - 1, -1, step, step * 0.01, 1 + step / 1000.0});
    writer.appendPoints(id, std::move(points));
    storage::RunFinish finish;
    finish.status = storage::RunStatus::Completed;
    finish.steps = steps;
    writer.finishRun(id, finish);
    writer.flush();
    return id;
  }

  /// A finished local run re-partitioned live at `changeStep` from `before` to `after` cuts:
  /// stage k's loss is 10 + k before the change and 20 + k from it on, so a drawn value names
  /// the stage and the partition it came from. The store holds the end's stages, as the engine
  /// leaves them, and the engine's event for the change.
  static int64_t addRepartitionedRun(storage::RunStore& store, const std::vector<int>& before,
                                     const std::vector<int>& after, int changeStep, int steps) {
    auto spec = runSpec("steered", before);
    spec.model.hidden = {32, 32, 32, 32, 32};
    storage::NewRun run;
    run.name = spec.name;
    run.mode = "local";
    run.specJson = engine::specToJson(spec);
    run.modelKind = "mlp";
    run.totalSteps = steps;
    run.batchSize = 32;
    const int stagesBefore = int(before.size()) + 1, stagesAfter = int(after.size()) + 1;
    for (int k = 0; k < stagesBefore; ++k) {
      storage::StageRecord s;
      s.index = k;
      run.stages.push_back(s);
    }
    auto& writer = store.writer();
    const int64_t id = writer.createRun(run);
    std::vector<storage::PointInput> points;
    for (int step = 0; step < steps; ++step) {
      const bool late = step >= changeStep;
      for (int k = 0; k < (late ? stagesAfter : stagesBefore); ++k)
        points.push_back({"loss", k, -1, step, step * 0.01, (late ? 20.0 : 10.0) + k});
    }
    writer.appendPoints(id, std::move(points));
    const auto cuts = [](const std::vector<int>& c) { return cutsLabel(c).toStdString(); };
    // The engine's message (run_impl.cpp, moveCuts), built by appending.
    std::string message = "repartition at step ";
    message += std::to_string(changeStep);
    message += ": partition.cuts=" + cuts(after);
    message += " (was " + cuts(before) + ")";
    message += "; pause 0.010000 s (drain 0.005000 s, rebuild 0.005000 s); ";
    message += std::to_string(stagesAfter) + " stage(s)";
    writer.appendEvent(id, {"info", changeStep * 0.01, -1, message});
    storage::RunFinish finish;
    finish.status = storage::RunStatus::Completed;
    finish.steps = steps;
    finish.replaceStages = true;
    for (int k = 0; k < stagesAfter; ++k) {
      storage::StageRecord s;
      s.index = k;
      finish.stages.push_back(s);
    }
    writer.finishRun(id, finish);
    writer.flush();
    return id;
  }

  /// The table widget's cells (header row first), as the test reads them.
  static std::vector<QStringList> cells(const QAbstractItemModel* model) {
    std::vector<QStringList> out;
    QStringList header;
    for (int c = 0; c < model->columnCount(); ++c)
      header << model->headerData(c, Qt::Horizontal, Qt::DisplayRole).toString();
    out.push_back(header);
    for (int r = 0; r < model->rowCount(); ++r) {
      QStringList row;
      for (int c = 0; c < model->columnCount(); ++c)
        row << model->data(model->index(r, c), Qt::DisplayRole).toString();
      out.push_back(row);
    }
    return out;
  }

 private Q_SLOTS:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
  void init() { ComparePanel::forgetOverlaySettings(); }  // the overlay's kept choices

  void csvOfAModelEqualsItsCells() {
    QStandardItemModel model(3, 3);
    model.setHorizontalHeaderLabels(
        {QStringLiteral("key"), QStringLiteral("a, b"), QStringLiteral("say \"x\"")});
    const QString values[3][3] = {
        {QStringLiteral("plain"), QStringLiteral("1,5"), QStringLiteral("he said \"hi\"")},
        {QStringLiteral("two\nlines"), QString(), QStringLiteral("\"")},
        {QStringLiteral("x"), QStringLiteral("y"), QStringLiteral("z")}};
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) model.setItem(r, c, new QStandardItem(values[r][c]));
    const QString csv = tableCsv(&model);
    // Quoting as RFC 4180: only the fields that need it, quotes doubled.
    QVERIFY2(csv.startsWith(QStringLiteral("key,\"a, b\",\"say \"\"x\"\"\"\n")), qPrintable(csv));
    QVERIFY2(csv.contains(QStringLiteral("plain,\"1,5\",\"he said \"\"hi\"\"\"\n")),
             qPrintable(csv));
    QVERIFY2(csv.endsWith(QStringLiteral("x,y,z\n")), qPrintable(csv));
    // Read back, every cell is the model's.
    QCOMPARE(parseCsv(csv), cells(&model));
    // A column the view hides is left out.
    QTableView view;
    view.setModel(&model);
    view.setColumnHidden(1, true);
    const auto hidden = parseCsv(tableCsv(&model, &view));
    QCOMPARE(hidden.front(), (QStringList{QStringLiteral("key"), QStringLiteral("say \"x\"")}));
    QCOMPARE(hidden[1], (QStringList{values[0][0], values[0][2]}));
    // Written to a file, the same text.
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("t.csv"));
    QCOMPARE(writeTableCsv(&model, path), QString());
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QCOMPARE(QString::fromUtf8(file.readAll()), csv);
    QVERIFY(!writeTableCsv(&model, dir.filePath(QStringLiteral("no/such/dir/t.csv"))).isEmpty());
  }

  void exportDialogsStartInTheLastExportFolder() {
    // issue 36: the run list's and the tables' export dialogs opened in the working directory
    // (the source checkout). They start in the last export folder and keep the one chosen.
    QTemporaryDir work;
    QTemporaryDir first;
    QTemporaryDir second;
    QVERIFY(work.isValid() && first.isValid() && second.isValid());
    const QString before = QDir::currentPath();
    QVERIFY(QDir::setCurrent(work.path()));
    AppSettings::setLastExportDir(first.path());
    test::TempStore t;
    addRun(*t.store, runSpec("one", {2}), 0.8);
    RunsWorkspace ws(t.store);
    ws.show();
    waitLoaded(ws, 1);
    const QString firstDir = QDir(first.path()).canonicalPath();
    const QString secondDir = QDir(second.path()).canonicalPath();
    const auto canonical = [](const QString& dir) { return QDir(dir).canonicalPath(); };
    QCOMPARE(canonical(dialogFolder([&] { ws.exportButton()->click(); })), firstDir);
    // The folder chosen is the next dialog's, the run list's and every table's alike.
    const QString points = QDir(second.path()).filePath(QStringLiteral("points.csv"));
    QCOMPARE(canonical(dialogFolder([&] { ws.exportButton()->click(); }, points)), firstDir);
    QCOMPARE(canonical(AppSettings::lastExportDir()), secondDir);
    QTRY_VERIFY_WITH_TIMEOUT(QFileInfo::exists(points), 5000);
    QCOMPARE(canonical(dialogFolder([&] { ws.exportTableAction()->trigger(); })), secondDir);
    const QString list = QDir(first.path()).filePath(QStringLiteral("list.csv"));
    QCOMPARE(canonical(dialogFolder([&] { ws.exportTableAction()->trigger(); }, list)), secondDir);
    QTRY_VERIFY_WITH_TIMEOUT(QFileInfo::exists(list), 5000);
    QCOMPARE(canonical(AppSettings::lastExportDir()), firstDir);
    QVERIFY(QDir::setCurrent(before));
  }

  void ctrlCCopiesTheSelection() {
    QTableWidget table(3, 3);
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c)
        table.setItem(r, c, new QTableWidgetItem(QStringLiteral("r%1c%2").arg(r).arg(c)));
    table.setHorizontalHeaderLabels(
        {QStringLiteral("a"), QStringLiteral("b\tB"), QStringLiteral("c")});
    attachTableExport(&table, QStringLiteral("t"));
    table.show();
    QVERIFY(QTest::qWaitForWindowExposed(&table));
    table.setFocus();
    QGuiApplication::clipboard()->clear();
    auto* selection = table.selectionModel();
    for (int r : {1, 2})
      for (int c : {0, 2})
        selection->select(table.model()->index(r, c), QItemSelectionModel::Select);
    table.setCurrentCell(1, 0, QItemSelectionModel::NoUpdate);
    QTest::keyClick(&table, Qt::Key_C, Qt::ControlModifier);
    // Every selected cell, not the current one alone: rows by line, columns by tab, after one
    // line of the columns' headers (issue 36: a spreadsheet paste had no column names).
    QCOMPARE(QGuiApplication::clipboard()->text(),
             QStringLiteral("a\tc\nr1c0\tr1c2\nr2c0\tr2c2\n"));
    // A hole inside the selection's rectangle stays an empty field.
    selection->clearSelection();
    selection->select(table.model()->index(0, 0), QItemSelectionModel::Select);
    selection->select(table.model()->index(1, 1), QItemSelectionModel::Select);
    QTest::keyClick(&table, Qt::Key_C, Qt::ControlModifier);
    QCOMPARE(QGuiApplication::clipboard()->text(), QStringLiteral("a\tb B\nr0c0\t\n\tr1c1\n"));
    // A single cell is its value alone.
    selection->clearSelection();
    selection->select(table.model()->index(2, 1), QItemSelectionModel::Select);
    QTest::keyClick(&table, Qt::Key_C, Qt::ControlModifier);
    QCOMPARE(QGuiApplication::clipboard()->text(), QStringLiteral("r2c1\n"));
  }

  void everyRunsTableExports() {
    test::TempStore t;
    addRun(*t.store, runSpec("one", {2}), 0.8);
    RunsWorkspace ws(t.store);
    // The run list, the Groups tables and the spec diff have the menu's Copy and Export CSV….
    for (QAbstractItemView* view : std::initializer_list<QAbstractItemView*>{
             ws.table(), ws.groupTable()->table(), ws.groupTable()->tunedTable(),
             ws.comparePanel()->diffTable()}) {
      QCOMPARE(view->contextMenuPolicy(), Qt::CustomContextMenu);
      bool exports = false;
      for (QAction* a : view->findChildren<QAction*>())
        exports |= a->text() == QStringLiteral("Export CSV…");
      QVERIFY2(exports, qPrintable(view->objectName()));
    }
    QVERIFY(ws.exportTableAction());
  }

  void thePaletteFindsTheRunListExport() {
    test::TempStore t;
    QWidget window;
    auto* ws = new RunsWorkspace(t.store, &window);
    Q_UNUSED(ws);
    CommandPalette palette(nullptr, &window);
    palette.popup();
    QTest::keyClicks(palette.searchEdit(), QStringLiteral("export run list csv"));
    QTRY_VERIFY(palette.list()->topLevelItemCount() > 0);
    QAction* found = palette.actionAt(0);
    QVERIFY(found);
    QCOMPARE(found->text(), QStringLiteral("Export the run list as CSV…"));
    palette.hide();
  }

  void runListHasColumnsForTheKeysThatDiffer() {
    test::TempStore t;
    auto a = runSpec("s1-a", {2});
    auto b = runSpec("s1-b", {2});
    b.train.lr = 3e-4;
    auto c = runSpec("s2-c", {2});
    c.train.seed = 2;
    c.train.maxSteps = 300;
    const int64_t idA = addRun(*t.store, a, 0.8);
    const int64_t idB = addRun(*t.store, b, 0.8);
    addRun(*t.store, c, 0.8);
    RunsWorkspace ws(t.store);
    ws.resize(1400, 800);
    ws.show();
    waitLoaded(ws, 3);
    RunTableModel* model = ws.model();
    // The three keys that differ, each with two values: as researchers compare them (the
    // name aside), lr, then seed, then the rest.
    QTRY_COMPARE_WITH_TIMEOUT(
        model->keyColumns(),
        (std::vector<std::string>{"train.lr", "train.seed", "train.max_steps"}), 5000);
    const int first = RunTableModel::kColumnCount;
    QCOMPARE(model->headerData(first, Qt::Horizontal, Qt::DisplayRole).toString(),
             QStringLiteral("train.lr"));
    QVERIFY(!ws.table()->isColumnHidden(first + 2));
    QVERIFY(ws.table()->isColumnHidden(first + 3));  // unused ones hide
    const auto cell = [&](int64_t id, int column) {
      return model->data(model->index(model->rowOf(id), column), Qt::DisplayRole).toString();
    };
    QCOMPARE(cell(idB, first).toDouble(), 3e-4);
    QCOMPARE(cell(idA, first).toDouble(), 1e-3);
    QCOMPARE(cell(idA, first + 1).toInt(), 1);

    // Ctrl+C on two selected rows: the shown columns, tab-separated.
    ws.table()->selectRow(model->rowOf(idA));
    ws.table()->selectionModel()->select(model->index(model->rowOf(idB), 0),
                                         QItemSelectionModel::Select | QItemSelectionModel::Rows);
    QVERIFY(copyTableSelection(ws.table()));
    const QStringList lines =
        QGuiApplication::clipboard()->text().split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 3);  // the headers, then the two rows
    QCOMPARE(lines.front().split(QLatin1Char('\t')).size(), RunTableModel::kColumnCount + 3);
    QVERIFY2(lines.front().split(QLatin1Char('\t')).contains(QStringLiteral("train.lr")),
             qPrintable(lines.front()));
    QVERIFY(!lines.at(1).contains(QStringLiteral("train.lr")));
    // In the order the table shows them: the key columns right after Name (the walkthrough found
    // the model's order, "# Name Date Model …", under a table reading "# Name train.lr …").
    QStringList shownOrder;
    auto* header = ws.table()->horizontalHeader();
    for (int v = 0; v < header->count(); ++v)
      if (!header->isSectionHidden(header->logicalIndex(v)))
        shownOrder << model->headerData(header->logicalIndex(v), Qt::Horizontal, Qt::DisplayRole)
                          .toString();
    QCOMPARE(lines.front().split(QLatin1Char('\t')), shownOrder);
    // The CSV has the shown columns, key columns included.
    const auto csv = parseCsv(tableCsv(model, ws.table()));
    QCOMPARE(int(csv.size()), 4);
    QCOMPARE(csv.front().size(), RunTableModel::kColumnCount + 3);
    QCOMPARE(csv.front().back(), QStringLiteral("train.max_steps"));

    // The list changes: only the seed-1 runs, and only the learning rate differs.
    QTest::keyClicks(ws.searchEdit(), QStringLiteral("s1-"));
    QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), 2, 5000);
    QTRY_COMPARE_WITH_TIMEOUT(model->keyColumns(), (std::vector<std::string>{"train.lr"}), 5000);
    QVERIFY(!ws.table()->isColumnHidden(first));
    QVERIFY(ws.table()->isColumnHidden(first + 1));
  }

  // A key the run's mode does not read (a local run's pipeline.schedule) is no setting of that
  // run: "—" in its cell, and no column only because such runs carry another value of it.
  void keysAModeDoesNotReadAreBlankAndDoNotDiffer() {
    const auto withMode = [](const char* name, engine::Mode mode, const char* schedule) {
      auto spec = runSpec(name, {2});
      spec.mode = mode;
      spec.pipeline.schedule = schedule;
      return spec;
    };
    {
      test::TempStore t;
      addRun(*t.store, withMode("local", engine::Mode::Local, "gpipe"), 0.8);
      addRun(*t.store, withMode("pipe", engine::Mode::Pipeline, "1f1b"), 0.8);
      RunsWorkspace ws(t.store);
      ws.show();
      waitLoaded(ws, 2);
      // Only the mode differs, and the Mode column shows it: no key column.
      QTRY_VERIFY_WITH_TIMEOUT(ws.model()->isSettled(), 5000);
      QCOMPARE(ws.model()->keyColumns(), (std::vector<std::string>{}));
    }
    test::TempStore t;
    const int64_t local = addRun(*t.store, withMode("local", engine::Mode::Local, "gpipe"), 0.8);
    addRun(*t.store, withMode("pipe-a", engine::Mode::Pipeline, "1f1b"), 0.8);
    const int64_t gpipe =
        addRun(*t.store, withMode("pipe-b", engine::Mode::Pipeline, "gpipe"), 0.8);
    RunsWorkspace ws(t.store);
    ws.show();
    waitLoaded(ws, 3);
    RunTableModel* model = ws.model();
    // The schedule differs among the pipeline runs (the mode is the Mode column's).
    QTRY_VERIFY_WITH_TIMEOUT(model->keyColumns().size() == 1, 5000);
    const auto& keys = model->keyColumns();
    const auto at = std::find(keys.begin(), keys.end(), "pipeline.schedule");
    QVERIFY(at != keys.end());
    const int column = RunTableModel::kColumnCount + int(at - keys.begin());
    const auto cell = [&](int64_t id) {
      return model->data(model->index(model->rowOf(id), column), Qt::DisplayRole).toString();
    };
    QCOMPARE(cell(local), QStringLiteral("—"));
    QCOMPARE(cell(gpipe), QStringLiteral("gpipe"));
  }

  void keyColumnsAreCappedComparedKeysFirst() {
    test::TempStore t;
    for (int i = 0; i < 4; ++i) {
      auto spec = runSpec("r" + std::to_string(i), {2});
      spec.train.seed = uint64_t(i + 1);    // 4 values
      spec.train.lr = i < 2 ? 1e-3 : 2e-3;  // 2 values
      spec.train.batchSize = 16 + (i % 3);  // 3 values
      spec.train.maxSteps = 100 + 10 * (i % 2);
      spec.probe.interval = 10 + i % 2;
      spec.probe.batchSize = 64 + i % 2;
      spec.eval.interval = 50 + i % 2;
      addRun(*t.store, spec, 0.5);
    }
    RunsWorkspace ws(t.store);
    ws.show();
    waitLoaded(ws, 4);
    const auto& keys = ws.model()->keyColumns();
    QTRY_COMPARE_WITH_TIMEOUT(int(ws.model()->keyColumns().size()), RunTableModel::kMaxKeyColumns,
                              5000);
    // What a researcher compares first (issue 36: eval.interval came before train.lr), then
    // the rest, intervals and measurement keys last; within a rank the most differing first.
    QCOMPARE(keys[0], std::string("train.lr"));
    QCOMPARE(keys[1], std::string("train.seed"));
    QCOMPARE(keys[2], std::string("train.batch_size"));
    QCOMPARE(keys[3], std::string("train.max_steps"));
    for (size_t i = 4; i < keys.size(); ++i)
      QVERIFY2(RunTableModel::keyRank(keys[i]) >= RunTableModel::keyRank(keys[3]), keys[i].c_str());
  }

  void runListExportLoadsEveryPage() {
    test::TempStore t;
    const int runs = RunTableModel::kPageSize + 15;
    for (int i = 0; i < runs; ++i) addRun(*t.store, runSpec("r" + std::to_string(i), {2}), 0.5, 2);
    RunsWorkspace ws(t.store);
    ws.resize(900, 500);
    ws.show();
    QTRY_COMPARE_WITH_TIMEOUT(ws.model()->rowCount(), runs, 5000);
    QTRY_VERIFY_WITH_TIMEOUT(ws.model()->isSettled(), 5000);
    QVERIFY(ws.model()->loadedPageCount() < 2);  // only what was scrolled to
    bool ready = false;
    ws.model()->loadAll([&] { ready = true; });
    QTRY_VERIFY_WITH_TIMEOUT(ready, 10000);
    const auto csv = parseCsv(tableCsv(ws.model(), ws.table()));
    QCOMPARE(int(csv.size()), runs + 1);
    for (const auto& row : csv) QVERIFY(!row.contains(QStringLiteral("…")));
  }

  void runListCsvCarriesStoredNumbers() {
    // Issue 36's walkthrough: the run list's CSV said "14.5 k" for 14484.3 samples/s and
    // "55.2 s"; it carries the stored numbers, units in the header. Ctrl+C keeps the text shown.
    test::TempStore t;
    storage::NewRun run;
    run.name = "fast";
    run.mode = "local";
    run.specJson = engine::specToJson(runSpec("fast", {2}));
    run.modelKind = "mlp";
    run.totalSteps = 10;
    run.batchSize = 32;
    for (int k = 0; k < 2; ++k) {
      storage::StageRecord stage;
      stage.index = k;
      run.stages.push_back(stage);
    }
    auto& writer = t.store->writer();
    const int64_t id = writer.createRun(run);
    storage::RunFinish finish;
    finish.status = storage::RunStatus::Completed;
    finish.steps = 10;
    finish.testAccuracy = 0.718345;
    finish.samplesPerSec = 14484.3;
    finish.wallSeconds = 55.234;
    writer.finishRun(id, finish);
    writer.flush();
    RunsWorkspace ws(t.store);
    ws.show();
    waitLoaded(ws, 1);
    const auto csv = parseCsv(tableCsv(ws.model(), ws.table()));
    QCOMPARE(int(csv.size()), 2);
    const auto field = [&](const QString& header) {
      const int c = int(csv.front().indexOf(header));
      return c >= 0 ? csv[1][c] : QStringLiteral("(no column %1)").arg(header);
    };
    QCOMPARE(field(QStringLiteral("Samples/s")), QStringLiteral("14484.3"));
    QCOMPARE(field(QStringLiteral("Duration (s)")), QStringLiteral("55.234"));
    QCOMPARE(field(QStringLiteral("Test acc.")), QStringLiteral("0.718345"));
    QCOMPARE(field(QStringLiteral("#")), QString::number(id));
    const auto shown = [&](int column) {
      return ws.model()->data(ws.model()->index(0, column), Qt::DisplayRole).toString();
    };
    QVERIFY2(shown(RunTableModel::kSamplesPerSec) != QStringLiteral("14484.3"),
             qPrintable(shown(RunTableModel::kSamplesPerSec)));
    ws.table()->selectRow(0);
    QVERIFY(copyTableSelection(ws.table()));
    QVERIFY2(QGuiApplication::clipboard()->text().contains(shown(RunTableModel::kDuration)),
             qPrintable(QGuiApplication::clipboard()->text()));
  }

  // A run as the walkthrough's #27 (issue 36): stopped at step 418 with a checkpoint (the stop
  // evaluates on the whole test set), resumed, periodic evaluations on eval.max_samples every
  // 500 steps, completed at 3000 with the final whole-set evaluation, the summary's value.
  static int64_t addResumedRun(storage::RunStore& store) {
    storage::NewRun run;
    run.name = "ckpt-local";
    run.mode = "local";
    run.specJson = engine::specToJson(runSpec("ckpt-local", {2}));
    run.modelKind = "mlp";
    run.totalSteps = 3000;
    run.batchSize = 32;
    for (int k = 0; k < 2; ++k) {
      storage::StageRecord stage;
      stage.index = k;
      run.stages.push_back(stage);
    }
    auto& writer = store.writer();
    const int64_t id = writer.createRun(run);
    std::vector<storage::PointInput> points;
    const std::pair<int64_t, double> evals[] = {{418, 0.8146}, {499, 0.82},   {999, 0.788},
                                                {1499, 0.846}, {1999, 0.806}, {2499, 0.856},
                                                {3000, 0.857}};
    for (const auto& [step, value] : evals)
      points.push_back({"test_accuracy", -1, -1, step, step * 0.01, value});
    writer.appendPoints(id, std::move(points));
    writer.appendEvent(id, {"stopped", 4.6, -1, "stopped after 418 steps"});
    writer.appendEvent(id, {"info", 4.7, -1, "resumed from /tmp/ckpt/step-418 at step 418"});
    writer.appendEvent(id, {"completed", 30.1, -1, "completed after 3000 steps"});
    storage::RunFinish finish;
    finish.status = storage::RunStatus::Completed;
    finish.steps = 3000;
    finish.testAccuracy = 0.857;
    writer.finishRun(id, finish);
    writer.flush();
    return id;
  }

  static QCPGraph* graphNamed(QCustomPlot* plot, const QString& part) {
    for (int g = 0; g < plot->graphCount(); ++g)
      if (plot->graph(g)->name().contains(part)) return plot->graph(g);
    return nullptr;
  }

  void overlayDrawsEveryStoredPointZoomedIn() {
    // Issue 36's walkthrough: a run of 8,000 points zoomed to 240 steps drew every 8th point
    // (corners at 3649, 3657, ...), the extremes between never drawn. Zoomed in, every stored
    // point in view is drawn; over the whole run, each pixel column's extremes are.
    test::TempStore t;
    storage::NewRun run;
    run.name = "long";
    run.mode = "local";
    run.specJson = engine::specToJson(runSpec("long", {2}));
    run.modelKind = "mlp";
    run.totalSteps = 8000;
    run.batchSize = 32;
    for (int k = 0; k < 2; ++k) {
      storage::StageRecord stage;
      stage.index = k;
      run.stages.push_back(stage);
    }
    auto& writer = t.store->writer();
    const int64_t id = writer.createRun(run);
    std::map<int64_t, double> stored;
    std::vector<storage::PointInput> points;
    for (int64_t step = 0; step < 8000; ++step) {
      const double v = step == 3653 ? 5000.0 : 1000.0 + double((step * 7919) % 97);
      stored[step] = v;
      points.push_back({"samples_per_sec", -1, -1, step, step * 0.01, v});
    }
    writer.appendPoints(id, std::move(points));
    storage::RunFinish finish;
    finish.status = storage::RunStatus::Completed;
    finish.steps = 8000;
    writer.finishRun(id, finish);
    writer.flush();
    StoreExecutor executor(t.store);
    ComparePanel compare(&executor);
    compare.resize(1000, 600);
    compare.show();
    QVERIFY(QTest::qWaitForWindowExposed(&compare));
    compare.alignCombo()->setCurrentIndex(ComparePanel::kXStep);
    const auto keepNoAxis =
        qScopeGuard([] { QSettings().remove(QStringLiteral("runs/overlay_x_axis")); });
    QVERIFY(compare.selectMetric("samples_per_sec", -1));
    compare.setRuns({id});
    QTRY_VERIFY_WITH_TIMEOUT(compare.isLoaded(), 5000);
    QCustomPlot* overlay = compare.overlayPlot();
    QCPGraph* line = graphNamed(overlay, QStringLiteral("#%1 long").arg(id));
    QVERIFY(line);
    const auto drawn = [&] {
      std::map<int64_t, double> out;
      for (auto it = line->data()->constBegin(); it != line->data()->constEnd(); ++it)
        if (std::isfinite(it->value)) out[int64_t(std::llround(it->key))] = it->value;
      return out;
    };
    // The whole run: the spike is drawn, and so is each column's lowest point.
    QVERIFY(drawn().count(3653) && drawn().at(3653) == 5000.0);
    QVERIFY(drawn().size() < stored.size());  // decimated, not all 8,000
    // Zoomed to 240 steps: each of them.
    overlay->xAxis->setRange(3600, 3840);
    overlay->replot();
    const auto zoomed = drawn();
    int missing = 0;
    for (int64_t step = 3600; step <= 3840; ++step) {
      const auto it = zoomed.find(step);
      missing += it == zoomed.end() || it->second != stored[step];
    }
    QVERIFY2(missing == 0, qPrintable(QStringLiteral("%1 of 241 steps not drawn").arg(missing)));
    // Panned on: the new range is drawn in full too.
    overlay->xAxis->setRange(6000, 6240);
    QVERIFY(drawn().count(6123) && drawn().at(6123) == stored[6123]);
  }

  void overlayDrawsWholeTestSetEvaluationsApart_data() {
    QTest::addColumn<int>("xChoice");
    QTest::addColumn<double>("factor");  // step to the x axis
    QTest::newRow("step") << int(ComparePanel::kXStep) << 1.0;
    QTest::newRow("samples") << int(ComparePanel::kXSamples) << 32.0;
  }

  void overlayDrawsWholeTestSetEvaluationsApart() {
    // The stop's and the final whole-test-set evaluations are hollow diamonds of their own, off
    // the 500-sample line, each named in the legend and in the read-out (issue 36).
    QFETCH(int, xChoice);
    QFETCH(double, factor);
    test::TempStore t;
    const int64_t id = addResumedRun(*t.store);
    const int64_t plain = addRun(*t.store, runSpec("plain", {2}), 0.8);
    StoreExecutor executor(t.store);
    ComparePanel compare(&executor);
    compare.resize(1200, 700);
    compare.show();
    QVERIFY(QTest::qWaitForWindowExposed(&compare));
    compare.alignCombo()->setCurrentIndex(xChoice);
    // The x axis is kept for next time: not for the next test.
    const auto keepNoAxis =
        qScopeGuard([] { QSettings().remove(QStringLiteral("runs/overlay_x_axis")); });
    QVERIFY(compare.selectMetric("test_accuracy", -1));
    compare.setRuns({id, plain});
    QTRY_VERIFY_WITH_TIMEOUT(compare.isLoaded(), 5000);
    QCustomPlot* overlay = compare.overlayPlot();
    overlay->replot();
    QCPGraph* line = graphNamed(overlay, QStringLiteral("#%1 ckpt-local").arg(id));
    QCPGraph* marks = graphNamed(overlay, QStringLiteral("whole test set"));
    QVERIFY(line && marks && line != marks);
    QVERIFY(marks->name().startsWith(QStringLiteral("#%1 ").arg(id)));
    QVERIFY(overlay->legend->hasItemWithPlottable(marks));
    // The line: the five periodic evaluations only.
    std::vector<std::pair<double, double>> drawn;
    for (auto it = line->data()->constBegin(); it != line->data()->constEnd(); ++it)
      if (std::isfinite(it->value)) drawn.emplace_back(it->key / factor, it->value);
    const std::vector<std::pair<double, double>> periodic = {
        {499, 0.82}, {999, 0.788}, {1499, 0.846}, {1999, 0.806}, {2499, 0.856}};
    QCOMPARE(drawn.size(), periodic.size());
    for (size_t k = 0; k < drawn.size(); ++k) {
      QCOMPARE(drawn[k].first, periodic[k].first);
      QCOMPARE(drawn[k].second, periodic[k].second);
    }
    // The marks: the stop's (step 418) and the final (step 3000), hollow diamonds, no line.
    QCOMPARE(marks->data()->size(), 2);
    QCOMPARE(marks->data()->at(0)->key, 418 * factor);
    QCOMPARE(marks->data()->at(0)->value, 0.8146);
    QCOMPARE(marks->data()->at(1)->key, 3000 * factor);
    QCOMPARE(marks->data()->at(1)->value, 0.857);
    QCOMPARE(marks->lineStyle(), QCPGraph::lsNone);
    QCOMPARE(marks->scatterStyle().shape(), QCPScatterStyle::ssDiamond);
    QCOMPARE(marks->scatterStyle().pen().color(), line->pen().color());
    QVERIFY(overlay->yAxis->range().contains(0.8146) &&
            overlay->xAxis->range().contains(3000 * factor));
    // A run with no stop and no end events, whose last point is not its summary's: no marks.
    QCOMPARE(graphNamed(overlay, QStringLiteral("#%1 plain").arg(plain))->data()->size(), 4);
    int markGraphs = 0;
    for (int g = 0; g < overlay->graphCount(); ++g)
      markGraphs += overlay->graph(g)->name().contains(QStringLiteral("whole test set"));
    QCOMPARE(markGraphs, 1);
    // The read-out at the final step names the whole-set value apart from the line's.
    moveTo(overlay, QPoint(int(overlay->xAxis->coordToPixel(3000 * factor)),
                           int(overlay->yAxis->coordToPixel(0.83))));
    QTRY_VERIFY(!compare.overlayFrame()->readout().isEmpty());
    const QString readout = compare.overlayFrame()->readout();
    QVERIFY2(readout.contains(QStringLiteral("whole test set: 0.857")), qPrintable(readout));
    QVERIFY2(readout.contains(QStringLiteral("ckpt-local: 0.856")), qPrintable(readout));
    moveTo(overlay, QPoint(int(overlay->xAxis->coordToPixel(418 * factor)),
                           int(overlay->yAxis->coordToPixel(0.83))));
    QTRY_VERIFY2(
        compare.overlayFrame()->readout().contains(QStringLiteral("whole test set: 0.8146")),
        qPrintable(compare.overlayFrame()->readout()));
    QVERIFY2(compare.overlayFrame()->readout().contains(QStringLiteral("ckpt-local: 0.82 (")),
             qPrintable(compare.overlayFrame()->readout()));
  }

  void overlayLegendHidesNoData() {
    // The legend sits beside the axis rect, not over it: a point under its box was hidden
    // (issue 36: run #32's step 22999 under the legend).
    test::TempStore t;
    const int64_t a = addRun(*t.store, runSpec("a-run-with-a-long-name", {2}), 0.80);
    const int64_t b = addRun(*t.store, runSpec("b", {2}), 0.90);
    StoreExecutor executor(t.store);
    ComparePanel compare(&executor);
    compare.resize(1200, 700);
    compare.show();
    QVERIFY(QTest::qWaitForWindowExposed(&compare));
    compare.setRuns({a, b});
    QTRY_VERIFY_WITH_TIMEOUT(compare.isLoaded(), 5000);
    QCustomPlot* overlay = compare.overlayPlot();
    overlay->replot();
    QVERIFY(overlay->legend->visible());
    QVERIFY(overlay->legend->itemCount() >= 2);
    const QRect legend = overlay->legend->outerRect();
    const QRect data = overlay->axisRect()->rect();
    QVERIFY2(!legend.intersects(data), qPrintable(QStringLiteral("legend %1,%2 %3x%4 over the "
                                                                 "axis rect %5,%6 %7x%8")
                                                      .arg(legend.x())
                                                      .arg(legend.y())
                                                      .arg(legend.width())
                                                      .arg(legend.height())
                                                      .arg(data.x())
                                                      .arg(data.y())
                                                      .arg(data.width())
                                                      .arg(data.height())));
    QVERIFY(data.width() > 600);  // the column takes what its entries need, not half the plot
    // Nothing selected: no empty legend box beside the plot.
    compare.setRuns({});
    QTRY_VERIFY_WITH_TIMEOUT(compare.isLoaded(), 5000);
    QVERIFY(!overlay->legend->visible());
  }

  void overlayWheelZoomsStepsAndTheReadoutLeavesWithTheMouse() {
    test::TempStore t;
    const int64_t a = addRun(*t.store, runSpec("a", {2}), 0.80);
    StoreExecutor executor(t.store);
    ComparePanel compare(&executor);
    compare.resize(1200, 700);
    compare.show();
    QVERIFY(QTest::qWaitForWindowExposed(&compare));
    compare.setRuns({a});
    QTRY_VERIFY_WITH_TIMEOUT(compare.isLoaded(), 5000);
    QCustomPlot* overlay = compare.overlayPlot();
    overlay->replot();
    const QCPRange x = overlay->xAxis->range(), y = overlay->yAxis->range();
    const QPointF at = overlay->axisRect()->rect().center();
    QWheelEvent wheel(at, overlay->mapToGlobal(at), QPoint(), QPoint(0, 120), Qt::NoButton,
                      Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(overlay, &wheel);
    QVERIFY(overlay->xAxis->range().size() < x.size());  // zoomed in on the steps
    QCOMPARE(overlay->yAxis->range().lower, y.lower);    // the values stay in view
    QCOMPARE(overlay->yAxis->range().upper, y.upper);
    moveTo(overlay, at.toPoint());
    QTRY_VERIFY(!compare.overlayFrame()->readout().isEmpty());
    QEvent leave(QEvent::Leave);
    QApplication::sendEvent(overlay, &leave);
    QVERIFY(compare.overlayFrame()->readout().isEmpty());
  }

  void overlayHoverReadsAStoredPoint() {
    test::TempStore t;
    // 900 points every 2 steps: the read-out names a stored step and its stored value wherever
    // the mouse is between them.
    const int64_t id = addSteppedRun(*t.store, 1800, 2);
    StoreExecutor executor(t.store);
    ComparePanel compare(&executor);
    compare.resize(1200, 700);
    compare.show();
    QVERIFY(QTest::qWaitForWindowExposed(&compare));
    compare.setRuns({id});
    QTRY_VERIFY_WITH_TIMEOUT(compare.isLoaded(), 5000);
    QCustomPlot* overlay = compare.overlayPlot();
    overlay->replot();
    QCOMPARE(overlay->graphCount(), 1);
    // The stored points themselves (they fit the plot's pixel columns), not a grid between.
    QCOMPARE(overlay->graph(0)->data()->size(), 900);
    for (auto it = overlay->graph(0)->data()->constBegin();
         it != overlay->graph(0)->data()->constEnd(); ++it)
      QVERIFY2(std::fmod(it->key, 2.0) == 0, qPrintable(QString::number(it->key)));
    int checked = 0;
    for (double at = 300.0; at < 330.0; at += 0.7) {
      const int px = int(overlay->xAxis->coordToPixel(at));
      moveTo(overlay, QPoint(px, int(overlay->yAxis->coordToPixel(1.3))));
      QTRY_VERIFY(compare.overlayFrame()->readout().startsWith(QStringLiteral("step ")));
      const QString readout = compare.overlayFrame()->readout();
      const int step = readout.section(QLatin1Char('\n'), 0, 0).mid(5).toInt();
      // The step is one that was stored, and the value is the one stored there.
      QVERIFY2(step % 2 == 0, qPrintable(readout));
      const QString line =
          QStringLiteral("%1: %2").arg(overlay->graph(0)->name()).arg(1 + step / 1000.0, 0, 'g', 4);
      QVERIFY2(readout.contains(line), qPrintable(readout + QStringLiteral(" lacks ") + line));
      ++checked;
    }
    QVERIFY(checked > 10);
  }

  void lastStageLineBreaksAtARepartition_data() {
    QTest::addColumn<std::vector<int>>("before");
    QTest::addColumn<std::vector<int>>("after");
    QTest::newRow("join 4 -> 2") << std::vector<int>{1, 2, 3} << std::vector<int>{2};
    QTest::newRow("split 4 -> 5") << std::vector<int>{1, 2, 3} << std::vector<int>{1, 2, 3, 4};
    QTest::newRow("move, still 3") << std::vector<int>{1, 3} << std::vector<int>{2, 4};
  }

  // Issue 36: "Loss · last stage" of a run whose stage count changed mid-run drew one line from
  // S4's points before the change and S2's after (or S2's middle-stage loss throughout).
  void lastStageLineBreaksAtARepartition() {
    QFETCH(std::vector<int>, before);
    QFETCH(std::vector<int>, after);
    const int change = 300, steps = 600;
    QSettings().remove(QStringLiteral("runs/overlay_x_axis"));
    test::TempStore t;
    const int64_t id = addRepartitionedRun(*t.store, before, after, change, steps);
    StoreExecutor executor(t.store);
    ComparePanel compare(&executor);
    compare.resize(1200, 700);
    compare.show();
    QVERIFY(QTest::qWaitForWindowExposed(&compare));
    QVERIFY(compare.selectMetric(engine::series::kLoss, -2));
    for (const int x : {ComparePanel::kXStep, ComparePanel::kXTime}) {
      compare.alignCombo()->setCurrentIndex(x);
      compare.setRuns({id});
      compare.reload();
      QTRY_VERIFY_WITH_TIMEOUT(compare.isLoaded(), 5000);
      QCustomPlot* overlay = compare.overlayPlot();
      QCOMPARE(overlay->graphCount(), 1);
      const double at = x == ComparePanel::kXTime ? change * 0.01 : change;
      const double early = 10.0 + double(before.size()), late = 20.0 + double(after.size());
      int earlyPoints = 0, latePoints = 0, gaps = 0;
      bool lastFinite = false;
      double lastKey = 0;
      for (auto it = overlay->graph(0)->data()->constBegin();
           it != overlay->graph(0)->data()->constEnd(); ++it) {
        if (!std::isfinite(it->value)) {
          gaps += lastFinite;
          lastFinite = false;
          continue;
        }
        // Each point is the last stage's of its partition: S4's before, S2's (S5's) after.
        const bool isLate = it->key >= at - 1e-9;
        QCOMPARE(it->value, isLate ? late : early);
        (isLate ? latePoints : earlyPoints)++;
        // No drawn segment joins a point before the change to one after it.
        if (lastFinite && before.size() != after.size())
          QVERIFY2(
              !(lastKey < at - 1e-9 && isLate),
              qPrintable(QStringLiteral("a segment joins x %1 to x %2").arg(lastKey).arg(it->key)));
        lastFinite = true;
        lastKey = it->key;
      }
      QVERIFY(earlyPoints > 10);
      QVERIFY(latePoints > 10);
      // A move that keeps the stage count keeps one unbroken line.
      QCOMPARE(gaps, before.size() != after.size() ? 1 : 0);
    }
    // Grouped (mean and band over the seeds): the mean line breaks at the change too.
    compare.alignCombo()->setCurrentIndex(ComparePanel::kXStep);
    compare.groupCombo()->setCurrentIndex(1);
    QTRY_VERIFY_WITH_TIMEOUT(compare.isLoaded(), 5000);
    QCOMPARE(compare.bands().size(), size_t(1));
    QCPGraph* line = nullptr;
    for (int g = 0; g < compare.overlayPlot()->graphCount(); ++g)
      if (compare.overlayPlot()->graph(g)->name() == compare.bands()[0].label)
        line = compare.overlayPlot()->graph(g);
    QVERIFY(line);
    int meanGaps = 0;
    for (auto it = line->data()->constBegin(); it != line->data()->constEnd(); ++it)
      meanGaps += !std::isfinite(it->value);
    QCOMPARE(meanGaps, before.size() != after.size() ? 1 : 0);
    compare.groupCombo()->setCurrentIndex(0);
    QSettings().remove(QStringLiteral("runs/overlay_x_axis"));  // the x axis is kept; not here
  }

  void overlayXAxisStepSamplesTimeCompute() {
    QSettings().remove(QStringLiteral("runs/overlay_x_axis"));
    test::TempStore t;
    const int64_t a = addRun(*t.store, runSpec("with-flops", {2}), 0.8, 200, "local", false,
                             R"({"train_flops": 6.4e9})");
    const int64_t b = addRun(*t.store, runSpec("no-flops", {2}), 0.7);
    StoreExecutor executor(t.store);
    auto compare = std::make_unique<ComparePanel>(&executor);
    compare->resize(1000, 700);
    compare->show();
    compare->setRuns({a, b});
    QTRY_VERIFY_WITH_TIMEOUT(compare->isLoaded(), 5000);
    QCustomPlot* overlay = compare->overlayPlot();
    const auto lastKey = [](const QCPGraph* g) { return (g->data()->constEnd() - 1)->key; };
    QCOMPARE(overlay->graphCount(), 2);
    const double lastStep = lastKey(overlay->graph(0));
    QVERIFY(std::abs(lastStep - 199) < 1e-9);
    QVERIFY(compare->axisNote()->isHidden());

    // Samples: step × batch size (the fixture's 32).
    compare->alignCombo()->setCurrentIndex(ComparePanel::kXSamples);
    QTRY_VERIFY_WITH_TIMEOUT(compare->isLoaded(), 5000);
    QCOMPARE(overlay->graphCount(), 2);
    QCOMPARE(lastKey(overlay->graph(0)), lastStep * 32);
    QCOMPARE(overlay->xAxis->label(), QStringLiteral("samples"));

    // Compute: the run with train_flops at step × 6.4e9 / 200 steps; the other is named.
    compare->alignCombo()->setCurrentIndex(ComparePanel::kXFlops);
    QTRY_VERIFY_WITH_TIMEOUT(compare->isLoaded(), 5000);
    QCOMPARE(overlay->graphCount(), 1);
    QVERIFY(overlay->graph(0)->name().startsWith(QStringLiteral("#%1 ").arg(a)));
    QCOMPARE(lastKey(overlay->graph(0)), lastStep * 6.4e9 / 200);
    QVERIFY(!compare->axisNote()->isHidden());
    QVERIFY2(compare->axisNote()->text().contains(QStringLiteral("#%1").arg(b)),
             qPrintable(compare->axisNote()->text()));
    // The read-out names FLOPs, not steps.
    overlay->replot();
    moveTo(overlay, QPoint(int(overlay->xAxis->coordToPixel(lastStep * 3.2e7 / 2)),
                           int(overlay->yAxis->coordToPixel(1))));
    QTRY_VERIFY(compare->overlayFrame()->readout().startsWith(QStringLiteral("FLOPs ")));

    // Wall time: the stored time of each point (the fixture's 0.01 s a step).
    compare->alignCombo()->setCurrentIndex(ComparePanel::kXTime);
    QTRY_VERIFY_WITH_TIMEOUT(compare->isLoaded(), 5000);
    QCOMPARE(overlay->graphCount(), 2);
    QVERIFY(std::abs(lastKey(overlay->graph(0)) - 1.99) < 0.02);
    QVERIFY(compare->axisNote()->isHidden());

    // The choice is kept for the next panel.
    compare->alignCombo()->setCurrentIndex(ComparePanel::kXSamples);
    compare.reset();
    ComparePanel again(&executor);
    QCOMPARE(again.alignCombo()->currentIndex(), int(ComparePanel::kXSamples));
    again.alignCombo()->setCurrentIndex(ComparePanel::kXStep);
  }

  void summaryBarLabelsNeverOverprint() {
    // Issue 36: 16 runs' bar labels read "#9#10#11…": thinned to what fits, by font metrics.
    test::TempStore t;
    std::vector<int64_t> ids;
    for (int r = 0; r < 16; ++r) ids.push_back(addSteppedRun(*t.store, 40, 4));
    StoreExecutor executor(t.store);
    ComparePanel compare(&executor);
    compare.resize(700, 600);
    compare.show();
    QVERIFY(QTest::qWaitForWindowExposed(&compare));
    compare.setRuns(ids);
    QTRY_VERIFY_WITH_TIMEOUT(compare.isLoaded(), 5000);
    QCustomPlot* summary = compare.summaryPlot();
    summary->replot();
    summary->replot();  // the ticks as laid out at the final axis width
    const QFontMetrics metrics(summary->xAxis->tickLabelFont());
    const QVector<double> ticks = summary->xAxis->tickVector();
    const QVector<QString> labels = summary->xAxis->tickVectorLabels();
    QVERIFY(ticks.size() >= 2);
    QVERIFY2(16 * metrics.horizontalAdvance(QStringLiteral("#%1").arg(ids.back())) >
                 summary->axisRect()->width(),
             "all 16 labels fit at this width: the test tests nothing");
    double lastRight = -1e9;
    for (qsizetype k = 0; k < ticks.size(); ++k) {
      const double centre = summary->xAxis->coordToPixel(ticks[k]);
      const double half = metrics.horizontalAdvance(labels[k]) / 2.0;
      QVERIFY2(centre - half > lastRight,
               qPrintable(labels[k] + QStringLiteral(" overprints the label before it")));
      lastRight = centre + half;
    }
  }

  void overlayMarksPointsOnlyWhereFewAreInView() {
    // Issue 36: 16 runs of 150-300 evaluations, every point a disc: the lines became blobs.
    // Markers where a run has few points in view, lines alone otherwise.
    test::TempStore t;
    const int64_t dense = addSteppedRun(*t.store, 1600, 1);
    const int64_t sparse = addSteppedRun(*t.store, 1600, 8);  // 200 points
    StoreExecutor executor(t.store);
    ComparePanel compare(&executor);
    compare.resize(1000, 600);
    compare.show();
    QVERIFY(QTest::qWaitForWindowExposed(&compare));
    compare.alignCombo()->setCurrentIndex(ComparePanel::kXStep);
    const auto keepNoAxis =
        qScopeGuard([] { QSettings().remove(QStringLiteral("runs/overlay_x_axis")); });
    compare.setRuns({dense, sparse});
    QTRY_VERIFY_WITH_TIMEOUT(compare.isLoaded(), 5000);
    QCustomPlot* overlay = compare.overlayPlot();
    const auto marked = [&] {
      int n = 0;
      for (int g = 0; g < overlay->graphCount(); ++g)
        n += overlay->graph(g)->scatterStyle().shape() == QCPScatterStyle::ssDisc;
      return n;
    };
    QCPGraph* line = graphNamed(overlay, QStringLiteral("#%1 stepped").arg(sparse));
    QVERIFY(line);
    QCOMPARE(line->data()->size(), 200);  // drawn as its points: the sparse kind
    QCOMPARE(marked(), 0);                // 200 in view, 4 px apart: a line
    overlay->xAxis->setRange(400, 560);   // 20 in view
    QCOMPARE(marked(), 1);
    QCOMPARE(line->scatterStyle().shape(), QCPScatterStyle::ssDisc);
  }
};

QTEST_MAIN(TestRunsTables)
#include "test_runs_tables.moc"
