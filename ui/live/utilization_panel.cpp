#include "live/utilization_panel.h"

#include <qcustomplot.h>
#include <QVBoxLayout>
#include <cmath>

#include "common/plot_frame.h"

namespace stagewise::ui {

namespace {
const char* const kSeries[3] = {engine::series::kComputeFraction, engine::series::kWaitFraction,
                                engine::series::kBlockedFraction};
// The engine's per-stage bubble series (docs/metrics.md, "Bubble: planned against measured").
const char* const kBubbleSeries[2] = {"bubble_planned", "bubble_measured"};
}  // namespace

UtilizationPanel::UtilizationPanel(LiveData* data, QWidget* parent)
    : QWidget(parent), m_data(data) {
  m_frame = new PlotFrame(tr("Utilization per stage · bubble: last 20 steps"),
                          PlotFrame::NoFeatures, this);
  m_plot = m_frame->plot();
  m_plot->setMinimumSize(220, 150);
  m_plot->yAxis->setLabel(tr("share of last 1 s"));
  m_plot->yAxis->setRange(0, 1.05);
  m_plot->legend->setVisible(true);
  // A one-line legend in its own row under the title, never over the bars.
  m_plot->plotLayout()->insertRow(1);
  m_plot->plotLayout()->addElement(1, 0, m_plot->legend);
  m_plot->plotLayout()->setRowStretchFactor(1, 0.001);
  m_plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  m_plot->legend->setWrap(3);
  m_plot->legend->setMargins(QMargins(4, 0, 4, 0));
  QSharedPointer<QCPAxisTickerFixed> yTicks(new QCPAxisTickerFixed);
  yTicks->setTickStep(0.25);
  m_plot->yAxis->setTicker(yTicks);
  m_plot->setStatusTip(
      tr("Compute: forward, aux head, backward, step. Wait: input queue empty "
         "(upstream is slower). Blocked: output queue full (downstream is "
         "slower). No step finished (grey): the stage finished no step in the last second of "
         "the run (paused, or held up by a paused stage), so its split is not measured. "
         "Bubble: the stage's idle share between its first and last pass of a step, as the "
         "schedule plans it from the measured pass times (dash) and as measured (circle); local "
         "mode plans the slowest stage's pace; a mean over the stage's last 20 steps while the run "
         "trains, over the whole run (the summary's figure) once it ended. Right-click to "
         "export."));
  const QColor colors[4] = {QColor(0x59, 0xa1, 0x4f), QColor(0xed, 0xc9, 0x48),
                            QColor(0xe1, 0x57, 0x59), QColor(0xb0, 0xb0, 0xb0)};
  const QString names[4] = {tr("compute"), tr("wait (input)"), tr("blocked (output)"),
                            tr("no step finished")};
  for (int i = 0; i < 4; ++i) {
    m_bars[i] = new QCPBars(m_plot->xAxis, m_plot->yAxis);
    m_bars[i]->setName(names[i]);
    m_bars[i]->setBrush(colors[i]);
    m_bars[i]->setPen(QPen(colors[i].darker(130)));
    m_bars[i]->setWidth(0.6);
    if (i > 0) m_bars[i]->moveAbove(m_bars[i - 1]);
  }
  addBubbleMarkers();
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_frame);
  connect(m_data, &LiveData::cleared, this, [this] {
    m_runBubbles.clear();
    refresh(true);
  });
}

void UtilizationPanel::addBubbleMarkers() {
  const QString names[2] = {tr("bubble planned"), tr("bubble measured")};
  const QCPScatterStyle styles[2] = {
      QCPScatterStyle(QCPScatterStyle::ssPlus, QPen(Qt::black, 2), Qt::NoBrush, 11),
      QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(Qt::black, 1.5), Qt::white, 8)};
  for (int i = 0; i < 2; ++i) {
    m_bubble[i] = m_plot->addGraph();
    m_bubble[i]->setName(names[i]);
    m_bubble[i]->setLineStyle(QCPGraph::lsNone);
    m_bubble[i]->setScatterStyle(styles[i]);
  }
}

void UtilizationPanel::setRunSummary(int phase, const engine::RunSummary& summary) {
  auto& bubbles = m_runBubbles[phase];
  bubbles.clear();
  for (const auto& s : summary.stages) bubbles.push_back({s.bubblePlanned, s.bubbleMeasured});
  refresh(true);
}

QString UtilizationPanel::title() const {
  return m_frame->title();
}

