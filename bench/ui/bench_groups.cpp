// The workbench with 1,000 stored runs: how long Runs takes to group them and draw the groups.
// A temporary store holds 50 studies of 20 runs (train.lr x 2, 10 seeds) with a 500-step loss
// per stage and 10 test evaluations each. Timed, as the median of repeats:
//   - the compare panel given all 1,000 runs, grouped (mean ± std): store read, alignment,
//     grouping and drawing, until it has loaded;
//   - one replot of that grouped overlay;
//   - the front view of the same 1,000 runs (groups, dominance, drawing);
//   - the grouped table (Runs → Groups) of one study of 1,000 runs, until it has loaded.
// Prints a table; runs offscreen unless a display is given.
//   bench_groups [--repeats N]

#include <qcustomplot.h>
#include <QApplication>
#include <QComboBox>
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "runs/compare_panel.h"
#include "runs/store_executor.h"
#include "runs/study_groups.h"
#include "stagewise/engine/spec.h"
#include "stagewise/storage/run_store.h"
#include "stagewise/storage/run_writer.h"

using namespace stagewise;
using namespace stagewise::ui;

namespace {

constexpr int kStudies = 50, kRunsPerStudy = 20, kSteps = 500, kEvals = 10;

int64_t writeRun(storage::RunWriter& w, double lr, int seed, int64_t studyId, int point,
                 storage::RunStore& store) {
  engine::ExperimentSpec spec;
  spec.name = "bench lr=" + std::to_string(lr) + " seed " + std::to_string(seed);
  spec.dataset.kind = "synthetic";
  spec.model.hidden = {32, 32, 32};
  spec.partition.cuts = {2};
  spec.train.lr = lr;
  spec.train.seed = uint64_t(seed);
  spec.train.maxSteps = kSteps;
  storage::NewRun run;
  run.name = spec.name;
  run.mode = "local";
  run.specJson = engine::specToJson(spec);
  run.modelKind = "mlp";
  run.totalSteps = kSteps;
  run.batchSize = 32;
  for (int k = 0; k < 2; ++k) {
    storage::StageRecord s;
    s.index = k;
    s.device = "cpu";
    s.auxHead = k ? "classifier" : "linear";
    run.stages.push_back(s);
  }
  const int64_t id = w.createRun(run);
  const double offset = 0.01 * seed + (lr > 0.002 ? 0.05 : 0.0);
  std::vector<storage::PointInput> points;
  for (int step = 0; step < kSteps; ++step)
    for (int k = 0; k < 2; ++k)
      points.push_back({"loss", k, -1, step, step * 0.01, 2 * std::exp(-step / 80.0) + offset});
  for (int e = 1; e <= kEvals; ++e) {
    const int step = e * kSteps / kEvals - 1;
    points.push_back({"test_accuracy", -1, -1, step, step * 0.01,
                      0.9 - 0.6 * std::exp(-step / 80.0) - offset / 2});
  }
  w.appendPoints(id, std::move(points));
  storage::RunFinish f;
  f.status = storage::RunStatus::Completed;
  f.steps = kSteps;
  f.testAccuracy = 0.9 - 0.6 * std::exp(-(kSteps - 1) / 80.0) - offset / 2;
  f.wallSeconds = kSteps * 0.01 * (lr > 0.002 ? 0.8 : 1.0);
  f.samplesPerSec = 32 / 0.01;
  f.summaryJson = R"({"train_flops": 1.0e12})";
  w.finishRun(id, f);
  storage::StudyRunRecord link;
  link.point = point;
  link.runId = id;
  link.seed = seed;
  link.valuesJson = "[" + std::to_string(lr) + "]";
  store.linkStudyRun(studyId, link);
  return id;
}

int64_t newStudy(storage::RunStore& store, const std::string& name, int runs) {
  storage::NewStudy ns;
  ns.name = name;
  ns.baseSpecJson = "{}";
  ns.keys = {{"train.lr", "[0.001,0.003]"}};
  ns.seeds = runs / 2;
  ns.runsTotal = runs;
  return store.createStudy(ns);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <typename Ready>
void waitFor(Ready ready) {
  while (!ready()) QApplication::processEvents(QEventLoop::AllEvents, 5);
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--repeats" && i + 1 < argc) {
      repeats = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: %s [--repeats N]\n", argv[0]);
      return 2;
    }
  }
  if (!std::getenv("DISPLAY") && !std::getenv("QT_QPA_PLATFORM"))
    setenv("QT_QPA_PLATFORM", "offscreen", 1);
  QApplication app(argc, argv);
  QTemporaryDir dir;
  auto store =
      std::make_shared<storage::RunStore>(dir.filePath(QStringLiteral("runs.db")).toStdString());
  std::vector<int64_t> ids;
  {
    auto& w = store->writer();
    for (int s = 0; s < kStudies; ++s) {
      const int64_t study = newStudy(*store, "study " + std::to_string(s), kRunsPerStudy);
      for (int r = 0; r < kRunsPerStudy; ++r)
        ids.push_back(writeRun(w, r % 2 ? 0.003 : 0.001, 1 + r / 2, study, r, *store));
      store->finishStudy(study, storage::StudyStatus::Completed);
    }
    w.flush();
  }
  // One study holding 1,000 runs, for the grouped table.
  const int64_t big = newStudy(*store, "1000 runs", int(ids.size()));
  {
    auto& w = store->writer();
    for (int r = 0; r < int(ids.size()); ++r)
      writeRun(w, r % 2 ? 0.003 : 0.001, 1 + r / 2, big, r, *store);
    store->finishStudy(big, storage::StudyStatus::Completed);
    w.flush();
  }

