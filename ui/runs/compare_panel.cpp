#include "runs/compare_panel.h"

#include <qcustomplot.h>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QMenu>
#include <QSettings>
#include <QSignalBlocker>
#include <QSplitter>
#include <QTableWidget>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "common/app_settings.h"
#include "common/plot_frame.h"
#include "common/smoothing.h"
#include "common/theme.h"
#include "runs/draw_decimation.h"
#include "runs/last_stage_series.h"
#include "runs/overlay_legend.h"
#include "runs/run_history.h"
#include "runs/whole_set_evals.h"
#include "stagewise/engine/machine_load.h"
#include "stagewise/engine/metrics.h"
#include "stagewise/study/results.h"

namespace stagewise::ui {

namespace {

/// The summary bars' run labels ("#12"), every k-th where all of them would print over each
/// other (issue 36: 16 runs read "#9#10#11…"): k the least that keeps the widest label, by the
/// axis font's metrics, apart from the next shown.
class ThinnedTextTicker : public QCPAxisTickerText {
 public:
  explicit ThinnedTextTicker(QCPAxis* axis) : m_axis(axis) {}

 protected:
  QVector<double> createTickVector(double tickStep, const QCPRange& range) override {
    const QVector<double> all = QCPAxisTickerText::createTickVector(tickStep, range);
    if (all.size() < 2 || !m_axis || !m_axis->axisRect() || !(range.size() > 0)) return all;
    const QFontMetrics metrics(m_axis->tickLabelFont());
    int widest = 0;
    for (double tick : all)
      widest = std::max(widest, metrics.horizontalAdvance(mTicks.value(tick)));
    const double pixelsPerUnit = m_axis->axisRect()->width() / range.size();
    const double gap = (all[1] - all[0]) * pixelsPerUnit;  // the bars are 1 apart
    const int every = gap > 0 ? std::max(1, int(std::ceil((widest + 6) / gap))) : 1;
    QVector<double> shown;
    for (qsizetype k = 0; k < all.size(); k += every) shown << all[k];
    return shown;
  }

