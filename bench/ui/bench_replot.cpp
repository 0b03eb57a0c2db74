// Train-workspace replot time with 8 stages x 6 series x 200,000 points: the dashboard's
// per-pixel decimation against handing QCustomPlot every point. Prints a table; --json FILE
// writes the same rows. Runs offscreen unless a display is given.
//   bench_replot [--json FILE] [--points N] [--frames N]

#include <qcustomplot.h>
#include <QApplication>
#include <QElapsedTimer>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "live/live_dashboard.h"
#include "live/live_data.h"
#include "live/plot_panel.h"
#include "live/timeline_panel.h"
#include "live/utilization_panel.h"

using namespace stagewise;
using namespace stagewise::ui;

namespace {

constexpr int kStages = 8;
const char* const kSeries[] = {engine::series::kLoss,       engine::series::kAccuracy,
                               engine::series::kQueueDepth, engine::series::kStaleness,
                               engine::series::kGradCosine, engine::series::kComputeFraction};

engine::RunInfo runInfo() {
  engine::RunInfo info;
  info.name = "bench";
  info.mode = engine::Mode::Local;
  for (int k = 0; k < kStages; ++k) info.stages.push_back({k, k, k, "cpu", "linear", 1, 1, 1});
  return info;
}

void fill(LiveData& data, int64_t points, int64_t from = 0) {
  std::vector<engine::MetricPoint> batch;
  batch.reserve(size_t(points) * kStages * std::size(kSeries));
  for (int k = 0; k < kStages; ++k)
    for (const char* name : kSeries)
      for (int64_t step = from; step < from + points; ++step) {
        const double t = step * 0.01 + k * 1e-3;
        const double v = 2.3 * std::exp(-step / 30000.0) + 0.2 + 0.05 * std::sin(step * 0.37 + k) +
                         (step % 997 == 0 ? 0.8 : 0.0);
        batch.push_back({name, k, -1, step, t, v});
      }
  data.addPoints(0, batch);
}

struct Stats {
  double median = 0, p95 = 0, mean = 0;
};

Stats stats(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  Stats s;
  s.median = ms[ms.size() / 2];
  s.p95 = ms[std::min(ms.size() - 1, size_t(std::ceil(ms.size() * 0.95)) - 1)];
  for (double v : ms) s.mean += v / double(ms.size());
  return s;
}

void replotAll(LiveDashboard& d) {
  for (auto* p : d.linePanels()) p->plot()->replot(QCustomPlot::rpImmediateRefresh);
  d.utilizationPanel()->plot()->replot(QCustomPlot::rpImmediateRefresh);
  d.timelinePanel()->plot()->replot(QCustomPlot::rpImmediateRefresh);
}

int drawnPoints(LiveDashboard& d) {
  int n = 0;
  for (auto* p : d.linePanels())
    for (int g = 0; g < p->graphCount(); ++g) n += p->shownPoints(g);
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  std::string jsonPath;
  int64_t points = 200000;
  int frames = 30;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json" && i + 1 < argc)
      jsonPath = argv[++i];
    else if (a == "--points" && i + 1 < argc)
      points = std::stoll(argv[++i]);
    else if (a == "--frames" && i + 1 < argc)
      frames = std::stoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s [--json FILE] [--points N] [--frames N]\n", argv[0]);
      return 2;
    }
  }
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") && qEnvironmentVariableIsEmpty("DISPLAY"))
    qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);

  LiveData data;
  data.beginPhase(0, runInfo());
  QElapsedTimer fillTimer;
  fillTimer.start();
  fill(data, points);
  const double fillMs = double(fillTimer.nsecsElapsed()) / 1e6;
  LiveDashboard dashboard(&data);
  dashboard.resize(1400, 800);
  dashboard.show();
  QApplication::processEvents();

  struct Row {
    std::string scenario;
    Stats s;
    int drawn;
  };
  std::vector<Row> rows;
  auto measure = [&](const std::string& name, const std::function<void()>& before) {
    std::vector<double> ms;
    for (int f = 0; f < frames; ++f) {
      if (before) before();
      QElapsedTimer t;
      t.start();
      dashboard.refreshAll(true);
      replotAll(dashboard);
      ms.push_back(double(t.nsecsElapsed()) / 1e6);
    }
    rows.push_back({name, stats(ms), drawnPoints(dashboard)});
  };

  measure("full range, raw", nullptr);
  dashboard.smoothingSlider()->setValue(60);
  measure("full range, smoothing 0.6", nullptr);
  dashboard.smoothingSlider()->setValue(0);
  // Live: every frame ~330 new steps per series arrive (33 ms of a fast run) before the redraw.
  int64_t next = points;
  measure("live: append 330 steps + redraw", [&] {
    fill(data, 330, next);
    next += 330;
  });
  // Zoomed into 5% of the range (the user dragged/zoomed): re-decimation on the visible window.
  for (auto* p : dashboard.linePanels()) {
    p->plot()->xAxis->setRange(double(points) * 0.5, double(points) * 0.55);
  }
  measure("zoomed to 5% of the range", nullptr);
  for (auto* p : dashboard.linePanels()) p->resetView();

  // Baseline: all points handed to QCustomPlot (its own adaptive sampling), loss panel only.
  PlotPanel* loss = dashboard.lossPanel();
  QCustomPlot* plot = loss->plot();
  std::vector<double> naive;
  {
    QCustomPlot raw;
    raw.resize(plot->size());
    for (int k = 0; k < kStages; ++k) {
      QVector<QCPGraphData> d;
      const SeriesBuffer* s = data.series({0, engine::series::kLoss, k, -1});
      for (size_t i = 0; i < s->size(); ++i) d << QCPGraphData(s->x(i, XAxisKind::Step), s->y(i));
      auto* g = raw.addGraph();
      g->data()->set(d, true);
      g->setAdaptiveSampling(true);
    }
    raw.rescaleAxes();
    for (int f = 0; f < std::min(frames, 10); ++f) {
      QElapsedTimer t;
      t.start();
      raw.replot(QCustomPlot::rpImmediateRefresh);
      naive.push_back(double(t.nsecsElapsed()) / 1e6);
    }
  }
  std::vector<double> oneDecimated;
  for (int f = 0; f < std::min(frames, 10); ++f) {
    QElapsedTimer t;
    t.start();
    loss->refresh(true);
    plot->replot(QCustomPlot::rpImmediateRefresh);
    oneDecimated.push_back(double(t.nsecsElapsed()) / 1e6);
  }
  int lossDrawn = 0;
  for (int g = 0; g < loss->graphCount(); ++g) lossDrawn += loss->shownPoints(g);
  rows.push_back({"loss panel only, decimated", stats(oneDecimated), lossDrawn});
  rows.push_back(
      {"loss panel only, all points to QCustomPlot", stats(naive), int(points) * kStages});

  const int64_t total = points * kStages * int64_t(std::size(kSeries));
  std::printf(
      "bench_replot: %d stages x %zu series x %lld points = %lld points held (filled in %.0f ms)\n",
      kStages, std::size(kSeries), static_cast<long long>(points), static_cast<long long>(total),
      fillMs);
  std::printf("dashboard %dx%d, %d frames per row, target <= 16 ms/frame\n\n", dashboard.width(),
              dashboard.height(), frames);
  std::printf("%-44s %10s %10s %10s %12s\n", "scenario", "median ms", "p95 ms", "mean ms",
              "points drawn");
  for (const auto& r : rows)
    std::printf("%-44s %10.2f %10.2f %10.2f %12d\n", r.scenario.c_str(), r.s.median, r.s.p95,
                r.s.mean, r.drawn);
  if (!jsonPath.empty()) {
    nlohmann::json j;
    j["benchmark"] = "bench_replot";
    j["stages"] = kStages;
    j["series_per_stage"] = std::size(kSeries);
    j["points_per_series"] = points;
    j["frames"] = frames;
    for (const auto& r : rows)
      j["rows"].push_back({{"scenario", r.scenario},
                           {"median_ms", r.s.median},
                           {"p95_ms", r.s.p95},
                           {"mean_ms", r.s.mean},
                           {"points_drawn", r.drawn}});
    std::ofstream(jsonPath) << j.dump(2) << '\n';
  }
  return 0;
}
