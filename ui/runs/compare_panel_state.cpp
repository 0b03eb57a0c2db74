// ComparePanel's overlay state and layout: the choices kept for next time (QSettings) and the
// legend and x ticks fitted to the room the plot has (issue 36). Split from compare_panel.cpp.

#include <qcustomplot.h>
#include <QComboBox>
#include <QSettings>
#include <algorithm>

#include "common/plot_frame.h"
#include "runs/compare_panel.h"
#include "runs/overlay_legend.h"

namespace stagewise::ui {

namespace {
const char* const kSmoothingKey = "runs/overlay_smoothing";
const char* const kLogYKey = "runs/overlay_log_y";
const char* const kGroupKey = "runs/overlay_grouping";
const char* const kMetricKey = "runs/overlay_metric";  // label, series, stage, layer
}  // namespace

void ComparePanel::restoreOverlaySettings() {
  // Issue 36 §4: the overlay's smoothing came back as 0.00 after a restart. The x axis is
  // restored where its combo is made; the band's spread is the app's (app_settings).
  const QSettings settings;
  m_overlayFrame->setSmoothing(settings.value(QLatin1String(kSmoothingKey), 0.0).toDouble());
  m_overlayFrame->setLogY(settings.value(QLatin1String(kLogYKey), false).toBool());
  const int group = settings.value(QLatin1String(kGroupKey), 0).toInt();
  if (group >= 0 && group < m_group->count()) m_group->setCurrentIndex(group);
  const QStringList metric = settings.value(QLatin1String(kMetricKey)).toStringList();
  if (metric.size() == 4 && !metric[1].isEmpty()) {
    const Metric saved{metric[0], metric[1].toStdString(), metric[2].toInt(), metric[3].toInt()};
    if (!selectMetric(saved.series, saved.stage, saved.layer)) {
      // A per-stage or per-layer series, listed once runs that have it load: kept chosen.
      setMetricList({saved});
      selectMetric(saved.series, saved.stage, saved.layer);
    }
  }
}

void ComparePanel::forgetOverlaySettings() {
  QSettings settings;
  for (const char* key : {kSmoothingKey, kLogYKey, kGroupKey, kMetricKey})
    settings.remove(QLatin1String(key));
}

void ComparePanel::saveOverlaySettings() const {
  QSettings settings;
  settings.setValue(QLatin1String(kSmoothingKey), m_overlayFrame->smoothing());
  settings.setValue(QLatin1String(kLogYKey), m_overlayFrame->logY());
  settings.setValue(QLatin1String(kGroupKey), m_group->currentIndex());
  const int index = m_metric->currentIndex();
  if (index >= 0 && size_t(index) < m_metrics.size()) {
    const Metric& m = m_metrics[size_t(index)];
    settings.setValue(QLatin1String(kMetricKey),
                      QStringList{m.label, QString::fromStdString(m.series),
                                  QString::number(m.stage), QString::number(m.layer)});
  }
}

void ComparePanel::fitLegend() {
  // Only the graphs still drawn (a resize may come between clearing and drawing again).
  std::erase_if(m_legendEntries,
                [this](const OverlayLegendEntry& e) { return !m_overlay->hasPlottable(e.graph); });
  const OverlayLegendFit fit = fitOverlayLegend(m_overlay, m_legendEntries);
  m_legendFolded = fit.folded;
}

void ComparePanel::fitXTicks() {
  // Few ticks on a narrow plot: FLOPs' "3.1e+11" labels printed over each other (issue 36).
  // Within one width the count only goes down, so two layouts cannot swap counts.
  QCPAxis* x = m_overlay->xAxis;
  const QFontMetrics fm(x->tickLabelFont());
  int widest = 0;
  for (const QString& label : x->tickVectorLabels())
    widest = std::max(widest, fm.horizontalAdvance(label));
  if (widest == 0) return;
  const int room = m_overlay->axisRect()->width();
  const int wanted = std::clamp(room / (widest * 3 / 2 + 12), 1, 5);
  const int now = x->ticker()->tickCount();
  if (wanted == now || (room == m_tickRoom && wanted > now)) return;
  m_tickRoom = room;
  x->ticker()->setTickCount(wanted);
  m_overlay->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace stagewise::ui