 private:
  QCPAxis* m_axis;
};

// What can always be overlaid: a series name and a stage (-1 run-level, -2 each run's last
// stage). The gradient cosine of the other stages and of every layer is added to the list when
// the selected runs have it.
struct FixedMetric {
  const char* label;
  const char* series;
  int stage;
};
// The run's own series first, then the gradient cosine of every stage and then of every layer,
// each in order (stages and layers are numbered from 1, as everywhere in the workbench). The
// cosines of later stages and of the layers are added when the selected runs have them.
constexpr FixedMetric kMetrics[] = {
    {"Loss · last stage", engine::series::kLoss, -2},
    {"Test accuracy", engine::series::kTestAccuracy, -1},
    {"Test loss", engine::series::kTestLoss, -1},
    {"Loss · stage 1", engine::series::kLoss, 0},
    {"Accuracy · last stage", engine::series::kAccuracy, -2},
    {"Samples/s", engine::series::kSamplesPerSec, -1},
    {"Gradient cosine · stage 1", engine::series::kGradCosine, 0},
};

constexpr double kNoNext = std::numeric_limits<double>::infinity();

// Takes a run's whole-test-set evaluations off its periodic line: out of its sparse points,
// and off the grid from each one's x to the next periodic point (where the grid held its value).
void setApart(const std::vector<ComparePanel::WholeSetPoint>& whole,
              std::vector<std::pair<double, double>>& points, std::vector<double>& values,
              const std::vector<double>& grid) {
  for (const auto& w : whole) {
    for (size_t k = points.size(); k-- > 0;)
      if (points[k].first == w.x && points[k].second == w.value) {
        points.erase(points.begin() + std::ptrdiff_t(k));
        break;
      }
    for (size_t k = 0; k < grid.size() && k < values.size(); ++k)
      if (grid[k] >= w.x && grid[k] < w.next) values[k] = NAN;
  }
}

/// A run's points as graph data: x times its factor, a NaN where its line breaks (the last
/// stage changed index in a re-partition: QCustomPlot breaks the line there).
QVector<QCPGraphData> graphPoints(const std::vector<std::pair<double, double>>& drawn, double f,
                                  const std::vector<double>& breaks) {
  QVector<QCPGraphData> points;
  size_t nextBreak = 0;
  for (const auto& [x, y] : drawn) {
    if (!std::isfinite(y)) continue;
    bool broken = false;
    while (nextBreak < breaks.size() && breaks[nextBreak] <= x) {
      ++nextBreak;
      broken = true;
    }
    if (broken && !points.isEmpty()) points << QCPGraphData(x * f, qQNaN());
    points << QCPGraphData(x * f, y);
  }
  return points;
}

/// The unit of an overlaid series, for the y axis's title (issue 36 §3: units on every axis).
QString seriesUnit(const std::string& series) {
  namespace s = engine::series;
  if (series == s::kLoss || series == s::kTestLoss || series == s::kValLoss)
    return QStringLiteral("nats");
  if (series == s::kAccuracy || series == s::kTestAccuracy || series == s::kValAccuracy)
    return QStringLiteral("fraction");
  if (series == s::kSamplesPerSec) return QStringLiteral("samples/s");
  if (series == s::kStepsPerSec) return QStringLiteral("steps/s");
  if (series == s::kGradCosine) return QStringLiteral("cosine");
  return {};
}

QString runLabel(const storage::RunRecord& r) {
  return QStringLiteral("#%1 %2").arg(r.id).arg(QString::fromStdString(r.name));
}

}  // namespace

ComparePanel::ComparePanel(StoreExecutor* executor, QWidget* parent)
    : QWidget(parent), m_executor(executor) {
  m_metric = new QComboBox(this);
  m_metric->setToolTip(
      tr("The series to overlay. The gradient cosine of every stage and every layer is listed "
         "once a selected run has it (local runs with probes)."));
  setMetricList({});
  m_align = new QComboBox(this);
  // In XChoice order; the setting keeps the id.
  m_align->addItem(tr("x: step"), QStringLiteral("step"));
  m_align->addItem(tr("x: wall time"), QStringLiteral("time"));
  m_align->addItem(tr("x: samples"), QStringLiteral("samples"));
  m_align->addItem(tr("x: compute (FLOPs)"), QStringLiteral("flops"));
  m_align->setToolTip(
      tr("The overlay's x axis: the step; the wall time since the run started; the samples "
         "trained (step × batch size); or the training FLOPs (step × the run's FLOPs per step, "
         "from its summary). A run that lacks what the axis needs is left out, and named."));
  {
    const int saved =
        m_align->findData(QSettings().value(QStringLiteral("runs/overlay_x_axis")).toString());
    if (saved >= 0) m_align->setCurrentIndex(saved);
  }
  m_group = new QComboBox(this);
  m_group->addItem(tr("each run"));
  m_group->addItem(tr("groups: mean ± std"));
  m_group->addItem(tr("groups: mean, min–max"));
  m_group->addItem(tr("groups: mean ± standard error"));
  m_group->addItem(tr("groups: mean ± 95 % CI"));
  m_group->setToolTip(
      tr("Group the runs that are equal in every setting except the seed (a study's seeds), "
         "or in the settings chosen in \"by keys\": each group's mean with a band, on a "
         "common grid. The band: ± sample std, min–max, ± standard error (std / √n) or the "
         "95 % confidence interval of the mean (Student t); Groups' tables follow the same "
         "choice, which is kept for next time."));
  m_groupKeys = new QToolButton(this);
  m_groupKeys->setText(tr("by keys"));
  m_groupKeys->setPopupMode(QToolButton::InstantPopup);
  m_groupKeys->setMenu(new QMenu(m_groupKeys));
  m_groupKeys->setToolTip(
      tr("The settings a group is made of (of those that differ between the selected runs); "
         "unchecked ones are pooled, like the seeds"));
  m_summaryMetric = new QComboBox(this);
  for (const char* s : {"Test accuracy", "Samples/s", "Wall time (s)", "Pipeline efficiency",
                        "Front: wall time vs accuracy", "Front: samples vs accuracy",
                        "Front: training FLOPs vs accuracy"})
    m_summaryMetric->addItem(tr(s));
  m_summaryMetric->setToolTip(
      tr("A bar per run, or the front: each group of runs (equal but for the seed) at its mean "
         "cost and final test accuracy with ±1 std error bars; the groups no other beats on "
         "both are joined. Local ○, pipeline △, backprop □."));
  m_hint =
      new QLabel(tr("Select runs in the table to compare them (Ctrl+click for several)."), this);
  m_hint->setWordWrap(true);
  m_loadWarning = new QLabel(this);
  m_loadWarning->setWordWrap(true);
  m_loadWarning->setToolTip(
      tr("Each run records the machine's 1-minute load average, its CPU steal share and its "
         "online cores at its start and end. Throughputs measured while the machine was busy "
         "with other work (load per core apart by more than 0.5) or lost CPU time to steal are "
         "not comparable."));
  m_loadWarning->hide();
  m_axisNote = new QLabel(this);
  m_axisNote->setWordWrap(true);
  m_axisNote->hide();

  m_overlayFrame = new PlotFrame(
      tr("Overlay"),
      PlotFrame::SmoothingControl | PlotFrame::LogScaleToggle | PlotFrame::HoverReadout, this);
  m_overlay = m_overlayFrame->plot();
  // The read-out names a stored point of each run (its step and value as drawn), not a grid
  // point between two steps holding the earlier one's value.
  m_overlayFrame->setHoverLookup(
      [this](const QCPGraph* graph, double x) -> std::optional<PlotFrame::HoverPoint> {
        if (const auto p = storedNear(graph, x)) return PlotFrame::HoverPoint{p->first, p->second};
        if (m_graphRun.count(graph)) return std::nullopt;
        const auto data = graph->data();  // a group's mean, whole-set marks: the drawn point
        if (data->isEmpty()) return std::nullopt;
        auto it = data->findBegin(x, false);
        if (it == data->constEnd() ||
            (it != data->constBegin() && x - (it - 1)->key <= it->key - x))
          --it;
        if (!std::isfinite(it->value)) return std::nullopt;
        return PlotFrame::HoverPoint{it->key, it->value};
      });
  // Samples and compute are each run's steps times its factor: the read-out names the step too
  // (issue 36). The wall time has no step stored beside it.
  m_overlayFrame->setStepLookup([this](const QCPGraph* graph, double x) -> std::optional<qint64> {
    const auto run = m_graphRun.find(graph);
    const int choice = m_align->currentIndex();
    if (run == m_graphRun.end() || (choice != kXSamples && choice != kXFlops) ||
        run->second >= m_drawnFactor.size())
      return std::nullopt;
    const double f = m_drawnFactor[run->second];
    if (!std::isfinite(f) || f <= 0) return std::nullopt;
    return qint64(std::llround(x / f));
  });
  // Readable, and at 1366x768 it leaves the Groups table above 8 rows (issue 36).
  m_overlay->setMinimumHeight(180);
  m_overlay->legend->setVisible(true);
  // The legend in its own column right of the axis rect, at its top: inset, it hid stored
  // points under its box (issue 36). The column is as narrow as its entries.
  {
    auto* side = new QCPLayoutGrid;
    m_overlay->plotLayout()->addElement(1, 1, side);
    m_overlay->plotLayout()->setColumnStretchFactor(1, 0.001);
    side->addElement(0, 0, m_overlay->legend);
    side->addElement(1, 0, new QCPLayoutElement(m_overlay));
    side->setRowStretchFactor(0, 0.001);
    side->setRowStretchFactor(1, 1);
    side->setMargins(QMargins(0, 0, 0, 0));
    m_overlay->legend->setMargins(QMargins(4, 2, 4, 2));
    m_overlay->legend->setRowSpacing(-3);
  }
  m_overlay->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  m_overlay->installEventFilter(this);
  // The wheel zooms the steps, not the values: zooming y too pushed the curve off the plot.
  m_overlay->axisRect()->setRangeZoom(Qt::Horizontal);
  m_overlay->setStatusTip(
      tr("Drag to pan, wheel to zoom the x axis; the values under the mouse are read out. "
         "Right-click for a logarithmic y axis or to export."));
  m_enlarge = new QToolButton(this);
  m_enlarge->setText(tr("Enlarge"));
  m_enlarge->setCheckable(true);
  m_enlarge->setToolTip(tr("Give the overlay the whole panel (hides the bars and the spec diff)"));
  m_summaryFrame = new PlotFrame(tr("Summary"), PlotFrame::NoFeatures, this);
  m_summary = m_summaryFrame->plot();
  // No legend here (see drawFront): a legend item per bar made clearing 1,000 bars quadratic.
  m_summary->setAutoAddPlottableToLegend(false);
  m_summary->setMinimumHeight(140);
  m_diff = new QTableWidget(this);
  m_diff->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_diff->verticalHeader()->hide();
  m_diff->horizontalHeader()->setStretchLastSection(true);
  m_diff->setToolTip(tr("Spec keys whose values differ between the selected runs."));

  auto* controls = new QHBoxLayout;
  controls->addWidget(m_metric);
  controls->addWidget(m_align);
  controls->addWidget(m_group);
  controls->addWidget(m_groupKeys);
  controls->addWidget(m_enlarge);
  controls->addStretch();
  controls->addWidget(new QLabel(tr("Bars:"), this));
  controls->addWidget(m_summaryMetric);
  m_bottom = new QSplitter(Qt::Horizontal, this);
  m_bottom->addWidget(m_summaryFrame);
  m_bottom->addWidget(m_diff);
  m_bottom->setSizes({300, 400});
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(m_overlayFrame);
  split->addWidget(m_bottom);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  connect(m_enlarge, &QToolButton::toggled, this, &ComparePanel::setOverlayEnlarged);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_hint);
  layout->addLayout(controls);
  layout->addWidget(m_loadWarning);
  layout->addWidget(m_axisNote);
  layout->addWidget(split, 1);

