// A study made in the workbench, on the fake engine: vary a field of the form ("Vary…"), set
// the values and seeds in the study panel (undoable, saved with the experiment), run the
// 4-run study from Design, watch the queue in Train, then group its runs in Runs (the band's
// data) and read the front. And the queue's controls: skip a waiting run, stop the current run
// (the study goes on), stop the study (kept resumable in the store). And a search designed in
// the panel (a method varied, the learning rate searched, pruning and tuning) run through the
// same study driver as the CLI: pruned trials in the queue with their rung, the tuned
// comparison in Runs → Groups, and the study views' data.
#include <qcustomplot.h>
#include <QAction>
#include <QComboBox>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QUndoStack>
#include <QtTest>
#include <cmath>
#include <map>
#include <set>

#include "common/app_settings.h"
#include "common/fake_services.h"
#include "common/invalid_outline.h"
#include "common/spec_io.h"
#include "designer/design_workspace.h"
#include "designer/model_panel.h"
#include "designer/search_section.h"
#include "designer/study_panel.h"
#include "designer/training_form.h"
#include "designer/vary_action.h"
#include "live/study_queue.h"
#include "live/train_workspace.h"
#include "main_window.h"
#include "run_store_fixture.h"
#include "runs/compare_panel.h"
#include "runs/run_table_model.h"
#include "runs/runs_workspace.h"
#include "runs/study_groups.h"
#include "runs/study_views.h"
#include "stagewise/engine/number_text.h"
#include "stagewise/recorder/recorder.h"
#include "stagewise/storage/run_reader.h"
#include "stagewise/study/results.h"
#include "stagewise/study/search_views.h"

using namespace stagewise;
using namespace stagewise::ui;
using Entry = StudyQueue::EntryState;

namespace {

engine::ExperimentSpec baseSpec(int64_t steps) {
  engine::ExperimentSpec s;
  s.name = "gui-study";
  s.dataset.kind = "synthetic";
  s.model.hidden = {32, 32, 32, 32};
  s.partition.cuts = {2};
  s.train.maxSteps = steps;
  s.eval.interval = 20;
  return s;
}

EngineServices recordingServices(std::shared_ptr<storage::RunStore> store, double stepSeconds) {
  engine::FakeScript script;
  script.stepSeconds = stepSeconds;
  EngineServices s = fakeEngineServices(script);
  s.createRecorder = [store](RecordRequest request) -> std::unique_ptr<engine::RunObserver> {
    recorder::RecorderOptions options;
    options.tags = request.tags;
    options.onRecordCreated = request.onRecorded;
    return std::make_unique<recorder::Recorder>(*store, options);
  };
  return s;
}

/// Varies train.lr from the form's context menu, then sets its values and the seeds.
void designTwoByTwo(MainWindow& window) {
  StudyPanel* panel = window.designWorkspace()->studyPanel();
  QWidget* lr = window.designWorkspace()->modelPanel()->trainingForm()->editorFor("train.lr");
  QVERIFY(lr);
  QAction* vary = varyAction(lr);
  QVERIFY2(vary && vary->text().contains(QStringLiteral("train.lr")), "no Vary… on the field");
  vary->trigger();
  QCOMPARE(panel->keyTable()->rowCount(), 1);
  QCOMPARE(panel->keyTable()->item(0, 0)->text(), QStringLiteral("train.lr"));
  QCOMPARE(panel->keyTable()->item(0, 1)->text(), QStringLiteral("[0.001]"));  // its value now
  QCOMPARE(panel->runCount(), 1);
  // Typing the values into the cell, as a user would.
  panel->keyTable()->item(0, 1)->setText(QStringLiteral("[0.001, 0.01]"));
  QCOMPARE(window.document()->study().keys.at(0).values,
           (std::vector<std::string>{"0.001", "0.01"}));
  panel->seedsSpin()->setValue(2);
  QCOMPARE(panel->runCount(), 4);
  QVERIFY2(panel->summaryLabel()->text().contains(QStringLiteral("4 runs")),
           qPrintable(panel->summaryLabel()->text()));
  QVERIFY(panel->runButton()->isEnabled());
}

}  // namespace

