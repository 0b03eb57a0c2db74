#pragma once
// A live line chart over LiveData series. It picks series by rule (name, per stage or per run),
// draws each decimated to the pixels it has, follows the newest data until the user zooms or
// pans (double-click follows again) and toggles graphs from the legend; its PlotFrame reads
// values out under the mouse, switches the log scale and exports to PNG, SVG, PDF or CSV.

#include <QPen>
#include <QStringList>
#include <QWidget>
#include <functional>

#include "live/live_data.h"

class QCPGraph;
class QCPAbstractItem;
class QCPAbstractLegendItem;
class QCPItemText;
class QCustomPlot;

namespace stagewise::ui {

class PlotFrame;

/// Which series a panel shows and how.
struct SeriesRule {
  std::string name;
  bool perStage = true;  ///< stage >= 0 (layer -1); otherwise the run-level series
  QString legend;        ///< run-level legend; per stage "S<n>" (+ this suffix when set)
  Qt::PenStyle style = Qt::SolidLine;
  double width = 1.5;
  QColor color;             ///< invalid: the stage's colour
  bool markers = false;     ///< sparse series (evaluations): draw a dot at each point
  bool perLayer = false;    ///< the per-layer values (layer >= 0) instead of the per-stage ones
  bool foreground = false;  ///< drawn in the theme's text colour (follows light / dark)
};

class PlotPanel : public QWidget {
  Q_OBJECT
 public:
  PlotPanel(const QString& title, const QString& yLabel, LiveData* data, QWidget* parent = nullptr);

  void addRule(const SeriesRule& rule);
  /// Replaces every rule: the graphs are rebuilt from the data received so far.
  void setRules(const std::vector<SeriesRule>& rules);
  /// A small control drawn in the panel's top-left corner, in the title row (a view switch).
  void setCornerWidget(QWidget* widget);
  void setXAxis(XAxisKind axis);
  XAxisKind xAxisKind() const { return m_axis; }
  void setLogY(bool on);
  bool logY() const;
  /// The y axis counts bytes: ticks and read-out in IEC units (KiB, MiB, GiB; issue 36 §3).
  void setYBytes(bool on);
  /// Keeps the y axis at [lo, hi] (accuracy, cosine) instead of fitting the data.
  void setFixedYRange(double lo, double hi);
  /// Puts the legend under the plot with this many entries per row (many series: a wide legend
  /// instead of a tall one). By default it is a column right of the plot, never over the data,
  /// that wraps into further columns when its entries do not fit the plot's height.
  void setLegendColumns(int columns);
  /// The run's final evaluation on the whole test set (the summary's value) is the last point
  /// of run-level series `series` in `phase`: it is drawn apart from the periodic points on
  /// eval.max_samples, as a marker of its own named "final, whole test set" (issue 36).
  void markFinal(int phase, const std::string& series, double value);
  /// An earlier whole-test-set evaluation of run-level `series` in `phase` (a stop's, before
  /// the run was resumed), kept out of the periodic line: drawn as a marker with the final one.
  void markWholeSet(int phase, const std::string& series, int64_t step, double timeS, double value);
  /// The final point's graph of `series` in `phase`, or null (tests).
  QCPGraph* finalGraph(int phase, const std::string& series) const;
  /// Rows of the legend column (after the last layout): entries past it start a new column.
  int legendRows() const;
  /// The entries the legend has no room for, folded into "+N more" (their names in the
  /// tooltip; the read-out still lists them). Empty: every entry shown.
  QStringList foldedLegendEntries() const;
  /// The least height of the axis rect the layout keeps (issue 36 §2.3: a plot squeezed to
  /// about 20 px under a tall legend).
  static constexpr int kMinAxisHeight = 60;
  /// The least width of the axis rect beside a legend wrapped into columns.
  static constexpr int kMinAxisWidth = 90;

  QCustomPlot* plot() const { return m_plot; }
  PlotFrame* frame() const { return m_frame; }
  QString title() const;
  int graphCount() const { return int(m_bound.size()); }
  /// Points currently handed to QCustomPlot for graph `index` (after decimation).
  int shownPoints(int index) const;
  /// Points received for graph `index`.
  int receivedPoints(int index) const;
  QString legendText(int index) const;
  bool isFollowing() const { return m_follow; }
  /// The event lines drawn (one per change applied to the run: LiveData::markers()).
  int markerCount() const { return int(m_markerItems.size() / 2); }
  QString markerLabel(int index) const;
  /// The label of event line `index` as drawn (its text shortened to fit, or hidden; tests).
  QCPItemText* markerText(int index) const;
  /// Where event line `index` stands on the x axis (a step, or seconds on the time axis).
  double markerX(int index) const;
  /// The last hover read-out (empty when the mouse is not over the plot).
  QString readout() const;
  /// A line drawn in the middle of the plot while it has no data (why a panel stays empty:
  /// "no gradient cosine in pipeline/backprop runs"); empty: none.
  void setEmptyText(const QString& text);
  /// The empty-panel line as drawn now (empty when hidden: the panel has data).
  QString shownEmptyText() const;