  restoreOverlaySettings();
  connect(m_metric, &QComboBox::currentIndexChanged, this, [this] {
    saveOverlaySettings();
    reload();
  });
  connect(m_align, &QComboBox::currentIndexChanged, this, [this] {
    QSettings().setValue(QStringLiteral("runs/overlay_x_axis"), m_align->currentData());
    reload();
  });
  connect(m_group, &QComboBox::currentIndexChanged, this, [this](int index) {
    saveOverlaySettings();
    if (index > 0) Q_EMIT spreadChanged(spread());
    reload();
  });
  connect(m_summaryMetric, &QComboBox::currentIndexChanged, this, &ComparePanel::drawSummary);
  // Smoothing reads the store again (it smooths every stored point, not the grid); the scale
  // redraws what is loaded.
  connect(m_overlayFrame, &PlotFrame::smoothingChanged, this, [this] {
    saveOverlaySettings();
    reload();
  });
  connect(m_overlayFrame, &PlotFrame::logYChanged, this, [this] {
    saveOverlaySettings();
    drawOverlay();
  });
  connect(m_overlay, &QCustomPlot::afterLayout, this, &ComparePanel::fitXTicks);
  drawOverlay();  // empty: the chosen x axis's label and plain axes, not QCustomPlot's 0 to 5
  // Zoom and pan: the runs drawn from their stored points are drawn again for the new range.
  connect(m_overlay->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this,
          &ComparePanel::drawVisible);
}

void ComparePanel::setMetricList(const std::vector<Metric>& extra) {
  std::vector<Metric> metrics;
  for (const auto& m : kMetrics) metrics.push_back({tr(m.label), m.series, m.stage, -1});
  const auto same = [](const Metric& a, const Metric& b) {
    return a.series == b.series && a.stage == b.stage && a.layer == b.layer;
  };
  for (const auto& m : extra)
    if (std::none_of(metrics.begin(), metrics.end(), [&](const Metric& x) { return same(x, m); }))
      metrics.push_back(m);
  // Cosines together, stages before layers, each in order.
  const auto cosineRank = [](const Metric& m) {
    return m.series == engine::series::kGradCosine
               ? std::make_tuple(1, m.layer >= 0 ? 1 : 0, m.layer >= 0 ? m.layer : m.stage)
               : std::make_tuple(0, 0, 0);
  };
  std::stable_sort(metrics.begin(), metrics.end(),
                   [&](const Metric& a, const Metric& b) { return cosineRank(a) < cosineRank(b); });
  // The current choice stays listed (and chosen) even when the new selection lacks it.
  const int current = m_metric->currentIndex();
  std::optional<Metric> chosen;
  if (current >= 0 && size_t(current) < m_metrics.size()) chosen = m_metrics[size_t(current)];
  if (chosen && std::none_of(metrics.begin(), metrics.end(),
                             [&](const Metric& x) { return same(x, *chosen); }))
    metrics.push_back(*chosen);
  int index = 0;
  for (size_t i = 0; i < metrics.size(); ++i)
    if (chosen && same(metrics[i], *chosen)) index = int(i);
  const QSignalBlocker block(m_metric);
  m_metric->clear();
  for (const auto& m : metrics) m_metric->addItem(m.label);
  m_metric->setCurrentIndex(index);
  m_metrics = std::move(metrics);
}

bool ComparePanel::selectMetric(const std::string& series, int stage, int layer) {
  for (size_t i = 0; i < m_metrics.size(); ++i) {
    const Metric& m = m_metrics[i];
    if (m.series == series && m.layer == layer && (layer >= 0 || m.stage == stage)) {
      m_metric->setCurrentIndex(int(i));
      return true;
    }
  }
  return false;
}

void ComparePanel::setRuns(const std::vector<int64_t>& ids) {
  if (ids == m_ids) return;
  m_ids = ids;
  reload();
}

