#include "live/timeline_panel.h"

#include <qcustomplot.h>
#include <QVBoxLayout>
#include <cmath>

#include "common/plot_frame.h"
#include "common/theme.h"

namespace stagewise::ui {

TimelinePanel::TimelinePanel(LiveData* data, QWidget* parent) : QWidget(parent), m_data(data) {
  m_frame = new PlotFrame(tr("Timeline (compute spans)"), PlotFrame::NoFeatures, this);
  m_plot = m_frame->plot();
  m_plot->setMinimumSize(220, 150);
  m_frame->setTimeAxis(true);
  m_plot->setStatusTip(tr("Each bar is one step's compute on that stage; gaps are waiting or "
                          "blocked time. Pipeline runs show each micro-batch's forward pass "
                          "light and its backward pass dark. Shows the last %1 s. Right-click "
                          "to export.")
                           .arg(m_window));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_frame);
  connect(m_data, &LiveData::cleared, this, [this] {
    for (auto* item : m_markers) m_plot->removeItem(item);
    m_markers.clear();
    refresh(true);
  });
}

int TimelinePanel::drawnSpans(int stage) const {
  if (stage < 0 || size_t(stage) >= m_drawn.size()) return 0;
  const auto& d = m_drawn[size_t(stage)];
  return d[0] + d[1] + d[2];
}

int TimelinePanel::drawnSpans(int stage, engine::SpanKind kind) const {
  return stage >= 0 && size_t(stage) < m_drawn.size() ? m_drawn[size_t(stage)][size_t(kind)] : 0;
}

void TimelinePanel::refresh(bool force) {
  if (!force && m_data->revision() == m_seenRevision) return;
  m_seenRevision = m_data->revision();
  if (!isVisible() && !force) return;  // the dashboard redraws everything when it is shown
  const int phase =
      m_phase >= 0 && m_phase < m_data->phaseCount() ? m_phase : m_data->currentPhase();
  const engine::RunInfo* info = m_data->phaseInfo(phase);
  const int stages = info ? int(info->stages.size()) : 0;
  // Graph k draws stage k's steps and forward passes, graph stages + k its backward passes.
  while (m_plot->graphCount() < 2 * stages) m_plot->addGraph();
  while (m_plot->graphCount() > 2 * stages) m_plot->removeGraph(m_plot->graphCount() - 1);
  double end = 0, ends = phase * 1e9 + stages * 1e7;
  for (int k = 0; k < stages; ++k)
    if (!m_data->spans(phase, k).empty()) {
      end = std::max(end, m_data->spans(phase, k).back().endS);
      ends += m_data->spans(phase, k).back().endS;
    }
  if (!force && ends == m_seenEnd) return;  // no new span
  m_seenEnd = ends;
  const double begin = std::max(0.0, end - m_window);
  const double rowHeight = m_plot->axisRect()->height() / std::max(1.0, stages + 0.5);
  m_drawn.assign(size_t(stages), {0, 0, 0});
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  for (int k = 0; k < stages; ++k) {
    const double row = stages - k;  // stage 1 on top
    QVector<QCPGraphData> ahead, back;
    for (const auto& s : m_data->spans(phase, k)) {
      if (s.endS < begin) continue;
      // Each span is a thick segment; a NaN after it keeps segments apart.
      auto& data = s.kind == engine::SpanKind::Backward ? back : ahead;
      data << QCPGraphData(s.startS, row) << QCPGraphData(s.endS, row)
           << QCPGraphData(s.endS + 1e-9, std::nan(""));
      ++m_drawn[size_t(k)][size_t(s.kind)];
    }
    for (int part = 0; part < 2; ++part) {
      QCPGraph* graph = m_plot->graph(part * stages + k);
      graph->data()->set(part == 0 ? ahead : back, true);
      QPen pen(part == 0 ? stageColor(k) : stageColor(k).darker(170),
               std::max(2.0, rowHeight * 0.55));
      pen.setCapStyle(Qt::FlatCap);
      graph->setPen(pen);
      graph->setAdaptiveSampling(false);
    }
    ticker->addTick(row, info->mode == engine::Mode::Backprop ? tr("model") : tr("S%1").arg(k + 1));
  }
  const bool pipeline = info && info->mode == engine::Mode::Pipeline;
  m_frame->setTitle(pipeline ? tr("Timeline (forward light, backward dark)")
                             : tr("Timeline (compute spans)"));
  m_plot->yAxis->setTicker(ticker);
  m_plot->yAxis->setRange(0.4, stages + 0.6);
  m_plot->xAxis->setRange(begin, std::max(begin + 1e-3, end));
  // The changes applied within the window, as in the line plots (at their time).
  for (auto* item : m_markers) m_plot->removeItem(item);
  m_markers.clear();
  QColor color = palette().color(QPalette::Text);
  color.setAlpha(150);
  for (const LiveMarker& m : m_data->markers()) {
    if (m.phase != phase || m.timeS < begin || m.timeS > end) continue;
    auto* line = new QCPItemStraightLine(m_plot);
    line->setPen(QPen(color, 1, Qt::DashLine));
    line->point1->setCoords(m.timeS, 0);
    line->point2->setCoords(m.timeS, 1);
    line->setSelectable(false);
    m_markers.push_back(line);
  }
  m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void TimelinePanel::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  refresh(true);  // bar thickness follows the row height
}

}  // namespace stagewise::ui
