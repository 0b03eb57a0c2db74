// The Runs workspace with studies: the study filter filling in while another process runs a
// study, runs grouped by every setting but the seed into a mean with a band, and the front view.
#include <qcustomplot.h>
#include <QAbstractItemView>
#include <QComboBox>
#include <QLabel>
#include <QMenu>
#include <QScrollArea>
#include <QTableView>
#include <QTableWidget>
#include <QToolButton>
#include <QtTest>
#include <cmath>
#include <map>

#include "common/app_settings.h"
#include "common/fake_services.h"
#include "common/format.h"
#include "common/table_export.h"
#include "main_window.h"
#include "run_store_fixture.h"
#include "runs/compare_panel.h"
#include "runs/run_table_model.h"
#include "runs/runs_workspace.h"
#include "runs/study_groups.h"
#include "runs/study_views.h"
#include "stagewise/study/points.h"
#include "stagewise/study/search.h"
#include "stagewise/study/study.h"

using namespace stagewise;
using namespace stagewise::ui;
using test::addRun;
using test::runSpec;

namespace {

engine::ExperimentSpec spec(const char* name, double lr, int seed) {
  auto s = runSpec(name, {2});
  s.train.lr = lr;
  s.train.seed = seed;
  return s;
}

void selectRows(RunsWorkspace& ws, const std::vector<int64_t>& ids) {
  auto* selection = ws.table()->selectionModel();
  selection->clearSelection();
  for (int64_t id : ids) {
    const int row = ws.model()->rowOf(id);
    QVERIFY2(row >= 0, "run not loaded in the table");
    selection->select(ws.model()->index(row, 0),
                      QItemSelectionModel::Select | QItemSelectionModel::Rows);
  }
}

void waitLoaded(RunsWorkspace& ws, int rows) {
  QTRY_COMPARE_WITH_TIMEOUT(ws.model()->rowCount(), rows, 5000);
  for (int r = 0; r < rows; ++r) ws.model()->data(ws.model()->index(r, 0), Qt::DisplayRole);
  QTRY_VERIFY_WITH_TIMEOUT(ws.model()->isSettled() && ws.model()->runId(rows - 1) >= 0, 5000);
}

// The walkthrough's search: three varied keys, two searched, three trials (one pruned), two
// tuned seeds per point.
int64_t addSearchStudy(storage::RunStore& store) {
  study::StudyPlan plan;
  plan.keys = {study::parseVary("train.weight_decay=[0,0.001]"),
               study::parseVary(R"(model.activation=["relu","tanh"])"),
               study::parseVary("train.momentum=[0.9,0.99]")};
  plan.search.keys = {study::parseSearchArgument("train.lr=log_uniform:1e-4:1e-1"),
                      study::parseSearchArgument("stage_defaults.aux_hidden=choice:[64,128,256]")};
  plan.search.trials = 3;
  plan.search.prune = study::PruneSpec{};
  plan.search.tune = study::TuneSpec{"val_accuracy", 2};
  const int64_t study =
      store.createStudy(study::newStudyRecord("walk search", "{}", plan, std::nullopt, 0));
  const int points = int(study::varyGrid(plan).size());
  std::vector<std::string> best;
  for (int trial = 0; trial < plan.search.trials; ++trial) {
    const auto draw = study::drawTrial(plan.search, 1, trial);
    if (trial == 0) best = draw;
    for (int v = 0; v < points; ++v) {
      const auto p = study::trialPoint(plan, v, trial, draw);
      const int64_t id = addRun(store, spec("walk search trial", 0.001, 1), 0.8, 50);
      storage::StudyRunRecord link;
      link.point = p.index, link.runId = id, link.seed = int64_t(p.seed);
      link.valuesJson = study::pointValuesJson(p);
      store.linkStudyRun(study, link);
      if (trial == 1 && v == 0) store.markRunPruned(study, id, 100, "pruned");
    }
  }
  for (int v = 0; v < points; ++v)
    for (int j = 0; j < 2; ++j) {
      const auto p = study::tunedPoint(plan, v, j, best);
      const int64_t id = addRun(store, spec("walk search tuned", 0.001, 2 + j), 0.8, 50);
      storage::StudyRunRecord link;
      link.point = p.index, link.runId = id, link.seed = int64_t(p.seed);
      link.valuesJson = study::pointValuesJson(p);
      store.linkStudyRun(study, link);
    }
  return study;
}

}  // namespace

