#pragma once
// The Train workspace's panels in a grid: local loss, accuracy, gradient cosine, samples/s,
// queue depth and staleness, utilization bars and the span timeline, with the controls they
// share (smoothing, x axis, log scale). Redrawn by a timer at most 10 times a second.

#include <QTimer>
#include <QWidget>

#include "live/live_data.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QSlider;

namespace stagewise::ui {

class PlotPanel;
class TimelinePanel;
class UtilizationPanel;

class LiveDashboard : public QWidget {
  Q_OBJECT
 public:
  explicit LiveDashboard(LiveData* data, QWidget* parent = nullptr);

  PlotPanel* lossPanel() const { return m_loss; }
  PlotPanel* accuracyPanel() const { return m_accuracy; }
  PlotPanel* cosinePanel() const { return m_cosine; }
  PlotPanel* throughputPanel() const { return m_throughput; }
  PlotPanel* queuePanel() const { return m_queue; }
  PlotPanel* bytesPanel() const { return m_bytes; }
  PlotPanel* memoryPanel() const { return m_memory; }
  UtilizationPanel* utilizationPanel() const { return m_utilization; }
  TimelinePanel* timelinePanel() const { return m_timeline; }
  QList<PlotPanel*> linePanels() const;
  QSlider* smoothingSlider() const { return m_smoothing; }
  /// x: step (0) or wall time (1); saved, as the smoothing and the log scale are.
  QComboBox* xAxisCombo() const { return m_xAxis; }
  QCheckBox* logLossCheck() const { return m_logLoss; }
  /// The cosine panel's switch: per stage (0) or per layer (1).
  QComboBox* cosineScopeCombo() const { return m_cosineScope; }
  /// Which phase of a plan of several modes the utilization and timeline panels show (shown
  /// once a second phase begins; the latest is chosen as it begins).
  QComboBox* phaseViewCombo() const { return m_phaseView; }
  QTimer* replotTimer() { return &m_replot; }

  /// Redraw timer on (while a run is live) or off.
  void setLive(bool live);
  /// Redraws while live every `ms` milliseconds (default kLiveRedrawMs).
  void setRedrawInterval(int ms) { m_replot.setInterval(ms); }
  int redrawInterval() const { return m_replot.interval(); }

  /// Redraw interval while a run trains; and while one of its stages runs a team of intra-op
  /// threads (backprop: one per core), whose every member stalls when any one is interrupted.
  static constexpr int kLiveRedrawMs = 250;
  static constexpr int kTeamRedrawMs = 1000;
  /// How many times the panels were redrawn (benchmarks, tests).
  int redrawCount() const { return m_redraws; }

 public Q_SLOTS:
  void refreshAll(bool force = false);

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  LiveData* m_data;
  PlotPanel* m_loss;
  PlotPanel* m_accuracy;
  PlotPanel* m_cosine;
  PlotPanel* m_throughput;
  PlotPanel* m_queue;
  PlotPanel* m_bytes;
  PlotPanel* m_memory;
  UtilizationPanel* m_utilization;
  TimelinePanel* m_timeline;
  QSlider* m_smoothing;
  QLabel* m_smoothingValue;
  QComboBox* m_xAxis;
  QComboBox* m_phaseView;
  QCheckBox* m_logLoss;
  QComboBox* m_cosineScope;
  QTimer m_replot;
  int m_redraws = 0;
};

}  // namespace stagewise::ui