void ComparePanel::reload() {
  const quint64 ticket = ++m_ticket;
  const std::vector<int64_t> ids = m_ids;
  const Metric metric =
      m_metrics[size_t(std::clamp(m_metric->currentIndex(), 0, int(m_metrics.size()) - 1))];
  const auto axis = m_align->currentIndex() == kXTime ? storage::XAxis::Time : storage::XAxis::Step;
  const int points = std::max(100, m_overlay->width());
  // Only noisy per-step series are smoothed (common/smoothing.h), on every stored point.
  const double smoothing = smoothable(metric.series) ? m_overlayFrame->smoothing() : 0.0;
  m_executor->post<Data>(
      this,
      [ids, metric, axis, points, smoothing](storage::RunReader& reader, storage::RunStore&) {
        Data data;
        std::vector<storage::SeriesRef> refs;
        std::vector<storage::SeriesRef> spanRefs;  // aligned too, so the grid spans every piece
        std::map<size_t, PiecedSeries> pieced;     // runs whose last stage changed index
        std::map<int, std::string> layerNames;     // layers with a per-layer cosine
        int cosineStages = 0;                      // stages with a per-stage cosine
        for (int64_t id : ids) {
          auto run = reader.run(id);
          if (!run) continue;
          int stage = metric.stage == -2 ? std::max(0, run->stageCount - 1) : metric.stage;
          const auto series = reader.listSeries(id);
          std::vector<storage::LayerRecord> layers;
          for (const auto& s : series) {
            if (s.key.name != engine::series::kGradCosine || s.key.stage < 0) continue;
            if (metric.layer >= 0 && s.key.layer == metric.layer && s.key.name == metric.series)
              stage = s.key.stage;  // each run holds the layer in the stage its cuts give
            if (s.key.layer < 0) {
              cosineStages = std::max(cosineStages, s.key.stage + 1);
              continue;
            }
            if (layers.empty()) layers = reader.layers(id);
            std::string name;
            for (const auto& l : layers)
              if (l.index == s.key.layer) name = l.name;
            layerNames.emplace(s.key.layer, name);
          }
          const storage::SeriesKey key{metric.series, stage, metric.layer};
          // Each run's last stage across a live re-partition that joined or split stages: the
          // stage that was last over each partition's steps, never one index throughout.
          if (metric.stage == -2 && metric.layer < 0) {
            const auto spans = lastStageSpansOf(reader, *run);
            if (spans.size() > 1) {
              pieced[data.runs.size()] =
                  loadPieces(reader, id, metric.series, spans, axis, smoothing);
              for (const auto& span : spans)
                if (span.stage != stage) spanRefs.push_back({id, {metric.series, span.stage, -1}});
            }
          }
          refs.push_back({id, key});
          data.runs.push_back(std::move(*run));
          data.breaks.emplace_back();
          data.whole.emplace_back();
          data.storedAll.push_back(false);
          if (const auto p = pieced.find(data.runs.size() - 1); p != pieced.end()) {
            data.breaks.back() = p->second.breaks();
            data.stored.push_back(p->second.points);
            continue;
          }
          // The stored points for the read-out: all of them (smoothed as alignSeries smooths,
          // from the first) up to a size, else each drawn column's first and last.
          std::vector<std::pair<double, double>> stored;
          if (const auto info = reader.findSeries(id, key); info && info->pointCount > 0) {
            if (info->pointCount <= 200000) {
              data.storedAll.back() = true;
              const auto raw = reader.loadSeries(id, key, axis);
              std::vector<double> v;
              for (const auto& p : raw) v.push_back(p.value);
              v = PlotFrame::smoothed(v, smoothing);
              // The whole-test-set evaluations (where the run stopped or completed) are kept
              // apart: drawn and read out as their own markers, never on the periodic line.
              std::vector<size_t> whole;
              if (metric.stage == -1 && metric.layer < 0 && hasWholeSetEvaluations(metric.series))
                whole = wholeSetIndices(raw, endSteps(reader.events(id)),
                                        metric.series == engine::series::kTestLoss
                                            ? data.runs.back().testLoss
                                            : data.runs.back().testAccuracy);
              const auto xOf = [&](size_t k) {
                return axis == storage::XAxis::Time ? raw[k].timeS : double(raw[k].step);
              };
              size_t w = 0;
              for (size_t k = 0; k < raw.size(); ++k) {
                if (w < whole.size() && whole[w] == k) {
                  ++w;
                  data.whole.back().push_back({xOf(k), raw[k].value, kNoNext});
                  continue;
                }
                for (auto& p : data.whole.back())
                  if (std::isinf(p.next)) p.next = xOf(k);  // the next periodic point
                stored.emplace_back(xOf(k), v[k]);
              }
            } else {
              for (const auto& b : reader.loadDecimated(id, key, 4 * points, axis).buckets) {
                stored.emplace_back(b.x, b.first);
                if (b.count > 1) stored.emplace_back(b.xLast, b.last);
              }
            }
            std::stable_sort(stored.begin(), stored.end(),
                             [](const auto& a, const auto& b) { return a.first < b.first; });
          }
          data.stored.push_back(std::move(stored));
        }
        std::map<std::string, int> groups;
        for (const auto& r : data.runs) {
          const auto key = study::groupIdentity(r.specJson);
          data.groupOf.push_back(groups.emplace(key, int(groups.size())).first->second);
        }
        for (int k = 1; k < cosineStages; ++k)
          data.extra.push_back(
              {tr("Gradient cosine · stage %1").arg(k + 1), engine::series::kGradCosine, k, -1});
        for (const auto& [layer, name] : layerNames)
          data.extra.push_back({name.empty() ? tr("Gradient cosine · layer %1").arg(layer + 1)
                                             : tr("Gradient cosine · layer %1 (%2)")
                                                   .arg(layer + 1)
                                                   .arg(QString::fromStdString(name)),
                                engine::series::kGradCosine, -1, layer});
        if (data.runs.size() >= 2) {
          std::vector<int64_t> present;
          for (const auto& r : data.runs) present.push_back(r.id);
          data.diffs = reader.diffSpecs(present);
        }
        if (!refs.empty()) {
          const size_t shown = refs.size();
          refs.insert(refs.end(), spanRefs.begin(), spanRefs.end());
          data.aligned = reader.alignSeries(refs, points, axis, std::nullopt, smoothing);
          auto& a = data.aligned;
          if (a.values.size() > shown) a.values.resize(shown);
          if (a.points.size() > shown) a.points.resize(shown);
          for (size_t i = 0; i < shown && i < data.whole.size(); ++i)
            setApart(data.whole[i], a.points[i], a.values[i], a.x);
          for (const auto& [i, series] : pieced) {
            // Few points (evaluations) are drawn as they are, as alignSeries decides.
            const bool sparse = series.points.size() * 2 <= a.x.size();
            if (i < a.points.size()) {
              a.points[i].clear();
              if (sparse) a.points[i] = series.points;
            }
            if (i < a.values.size()) a.values[i] = sampleOnGrid(series, a.x);
          }
        }
        return data;
      },
      [this, ticket](Data data) {
        if (ticket != m_ticket) return;
        showLoaded(data);
        m_loadedTicket = ticket;
        Q_EMIT loaded();
      },
      [this](const QString& message) { Q_EMIT failed(message); });
}

void ComparePanel::showLoaded(const Data& data) {
  m_runs = data.runs;
  m_identityGroupOf = data.groupOf;
  m_diffs = data.diffs;
  // Group by: the differing keys, checked unless the user pooled them.
  m_groupKeys->menu()->clear();
  for (const auto& d : m_diffs) {
    if (!groupable(d.key)) continue;
    QAction* a = m_groupKeys->menu()->addAction(QString::fromStdString(d.key));
    a->setCheckable(true);
    a->setChecked(!m_pooled.count(d.key));
    connect(a, &QAction::toggled, this, [this, key = d.key](bool on) {
      if (on)
        m_pooled.erase(key);
      else
        m_pooled.insert(key);
      regroup();
      drawOverlay();
      drawSummary();
    });
  }
  m_groupKeys->setEnabled(m_group->currentIndex() > 0 && !m_groupKeys->menu()->isEmpty());
  regroup();
  m_aligned = data.aligned;
  m_stored = data.stored;
  m_storedAll = data.storedAll;
  m_breaks = data.breaks;
  m_whole = data.whole;
  setMetricList(data.extra);
  m_hint->setVisible(m_runs.empty());
  drawOverlay();
  drawSummary();

  m_diff->clear();
  m_diff->setColumnCount(int(m_runs.size()) + 1);
  QStringList headers{tr("Spec key")};
  for (const auto& r : m_runs) headers << runLabel(r);
  m_diff->setHorizontalHeaderLabels(headers);
  m_diff->setRowCount(int(data.diffs.size()));
  for (int row = 0; row < int(data.diffs.size()); ++row) {
    const auto& d = data.diffs[size_t(row)];
    m_diff->setItem(row, 0, new QTableWidgetItem(QString::fromStdString(d.key)));
    for (size_t c = 0; c < d.values.size(); ++c)
      m_diff->setItem(row, int(c) + 1,
                      new QTableWidgetItem(d.values[c] ? QString::fromStdString(*d.values[c])
                                                       : tr("(absent)")));
  }
  // Headers name runs ("#12 mlp-fmnist-4stage"): wide enough to read, the full name on hover.
  m_diff->resizeColumnsToContents();
  for (int c = 1; c < m_diff->columnCount(); ++c)
    if (auto* header = m_diff->horizontalHeaderItem(c)) header->setToolTip(header->text());
}