class TestRunsStudies : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
  void init() { ComparePanel::forgetOverlaySettings(); }  // the overlay's kept choices

  void studyFilterShowsAStudysRunsAsTheyCome() {
    test::TempStore t;
    addRun(*t.store, runSpec("not in the study", {2}), 0.7);
    RunsWorkspace ws(t.store);
    ws.setPollInterval(100);
    waitLoaded(ws, 1);
    // A study another process runs: its own store object on the same file.
    storage::RunStore other(t.path());
    storage::NewStudy ns;
    ns.name = "lr sweep";
    ns.baseSpecJson = "{}";
    ns.keys = {{"train.lr", "[0.001,0.003]"}};
    ns.runsTotal = 2;
    const int64_t study = other.createStudy(ns);
    const int64_t first = addRun(other, runSpec("lr sweep · train.lr=0.001", {2}), 0.8);
    storage::StudyRunRecord link;
    link.point = 0, link.runId = first, link.seed = 1, link.valuesJson = "[0.001]";
    other.linkStudyRun(study, link);
    QTRY_COMPARE_WITH_TIMEOUT(ws.studyCombo()->count(), 2, 5000);
    QVERIFY2(ws.studyCombo()->itemText(1).contains(QStringLiteral("lr sweep")) &&
                 ws.studyCombo()->itemText(1).contains(QStringLiteral("1 of 2")),
             qPrintable(ws.studyCombo()->itemText(1)));
    ws.studyCombo()->setCurrentIndex(1);
    QTRY_COMPARE_WITH_TIMEOUT(ws.model()->rowCount(), 1, 5000);
    // Asking for the row's data loads its page (again, if a refresh dropped the first request).
    const auto rowIs = [&](int64_t id) {
      ws.model()->data(ws.model()->index(0, 0), Qt::DisplayRole);
      return ws.model()->runId(0) == id;
    };
    QTRY_VERIFY_WITH_TIMEOUT(rowIs(first), 10000);
    // Its second run lands: the filtered table fills in.
    const int64_t second = addRun(other, runSpec("lr sweep · train.lr=0.003", {2}), 0.85);
    link.point = 1, link.runId = second, link.valuesJson = "[0.003]";
    other.linkStudyRun(study, link);
    QTRY_COMPARE_WITH_TIMEOUT(ws.model()->rowCount(), 2, 5000);
    QTRY_VERIFY_WITH_TIMEOUT(ws.studyCombo()->currentText().contains(QStringLiteral("2 of 2")),
                             5000);
    ws.studyCombo()->setCurrentIndex(0);
    QTRY_COMPARE_WITH_TIMEOUT(ws.model()->rowCount(), 3, 5000);
    other.finishStudy(study, storage::StudyStatus::Completed);
  }

  void studyFilterCountsRunsNotGridPoints() {
    // Issue 36's walkthrough: the filter said "12 of 72 runs" (grid points) where `study show`
    // said "4 of 34 runs". Local mode does not read pipeline.micro_batches: its points at M = 1
    // and 4 share one run, so the plan has 3 runs and 2 of them completed (3 points).
    test::TempStore t;
    const int64_t local = addRun(*t.store, runSpec("local", {2}), 0.7);
    const int64_t pipeline = addRun(*t.store, runSpec("pipeline M=1", {2}), 0.8);
    storage::NewStudy ns;
    ns.name = "throughput";
    ns.baseSpecJson = R"({"mode":"local"})";
    ns.keys = {{"mode", R"(["local","pipeline"])"}, {"pipeline.micro_batches", "[1,4]"}};
    ns.runsTotal = 4;
    const int64_t study = t.store->createStudy(ns);
    storage::StudyRunRecord link;
    link.point = 0, link.runId = local, link.seed = 1, link.valuesJson = R"(["local",1])";
    t.store->linkStudyRun(study, link);
    link.point = 1, link.valuesJson = R"(["local",4])";
    t.store->linkStudyRun(study, link);
    link.point = 2, link.runId = pipeline, link.valuesJson = R"(["pipeline",1])";
    t.store->linkStudyRun(study, link);
    RunsWorkspace ws(t.store);
    QTRY_COMPARE_WITH_TIMEOUT(ws.studyCombo()->count(), 2, 5000);
    QVERIFY2(ws.studyCombo()->itemText(1).endsWith(QStringLiteral("2 of 3 runs")),
             qPrintable(ws.studyCombo()->itemText(1)));
  }

  void aLongStudyNameDoesNotSqueezeTheQueryBox() {
    // The study box widened to its longest label and squeezed the query box (issue 36): it
    // keeps its width, its list opens wide enough to read, the label is its item's tooltip.
    test::TempStore t;
    addRun(*t.store, runSpec("a run", {2}), 0.7);
    RunsWorkspace ws(t.store);
    ws.setPollInterval(100);
    ws.resize(1366, 768);
    ws.show();
    QVERIFY(QTest::qWaitForWindowExposed(&ws));
    waitLoaded(ws, 1);
    const int before = ws.searchEdit()->width();
    storage::NewStudy ns;
    ns.name = std::string(
        "a search over the learning rate, the cuts, the aux heads and the overlap of every stage "
        "of the nine-stage mlp on fashion-mnist");
    ns.baseSpecJson = "{}";
    ns.keys = {{"train.lr", "[0.001,0.003]"}};
    ns.runsTotal = 2;
    t.store->createStudy(ns);
    QTRY_COMPARE_WITH_TIMEOUT(ws.studyCombo()->count(), 2, 5000);
    const QString label = ws.studyCombo()->itemText(1);
    ws.studyCombo()->setCurrentIndex(1);
    QApplication::processEvents();
    QTRY_VERIFY(ws.studyCombo()->width() < ws.studyCombo()->fontMetrics().horizontalAdvance(label));
    QVERIFY2(
        ws.searchEdit()->width() >= before * 0.9,
        qPrintable(
            QStringLiteral("query box %1 px, was %2").arg(ws.searchEdit()->width()).arg(before)));
    QCOMPARE(ws.studyCombo()->itemData(1, Qt::ToolTipRole).toString(), label);
    QVERIFY(ws.studyCombo()->view()->minimumWidth() >
            ws.studyCombo()->fontMetrics().horizontalAdvance(label) * 0.9);
  }

  void studyFilterDropsHiddenRunsFromTheOverlay() {
    // Issue 36: two runs selected, then a study filter that hides one of them; the overlay kept
    // drawing the hidden run. It shows the selected runs that pass the filter.
    test::TempStore t;
    const int64_t outside = addRun(*t.store, runSpec("not in the study", {2}), 0.7);
    storage::NewStudy ns;
    ns.name = "lr sweep";
    ns.baseSpecJson = "{}";
    ns.keys = {{"train.lr", "[0.001]"}};
    ns.runsTotal = 1;
    const int64_t study = t.store->createStudy(ns);
    const int64_t inside = addRun(*t.store, runSpec("lr sweep · train.lr=0.001", {2}), 0.8);
    storage::StudyRunRecord link;
    link.point = 0, link.runId = inside, link.seed = 1, link.valuesJson = "[0.001]";
    t.store->linkStudyRun(study, link);
    RunsWorkspace ws(t.store);
    waitLoaded(ws, 2);
    selectRows(ws, {outside, inside});
    QTRY_COMPARE_WITH_TIMEOUT(ws.comparePanel()->runs().size(), size_t(2), 5000);
    QTRY_COMPARE_WITH_TIMEOUT(ws.studyCombo()->count(), 2, 5000);
    ws.studyCombo()->setCurrentIndex(1);
    QTRY_COMPARE_WITH_TIMEOUT(ws.model()->rowCount(), 1, 5000);
    QTRY_COMPARE_WITH_TIMEOUT(ws.comparePanel()->runs(), std::vector<int64_t>{inside}, 5000);
    QCOMPARE(ws.selectedRunIds(), std::vector<int64_t>{inside});
    QTRY_VERIFY_WITH_TIMEOUT(ws.comparePanel()->isLoaded(), 5000);
    for (int i = 0; i < ws.comparePanel()->overlayPlot()->graphCount(); ++i)
      QVERIFY2(!ws.comparePanel()->overlayPlot()->graph(i)->name().contains(
                   QStringLiteral("not in the study")),
               qPrintable(ws.comparePanel()->overlayPlot()->graph(i)->name()));
    t.store->finishStudy(study, storage::StudyStatus::Completed);
  }

  void groupsSeedsIntoAMeanWithABand() {
    test::TempStore t;
    // Two settings of train.lr, two seeds each; the loss is 2 exp(-step / 40) + 1 - accuracy.
    const int64_t a1 = addRun(*t.store, spec("lr1 s1", 0.001, 1), 0.80);
    const int64_t a2 = addRun(*t.store, spec("lr1 s2", 0.001, 2), 0.84);
    const int64_t b1 = addRun(*t.store, spec("lr3 s1", 0.003, 1), 0.70);
    const int64_t b2 = addRun(*t.store, spec("lr3 s2", 0.003, 2), 0.76);
    RunsWorkspace ws(t.store);
    ws.resize(1300, 900);
    ws.show();
    waitLoaded(ws, 4);
    ComparePanel* panel = ws.comparePanel();
    panel->groupCombo()->setCurrentIndex(1);  // mean ± std
    selectRows(ws, {a1, a2, b1, b2});
    QTRY_VERIFY_WITH_TIMEOUT(panel->isLoaded() && panel->runs().size() == 4, 5000);
    QTRY_COMPARE_WITH_TIMEOUT(panel->bands().size(), size_t(2), 5000);
    for (const auto& band : panel->bands()) {
      const bool first = band.runs == std::vector<int64_t>{a1, a2};
      QVERIFY2(first || band.runs == (std::vector<int64_t>{b1, b2}), qPrintable(band.label));
      QVERIFY2(band.label.contains(first ? QStringLiteral("train.lr=0.001")
                                         : QStringLiteral("train.lr=0.003")) &&
                   band.label.contains(QStringLiteral("n=2")),
               qPrintable(band.label));
      // mean - lo = the sample std of the two runs' values, |a - b| / sqrt(2), at every x
      const double sd = (first ? 0.04 : 0.06) / std::sqrt(2.0);
      const double offset = 1 - (first ? 0.82 : 0.73);
      int checked = 0;
      for (size_t k = 0; k < band.x.size(); ++k) {
        if (!std::isfinite(band.mean[k])) continue;
        QVERIFY(std::abs((band.mean[k] - band.lo[k]) - sd) < 1e-9);
        QVERIFY(std::abs((band.hi[k] - band.mean[k]) - sd) < 1e-9);
        // the mean is the runs' common curve plus the mean offset, at the grid's step
        const double step = std::floor(band.x[k] + 1e-9);
        QVERIFY2(std::abs(band.mean[k] - (2.0 * std::exp(-step / 40.0) + offset)) < 1e-9,
                 qPrintable(QString("x %1: %2").arg(band.x[k]).arg(band.mean[k])));
        ++checked;
      }
      QVERIFY(checked > 50);
    }
    // Two bands: a line and its filled band each, one legend entry per group.
    QCOMPARE(panel->overlayPlot()->graphCount(), 6);
    QCOMPARE(panel->overlayPlot()->legend->itemCount(), 2);
    // Group by chosen keys: pooling train.lr makes one group of the four runs.
    QVERIFY(panel->groupKeysButton()->isEnabled());
    QCOMPARE(panel->groupKeysButton()->menu()->actions().size(), 1);  // train.lr (seed aside)
    panel->setGroupKeys({});
    QCOMPARE(panel->bands().size(), size_t(1));
    QCOMPARE(panel->bands()[0].runs.size(), size_t(4));
    QVERIFY2(panel->bands()[0].label.contains(QStringLiteral("n=4")) &&
                 !panel->bands()[0].label.contains(QStringLiteral("train.lr")),
             qPrintable(panel->bands()[0].label));
    for (size_t k = 0; k < panel->bands()[0].x.size(); ++k) {
      const auto& b = panel->bands()[0];
      if (!std::isfinite(b.mean[k])) continue;
      // the four offsets' mean is 1 - 0.775: the pooled mean sits between the two groups'
      const double step = std::floor(b.x[k] + 1e-9);
      QVERIFY(std::abs(b.mean[k] - (2.0 * std::exp(-step / 40.0) + 0.225)) < 1e-9);
    }
    panel->groupKeysButton()->menu()->actions()[0]->setChecked(true);  // back to per lr
    QCOMPARE(panel->bands().size(), size_t(2));
    panel->groupCombo()->setCurrentIndex(2);  // min-max
    QTRY_VERIFY_WITH_TIMEOUT(panel->isLoaded() && !panel->bands().empty(), 5000);
    const auto& b = panel->bands().front();
    for (size_t k = 0; k < b.x.size(); ++k)
      if (std::isfinite(b.mean[k])) QVERIFY(std::abs((b.hi[k] - b.lo[k]) - 0.04) < 1e-9);
    panel->groupCombo()->setCurrentIndex(0);
    QTRY_VERIFY_WITH_TIMEOUT(panel->isLoaded() && panel->bands().empty(), 5000);
    QCOMPARE(panel->overlayPlot()->graphCount(), 4);
  }

  void groupsTableWritesSignificantDigits() {
    // Issue 36 §1.5: the Groups table rounded seconds to whole numbers ("2 s ± 0 s" where the
    // runs took 1.75 and 1.85 s) and wrote a learning rate to the double's full precision; and
    // a varied mode was a column twice (issue 32's walkthrough).
    test::TempStore t;
    storage::NewStudy ns;
    ns.name = "lr x mode";
    ns.baseSpecJson = "{}";
    ns.keys = {{"mode", R"(["local","backprop"])"}, {"train.lr", "[0.0031622776601683794]"}};
    ns.seeds = 2;
    ns.runsTotal = 4;
    const int64_t study = t.store->createStudy(ns);
    int point = 0;
    for (const char* mode : {"local", "backprop"})
      for (int seed = 1; seed <= 2; ++seed) {
        // 175 and 185 steps: 1.75 and 1.85 s of wall time (the fixture's 10 ms a step)
        const int64_t id = addRun(*t.store, spec(mode, 0.0031622776601683794, seed), 0.8,
                                  seed == 1 ? 175 : 185, mode);
        storage::StudyRunRecord link;
        link.point = point++, link.runId = id, link.seed = seed;
        link.valuesJson = std::string("[\"") + mode + "\",0.0031622776601683794]";
        t.store->linkStudyRun(study, link);
      }
    RunsWorkspace ws(t.store);
    ws.resize(1300, 900);
    ws.show();
    QTRY_COMPARE_WITH_TIMEOUT(ws.studyCombo()->count(), 2, 5000);
    ws.studyCombo()->setCurrentIndex(1);
    StudyGroupTable* groups = ws.groupTable();
    QTRY_VERIFY_WITH_TIMEOUT(groups->isLoaded() && groups->groups().size() == 2, 5000);
    groups->spreadCombo()->setCurrentIndex(groups->spreadCombo()->findData(QStringLiteral("std")));
    QTableWidget* table = groups->table();
    QStringList headers;
    for (int c = 0; c < table->columnCount(); ++c)
      headers << table->horizontalHeaderItem(c)->text();
    QCOMPARE(headers.count(QStringLiteral("mode")), 1);
    const int lr = int(headers.indexOf(QStringLiteral("train.lr")));
    const int wall = int(headers.indexOf(QStringLiteral("wall time")));
    QVERIFY(lr >= 0 && wall >= 0);
    for (int row = 0; row < table->rowCount(); ++row) {
      QCOMPARE(table->item(row, lr)->text(), QStringLiteral("0.00316"));
      // mean 1.8, sample std 0.0707: one significant digit of the std, the mean to its place
      QCOMPARE(table->item(row, wall)->text(), QStringLiteral("1.80 ± 0.07 s"));
    }
    // Export CSV: the stored numbers, mean and std in two columns, the unit in the header
    // (issue 36's walkthrough: "0.718 ± 0.004" in one cell).
    {
      const QString csv = tableCsv(table->model());
      const QStringList lines = csv.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
      QCOMPARE(lines.size(), 3);
      const QStringList header = lines[0].split(QLatin1Char(','));
      const int mean = int(header.indexOf(QStringLiteral("wall time mean (s)")));
      const int sd = int(header.indexOf(QStringLiteral("wall time std (s)")));
      QVERIFY2(mean >= 0 && sd == mean + 1, qPrintable(lines[0]));
      QVERIFY2(header.contains(QStringLiteral("test accuracy mean")) &&
                   header.contains(QStringLiteral("test accuracy std")),
               qPrintable(lines[0]));
      for (int row = 1; row <= 2; ++row) {
        const QStringList fields = lines[row].split(QLatin1Char(','));
        QCOMPARE(fields.size(), header.size());
        QVERIFY2(std::abs(fields[mean].toDouble() - 1.8) < 1e-12, qPrintable(lines[row]));
        QVERIFY2(std::abs(fields[sd].toDouble() - std::sqrt(0.005)) < 1e-12,
                 qPrintable(lines[row]));
      }
    }
    // Each run: its own seconds to 3 significant digits.
    groups->groupByCombo()->setCurrentIndex(1);
    QStringList walls;
    for (int row = 0; row < table->rowCount(); ++row) walls << table->item(row, wall + 1)->text();
    QVERIFY2(walls.contains(QStringLiteral("1.75 s")) && walls.contains(QStringLiteral("1.85 s")),
             qPrintable(walls.join(QStringLiteral(" | "))));
    // Counts take their noun's number ("1 runs" in the study log before).
    QCOMPARE(formatCountOf(1, QStringLiteral("run"), QStringLiteral("runs")),
             QStringLiteral("1 run"));
    QCOMPARE(formatCountOf(4, QStringLiteral("run"), QStringLiteral("runs")),
             QStringLiteral("4 runs"));
  }

  void groupsTabOfManyKeysFitsASmallScreen_data() {
    QTest::addColumn<bool>("search");
    QTest::newRow("grid of ten keys") << false;
    // What a walkthrough had: a search with pruning and tuning, whose Groups tab stacks the tuned
    // comparison, the groups and the study views; the window grew to 1350x1040 on 1366x768.
    QTest::newRow("search with pruning and tuning") << true;
  }

  void groupsTabOfManyKeysFitsASmallScreen() {
    // Issue 36: the Groups tab of a study of many keys grew the main window past a 1600x1000
    // screen (a widget's minimum size). The window's least size fits 1366x768 with it shown.
    QFETCH(bool, search);
    test::TempStore t;
    int64_t study = 0;
    if (search) {
      study = addSearchStudy(*t.store);
    } else {
      storage::NewStudy ns;
      ns.name = "many keys";
      ns.baseSpecJson = "{}";
      const QStringList keys = {
          "train.lr",        "train.batch_size",     "train.weight_decay",     "train.momentum",
          "model.dropout",   "partition.aux_hidden", "pipeline.micro_batches", "train.warmup_steps",
          "train.grad_clip", "eval.interval"};
      std::string values = "[";
      for (int k = 0; k < keys.size(); ++k) {
        ns.keys.push_back({keys[k].toStdString(), "[0.5, 0.25]"});
        values += (k ? "," : "") + std::string("0.123456789");
      }
      values += "]";
      ns.seeds = 1;
      ns.runsTotal = 6;
      study = t.store->createStudy(ns);
      for (int i = 0; i < 6; ++i) {
        const int64_t id =
            addRun(*t.store, spec("a long run name of a study with many keys", 0.001, i), 0.8, 50);
        storage::StudyRunRecord link;
        link.point = i, link.runId = id, link.seed = 1, link.valuesJson = values;
        t.store->linkStudyRun(study, link);
      }
    }
    engine::FakeScript script;
    AppSettings::setSession({});  // a first start: nothing restored
    MainWindow window(fakeEngineServices(script), t.store);
    window.resize(1300, 700);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.showWorkspace(MainWindow::kRuns);
    RunsWorkspace* ws = window.runsWorkspace();
    QTRY_COMPARE_WITH_TIMEOUT(ws->studyCombo()->count(), 2, 5000);
    ws->studyCombo()->setCurrentIndex(1);
    ws->listTabs()->setCurrentIndex(1);
    QTRY_VERIFY_WITH_TIMEOUT(ws->groupTable()->isLoaded(), 5000);
    QApplication::processEvents();
    // The real case shows what a search adds: the tuned comparison and the study views.
    QCOMPARE(ws->groupTable()->tunedTable()->isVisible(), search);
    QCOMPARE(ws->groupTable()->views()->isVisible(), search);
    const QSize least = window.minimumSizeHint().expandedTo(window.minimumSize());
    QString culprits;
    if (least.width() > 1366 || least.height() > 768)
      for (QWidget* w : window.findChildren<QWidget*>())
        if (w->isVisible() && (w->minimumSizeHint().width() > 1000 ||
                               w->minimumSizeHint().height() > 600 || w->minimumWidth() > 1000))
          culprits += QStringLiteral(" %1(%2x%3)")
                          .arg(QString::fromLatin1(w->metaObject()->className()))
                          .arg(w->minimumSizeHint().width())
                          .arg(w->minimumSizeHint().height());
    QVERIFY2(
        least.width() <= 1366 && least.height() <= 768,
        qPrintable(
            QStringLiteral("least %1x%2:%3").arg(least.width()).arg(least.height()).arg(culprits)));
    QVERIFY2(window.width() <= 1366 && window.height() <= 768,
             qPrintable(QStringLiteral("%1x%2").arg(window.width()).arg(window.height())));
    t.store->finishStudy(study, storage::StudyStatus::Completed);
  }

  void groupsFollowTheFilter() {
    // Issue 36 walkthrough: typing in the filter narrowed the Runs list, but the Groups tab still
    // grouped every run of the study. It groups the runs the filter admits and says n of N.
    test::TempStore t;
    storage::NewStudy ns;
    ns.name = "filtered";
    ns.baseSpecJson = "{}";
    ns.keys = {{"train.lr", "[0.001,0.002]"}, {"train.batch_size", "[32,64]"}};
    ns.seeds = 2;
    ns.runsTotal = 8;
    const int64_t study = t.store->createStudy(ns);
    for (int i = 0; i < 8; ++i) {
      const double lr = 0.001 * (i % 2 + 1);
      const int batch = i / 2 % 2 ? 64 : 32;
      const std::string name = "grid bs" + std::to_string(batch) + " lr" + std::to_string(i % 2);
      const int64_t id = addRun(*t.store, spec(name.c_str(), lr, i / 4 + 1), 0.7 + 0.01 * i, 50);
      storage::StudyRunRecord link;
      link.point = i % 4, link.runId = id, link.seed = i / 4 + 1;
      link.valuesJson = QStringLiteral("[%1,%2]").arg(lr).arg(batch).toStdString();
      t.store->linkStudyRun(study, link);
    }
    t.store->finishStudy(study, storage::StudyStatus::Completed);
    RunsWorkspace ws(t.store);
    ws.resize(1300, 900);
    ws.show();
    QTRY_COMPARE_WITH_TIMEOUT(ws.studyCombo()->count(), 2, 5000);
    ws.studyCombo()->setCurrentIndex(1);
    ws.listTabs()->setCurrentIndex(1);
    StudyGroupTable* groups = ws.groupTable();
    QTRY_VERIFY_WITH_TIMEOUT(groups->isLoaded() && groups->table()->rowCount() == 4, 5000);
    QCOMPARE(groups->groupedRuns(), 8);
    QVERIFY2(!groups->note()->text().contains(QStringLiteral(" of 8")),
             qPrintable(groups->note()->text()));
    ws.searchEdit()->setText(QStringLiteral("bs64"));
    QTRY_COMPARE_WITH_TIMEOUT(ws.model()->rowCount(), 4, 5000);
    QTRY_VERIFY_WITH_TIMEOUT(groups->isLoaded() && groups->groupedRuns() == 4, 5000);
    QCOMPARE(groups->table()->rowCount(), 2);  // the batch-64 groups, two seeds each
    for (const study::Group& g : groups->groups()) QCOMPARE(g.accuracy.n, 2);
    QVERIFY2(groups->note()->text().contains(QStringLiteral("4 of 8")),
             qPrintable(groups->note()->text()));
    // Clearing the filter groups every run again; a query filters them as well.
    ws.searchEdit()->clear();
    QTRY_VERIFY_WITH_TIMEOUT(groups->isLoaded() && groups->groupedRuns() == 8, 5000);
    QCOMPARE(groups->table()->rowCount(), 4);
    ws.searchEdit()->setText(QStringLiteral("train.lr < 0.0015"));
    QTRY_VERIFY_WITH_TIMEOUT(groups->isLoaded() && groups->groupedRuns() == 4, 5000);
    for (const study::Group& g : groups->groups())
      QCOMPARE(QString::fromStdString(g.values.front()).toDouble(), 0.001);
  }

  void searchGroupsShowSixRowsAt1366x768() {
    // Issue 36 walkthrough: a search study's Groups tab (the tuned comparison, the groups, the
    // study views) left the groups table about 2 rows at 1366x768. It gets 6 or more, in view.
    test::TempStore t;
    const int64_t study = addSearchStudy(*t.store);
    t.store->finishStudy(study, storage::StudyStatus::Completed);
    engine::FakeScript script;
    AppSettings::setSession({});
    MainWindow window(fakeEngineServices(script), t.store);
    window.resize(1366, 768);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.showWorkspace(MainWindow::kRuns);
    RunsWorkspace* ws = window.runsWorkspace();
    QTRY_COMPARE_WITH_TIMEOUT(ws->studyCombo()->count(), 2, 5000);
    ws->studyCombo()->setCurrentIndex(1);
    ws->listTabs()->setCurrentIndex(1);
    QTRY_VERIFY_WITH_TIMEOUT(ws->groupTable()->isLoaded(), 5000);
    QApplication::processEvents();
    QVERIFY(ws->groupTable()->tunedTable()->isVisible());
    QTableWidget* table = ws->groupTable()->table();
    QVERIFY2(table->rowCount() >= 6, qPrintable(QString::number(table->rowCount())));
    // Rows drawn whole in the table and inside the part of the tab in view (it scrolls).
    auto* scroll = ws->groupTable()->findChild<QScrollArea*>();
    QVERIFY(scroll);
    const QRect inView = scroll->viewport()->rect();
    int whole = 0;
    for (int row = 0; row < table->rowCount(); ++row) {
      const int top = table->rowViewportPosition(row);
      const int bottom = top + table->rowHeight(row);
      if (top < 0 || bottom > table->viewport()->height()) continue;
      const QPoint a = table->viewport()->mapTo(scroll->viewport(), QPoint(0, top));
      const QPoint b = table->viewport()->mapTo(scroll->viewport(), QPoint(0, bottom));
      if (inView.contains(a) && b.y() <= inView.bottom() + 1) ++whole;
    }
    QVERIFY2(whole >= 6,
             qPrintable(QStringLiteral("%1 rows in view; table viewport %2 px, tab "
                                       "viewport %3 px, rows %4 px, table %5 px, "
                                       "box min %6, tuned %7")
                            .arg(whole)
                            .arg(table->viewport()->height())
                            .arg(inView.height())
                            .arg(table->rowHeight(0))
                            .arg(table->height())
                            .arg(table->parentWidget()->minimumHeight())
                            .arg(ws->groupTable()->tunedTable()->parentWidget()->height())));
    QVERIFY2(ws->comparePanel()->overlayPlot()->height() >= 120,
             qPrintable(QString::number(ws->comparePanel()->overlayPlot()->height())));
    QVERIFY2(window.height() <= 768, qPrintable(QString::number(window.height())));
    // The tuned comparison's verdict, its test accuracy, comes right after the point's keys
    // (it was the column cut off at the right edge beside the groups; with one key it is in
    // view at 1366 px); the CSV keeps the model's order.
    QTableWidget* tuned = ws->groupTable()->tunedTable();
    int testColumn = -1;
    for (int c = 0; c < tuned->columnCount(); ++c)
      if (tuned->horizontalHeaderItem(c)->text().startsWith(QStringLiteral("test accuracy")))
        testColumn = c;
    QVERIFY(testColumn >= 0);
    QCOMPARE(tuned->horizontalHeader()->visualIndex(testColumn), tuned->columnCount() - 5);
  }

  void groupsTableShowsEightRowsAt1366x768() {
    // Issue 36 walkthrough: at 1366x768 the Groups tab of a 12-point grid showed 3 rows, the
    // overlay and the bars below taking the rest. The table gets room for 8 rows or more.
    test::TempStore t;
    storage::NewStudy ns;
    ns.name = "twelve points";
    ns.baseSpecJson = "{}";
    ns.keys = {{"train.lr", "[0.001,0.002,0.003,0.004,0.005,0.006]"},
               {"train.batch_size", "[32,64]"}};
    ns.seeds = 1;
    ns.runsTotal = 12;
    const int64_t study = t.store->createStudy(ns);
    for (int i = 0; i < 12; ++i) {
      const double lr = 0.001 * (i / 2 + 1);
      const int64_t id = addRun(*t.store, spec("grid", lr, 1), 0.7 + 0.01 * i, 50);
      storage::StudyRunRecord link;
      link.point = i, link.runId = id, link.seed = 1;
      link.valuesJson = QStringLiteral("[%1,%2]").arg(lr).arg(i % 2 ? 64 : 32).toStdString();
      t.store->linkStudyRun(study, link);
    }
    t.store->finishStudy(study, storage::StudyStatus::Completed);
    engine::FakeScript script;
    AppSettings::setSession({});
    MainWindow window(fakeEngineServices(script), t.store);
    window.resize(1366, 768);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.showWorkspace(MainWindow::kRuns);
    RunsWorkspace* ws = window.runsWorkspace();
    QTRY_COMPARE_WITH_TIMEOUT(ws->studyCombo()->count(), 2, 5000);
    ws->studyCombo()->setCurrentIndex(1);
    ws->listTabs()->setCurrentIndex(1);
    QTRY_VERIFY_WITH_TIMEOUT(ws->groupTable()->isLoaded(), 5000);
    QApplication::processEvents();
    QTableWidget* table = ws->groupTable()->table();
    QCOMPARE(table->rowCount(), 12);
    int whole = 0;  // rows drawn whole in the table's viewport
    for (int row = 0; row < table->rowCount(); ++row)
      if (table->rowViewportPosition(row) >= 0 &&
          table->rowViewportPosition(row) + table->rowHeight(row) <= table->viewport()->height())
        ++whole;
    QVERIFY2(whole >= 8, qPrintable(QStringLiteral("%1 rows of %2 px in a %3 px table")
                                        .arg(whole)
                                        .arg(table->rowHeight(0))
                                        .arg(table->viewport()->height())));
    // The overlay below keeps a readable plot.
    QVERIFY2(ws->comparePanel()->overlayPlot()->height() >= 120,
             qPrintable(QString::number(ws->comparePanel()->overlayPlot()->height())));
  }

  void warnsWhenThroughputsOfDifferentLoadsAreCompared() {
    // Issue 36 §1.8: run #a ran on an idle 2-core machine, #b while it was busy (load 3.6).
    test::TempStore t;
    const auto load = [](double start, double end) {
      return R"({"load_start":{"load_average":)" + std::to_string(start) +
             R"(,"steal_share":0,"cores":2},"load_end":{"load_average":)" + std::to_string(end) +
             R"(,"steal_share":0,"cores":2}})";
    };
    const int64_t a =
        addRun(*t.store, spec("idle", 0.001, 1), 0.8, 200, "local", false, load(0.1, 0.2));
    const int64_t b =
        addRun(*t.store, spec("busy", 0.001, 2), 0.8, 200, "local", false, load(3.6, 3.0));
    const int64_t c =
        addRun(*t.store, spec("idle too", 0.001, 3), 0.8, 200, "local", false, load(0.4, 0.3));
    RunsWorkspace ws(t.store);
    ws.resize(1300, 900);
    ws.show();
    waitLoaded(ws, 3);
    ComparePanel* panel = ws.comparePanel();
    selectRows(ws, {a, b});
    QTRY_VERIFY_WITH_TIMEOUT(panel->isLoaded() && panel->runs().size() == 2, 5000);
    panel->summaryCombo()->setCurrentIndex(0);  // test accuracy: no throughput compared
    QVERIFY(panel->loadWarning()->isHidden());
    panel->summaryCombo()->setCurrentIndex(1);  // samples/s
    QVERIFY(panel->loadWarning()->isVisible());
    const QString text = panel->loadWarning()->text();
    QVERIFY2(text.contains(QStringLiteral("run #%1 (load 1.8 per core)").arg(b)) &&
                 text.contains(QStringLiteral("run #%1 (0.1 per core)").arg(a)),
             qPrintable(text));
    panel->summaryCombo()->setCurrentIndex(4);  // front: wall time
    QVERIFY(panel->loadWarning()->isVisible());
    // Two runs under alike loads: no warning.
    selectRows(ws, {a, c});
    QTRY_VERIFY_WITH_TIMEOUT(panel->isLoaded() && panel->runs().size() == 2 &&
                                 std::count(panel->runs().begin(), panel->runs().end(), c) == 1,
                             5000);
    QVERIFY(panel->loadWarning()->isHidden());
  }

  void studyViewsExplainTheirColoursAndCountWholeTrials() {
    // Issue 32's walkthrough: parallel coordinates and slices had no colour legend, and the
    // "Best so far" axis had ticks at half trials.
    study::SearchViews v;
    v.metric = "val_accuracy";
    study::SearchAxis lr;
    lr.key = "train.lr";
    lr.log = true;
    lr.low = 1e-4, lr.high = 1e-2;
    study::SearchAxis metric;
    metric.key = "val_accuracy";
    metric.low = 0.5, metric.high = 0.9;
    v.axes = {lr, metric};
    v.varyLabels = {"mode=local", "mode=backprop"};
    int trial = 0;
    for (int point = 0; point < 2; ++point)
      for (double x : {2e-4, 1e-3, 5e-3}) {
        study::TrialPoint t;
        t.varyPoint = point, t.trial = trial++ % 3, t.runId = trial;
        t.coords = {x};
        t.metric = 0.6 + 0.05 * trial;
        t.completed = x != 5e-3;
        t.pruned = x == 5e-3;
        v.trials.push_back(t);
      }
    v.bestSoFar = {{0.65, 0.7, 0.7}, {0.8, 0.85, 0.85}};
    StudyViews views;
    views.resize(700, 400);
    views.show();
    views.setViews(v);
    for (int view : {StudyViews::Parallel, StudyViews::Slice}) {
      views.viewCombo()->setCurrentIndex(view);
      QCustomPlot* p = views.plot();
      QVERIFY(p->legend->visible());
      QStringList names;
      for (int i = 0; i < p->legend->itemCount(); ++i)
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(p->legend->item(i)))
          names << item->plottable()->name();
      QCOMPARE(names, (QStringList{QStringLiteral("mode=local"), QStringLiteral("mode=backprop"),
                                   QStringLiteral("pruned (faint)")}));
    }
    views.viewCombo()->setCurrentIndex(StudyViews::BestSoFar);
    QCustomPlot* p = views.plot();
    p->replot();
    const QVector<double> ticks = p->xAxis->tickVector();
    QVERIFY(!ticks.isEmpty());
    for (double t : ticks) QVERIFY2(t == std::round(t), qPrintable(QString::number(t)));
  }

  void frontViewJoinsTheGroupsNoneBeats() {
    test::TempStore t;
    // Wall time = steps / 100 s. lr 0.001: 2 s, accuracy 0.82 ± 0.028; lr 0.003: 1 s, 0.73;
    // backprop: 3 s, 0.78, beaten on both by lr 0.001.
    std::vector<int64_t> ids = {addRun(*t.store, spec("a1", 0.001, 1), 0.80),
                                addRun(*t.store, spec("a2", 0.001, 2), 0.84),
                                addRun(*t.store, spec("b1", 0.003, 1), 0.70, 100),
                                addRun(*t.store, spec("b2", 0.003, 2), 0.76, 100)};
    auto bp = spec("bp", 0.001, 1);
    bp.mode = engine::Mode::Backprop;
    ids.push_back(addRun(*t.store, bp, 0.78, 300, "backprop"));
    RunsWorkspace ws(t.store);
    ws.resize(1300, 900);
    ws.show();
    waitLoaded(ws, 5);
    ComparePanel* panel = ws.comparePanel();
    selectRows(ws, ids);
    QTRY_VERIFY_WITH_TIMEOUT(panel->isLoaded() && panel->runs().size() == 5, 5000);
    panel->summaryCombo()->setCurrentIndex(4);  // front: wall time vs accuracy
    const auto& front = panel->frontPoints();
    QCOMPARE(front.size(), size_t(3));
    std::map<QString, const ComparePanel::FrontPoint*> byMode;
    for (const auto& p : front) {
      if (p.mode == QStringLiteral("backprop"))
        byMode["bp"] = &p;
      else
        byMode[p.x < 1.5 ? QStringLiteral("fast") : QStringLiteral("slow")] = &p;
    }
    QCOMPARE(byMode.size(), size_t(3));
    QCOMPARE(byMode["slow"]->x, 2.0);
    QVERIFY(std::abs(byMode["slow"]->y - 0.82) < 1e-12);
    QVERIFY(std::abs(byMode["slow"]->yStd - 0.04 / std::sqrt(2.0)) < 1e-12);
    QCOMPARE(byMode["slow"]->runs.size(), size_t(2));
    QVERIFY(byMode["slow"]->onFront);
    QVERIFY(byMode["fast"]->onFront);
    QVERIFY(!byMode["bp"]->onFront);
    QVERIFY2(byMode["fast"]->label.contains(QStringLiteral("train.lr=0.003")),
             qPrintable(byMode["fast"]->label));
    // 3 groups and the front's line are graphs of the bottom plot
    QCOMPARE(panel->summaryPlot()->graphCount(), 4);
    panel->summaryCombo()->setCurrentIndex(6);  // training FLOPs: these runs have none recorded
    QVERIFY(panel->frontPoints().empty());
    panel->summaryCombo()->setCurrentIndex(0);  // bars again
    QVERIFY(panel->frontPoints().empty());
    QCOMPARE(panel->summaryPlot()->plottableCount(), 5);
  }
};

QTEST_MAIN(TestRunsStudies)
#include "test_runs_studies.moc"