class TestStudyGui : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    AppSettings::setSpread(study::Spread::Std);  // a choice kept from an earlier run aside
  }
  // Each window starts as a first start: no experiment, workspace or runs kept from a test
  // before it (session restore).
  void init() {
    AppSettings::setSession({});
    ComparePanel::forgetOverlaySettings();  // the overlay's kept choices: the defaults
  }

  void panelEditsAreUndoableSavedAndChecked() {
    MainWindow window(recordingServices(nullptr, 0.001), nullptr);
    window.document()->load(baseSpec(200));
    designTwoByTwo(window);
    StudyPanel* panel = window.designWorkspace()->studyPanel();
    QUndoStack* undo = window.document()->undoStack();
    undo->undo();  // the seeds
    QCOMPARE(panel->runCount(), 2);
    QCOMPARE(panel->seedsSpin()->value(), 1);
    undo->redo();
    QCOMPARE(panel->runCount(), 4);
    // A value that is not a JSON list changes nothing and says why.
    QSignalSpy said(panel, &StudyPanel::message);
    panel->keyTable()->item(0, 1)->setText(QStringLiteral("0.1"));
    QCOMPARE(said.count(), 1);
    QVERIFY(said.at(0).at(0).toString().contains(QStringLiteral("not a JSON list")));
    QCOMPARE(panel->keyTable()->item(0, 1)->text(), QStringLiteral("[0.001, 0.01]"));
    // "Add the current cut": the canvas's cut, then another.
    panel->addCurrentCut();
    engine::ExperimentSpec moved = window.document()->spec();
    moved.partition.cuts = {3};
    window.document()->edit(moved, QStringLiteral("move the cut"));
    panel->addCurrentCut();
    QCOMPARE(window.document()->study().keys.at(1).key, std::string("partition.cuts"));
    QCOMPARE(window.document()->study().keys.at(1).values,
             (std::vector<std::string>{"[2]", "[3]"}));
    QCOMPARE(panel->runCount(), 8);
    // A point that cannot run is named, and Run study is off.
    panel->setValues(QStringLiteral("partition.cuts"), QStringLiteral("[[2], [9]]"));
    QVERIFY2(panel->problem().contains(QStringLiteral("grid point")) &&
                 panel->problem().contains(QStringLiteral("partition.cuts=[9]")),
             qPrintable(panel->problem()));
    QVERIFY(!panel->runButton()->isEnabled());
    QCOMPARE(panel->runCount(), 0);
    panel->keyTable()->setCurrentCell(1, 0);
    panel->removeSelected();
    QCOMPARE(panel->runCount(), 4);
    QVERIFY(panel->problem().isEmpty());
    // Saved as the experiment's "study" object and read back.
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("s.stagewise.json"));
    QCOMPARE(writeSpecFile(path, window.document()->spec(), window.document()->study()), QString());
    study::StudyObject back;
    readExperimentFile(path, back);
    QCOMPARE(study::studyObjectJson(back), study::studyObjectJson(window.document()->study()));
    const std::string saved = study::studyObjectJson(window.document()->study());
    window.document()->markSaved();
    window.document()->load(baseSpec(200));  // a study-less experiment, then the file again
    QCOMPARE(panel->runCount(), 0);
    QVERIFY(window.designWorkspace()->openFile(path));
    QCOMPARE(study::studyObjectJson(window.document()->study()), saved);
    QCOMPARE(panel->runCount(), 4);
    QCOMPARE(panel->keyTable()->rowCount(), 1);
    // The measured estimate predicts a duration; without it the FLOPs are said.
    QVERIFY2(panel->predictedSeconds() < 0 && panel->predictedFlops() > 0 &&
                 panel->summaryLabel()->text().contains(QStringLiteral("FLOP")),
             qPrintable(panel->summaryLabel()->text()));
    // A key the format does not have is refused by name.
    QSignalSpy refused(panel, &StudyPanel::message);
    panel->vary(QStringLiteral("train.nope"));
    QCOMPARE(refused.count(), 1);
    QVERIFY(refused.at(0).at(0).toString().contains(QStringLiteral("train.nope")));
  }

  void fourRunStudyQueuesGroupsAndFronts() {
    test::TempStore t;
    MainWindow window(recordingServices(t.store, 0.0005), t.store);
    window.resize(1400, 950);
    window.document()->load(baseSpec(240));
    window.show();
    designTwoByTwo(window);
    window.designWorkspace()->studyPanel()->runButton()->click();
    QCOMPARE(window.currentWorkspace(), MainWindow::kTrain);
    StudyQueue* queue = window.trainWorkspace()->studyQueue();
    QVERIFY(queue->isVisible());
    QVERIFY(queue->isRunning());
    QCOMPARE(queue->view()->topLevelItemCount(), 4);
    QVERIFY(queue->entries()[0].state == Entry::Running);
    QVERIFY2(queue->view()->topLevelItem(3)->text(1).contains(QStringLiteral("train.lr=0.01")) &&
                 queue->view()->topLevelItem(3)->text(1).contains(QStringLiteral("seed 2")),
             qPrintable(queue->view()->topLevelItem(3)->text(1)));
    QCOMPARE(queue->view()->topLevelItem(1)->text(2), QStringLiteral("waiting"));
    QTRY_VERIFY_WITH_TIMEOUT(!queue->isRunning(), 30000);
    std::set<int64_t> ids;
    for (const auto& e : queue->entries()) {
      QVERIFY(e.state == Entry::Completed);
      QVERIFY(e.runId > 0);
      ids.insert(e.runId);
    }
    QCOMPARE(ids.size(), size_t(4));
    QCOMPARE(queue->view()->topLevelItem(2)->text(2), QStringLiteral("completed"));
    QVERIFY(queue->headerLabel()->text().contains(QStringLiteral("4 of 4 done")));

    // The store has the study, completed, one run per point, as `study show` reads it.
    storage::RunReader reader(*t.store);
    const auto results = study::loadStudyResults(reader, queue->studyId());
    QVERIFY(results.study.status == storage::StudyStatus::Completed);
    QCOMPARE(results.outcomes.size(), size_t(4));
    QCOMPARE(results.groups.size(), size_t(2));
    // A study run is the run `train` makes of the point: its stored spec is the resolved one.
    const auto run3 = reader.run(queue->entries()[3].runId);
    QVERIFY(run3);
    const auto stored = engine::parseSpec(run3->specJson);
    QCOMPARE(stored.train.lr, 0.01);
    QCOMPARE(stored.train.seed, uint64_t(2));
    QCOMPARE(QString::fromStdString(stored.name),
             QStringLiteral("gui-study study · train.lr=0.01, seed 2"));

    // Runs: the study filter, grouped bands and the front.
    window.showWorkspace(MainWindow::kRuns);
    RunsWorkspace* runs = window.runsWorkspace();
    runs->poll();
    QTRY_VERIFY_WITH_TIMEOUT(runs->studyCombo()->count() == 2, 5000);
    runs->studyCombo()->setCurrentIndex(1);
    QTRY_COMPARE_WITH_TIMEOUT(runs->model()->rowCount(), 4, 5000);
    for (int r = 0; r < 4; ++r) runs->model()->data(runs->model()->index(r, 0), Qt::DisplayRole);
    QTRY_VERIFY_WITH_TIMEOUT(runs->model()->isSettled() && runs->model()->runId(3) >= 0, 5000);
    runs->table()->selectAll();
    ComparePanel* compare = runs->comparePanel();
    QTRY_VERIFY_WITH_TIMEOUT(compare->isLoaded() && compare->runs().size() == 4, 5000);
    QVERIFY(compare->selectMetric("test_accuracy", -1));
    compare->groupCombo()->setCurrentIndex(1);  // mean ± std
    QTRY_VERIFY_WITH_TIMEOUT(compare->isLoaded() && compare->bands().size() == 2, 5000);
    const auto& e = queue->entries();
    for (const auto& band : compare->bands()) {
      const bool low = std::find(band.runs.begin(), band.runs.end(), e[0].runId) != band.runs.end();
      const std::vector<int64_t> expected = low ? std::vector<int64_t>{e[0].runId, e[1].runId}
                                                : std::vector<int64_t>{e[2].runId, e[3].runId};
      std::vector<int64_t> got = band.runs;
      std::sort(got.begin(), got.end());
      std::vector<int64_t> want = expected;
      std::sort(want.begin(), want.end());
      QCOMPARE(got, want);
      // The fake engine's seed 2 adds 0.004 to seed 1's accuracy curve: the sample std of the
      // two is 0.004 / sqrt(2) wherever both have a value.
      int checked = 0;
      for (size_t k = 0; k < band.x.size(); ++k) {
        if (!std::isfinite(band.mean[k])) continue;
        QVERIFY2(std::abs((band.mean[k] - band.lo[k]) - 0.004 / std::sqrt(2.0)) < 1e-9,
                 qPrintable(QStringLiteral("x %1: mean %2 lo %3")
                                .arg(band.x[k])
                                .arg(band.mean[k])
                                .arg(band.lo[k])));
        ++checked;
      }
      QVERIFY(checked > 5);
    }
    // The band follows the chosen spread: ± 95 % CI of two runs is t(1) = 12.706 standard
    // errors (std / sqrt(2)) either side; the groups' table takes the same choice.
    compare->groupCombo()->setCurrentIndex(4);  // mean ± 95 % CI
    QTRY_VERIFY_WITH_TIMEOUT(compare->isLoaded() && compare->bands().size() == 2, 5000);
    QVERIFY(compare->spread() == study::Spread::Ci95);
    QCOMPARE(runs->groupTable()->spreadCombo()->currentData().toString(), QStringLiteral("ci95"));
    QVERIFY(AppSettings::spread() == study::Spread::Ci95);
    for (const auto& band : compare->bands())
      for (size_t k = 0; k < band.x.size(); ++k)
        if (std::isfinite(band.mean[k]))
          QVERIFY2(std::abs((band.hi[k] - band.mean[k]) - 12.7062047 * 0.004 / 2) < 1e-6,
                   qPrintable(QString::number(band.hi[k] - band.mean[k])));
    // And back from the table: the standard error.
    runs->groupTable()->spreadCombo()->setCurrentIndex(
        runs->groupTable()->spreadCombo()->findData(QStringLiteral("sem")));
    QTRY_VERIFY_WITH_TIMEOUT(compare->isLoaded() && compare->bands().size() == 2, 5000);
    QVERIFY(compare->spread() == study::Spread::Sem);
    for (const auto& band : compare->bands())
      for (size_t k = 0; k < band.x.size(); ++k)
        if (std::isfinite(band.mean[k]))
          QVERIFY(std::abs((band.mean[k] - band.lo[k]) - 0.004 / 2) < 1e-9);
    compare->groupCombo()->setCurrentIndex(1);
    // The grouped table: mean ± std per group, time-to-target, the front; by chosen keys.
    StudyGroupTable* groups = runs->groupTable();
    runs->listTabs()->setCurrentWidget(groups);
    QTRY_VERIFY_WITH_TIMEOUT(groups->isLoaded() && groups->groups().size() == 2, 5000);
    QCOMPARE(groups->table()->rowCount(), 2);
    QCOMPARE(groups->table()->horizontalHeaderItem(0)->text(), QStringLiteral("train.lr"));
    for (const auto& g : groups->groups()) {
      QCOMPARE(g.accuracy.n, 2);
      const size_t first = g.values.at(0) == "0.001" ? 0 : 2;
      const double a = e[first].testAccuracy, b = e[first + 1].testAccuracy;
      QVERIFY(std::abs(g.accuracy.mean - (a + b) / 2) < 1e-12);
      QVERIFY(std::abs(g.accuracy.std - std::abs(a - b) / std::sqrt(2.0)) < 1e-12);
      QCOMPARE(g.reached, 2);  // the default target: every completed run reaches it
      QVERIFY(g.targetTimeS && g.targetTimeS->mean > 0);
    }
    QVERIFY2(groups->note()->text().contains(QStringLiteral("lowest best accuracy")),
             qPrintable(groups->note()->text()));
    groups->setGroupKeys({});  // pool train.lr too: one group of four
    QCOMPARE(groups->groups().size(), size_t(1));
    QCOMPARE(groups->groups()[0].accuracy.n, 4);
    groups->groupByCombo()->setCurrentIndex(1);  // each run
    QCOMPARE(groups->table()->rowCount(), 4);
    QVERIFY(groups->groups().empty());
    groups->groupByCombo()->setCurrentIndex(0);
    groups->setGroupKeys({"train.lr"});
    QCOMPARE(groups->groups().size(), size_t(2));

    compare->summaryCombo()->setCurrentIndex(4);  // front: wall time vs accuracy
    const auto& front = compare->frontPoints();
    QCOMPARE(front.size(), size_t(2));
    std::vector<std::pair<double, double>> xy;
    for (const auto& p : front) {
      QCOMPARE(p.runs.size(), size_t(2));
      double acc = 0;
      for (const auto& entry : e)
        if (std::find(p.runs.begin(), p.runs.end(), entry.runId) != p.runs.end())
          acc += entry.testAccuracy / 2;
      QVERIFY2(std::abs(p.y - acc) < 1e-9, qPrintable(p.label));
      xy.push_back({p.x, p.y});
    }
    const auto onFront = study::paretoFront(xy);
    for (size_t i = 0; i < front.size(); ++i) QCOMPARE(front[i].onFront, bool(onFront[i]));
    QVERIFY(front[0].onFront || front[1].onFront);
  }

  void searchWithPruningAndTuning() {
    test::TempStore t;
    MainWindow window(recordingServices(t.store, 0.0003), t.store);
    window.resize(1400, 950);
    window.document()->load(baseSpec(240));
    window.show();
    StudyPanel* panel = window.designWorkspace()->studyPanel();
    SearchSection* search = panel->searchSection();
    QUndoStack* undo = window.document()->undoStack();
    panel->vary(QStringLiteral("mode"));
    QVERIFY(panel->setValues(QStringLiteral("mode"), QStringLiteral("[\"local\", \"backprop\"]")));
    // Search the learning rate, added from the key box (completed from the format's keys).
    // Until a key is searched only the key box shows.
    QVERIFY(!search->table()->isVisibleTo(search) && !search->trialsSpin()->isVisibleTo(search));
    QVERIFY(search->keyCombo()->findText(QStringLiteral("train.lr")) >= 0);
    search->keyCombo()->setCurrentText(QStringLiteral("train.lr"));
    search->addButton()->click();
    QCOMPARE(search->table()->rowCount(), 1);
    QVERIFY(search->table()->isVisibleTo(search) && search->trialsSpin()->isVisibleTo(search));
    QCOMPARE(search->distributionCombo(0)->currentText(), QStringLiteral("log_uniform"));
    QCOMPARE(window.document()->study().search.trials, study::kDefaultTrials);
    // A range the wrong way round is outlined with the message and changes nothing.
    const std::string before = study::studyObjectJson(window.document()->study());
    QVERIFY(!search->setRow(0, QStringLiteral("log_uniform"), QStringLiteral("0.1, 0.0001")));
    QVERIFY(hasInvalidOutline(search->table()->cellWidget(0, 2)));
    QVERIFY2(search->rowProblem(0).contains(QStringLiteral("study.search.train.lr")),
             qPrintable(search->rowProblem(0)));
    QCOMPARE(study::studyObjectJson(window.document()->study()), before);
    // Typed into the range cell, as a user would.
    auto* range = qobject_cast<QLineEdit*>(search->table()->cellWidget(0, 2));
    QVERIFY(range);
    range->setText(QStringLiteral("1e-4, 0.1"));
    Q_EMIT range->editingFinished();
    QCOMPARE(window.document()->study().search.keys.at(0).dist.high, 0.1);
    QVERIFY(!hasInvalidOutline(search->table()->cellWidget(0, 2)));
    search->trialsSpin()->setValue(6);
    search->samplerCombo()->setCurrentText(QStringLiteral("sobol"));
    search->pruneBox()->setChecked(true);
    search->minStepsSpin()->setValue(30);
    search->reductionSpin()->setValue(2);
    search->tuneBox()->setChecked(true);
    search->tuneSeedsSpin()->setValue(2);
    QVERIFY2(search->tunePerLabel()->text().contains(QStringLiteral("mode")),
             qPrintable(search->tunePerLabel()->text()));
    const study::StudyObject& s = window.document()->study();
    QCOMPARE(s.search.trials, 6);
    QCOMPARE(s.search.sampler, std::string("sobol"));
    QVERIFY(s.search.prune && s.search.prune->minSteps == 30 && s.search.prune->reduction == 2);
    QVERIFY(s.search.tune && s.search.tune->seeds == 2);
    // Choosing needs a validation split: said, and Run study is off until there is one.
    QVERIFY2(panel->problem().contains(QStringLiteral("dataset.validation")),
             qPrintable(panel->problem()));
    QVERIFY(!panel->runButton()->isEnabled());
    engine::ExperimentSpec split = window.document()->spec();
    split.dataset.validation = 0.1;
    window.document()->edit(split, QStringLiteral("validation split"));
    QVERIFY2(panel->problem().isEmpty(), qPrintable(panel->problem()));
    QCOMPARE(panel->runCount(), 2 * (6 + 2));  // two searches of 6 trials and 2 tuned runs
    QVERIFY2(panel->summaryLabel()->text().contains(QStringLiteral("2 searches")),
             qPrintable(panel->summaryLabel()->text()));
    // Undo like every Design edit: the tune seeds, then back.
    undo->undo();  // the split
    undo->undo();  // tune seeds 2 -> 3 (the default)
    QCOMPARE(window.document()->study().search.tune->seeds, 3);
    QCOMPARE(search->tuneSeedsSpin()->value(), 3);
    undo->redo();
    undo->redo();
    QCOMPARE(panel->runCount(), 16);
    // A searched key that is also varied is refused, its row outlined.
    search->keyCombo()->setCurrentText(QStringLiteral("train.batch_size"));
    search->addButton()->click();
    QCOMPARE(search->table()->rowCount(), 2);
    panel->vary(QStringLiteral("train.batch_size"));
    QVERIFY2(panel->problem().contains(QStringLiteral("train.batch_size")),
             qPrintable(panel->problem()));
    QVERIFY(hasInvalidOutline(search->table()->cellWidget(1, 2)));
    undo->undo();  // the vary
    undo->undo();  // the second searched key
    QCOMPARE(search->table()->rowCount(), 1);
    QVERIFY(panel->problem().isEmpty());

    // Run it: the queue is the study driver's, as `study run`'s.
    panel->runButton()->click();
    StudyQueue* queue = window.trainWorkspace()->studyQueue();
    QVERIFY(queue->isRunning());
    QTRY_VERIFY_WITH_TIMEOUT(!queue->isRunning(), 60000);
    QCOMPARE(queue->entries().size(), size_t(16));
    std::set<int64_t> prunedRuns;
    const std::set<int64_t> rungs = {30, 60, 120};
    for (int i = 0; i < int(queue->entries().size()); ++i) {
      const auto& e = queue->entries()[size_t(i)];
      QVERIFY2(e.state == Entry::Completed || e.state == Entry::Pruned,
               qPrintable(queue->view()->topLevelItem(i)->text(2)));
      QVERIFY(e.runId > 0);
      if (e.state != Entry::Pruned) continue;
      QVERIFY(e.point.trial >= 0);  // only trials are pruned, never tuned runs
      QVERIFY(rungs.count(e.prunedAt));
      QCOMPARE(e.rung, int(std::distance(rungs.begin(), rungs.find(e.prunedAt))) + 1);
      const QString status = queue->view()->topLevelItem(i)->text(2);
      QVERIFY2(status.contains(QStringLiteral("pruned at rung %1").arg(e.rung)),
               qPrintable(status));
      prunedRuns.insert(e.runId);
    }
    QVERIFY(!prunedRuns.empty());

    // The store agrees with `study show`: per mode the best completed trial by val_accuracy,
    // its settings re-run on 2 fresh seeds.
    storage::RunReader reader(*t.store);
    const auto results = study::loadStudyResults(reader, queue->studyId());
    QVERIFY(results.study.status == storage::StudyStatus::Completed);
    QCOMPARE(results.tuned.size(), size_t(2));
    for (size_t p = 0; p < 2; ++p) {
      double best = -1;
      std::vector<std::string> bestValues;
      for (const auto& row : results.rows)
        if (row.link.point < 12 && row.link.point % 2 == int(p) &&
            row.run.status == storage::RunStatus::Completed && row.valAccuracy &&
            *row.valAccuracy > best) {
          best = *row.valAccuracy;
          bestValues.assign(row.values.begin() + 1, row.values.end());
        }
      QCOMPARE(results.tuned[p].bestValue.value_or(-2), best);
      QCOMPARE(results.tuned[p].best, bestValues);
      QCOMPARE(results.tuned[p].test.n, 2);
      QVERIFY(results.tuned[p].ci95);
      for (const auto& row : results.rows)
        if (row.link.point < 12)
          QCOMPARE(row.run.status == storage::RunStatus::Pruned,
                   bool(prunedRuns.count(row.run.id)));
    }

    // Runs → Groups: the tuned comparison first, then the study views.
    window.showWorkspace(MainWindow::kRuns);
    RunsWorkspace* runs = window.runsWorkspace();
    runs->poll();
    QTRY_VERIFY_WITH_TIMEOUT(runs->studyCombo()->count() == 2, 5000);
    runs->studyCombo()->setCurrentIndex(1);
    StudyGroupTable* groups = runs->groupTable();
    runs->listTabs()->setCurrentWidget(groups);
    QTRY_VERIFY_WITH_TIMEOUT(groups->isLoaded() && groups->results(), 5000);
    QTableWidget* tuned = groups->tunedTable();
    QVERIFY(tuned->isVisible());
    QCOMPARE(tuned->rowCount(), 2);
    QCOMPARE(tuned->horizontalHeaderItem(0)->text(), QStringLiteral("mode"));
    QCOMPARE(tuned->horizontalHeaderItem(2)->text(), QStringLiteral("chosen on val_accuracy"));
    const QLocale locale;
    for (int r = 0; r < 2; ++r) {
      const study::TunedResult& tr = results.tuned[size_t(r)];
      QCOMPARE(tuned->item(r, 0)->text(), QString::fromStdString(r == 0 ? "local" : "backprop"));
      // The chosen rate to 3 significant digits (issue 36 §1.5), not the double's 17.
      QCOMPARE(tuned->item(r, 1)->text(),
               QStringLiteral("train.lr=") +
                   QString::fromStdString(engine::significant(std::stod(tr.best.at(0)), 3)));
      QCOMPARE(tuned->item(r, 2)->text(), locale.toString(*tr.bestValue, 'f', 4));
      QVERIFY2(tuned->item(r, 3)->text().startsWith(
                   locale.toString(tr.test.mean, 'f', 4) + QStringLiteral(" ± ") +
                   locale.toString(tr.ci95->second - tr.test.mean, 'f', 4)),
               qPrintable(tuned->item(r, 3)->text()));
      QCOMPARE(tuned->item(r, 4)->text(), QStringLiteral("2"));
    }
    // The parallel coordinates: one line per trial, the lr axis logarithmic, each line at its
    // run's learning rate, pruned trials marked.
    StudyViews* views = groups->views();
    QVERIFY(views->isVisible());
    const study::SearchViews& v = views->views();
    QCOMPARE(v.axes.size(), size_t(2));
    QVERIFY(v.axes[0].log);
    QCOMPARE(v.axes[0].low, 1e-4);
    QCOMPARE(v.axes[0].high, 0.1);
    QCOMPARE(v.trials.size(), size_t(12));
    for (const auto& trial : v.trials) {
      const auto run = reader.run(trial.runId);
      QVERIFY(run);
      const double lr = engine::parseSpec(run->specJson).train.lr;
      const auto line = study::parallelLine(v, trial);
      QVERIFY(std::abs(line[0] - std::log(lr / 1e-4) / std::log(1e3)) < 1e-9);
      QCOMPARE(trial.pruned, bool(prunedRuns.count(trial.runId)));
    }
    views->viewCombo()->setCurrentIndex(StudyViews::Parallel);
    // A line per trial, and the legend's key for the faint (pruned) ones.
    QCOMPARE(views->plot()->graphCount(), 12 + (prunedRuns.empty() ? 0 : 1));
    views->viewCombo()->setCurrentIndex(StudyViews::BestSoFar);
    QCOMPARE(views->plot()->graphCount(), 2);
    views->viewCombo()->setCurrentIndex(StudyViews::Importance);
    QVERIFY(std::isfinite(v.importance.at(0)));
    // The fake's accuracy follows log lr: the learning rate explains much of it.
    QVERIFY2(v.importance[0] > 0.5, qPrintable(QString::number(v.importance[0])));
    // The spread: a 95 % CI in the groups' table, kept in the settings.
    groups->spreadCombo()->setCurrentIndex(groups->spreadCombo()->findData(QStringLiteral("ci95")));
    QVERIFY(AppSettings::spread() == study::Spread::Ci95);
  }

  void skipStopRunAndStopStudy() {
    test::TempStore t;
    MainWindow window(recordingServices(t.store, 0.001), t.store);
    window.document()->load(baseSpec(1000000));  // runs until stopped
    window.show();
    designTwoByTwo(window);
    window.startStudy();
    StudyQueue* queue = window.trainWorkspace()->studyQueue();
    QVERIFY(queue->isRunning());
    QVERIFY(!window.trainWorkspace()->runButton()->isEnabled());  // one thing at a time
    QTRY_VERIFY_WITH_TIMEOUT(queue->entries()[0].runId > 0, 5000);
    // Skip the third run before it starts.
    queue->view()->clearSelection();
    queue->view()->topLevelItem(2)->setSelected(true);
    queue->skipButton()->click();
    QVERIFY(queue->entries()[2].state == Entry::Skipped);
    // Stop: the current run stops, the study goes on with the next.
    window.trainWorkspace()->stopButton()->click();
    QTRY_VERIFY_WITH_TIMEOUT(queue->entries()[1].state == Entry::Running, 10000);
    QVERIFY(queue->entries()[0].state == Entry::Stopped);
    QTRY_VERIFY_WITH_TIMEOUT(queue->entries()[1].runId > 0, 5000);
    // Stop study: the run and the study stop; the last run never starts.
    queue->stopStudyButton()->click();
    QTRY_VERIFY_WITH_TIMEOUT(!queue->isRunning() && !window.controller()->isBusy(), 10000);
    QVERIFY(queue->entries()[1].state == Entry::Stopped);
    QVERIFY(queue->entries()[3].state == Entry::Waiting);
    storage::RunReader reader(*t.store);
    const auto stored = reader.study(queue->studyId());
    QVERIFY(stored);
    QVERIFY(stored->status == storage::StudyStatus::Stopped);
    const auto links = reader.studyRuns(queue->studyId());
    QCOMPARE(links.size(), size_t(2));
    for (const auto& l : links) QVERIFY(l.runStatus == storage::RunStatus::Stopped);
    // `study resume` would run every point: none completed, the stopped ones have no checkpoint.
    const auto work = study::pendingWork(reader, *stored);
    QCOMPARE(work.size(), size_t(4));
    for (const auto& w : work) QVERIFY(w.kind == study::PointWork::Kind::Run);
    QVERIFY(window.trainWorkspace()->runButton()->isEnabled());
  }
};

QTEST_MAIN(TestStudyGui)
#include "test_study_gui.moc"