bool ComparePanel::eventFilter(QObject* watched, QEvent* event) {
  // A read-out left behind after the mouse went elsewhere names a point no one points at.
  if (watched == m_overlay && event->type() == QEvent::Leave) m_overlayFrame->hideHover();
  if (watched == m_overlay && event->type() == QEvent::Resize) {
    fitLegend();
    m_overlay->replot(QCustomPlot::rpQueuedReplot);
  }
  if (watched == m_overlay && event->type() == QEvent::ToolTip) {
    // Over the legend: every entry's full name (the legend's are short, some folded away).
    const QPoint pos = static_cast<QHelpEvent*>(event)->pos();
    if (m_overlay->legend->visible() && m_overlay->legend->outerRect().contains(pos)) {
      QStringList names;
      for (const auto& e : m_legendEntries) names << e.full;
      QToolTip::showText(static_cast<QHelpEvent*>(event)->globalPos(),
                         names.join(QLatin1Char('\n')), m_overlay);
      return true;
    }
  }
  return QWidget::eventFilter(watched, event);
}

std::vector<double> ComparePanel::xFactors() const {
  std::vector<double> out;
  for (const auto& r : m_runs) {
    double f = 1;
    if (m_align->currentIndex() == kXSamples) f = r.batchSize > 0 ? double(r.batchSize) : NAN;
    if (m_align->currentIndex() == kXFlops) {
      const double flops = QJsonDocument::fromJson(QByteArray::fromStdString(r.summaryJson))
                               .object()
                               .value(QStringLiteral("train_flops"))
                               .toDouble(NAN);
      const double steps = double(r.steps.value_or(0));
      f = std::isfinite(flops) && flops > 0 && steps > 0 ? flops / steps : NAN;
    }
    out.push_back(f);
  }
  return out;
}

std::optional<std::pair<double, double>> ComparePanel::storedNear(const QCPGraph* graph,
                                                                  double x) const {
  const auto it = m_graphRun.find(graph);
  if (it == m_graphRun.end() || it->second >= m_stored.size()) return std::nullopt;
  const auto& stored = m_stored[it->second];
  const double f = it->second < m_drawnFactor.size() ? m_drawnFactor[it->second] : 1.0;
  if (stored.empty() || !(f > 0)) return std::nullopt;
  const double at = x / f;  // on the storage axis (step or seconds)
  auto next = std::lower_bound(stored.begin(), stored.end(), at,
                               [](const auto& p, double v) { return p.first < v; });
  if (next == stored.end() ||
      (next != stored.begin() && at - (next - 1)->first <= next->first - at))  // ties: the earlier
    --next;
  if (!std::isfinite(next->second)) return std::nullopt;
  return std::make_pair(next->first * f, next->second);
}

void ComparePanel::drawVisible() {
  const QCPRange range = m_overlay->xAxis->range();
  const int columns = std::max(1, m_overlay->axisRect()->width());
  const std::vector<double> none;
  for (const auto& [graph, i] : m_storedGraphs) {
    if (i >= m_stored.size() || i >= m_drawnFactor.size()) continue;
    const double f = m_drawnFactor[i];
    graph->data()->set(graphPoints(pointsToDraw(m_stored[i], f, range.lower, range.upper, columns),
                                   f, i < m_breaks.size() ? m_breaks[i] : none),
                       true);
  }
  // A sparse run's points get markers only where few are in view, or far enough apart to tell
  // (three markers' widths): 16 runs of 150-300 marked points were blobs (issue 36).
  constexpr int kMarker = 7, kFewInView = 40;
  for (QCPGraph* g : m_sparseGraphs) {
    int inView = 0;
    for (auto it = g->data()->findBegin(range.lower, false);
         it != g->data()->constEnd() && it->key <= range.upper; ++it)
      if (std::isfinite(it->value) && range.contains(it->key)) ++inView;
    const bool marked = inView <= kFewInView || columns >= 3 * kMarker * inView;
    g->setScatterStyle(marked ? QCPScatterStyle(QCPScatterStyle::ssDisc, kMarker)
                              : QCPScatterStyle());
  }
}

