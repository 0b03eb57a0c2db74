#pragma once
// A timeline of each stage's compute spans over the last seconds: gaps are time a stage spent
// waiting or blocked, so a straggler and the pipeline bubbles behind it show at a glance.

#include <QWidget>
#include <array>

#include "live/live_data.h"

class QCPAbstractItem;
class QCustomPlot;

namespace stagewise::ui {

class PlotFrame;

class TimelinePanel : public QWidget {
  Q_OBJECT
 public:
  explicit TimelinePanel(LiveData* data, QWidget* parent = nullptr);
  QCustomPlot* plot() const { return m_plot; }
  /// Spans drawn for stage `stage` (after the last refresh): every kind, or only one (pipeline
  /// runs draw each micro-batch's forward and backward pass apart; other modes draw steps).
  int drawnSpans(int stage) const;
  int drawnSpans(int stage, engine::SpanKind kind) const;
  /// Event lines drawn (the changes applied within the window shown).
  int markerCount() const { return int(m_markers.size()); }
  void setWindowSeconds(double seconds) { m_window = seconds; }

  /// Which phase of a plan to show (-1, the default: the phase running or the last one).
  void setPhase(int phase) {
    m_phase = phase;
    refresh(true);
  }
  int phase() const { return m_phase; }

 public Q_SLOTS:
  void refresh(bool force = false);

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  LiveData* m_data;
  PlotFrame* m_frame;
  QCustomPlot* m_plot;
  int m_phase = -1;
  double m_window = 2.0;
  std::vector<std::array<int, 3>> m_drawn;  // per stage, per SpanKind
  std::vector<QCPAbstractItem*> m_markers;  // a line per change within the window
  uint64_t m_seenRevision = ~uint64_t(0);
  double m_seenEnd = -1;  // sum of the stages' last span ends at the last redraw
};

}  // namespace stagewise::ui