  StoreExecutor executor(store);
  ComparePanel panel(&executor);
  panel.resize(1300, 700);
  static_cast<QWidget&>(panel).show();
  panel.groupCombo()->setCurrentIndex(1);  // mean ± std
  std::vector<double> load, replot, front, table;
  size_t bands = 0, points = 0, groups = 0;
  for (int i = 0; i < repeats; ++i) {
    panel.setRuns({});
    waitFor([&] { return panel.isLoaded(); });
    QElapsedTimer t;
    t.start();
    panel.setRuns(ids);
    waitFor([&] { return panel.isLoaded() && !panel.bands().empty(); });
    load.push_back(t.nsecsElapsed() / 1e6);
    bands = panel.bands().size();
    t.restart();
    panel.overlayPlot()->replot();
    replot.push_back(t.nsecsElapsed() / 1e6);
    panel.summaryCombo()->setCurrentIndex(0);
    t.restart();
    panel.summaryCombo()->setCurrentIndex(4);  // front: wall time vs accuracy
    panel.summaryPlot()->replot();
    front.push_back(t.nsecsElapsed() / 1e6);
    points = panel.frontPoints().size();
  }
  StudyGroupTable groupTable(&executor);
  groupTable.resize(1300, 500);
  groupTable.show();
  for (int i = 0; i < repeats; ++i) {
    groupTable.setStudy(0);
    waitFor([&] { return groupTable.isLoaded(); });
    QElapsedTimer t;
    t.start();
    groupTable.setStudy(big);
    waitFor([&] { return groupTable.isLoaded() && !groupTable.groups().empty(); });
    table.push_back(t.nsecsElapsed() / 1e6);
    groups = groupTable.groups().size();
  }

  std::printf(
      "1,000 runs (50 studies x 20; %d-step loss per stage, %d evaluations), %d repeats\n\n",
      kSteps, kEvals, repeats);
  std::printf("%-62s %10s\n", "scenario", "median ms");
  std::printf(
      "%-62s %10.1f\n",
      ("compare 1,000 runs grouped (" + std::to_string(bands) + " bands): load + draw").c_str(),
      median(load));
  std::printf("%-62s %10.1f\n", "  replot of the grouped overlay", median(replot));
  std::printf("%-62s %10.1f\n",
              ("front of 1,000 runs (" + std::to_string(points) + " groups): group + draw").c_str(),
              median(front));
  std::printf(
      "%-62s %10.1f\n",
      ("grouped table of a 1,000-run study (" + std::to_string(groups) + " groups, time-to-target)")
          .c_str(),
      median(table));
  return 0;
}
