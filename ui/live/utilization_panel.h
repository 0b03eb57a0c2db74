#pragma once
// Where each stage's time goes, as stacked bars per stage: computing, waiting for input,
// blocked on a full output queue (the engine's sliding 1 s window, so the bars move live); and
// each stage's bubble, planned and measured, as markers beside its bar (docs/metrics.md).

#include <QWidget>
#include <array>
#include <map>
#include <vector>

#include "live/live_data.h"

class QCPBars;
class QCPGraph;
class QCustomPlot;

namespace stagewise::ui {

class PlotFrame;

class UtilizationPanel : public QWidget {
  Q_OBJECT
 public:
  explicit UtilizationPanel(LiveData* data, QWidget* parent = nullptr);
  QCustomPlot* plot() const { return m_plot; }
  /// Current bar value (compute/wait/blocked = 0/1/2) of stage `stage`, or NaN.
  /// Kind 0 compute, 1 wait, 2 blocked, 3 no step finished in the last kStaleS of the run.
  double barValue(int kind, int stage) const;
  static constexpr double kStaleS = 1.0;
  /// The bubble marker of `stage`: kind 0 planned, 1 measured; NaN where none. While the run
  /// trains, the live series (a mean over the stage's last 20 steps); once its summary came,
  /// the summary's whole-run mean.
  double bubbleValue(int kind, int stage) const;
  /// The panel's title, which says what the bubble markers are a mean of.
  QString title() const;
  /// The run of `phase` ended: its markers show the summary's run-mean bubbles from now on.
  void setRunSummary(int phase, const engine::RunSummary& summary);

  /// Which phase of a plan to show (-1, the default: the phase running or the last one).
  void setPhase(int phase) {
    m_phase = phase;
    refresh(true);
  }
  int phase() const { return m_phase; }

 public Q_SLOTS:
  void refresh(bool force = false);

 private:
  void addBubbleMarkers();
  /// Sets the bubble markers of `phase` and appends what they show to `seen`.
  void setBubbleMarkers(int phase, int stages, std::vector<double>& seen);

  LiveData* m_data;
  PlotFrame* m_frame;
  QCustomPlot* m_plot;
  int m_phase = -1;
  /// compute, wait, blocked, and "no step finished": a stage whose last step ended over
  /// kStaleS before the run's clock (held, or blocked by one that is) has no measured split.
  QCPBars* m_bars[4];
  QCPGraph* m_bubble[2];  ///< bubble_planned, bubble_measured: markers per stage
  /// Per phase whose run ended: each stage's whole-run bubble, planned and measured.
  std::map<int, std::vector<std::array<double, 2>>> m_runBubbles;
  uint64_t m_seenRevision = ~uint64_t(0);
  std::vector<double> m_seenValues;  // phase, stages, then the bar heights last drawn
};

}  // namespace stagewise::ui
