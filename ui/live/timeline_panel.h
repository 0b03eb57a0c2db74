#pragma once
// A timeline of each stage's compute spans: gaps are time a stage spent waiting or blocked, so
// a straggler and the pipeline bubbles behind it show at a glance. It follows the newest spans
// over a window the user zooms (wheel, +/-) from 2 ms to 60 s or the whole run kept, scrolls
// back (drag, the scroll bar, arrow keys) or pauses; Follow returns to the live end. Paused,
// it keeps its own copy of the spans (LiveData keeps only the last kMaxSpans of a stage), so the
// window shown does not empty while a long run goes on.

#include <QWidget>
#include <array>
#include <limits>

#include "live/live_data.h"

class QAction;
class QCPAbstractItem;
class QCPCurve;
class QCPItemText;
class QCustomPlot;
class QScrollBar;
class QToolButton;

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
  /// Planned passes drawn faintly under stage `stage`'s spans (pipeline runs: the schedule's
  /// plan from the mean pass times shown, one per step; timeline_plan.h).
  int plannedSpans(int stage) const;
  /// "Export trace (Perfetto)…" in the right-click menu: emits exportTraceRequested for the
  /// phase shown. Disabled until setTraceAvailable(true) (the run is recorded in a store).
  QAction* exportTraceAction() const { return m_exportTrace; }
  void setTraceAvailable(bool available);
  /// Event lines drawn (the changes applied within the window shown).
  int markerCount() const { return int(m_markers.size()); }
  /// The span of time shown, clamped to [kMinWindow, the larger of kMaxWindow and the spans
  /// kept]; the view keeps its right end (the live end while following).
  void setWindowSeconds(double seconds);
  double windowSeconds() const { return m_window; }
  /// Multiplies the window by `factor` (< 1 zooms in) around `anchor` seconds (the view's right
  /// end while following, or when NaN its centre).
  void zoom(double factor, double anchor = std::numeric_limits<double>::quiet_NaN());
  /// Moves the view by `fraction` of the window (negative: back in time); stops following.
  void scrollBy(double fraction);
  /// Following: the view ends at the newest span. Not following (paused, scrolled or dragged
  /// back): the view stays where it is while spans keep arriving.
  bool isFollowing() const { return m_follow; }
  void setFollowing(bool follow);
  /// The x range shown after the last refresh (seconds since the run's start).
  double viewBegin() const;
  double viewEnd() const;
  QScrollBar* scrollBar() const { return m_scroll; }
  QToolButton* pauseButton() const { return m_pause; }
  QToolButton* followButton() const { return m_followButton; }
  /// What the view misses, shown over the plot: "No spans kept before 12.3 s …" when the window
  /// begins before the oldest span kept of a stage that dropped some; empty otherwise.
  QString keptNote() const;
  /// The stage rows labelled (every row, or every n-th when the rows are lower than a line).
  int labelStride() const { return m_stride; }

  /// 2 ms: one step's F, B and W passes of a small pipeline readable (issue 37's walkthrough).
  static constexpr double kMinWindow = 0.002;
  static constexpr double kMaxWindow = 60.0;

  /// Which phase of a plan to show (-1, the default: the phase running or the last one).
  void setPhase(int phase);
  int phase() const { return m_phase; }
  /// The phase drawn: phase(), or the one running (or the last) when that is -1.
  int shownPhase() const;

 public Q_SLOTS:
  void refresh(bool force = false);

 Q_SIGNALS:
  void followingChanged(bool following);
  /// The user asked to export the spans of phase `phase` as a Chrome trace.
  void exportTraceRequested(int phase);

 protected:
  void resizeEvent(QResizeEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void changeEvent(QEvent* event) override;

 private:
  /// Earliest and latest span time kept for the phase shown (0, 0 when none).
  std::pair<double, double> extent() const;
  double maxWindow() const;
  /// Stages of `phase` with a row to draw: the partition's, and any joined away with spans kept.
  int keptStages(int phase) const;
  /// The spans drawn for a stage: the live ones, or the copy kept while not following.
  const std::deque<engine::StepSpan>& spansOf(int phase, int stage) const;
  /// Brings the copy kept while not following up to date with the spans of `phase`.
  void syncFrozen(int phase);
  /// Palette-aware icons and span colours (dark glyphs vanish on the dark theme).
  void restyle();
  void showView(double end);  // stops following and shows [end - window, end]
  void syncScrollBar(double first, double last, double begin);
  void updateTips();
  /// Draws the plan under the spans of [begin, end] (none outside pipeline mode).
  void drawPlan(int phase, int stages, double begin, double end, double rowHeight);

  LiveData* m_data;
  PlotFrame* m_frame;
  QCustomPlot* m_plot;
  int m_phase = -1;
  double m_window = 2.0;
  bool m_follow = true;
  double m_viewEnd = 0;         // the view's right end when not following
  bool m_settingRange = false;  // the panel moves the axis or the scroll bar, not the user
  int m_stride = 1;
  int m_layoutHeight = -1;  // the axis rect's height the rows were drawn for
  QScrollBar* m_scroll;
  QToolButton* m_pause;
  QToolButton* m_followButton;
  QAction* m_exportTrace;
  static constexpr size_t kSpanKinds = size_t(engine::SpanKind::Aux) + 1;
  std::vector<std::array<int, kSpanKinds>> m_drawn;  // per stage, per SpanKind
  QCPItemText* m_note = nullptr;                     // keptNote() over the plot
  int m_frozenPhase = -1;  // the phase m_frozen copies (-1: none, following)
  std::vector<std::deque<engine::StepSpan>> m_frozen;
  double m_frozenDropped = 0;  // the end of the newest span dropped from m_frozen or before it
  std::vector<QCPAbstractItem*> m_markers;  // a line per change within the window
  std::vector<QCPCurve*> m_plan;            // per stage, the planned passes (below the spans)
  std::vector<int> m_planned;               // per stage, planned passes drawn
  uint64_t m_seenRevision = ~uint64_t(0);
  double m_seenEnd = -1;  // sum of the stages' last span ends at the last redraw
};

}  // namespace stagewise::ui