void ComparePanel::drawOverlay() {
  m_legendEntries.clear();
  m_overlay->clearGraphs();
  m_graphRun.clear();
  m_marksRun.clear();
  m_storedGraphs.clear();
  m_sparseGraphs.clear();
  m_overlayFrame->hideHover();
  // The x axis: samples and compute scale each run's steps by its own factor; a run without it
  // is left out and named.
  m_drawnFactor = xFactors();
  {
    QStringList lacking;
    for (size_t i = 0; i < m_runs.size(); ++i)
      if (!std::isfinite(m_drawnFactor[i])) lacking << QStringLiteral("#%1").arg(m_runs[i].id);
    const QString need = m_align->currentIndex() == kXSamples
                             ? tr("no batch size stored")
                             : tr("no training FLOPs stored in its summary (train_flops)");
    m_axisNote->setText(lacking.isEmpty() ? QString()
                                          : tr("Not drawn on this x axis: %1 (%2).")
                                                .arg(lacking.join(QStringLiteral(", ")), need));
    m_axisNote->setVisible(!lacking.isEmpty());
  }
  // Each run comes smoothed on its own from the store (reload), before grouping.
  const storage::AlignedSeries& a = m_aligned;
  double xLo = std::numeric_limits<double>::infinity(), xHi = -xLo, yLo = xLo, yHi = -xLo;
  const auto extend = [&](double x, double y) {
    if (!m_overlayFrame->onYAxis(y)) return;
    xLo = std::min(xLo, x), xHi = std::max(xHi, x), yLo = std::min(yLo, y), yHi = std::max(yHi, y);
  };
  m_bands.clear();
  if (m_group->currentIndex() > 0) {
    drawBands(a);
    for (const auto& b : m_bands)
      for (size_t k = 0; k < b.x.size(); ++k) extend(b.x[k], b.lo[k]), extend(b.x[k], b.hi[k]);
  }
  for (size_t i = 0; i < a.values.size() && i < m_runs.size() && m_group->currentIndex() == 0;
       ++i) {
    const double f = m_drawnFactor[i];
    if (!std::isfinite(f)) continue;
    auto* g = m_overlay->addGraph();
    m_graphRun[g] = i;
    g->setName(runLabel(m_runs[i]));
    g->setPen(QPen(stageColor(int(i)), 1.8));
    QVector<QCPGraphData> points;
    const std::vector<double> none;
    const auto& breaks = i < m_breaks.size() ? m_breaks[i] : none;
    const bool sparse = i < a.points.size() && !a.points[i].empty();
    if (sparse) {
      // A few evaluations: the points themselves joined by lines, each marked, not a staircase
      // held across the grid.
      points = graphPoints(a.points[i], f, breaks);
      m_sparseGraphs.push_back(g);  // marked where few are in view (drawVisible)
    } else if (i < m_storedAll.size() && m_storedAll[i] && i < m_stored.size() &&
               !m_stored[i].empty()) {
      // Its stored points at the resolution of the visible range, redrawn on zoom and pan
      // (drawVisible); here the whole run, for the axes' extent.
      m_storedGraphs[g] = i;
      const auto& stored = m_stored[i];
      points =
          graphPoints(pointsToDraw(stored, f, stored.front().first * f, stored.back().first * f,
                                   std::max(1, m_overlay->axisRect()->width())),
                      f, breaks);
    } else {
      std::vector<std::pair<double, double>> grid;
      for (size_t k = 0; k < a.x.size() && k < a.values[i].size(); ++k)
        grid.emplace_back(a.x[k], a.values[i][k]);
      points = graphPoints(grid, f, breaks);
    }
    for (const auto& p : points)
      if (std::isfinite(p.value)) extend(p.key, p.value);
    g->data()->set(points, true);
    // Its whole-test-set evaluations: hollow diamonds in its colour, as Train draws the final
    // one, named in the legend and read out on their own.
    if (i < m_whole.size() && !m_whole[i].empty()) {
      auto* marks = m_overlay->addGraph();
      m_marksRun[marks] = i;
      marks->setName(runLabel(m_runs[i]) + tr(" · whole test set"));
      marks->setLineStyle(QCPGraph::lsNone);
      marks->setScatterStyle(
          QCPScatterStyle(QCPScatterStyle::ssDiamond, QPen(stageColor(int(i)), 1.5),
                          QBrush(m_overlay->palette().color(QPalette::Base)), 10));
      for (const auto& w : m_whole[i])
        if (std::isfinite(w.value)) {
          marks->addData(w.x * f, w.value);
          extend(w.x * f, w.value);
        }
    }
  }
  if (m_align->currentIndex() == kXSamples)
    m_overlayFrame->setXQuantity(tr("samples"), tr("samples"));
  else if (m_align->currentIndex() == kXFlops)
    m_overlayFrame->setXQuantity(tr("training FLOPs"), tr("FLOPs"));
  else  // from the choice, not the data: an empty overlay says "time (s)" under "x: wall time"
    m_overlayFrame->setTimeAxis(m_align->currentIndex() == kXTime);
  {
    const int index = m_metric->currentIndex();
    const QString unit = index >= 0 && size_t(index) < m_metrics.size()
                             ? seriesUnit(m_metrics[size_t(index)].series)
                             : QString();
    m_overlay->yAxis->setLabel(unit.isEmpty()
                                   ? m_metric->currentText()
                                   : QStringLiteral("%1 (%2)").arg(m_metric->currentText(), unit));
  }
  // The legend: short entries ("#12 lr=0.001 s1", the keys that differ among the drawn runs)
  // in the room the plot leaves (overlay_legend.h); nothing drawn: no legend box.
  {
    std::vector<const storage::SpecDifference*> differing;
    for (const auto& d : m_diffs) {
      if (d.key == "name" || d.key.rfind("checkpoint.", 0) == 0) continue;
      std::set<std::string> seen;
      for (size_t i = 0; i < d.values.size() && i < m_drawnFactor.size(); ++i)
        if (std::isfinite(m_drawnFactor[i])) seen.insert(d.values[i].value_or("-"));
      if (seen.size() > 1) differing.push_back(&d);
    }
    const auto shortLabel = [&](size_t i, bool named = true) {
      std::vector<std::pair<std::string, std::string>> keys;
      for (const auto* d : differing)
        keys.emplace_back(d->key, i < d->values.size() ? d->values[i].value_or("-") : "-");
      return shortRunLabel(m_runs[i].id, QString::fromStdString(m_runs[i].name), keys, named);
    };
    m_legendEntries.clear();
    for (int k = 0; k < m_overlay->graphCount(); ++k) {
      QCPGraph* g = m_overlay->graph(k);
      if (!m_overlay->legend->hasItemWithPlottable(g)) continue;
      QString text = g->name();
      QString bare;
      if (const auto run = m_graphRun.find(g); run != m_graphRun.end()) {
        text = shortLabel(run->second);
        if (!differing.empty()) bare = shortLabel(run->second, false);
      } else if (const auto marks = m_marksRun.find(g); marks != m_marksRun.end()) {
        text = shortLabel(marks->second) + tr(" · whole set");
        if (!differing.empty()) bare = shortLabel(marks->second, false) + tr(" · whole set");
      }
      m_legendEntries.push_back({g, text, g->name(), bare});
    }
    fitLegend();
  }
  // Margins around the data: no value on an axis, and a one-point run fully visible.
  if (xLo <= xHi) {
    const double xPad = xHi > xLo ? (xHi - xLo) * 0.03 : std::max(1.0, std::abs(xHi) * 0.05);
    const double yPad = yHi > yLo ? (yHi - yLo) * 0.08 : std::max(1e-3, std::abs(yHi) * 0.05);
    m_overlay->xAxis->setRange(xLo - xPad, xHi + xPad);
    m_overlayFrame->setYRange(yLo, yHi, yPad);
  } else if (m_overlay->graphCount() == 0) {
    // Nothing drawn (no run selected): the axes of the runs before are not kept (issue 36).
    m_overlay->xAxis->setRange(0, 1);
    if (m_overlayFrame->logY())
      m_overlay->yAxis->setRange(0.1, 10);
    else
      m_overlay->yAxis->setRange(0, 1);
  } else {
    m_overlay->rescaleAxes();
  }
  drawVisible();  // the range set above may equal the last one: no rangeChanged
  m_overlay->replot();
}

bool ComparePanel::groupable(const std::string& key) const {
  return key != "train.seed" && key != "name" && key.rfind("checkpoint.", 0) != 0;
}

void ComparePanel::regroup() {
  bool pooling = false;
  for (const auto& d : m_diffs) pooling |= groupable(d.key) && m_pooled.count(d.key);
  if (!pooling) {  // every setting but the seed
    m_groupOf = m_identityGroupOf;
    return;
  }
  std::map<std::vector<std::optional<std::string>>, int> groups;
  m_groupOf.clear();
  for (size_t i = 0; i < m_runs.size(); ++i) {
    std::vector<std::optional<std::string>> key;
    for (const auto& d : m_diffs)
      if (groupable(d.key) && !m_pooled.count(d.key) && i < d.values.size())
        key.push_back(d.values[i]);
    m_groupOf.push_back(groups.emplace(key, int(groups.size())).first->second);
  }
}

