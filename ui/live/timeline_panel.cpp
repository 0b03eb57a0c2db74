#include "live/timeline_panel.h"

#include <qcustomplot.h>
#include <QMenu>
#include <QVBoxLayout>
#include <cmath>

#include "common/theme.h"
#include "live/plot_export.h"

namespace stagewise::ui {

TimelinePanel::TimelinePanel(LiveData* data, QWidget* parent) : QWidget(parent), m_data(data) {
  m_plot = new QCustomPlot(this);
  m_plot->setMinimumSize(220, 150);
  m_plot->plotLayout()->insertRow(0);
  m_plot->plotLayout()->addElement(0, 0,
                                   new QCPTextElement(m_plot, tr("Timeline (compute spans)"),
                                                      QFont(font().family(), -1, QFont::Bold)));
  m_plot->xAxis->setLabel(tr("time (s)"));
  m_plot->setStatusTip(tr("Each bar is one step's compute on that stage; gaps are waiting or "
                          "blocked time. Shows the last %1 s. Right-click to export.")
                           .arg(m_window));
  m_plot->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(m_plot, &QCustomPlot::customContextMenuRequested, this, [this](const QPoint& pos) {
    QMenu menu(this);
    menu.addAction(tr("Export…"), this,
                   [this] { exportPlotWithDialog(m_plot, tr("Timeline"), this); });
    menu.exec(m_plot->mapToGlobal(pos));
  });
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_plot);
  connect(m_data, &LiveData::cleared, this, [this] { refresh(true); });
  stylePlot(m_plot);
}

int TimelinePanel::drawnSpans(int stage) const {
  return stage >= 0 && size_t(stage) < m_drawn.size() ? m_drawn[size_t(stage)] : 0;
}

void TimelinePanel::refresh(bool force) {
  if (!force && m_data->revision() == m_seenRevision) return;
  m_seenRevision = m_data->revision();
  if (!isVisible() && !force) return;  // the dashboard redraws everything when it is shown
  const int phase =
      m_phase >= 0 && m_phase < m_data->phaseCount() ? m_phase : m_data->currentPhase();
  const engine::RunInfo* info = m_data->phaseInfo(phase);
  const int stages = info ? int(info->stages.size()) : 0;
  while (m_plot->graphCount() < stages) m_plot->addGraph();
  while (m_plot->graphCount() > stages) m_plot->removeGraph(m_plot->graphCount() - 1);
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
  m_drawn.assign(size_t(stages), 0);
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  for (int k = 0; k < stages; ++k) {
    const double row = stages - k;  // stage 1 on top
    QVector<QCPGraphData> data;
    for (const auto& s : m_data->spans(phase, k)) {
      if (s.endS < begin) continue;
      // Each span is a thick segment; a NaN after it keeps segments apart.
      data << QCPGraphData(s.startS, row) << QCPGraphData(s.endS, row)
           << QCPGraphData(s.endS + 1e-9, std::nan(""));
      ++m_drawn[size_t(k)];
    }
    QCPGraph* graph = m_plot->graph(k);
    graph->data()->set(data, true);
    QPen pen(stageColor(k), std::max(2.0, rowHeight * 0.55));
    pen.setCapStyle(Qt::FlatCap);
    graph->setPen(pen);
    graph->setAdaptiveSampling(false);
    ticker->addTick(row, info->mode == engine::Mode::Backprop ? tr("model") : tr("S%1").arg(k + 1));
  }
  m_plot->yAxis->setTicker(ticker);
  m_plot->yAxis->setRange(0.4, stages + 0.6);
  m_plot->xAxis->setRange(begin, std::max(begin + 1e-3, end));
  m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void TimelinePanel::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::PaletteChange || event->type() == QEvent::ApplicationPaletteChange) {
    stylePlot(m_plot);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
  }
}

void TimelinePanel::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  refresh(true);  // bar thickness follows the row height
}

}  // namespace stagewise::ui