void UtilizationPanel::setBubbleMarkers(int phase, int stages, std::vector<double>& seen) {
  // The live series is a mean over each stage's last 20 steps; the summary's figure, once the
  // run ended, is the mean over the whole run: the one the summary and the runs table show.
  const auto ended = m_runBubbles.find(phase);
  const bool wholeRun = ended != m_runBubbles.end();
  seen.push_back(wholeRun ? 1 : 0);
  // In the title: the legend's row has no width to spare at 1366 x 768 (test_train_layout).
  m_frame->setTitle(wholeRun ? tr("Utilization per stage · bubble: whole run")
                             : tr("Utilization per stage · bubble: last 20 steps"));
  for (int i = 0; i < 2; ++i) {
    QVector<double> keys, values;
    for (int k = 0; k < stages; ++k) {
      const double v = wholeRun
                           ? (size_t(k) < ended->second.size() ? ended->second[size_t(k)][size_t(i)]
                                                               : std::nan(""))
                           : m_data->latest({phase, kBubbleSeries[i], k, -1});
      seen.push_back(std::isfinite(v) ? v : -1);
      if (!std::isfinite(v)) continue;
      // Side by side on the stage's bar: planned left, measured right.
      keys << k + 1 + (i == 0 ? -0.12 : 0.12);
      values << std::clamp(v, 0.0, 1.0);
    }
    m_bubble[i]->setData(keys, values, true);
  }
}

double UtilizationPanel::bubbleValue(int kind, int stage) const {
  if (kind < 0 || kind > 1) return std::nan("");
  const double key = stage + 1 + (kind == 0 ? -0.12 : 0.12);
  for (auto it = m_bubble[kind]->data()->constBegin(); it != m_bubble[kind]->data()->constEnd();
       ++it)
    if (std::abs(it->key - key) < 1e-9) return it->value;
  return std::nan("");
}

double UtilizationPanel::barValue(int kind, int stage) const {
  if (kind < 0 || kind > 3) return std::nan("");
  auto it = m_bars[kind]->data()->findBegin(stage + 1, false);
  if (it == m_bars[kind]->data()->constEnd() || it->key != stage + 1) return std::nan("");
  return it->value;
}

void UtilizationPanel::refresh(bool force) {
  if (!force && m_data->revision() == m_seenRevision) return;
  m_seenRevision = m_data->revision();
  if (!isVisible() && !force) return;  // the dashboard redraws everything when it is shown
  const int phase =
      m_phase >= 0 && m_phase < m_data->phaseCount() ? m_phase : m_data->currentPhase();
  const engine::RunInfo* info = m_data->phaseInfo(phase);
  const int stages = info ? int(info->stages.size()) : 0;
  // The run's clock: the run reports samples/s and progress every 250 ms, also while no stage
  // finishes a step. A stage's shares come with its steps; one that finished none in the last
  // kStaleS (held, or waiting on a held one) has no measured split: it shows as grey.
  auto lastTime = [&](const char* name, int stage) {
    const SeriesBuffer* b = m_data->series({phase, name, stage, -1});
    return b && b->size() ? b->x(b->size() - 1, XAxisKind::Time) : -1.0;
  };
  const double now = std::max(lastTime(engine::series::kSamplesPerSec, -1),
                              lastTime(engine::series::kProgress, -1));
  QVector<double> values[4];
  std::vector<double> seen{double(phase), double(stages)};
  for (int k = 0; k < stages; ++k) {
    const double last = lastTime(kSeries[0], k);
    const bool stale = last >= 0 && now - last > kStaleS;
    for (int i = 0; i < 3; ++i) {
      const double v = m_data->latest({phase, kSeries[i], k, -1});
      values[i] << (!stale && std::isfinite(v) ? std::clamp(v, 0.0, 1.0) : 0.0);
    }
    values[3] << (stale ? 1.0 : 0.0);
  }
  for (int i = 0; i < 4; ++i) seen.insert(seen.end(), values[i].begin(), values[i].end());
  std::vector<double> bubbles;
  setBubbleMarkers(phase, stages, bubbles);
  seen.insert(seen.end(), bubbles.begin(), bubbles.end());
  if (!force && seen == m_seenValues) return;  // the bars are as drawn
  m_seenValues = std::move(seen);
  QVector<double> keys;
  for (int k = 0; k < stages; ++k) keys << k + 1;
  for (int i = 0; i < 4; ++i) m_bars[i]->setData(keys, values[i], true);
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  for (int k = 0; k < stages; ++k)
    ticker->addTick(
        k + 1, info && info->mode == engine::Mode::Backprop ? tr("model") : tr("S%1").arg(k + 1));
  m_plot->xAxis->setTicker(ticker);
  m_plot->xAxis->setRange(0.4, std::max(1, stages) + 0.6);
  m_plot->yAxis->setRange(0, 1.05);
  m_plot->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace stagewise::ui