void ComparePanel::setGroupKeys(const std::vector<std::string>& keys) {
  m_pooled.clear();
  for (const auto& d : m_diffs)
    if (groupable(d.key) && std::find(keys.begin(), keys.end(), d.key) == keys.end())
      m_pooled.insert(d.key);
  for (QAction* a : m_groupKeys->menu()->actions()) {
    const QSignalBlocker block(a);
    a->setChecked(!m_pooled.count(a->text().toStdString()));
  }
  regroup();
  drawOverlay();
  drawSummary();
}

QString ComparePanel::groupLabel(size_t first) const {
  QStringList parts;
  for (const auto& d : m_diffs) {
    if (!groupable(d.key) || m_pooled.count(d.key)) continue;
    if (first >= d.values.size()) continue;
    QString value = d.values[first] ? QString::fromStdString(*d.values[first]) : tr("(absent)");
    if (value.size() >= 2 && value.startsWith(QLatin1Char('"')) && value.endsWith(QLatin1Char('"')))
      value = value.mid(1, value.size() - 2);  // a string reads without its JSON quotes
    parts << QStringLiteral("%1=%2").arg(QString::fromStdString(d.key), value);
  }
  return parts.join(QStringLiteral(", "));
}

namespace {
// The group combo's entries after "each run", by spread.
constexpr study::Spread kBandSpreads[] = {study::Spread::Std, study::Spread::MinMax,
                                          study::Spread::Sem, study::Spread::Ci95};
}  // namespace

study::Spread ComparePanel::spread() const {
  const int i = m_group->currentIndex();
  return i > 0 && i <= 4 ? kBandSpreads[i - 1] : AppSettings::spread();
}

void ComparePanel::setSpread(study::Spread spread) {
  if (m_group->currentIndex() == 0 || this->spread() == spread) return;
  for (int i = 0; i < 4; ++i)
    if (kBandSpreads[i] == spread) m_group->setCurrentIndex(i + 1);
}

void ComparePanel::drawBands(const storage::AlignedSeries& a) {
  const study::Spread spread = this->spread();
  int groups = 0;
  for (int g : m_groupOf) groups = std::max(groups, g + 1);
  for (int g = 0; g < groups; ++g) {
    Band band;
    std::vector<size_t> members;
    for (size_t i = 0; i < m_groupOf.size() && i < a.values.size(); ++i)
      if (m_groupOf[i] == g) members.push_back(i), band.runs.push_back(m_runs[i].id);
    if (members.empty()) continue;
    // Samples or compute: a group's runs must share the factor (a study's seeds do).
    const double f = members.front() < m_drawnFactor.size() ? m_drawnFactor[members.front()] : 1.0;
    bool mixed = !std::isfinite(f);
    for (size_t i : members) mixed |= i >= m_drawnFactor.size() || m_drawnFactor[i] != f;
    if (mixed) {
      m_axisNote->setText(
          (m_axisNote->text().isEmpty() ? QString() : m_axisNote->text() + QLatin1Char(' ')) +
          tr("A group not drawn: its runs differ in batch size or FLOPs per step (%1).")
              .arg(groupLabel(members.front())));
      m_axisNote->show();
      continue;
    }
    const QString keys = groupLabel(members.front());
    band.label = (keys.isEmpty() ? runLabel(m_runs[members.front()]) : keys) +
                 QStringLiteral(" (n=%1)").arg(members.size());
    for (size_t k = 0; k < a.x.size(); ++k) {
      std::vector<double> v;
      for (size_t i : members)
        if (k < a.values[i].size() && std::isfinite(a.values[i][k])) v.push_back(a.values[i][k]);
      band.x.push_back(a.x[k] * f);
      if (v.empty()) {
        band.mean.push_back(NAN), band.lo.push_back(NAN), band.hi.push_back(NAN);
        continue;
      }
      const auto s = study::stat(v);
      band.mean.push_back(s.mean);
      const auto [lo, hi] = study::spreadBounds(s, spread);
      band.lo.push_back(lo);
      band.hi.push_back(hi);
    }
    const QColor color = stageColor(g);
    // The line and the band break where a member's last stage changed index (its breaks).
    std::vector<double> breaks;
    for (size_t i : members)
      if (i < m_breaks.size()) breaks.insert(breaks.end(), m_breaks[i].begin(), m_breaks[i].end());
    std::sort(breaks.begin(), breaks.end());
    size_t nextBreak = 0;
    QVector<QCPGraphData> mean, lo, hi;
    for (size_t k = 0; k < band.x.size(); ++k)
      if (std::isfinite(band.mean[k])) {
        bool broken = false;
        while (nextBreak < breaks.size() && breaks[nextBreak] <= a.x[k]) {
          ++nextBreak;
          broken = true;
        }
        if (broken && !mean.isEmpty()) {
          mean << QCPGraphData(band.x[k], qQNaN());
          lo << QCPGraphData(band.x[k], qQNaN());
          hi << QCPGraphData(band.x[k], qQNaN());
        }
        mean << QCPGraphData(band.x[k], band.mean[k]);
        lo << QCPGraphData(band.x[k], band.lo[k]);
        hi << QCPGraphData(band.x[k], band.hi[k]);
      }
    auto* upper = m_overlay->addGraph();
    upper->setName(band.label + tr(" (upper)"));  // named for the CSV export
    upper->setPen(Qt::NoPen);
    upper->removeFromLegend();
    upper->data()->set(hi, true);
    auto* lower = m_overlay->addGraph();
    lower->setName(band.label + tr(" (lower)"));
    lower->setPen(Qt::NoPen);
    QColor fill = color;
    fill.setAlpha(60);
    lower->setBrush(fill);
    lower->setChannelFillGraph(upper);
    lower->removeFromLegend();
    lower->data()->set(lo, true);
    auto* line = m_overlay->addGraph();
    line->setName(band.label);
    line->setPen(QPen(color, 2.0));
    line->data()->set(mean, true);
    m_bands.push_back(std::move(band));
  }
}

void ComparePanel::setOverlayEnlarged(bool on) {
  m_bottom->setVisible(!on);
  m_enlarge->setChecked(on);
}