  /// Writes the panel as .png, .svg or .pdf by the file's suffix. Empty string on success.
  QString exportTo(const QString& path, int width = 0, int height = 0);

 public Q_SLOTS:
  /// Redraws if new data arrived since the last call (or `force`). Cheap when nothing changed.
  void refresh(bool force = false);
  void resetView();
  void exportWithDialog();

 protected:
  void changeEvent(QEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  /// The panel's description tooltip opens over the title row and the legend, never over
  /// the data, where the hover read-out is (issue 36).
  bool event(QEvent* event) override;

 private:
  struct Bound {
    LiveKey key;
    QCPGraph* graph;
    QPen pen;  ///< as the rule asks; dense graphs are drawn with a 1 px version of it
    bool markers;
    int rule;        ///< index of the rule that picked it (legend order)
    QString name;    ///< the legend's whole text (the graph's name may be shortened to fit)
    QString tag;     ///< short: the mode and stage ("S1", "pS1" pipeline, "bp" backprop)
    QString what;    ///< short: the rule's part ("fwd", "↑" for gradients back, "alloc")
    bool modeStyle;  ///< the pen's style names the run's mode (pipeline, backprop): always kept
  };
  struct Final {
    int phase;
    std::string series;
    double value;
    QCPGraph* graph;
    QString name;   ///< the whole legend text
    QString brief;  ///< the short one, when the legend is too narrow for the whole one
    struct Earlier {
      int64_t step;
      double timeS;
      double value;
    };
    std::vector<Earlier> earlier;  ///< markWholeSet's points
  };
  /// The marker graph of `series` in `phase`, made on first use; null when no line draws it.
  Final* finalOf(int phase, const std::string& series);
  /// Takes each final point off its periodic line and onto its own marker.
  void drawFinals();
  void onSeriesAdded(const LiveKey& key);
  void onCleared();
  void recolorForeground();
  void sortLegend();
  void updateLegendVisibility();
  /// Wraps the side legend into as many columns as its entries need at the plot's height.
  void fitLegend();
  /// Shortens the legend's texts when its columns would squeeze the plot below kMinAxisWidth
  /// (QCustomPlot then shrinks every cell and cuts each text off at its edge): first the short
  /// form (mode tag and stage, abbreviated part), then the tiniest part ("pS3 q" in the queue
  /// panel), then the part elided, the tag kept whole, so that no two entries read the same.
  void fitLegendWidth();
  /// The empty-panel line, shown while no graph has data.
  void updateEmptyText();
  /// As many x ticks as their labels' drawn widths leave room for (after each layout).
  void fitTicks();
  QColor ruleColor(const SeriesRule& rule, int stage) const;
  /// Puts an event line (and its label) at each of LiveData's markers.
  void syncMarkers();
  /// Stacks the event lines' labels into rows so none prints over another, each shortened to
  /// the room beside its line.
  void placeMarkerLabels();
  /// The changes whose line or label is under `at` (the plot's pixels), whole; empty: none.
  QString markerTip(const QPoint& at) const;
  /// The translucent ground under an event label: the plot's background.
  QBrush labelGround() const;

  LiveData* m_data;
  PlotFrame* m_frame;
  QCustomPlot* m_plot;
  std::vector<SeriesRule> m_rules;
  std::vector<Bound> m_bound;
  std::vector<PlotPoint> m_scratch;
  std::vector<Final> m_finals;
  std::vector<QCPAbstractItem*> m_markerItems;  ///< per marker: its line, then its label
  QStringList m_markerLabels;  ///< per marker: its label whole (the drawn one may be elided)
  QCPItemText* m_emptyText = nullptr;
  XAxisKind m_markerAxis = XAxisKind::Step;
  XAxisKind m_axis = XAxisKind::Step;
  bool m_fixedY = false;
  double m_yLo = 0, m_yHi = 1;
  bool m_follow = true;
  bool m_settingRange = false;
  uint64_t m_seenRevision = ~uint64_t(0);
  uint64_t m_seenPoints = ~uint64_t(0);
  double m_seenSmoothing = 0;       ///< LiveData's smoothing at the last redraw
  std::vector<QCPGraph*> m_folded;  ///< graphs the full legend folds into "+N more"
  QCPAbstractLegendItem* m_moreItem = nullptr;
  /// Gives the folded graphs their legend entries back (before each fit).
  void unfoldLegend();
  /// The least width of the axis rect beside the legend: 60 % of the panel or 200 px, the
  /// smaller, but kMinAxisWidth at least (issue 36).
  int minAxisWidth() const;
  int m_tickRoom = -1;  ///< the axis width fitTicks() last chose a tick count for  // points in the
                        ///< bound series at the last redraw
};

}  // namespace stagewise::ui