void ComparePanel::drawFront() {
  m_front.clear();
  const int kind = m_summaryMetric->currentIndex() - 4;  // 0 wall time, 1 samples, 2 FLOPs
  int groups = 0;
  for (int g : m_groupOf) groups = std::max(groups, g + 1);
  std::vector<std::pair<double, double>> means;
  for (int g = 0; g < groups; ++g) {
    FrontPoint p;
    std::vector<double> xs, ys;
    size_t first = m_runs.size();
    for (size_t i = 0; i < m_runs.size() && i < m_groupOf.size(); ++i) {
      if (m_groupOf[i] != g) continue;
      const auto& r = m_runs[i];
      double x = NAN;
      if (kind == 0) x = r.wallSeconds.value_or(NAN);
      if (kind == 1) x = double(r.steps.value_or(0)) * r.batchSize;
      if (kind == 2)
        x = QJsonDocument::fromJson(QByteArray::fromStdString(r.summaryJson))
                .object()
                .value(QStringLiteral("train_flops"))
                .toDouble(NAN);
      const double y = r.testAccuracy.value_or(NAN);
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      first = std::min(first, i);
      xs.push_back(x), ys.push_back(y), p.runs.push_back(r.id);
      const QString mode = QString::fromStdString(r.mode);
      p.mode = p.mode.isEmpty() || p.mode == mode ? mode : QStringLiteral("mixed");
    }
    if (xs.empty()) continue;
    p.group = g;
    const auto sx = study::stat(xs), sy = study::stat(ys);
    p.x = sx.mean, p.xStd = sx.std, p.y = sy.mean, p.yStd = sy.std;
    const QString keys = groupLabel(first);
    p.label = (keys.isEmpty() ? runLabel(m_runs[first]) : keys) +
              QStringLiteral(" (n=%1)").arg(xs.size());
    means.emplace_back(p.x, p.y);
    m_front.push_back(std::move(p));
  }
  const auto flags = study::paretoFront(means);
  for (size_t i = 0; i < m_front.size(); ++i) m_front[i].onFront = flags[i];

  QSharedPointer<QCPAxisTicker> ticker(new QCPAxisTicker);
  m_summary->xAxis->setTicker(ticker);
  double xLo = INFINITY, xHi = -INFINITY, yLo = INFINITY, yHi = -INFINITY;
  for (size_t i = 0; i < m_front.size(); ++i) {
    const auto& p = m_front[i];
    auto* g = m_summary->addGraph();
    g->setName(p.label);
    g->setLineStyle(QCPGraph::lsNone);
    const auto shape = p.mode == QStringLiteral("backprop")   ? QCPScatterStyle::ssSquare
                       : p.mode == QStringLiteral("pipeline") ? QCPScatterStyle::ssTriangle
                                                              : QCPScatterStyle::ssCircle;
    const QColor color = stageColor(p.group);
    g->setScatterStyle(QCPScatterStyle(shape, color, p.onFront ? color : Qt::transparent, 9));
    g->addData(p.x, p.y);
    auto* yErr = new QCPErrorBars(m_summary->xAxis, m_summary->yAxis);
    yErr->setDataPlottable(g);
    yErr->setData(QVector<double>{p.yStd});
    yErr->setPen(QPen(color));
    yErr->removeFromLegend();
    auto* xErr = new QCPErrorBars(m_summary->xAxis, m_summary->yAxis);
    xErr->setErrorType(QCPErrorBars::etKeyError);
    xErr->setDataPlottable(g);
    xErr->setData(QVector<double>{p.xStd});
    xErr->setPen(QPen(color));
    xErr->removeFromLegend();
    xLo = std::min(xLo, p.x - p.xStd), xHi = std::max(xHi, p.x + p.xStd);
    yLo = std::min(yLo, p.y - p.yStd), yHi = std::max(yHi, p.y + p.yStd);
  }
  // The front: its groups joined in order of cost.
  std::vector<const FrontPoint*> onFront;
  for (const auto& p : m_front)
    if (p.onFront) onFront.push_back(&p);
  std::sort(onFront.begin(), onFront.end(),
            [](const FrontPoint* a, const FrontPoint* b) { return a->x < b->x; });
  if (onFront.size() > 1) {
    auto* line = m_summary->addGraph();
    line->setName(tr("front"));
    line->setPen(QPen(palette().color(QPalette::WindowText), 1.2, Qt::DashLine));
    for (const auto* p : onFront) line->addData(p->x, p->y);
  }
  // No legend in this small plot: each group has the colour of its band in the grouped overlay,
  // whose legend names it.
  if (xLo <= xHi) {
    const double xPad = xHi > xLo ? (xHi - xLo) * 0.1 : std::max(1e-9, std::abs(xHi) * 0.1);
    const double yPad = yHi > yLo ? (yHi - yLo) * 0.15 : 0.02;
    m_summary->xAxis->setRange(xLo - xPad, xHi + xPad);
    m_summary->yAxis->setRange(yLo - yPad, yHi + yPad);
  }
  m_summary->xAxis->setLabel(kind == 0   ? tr("mean wall time (s)")
                             : kind == 1 ? tr("samples")
                                         : tr("training FLOPs"));
  m_summary->yAxis->setLabel(tr("mean final test accuracy"));
  m_summary->replot();
}

void ComparePanel::updateLoadWarning() {
  const int bars = m_summaryMetric->currentIndex();
  const int metric = m_metric->currentIndex();
  const bool overlayRate = metric >= 0 && metric < int(m_metrics.size()) &&
                           m_metrics[size_t(metric)].series == engine::series::kSamplesPerSec;
  std::string text;
  if (bars == 1 || bars == 2 || bars == 4 || overlayRate) {
    std::vector<engine::RunLoad> loads;
    for (const auto& r : m_runs) loads.push_back(engine::runLoadFromSummary(r.id, r.summaryJson));
    text = engine::loadMismatch(loads);
  }
  m_loadWarning->setText(text.empty() ? QString()
                                      : QStringLiteral("⚠ ") + QString::fromStdString(text));
  m_loadWarning->setVisible(!text.empty());
}

void ComparePanel::drawSummary() {
  updateLoadWarning();
  m_summary->clearPlottables();
  m_summary->legend->setVisible(false);
  if (m_summaryMetric->currentIndex() >= 4) {
    drawFront();
    return;
  }
  m_front.clear();
  QSharedPointer<QCPAxisTickerText> ticker(new ThinnedTextTicker(m_summary->xAxis));
  double top = 0;
  for (size_t i = 0; i < m_runs.size(); ++i) {
    const auto& r = m_runs[i];
    std::optional<double> v;
    switch (m_summaryMetric->currentIndex()) {
      case 0:
        v = r.testAccuracy;
        break;
      case 1:
        v = r.samplesPerSec;
        break;
      case 2:
        v = r.wallSeconds;
        break;
      default:
        v = r.pipelineEfficiency;
        break;
    }
    auto* bar = new QCPBars(m_summary->xAxis, m_summary->yAxis);
    bar->setBrush(stageColor(int(i)));
    bar->setPen(QPen(stageColor(int(i)).darker(130)));
    bar->setWidth(0.6);
    bar->setName(runLabel(r));
    if (v && std::isfinite(*v)) {
      bar->addData(double(i + 1), *v);
      top = std::max(top, *v);
    }
    ticker->addTick(double(i + 1), QStringLiteral("#%1").arg(r.id));
  }
  m_summary->xAxis->setTicker(ticker);
  m_summary->xAxis->setRange(0.4, double(m_runs.size()) + 0.6);
  m_summary->yAxis->setRange(0, top > 0 ? top * 1.15 : 1);
  m_summary->yAxis->setLabel(m_summaryMetric->currentText());
  m_summary->replot();
}

}  // namespace stagewise::ui
