#pragma once
// Comparing selected runs: one metric overlaid, aligned by step or wall time, with smoothing, a
// log scale and a hover read-out as on the live plots; summary bars; and the spec keys whose
// values differ.

#include <QWidget>
#include <map>
#include <optional>
#include <set>

#include "runs/overlay_legend.h"
#include "runs/store_executor.h"
#include "stagewise/study/search_views.h"

class QCPGraph;
class QComboBox;
class QCustomPlot;
class QLabel;
class QSplitter;
class QTableWidget;
class QToolButton;

namespace stagewise::ui {

class PlotFrame;

class ComparePanel : public QWidget {
  Q_OBJECT
 public:
  explicit ComparePanel(StoreExecutor* executor, QWidget* parent = nullptr);

  void setRuns(const std::vector<int64_t>& ids);
  const std::vector<int64_t>& runs() const { return m_ids; }
  QCustomPlot* overlayPlot() const { return m_overlay; }
  QCustomPlot* summaryPlot() const { return m_summary; }
  /// The overlay's frame: its smoothing (applied to each run's values before any grouping),
  /// log scale and read-out.
  PlotFrame* overlayFrame() const { return m_overlayFrame; }
  PlotFrame* summaryFrame() const { return m_summaryFrame; }
  QTableWidget* diffTable() const { return m_diff; }
  QComboBox* metricCombo() const { return m_metric; }
  /// The overlay's x axis: step, wall time, samples (step × batch size) or compute (step × the
  /// run's training FLOPs per step, from its summary's train_flops). Kept for next time.
  QComboBox* alignCombo() const { return m_align; }
  enum XChoice { kXStep = 0, kXTime = 1, kXSamples = 2, kXFlops = 3 };
  /// What the chosen x axis leaves out: the runs that lack what it needs (empty: none).
  QLabel* axisNote() const { return m_axisNote; }
  /// Each run, or groups (runs equal in every key but the seed) as a mean with a band of ±1
  /// sample std or min–max, on the common grid of the overlay.
  QComboBox* groupCombo() const { return m_group; }
  /// The band's spread while grouped (else the saved choice).
  study::Spread spread() const;
  /// Draws the groups' bands with `spread` (only while grouped: each run stays each run).
  void setSpread(study::Spread spread);
  /// One group as drawn: its runs, a label from the keys that tell it apart, and per grid x
  /// the mean and the band's edges (NaN where no run of the group has a value), of the runs'
  /// values as smoothed by the overlay's smoothing control.
  struct Band {
    QString label;
    std::vector<int64_t> runs;
    std::vector<double> x, mean, lo, hi;
  };
  const std::vector<Band>& bands() const { return m_bands; }
  /// Group by: the keys that differ between the selected runs (the seed, the name and the
  /// checkpoint aside), checkable. All checked: every setting but the seed; unchecked keys are
  /// pooled like the seeds.
  QToolButton* groupKeysButton() const { return m_groupKeys; }
  /// Groups by exactly these keys (empty: every selected run in one group).
  void setGroupKeys(const std::vector<std::string>& keys);
  /// The bottom plot: a bar per run (test accuracy, samples/s, wall time, pipeline efficiency)
  /// or the front of the groups (cost against final test accuracy).
  QComboBox* summaryCombo() const { return m_summaryMetric; }
  /// One group on the front view: its mean cost and accuracy with their sample std, its mode
  /// (marked apart), and whether no other group is cheaper and at least as accurate.
  struct FrontPoint {
    QString label;
    QString mode;
    int group = 0;  ///< its index among the groups (its colour, as in the grouped overlay)
    std::vector<int64_t> runs;
    double x = 0, xStd = 0, y = 0, yStd = 0;
    bool onFront = false;
  };
  const std::vector<FrontPoint>& frontPoints() const { return m_front; }
  /// Shown when throughputs (samples/s, wall time, their front, the samples/s overlay) of runs
  /// measured under different machine loads are compared (issue 36 §1.8); hidden otherwise.
  QLabel* loadWarning() const { return m_loadWarning; }
  /// A whole-test-set evaluation of a run (where it stopped or completed; see
  /// whole_set_evals.h): x on the storage axis (step or seconds), its value, and the x of the
  /// run's next periodic point (infinity: none). Drawn as a hollow diamond off the line.
  struct WholeSetPoint {
    double x = 0;
    double value = 0;
    double next = 0;
  };
  /// True when the data for the current selection and choices has arrived.
  bool isLoaded() const { return m_loadedTicket == m_ticket; }
  /// Selects the overlay metric showing `series` of `stage` (-1 run-level, -2 each run's last
  /// stage) or of `layer` (>= 0: per-layer series, whichever stage holds the layer). False if
  /// the metric list has no such entry (per-layer entries appear once runs that have them load).
  bool selectMetric(const std::string& series, int stage, int layer = -1);
  /// The full names of the overlay entries its legend folds into "+N more" (empty: none).
  QStringList foldedLegendEntries() const { return m_legendFolded; }
  /// Forgets the overlay's kept smoothing, log scale, grouping and metric (tests start from
  /// the defaults).
  static void forgetOverlaySettings();

 public Q_SLOTS:
  void reload();
  /// The overlay takes the whole panel (the bars and the spec diff hidden).
  void setOverlayEnlarged(bool on);

 Q_SIGNALS:
  void loaded();
  /// The user chose another band (Groups' tables follow).
  void spreadChanged(stagewise::study::Spread spread);
  void failed(const QString& message);

 protected:
  /// Hides the overlay's read-out when the mouse leaves the plot.
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  /// One entry of the overlay metric list.
  struct Metric {
    QString label;
    std::string series;
    int stage = -1;  ///< -1 run-level, -2 each run's last stage (in each of its partitions)
    int layer = -1;  ///< >= 0: the per-layer series of this layer
  };
  struct Data {
    std::vector<storage::RunRecord> runs;
    std::vector<storage::SpecDifference> diffs;
    storage::AlignedSeries aligned;
    std::vector<Metric> extra;  ///< per-stage and per-layer series the selected runs have
    std::vector<int> groupOf;   ///< per run: its group (runs equal but for the seed)
    /// Per run: its stored points (x on the storage axis, value as drawn: smoothed when the
    /// overlay smooths), sorted by x, for the hover read-out.
    std::vector<std::vector<std::pair<double, double>>> stored;
    /// Per run: whether `stored` holds every stored point (then the overlay draws from it, at
    /// the visible range's resolution; else from the aligned grid).
    std::vector<bool> storedAll;
    /// Per run: where its line breaks (x on the storage axis; see last_stage_series.h).
    std::vector<std::vector<double>> breaks;
    /// Per run: its whole-test-set evaluations of the metric (none unless a test series).
    std::vector<std::vector<WholeSetPoint>> whole;
  };
  /// Per run: the factor from step to the chosen x (batch size, FLOPs per step; 1 for step and
  /// time), NaN where the run lacks it.
  std::vector<double> xFactors() const;
  /// The hover read-out's point for a graph: a stored point of its run nearest to `x`.
  std::optional<std::pair<double, double>> storedNear(const QCPGraph* graph, double x) const;
  /// Draws the overlay from the data last loaded, with the frame's smoothing and scale.
  void drawOverlay();
  /// Redraws the runs drawn from their stored points for the visible x range (zoom, pan): every
  /// stored point in view, or each pixel column's first, min, max and last (pointsToDraw).
  void drawVisible();
  void drawBands(const storage::AlignedSeries& aligned);
  void drawFront();
  /// A group's label: the values of the keys that tell the selected runs apart (seed aside).
  QString groupLabel(size_t firstRun) const;
  void showLoaded(const Data& data);
  void drawSummary();
  void updateLoadWarning();
  void setMetricList(const std::vector<Metric>& extra);
  /// Lays the overlay's legend out in the room the plot leaves (after each draw and resize).
  void fitLegend();
  /// As many x ticks as their labels leave room for (after each layout).
  void fitXTicks();
  /// The overlay's smoothing, log scale, grouping and metric as last chosen (QSettings), and
  /// keeping them there on each change (issue 36 §4: session restore).
  void restoreOverlaySettings();
  void saveOverlaySettings() const;

  StoreExecutor* m_executor;
  std::vector<int64_t> m_ids;
  std::vector<storage::RunRecord> m_runs;
  std::vector<Metric> m_metrics;  // parallel to m_metric's items
  quint64 m_ticket = 0;
  quint64 m_loadedTicket = 0;
  QComboBox* m_metric;
  QComboBox* m_align;
  QComboBox* m_group;
  std::vector<Band> m_bands;
  std::vector<FrontPoint> m_front;
  std::vector<int> m_groupOf;
  std::vector<int> m_identityGroupOf;  ///< by every setting but the seed (groupIdentity)
  std::set<std::string> m_pooled;      ///< keys unchecked in Group by
  QToolButton* m_groupKeys;
  /// Keys a group can be made of: the differing ones but the seed, the name, the checkpoint.
  bool groupable(const std::string& key) const;
  void regroup();
  storage::AlignedSeries m_aligned;  // as loaded; drawOverlay() smooths a copy
  std::vector<std::vector<std::pair<double, double>>> m_stored;  // Data::stored
  std::vector<std::vector<double>> m_breaks;                     // Data::breaks
  std::vector<std::vector<WholeSetPoint>> m_whole;               // Data::whole
  std::map<const QCPGraph*, size_t> m_graphRun;  // each run's graph -> its index in m_runs
  std::map<const QCPGraph*, size_t> m_marksRun;  // whole-test-set marks -> their run's index
  std::vector<OverlayLegendEntry> m_legendEntries;  // the overlay legend's, in order
  QStringList m_legendFolded;                       // the entries "+N more" stands for
  int m_tickRoom = -1;  // the axis width fitXTicks() last chose a tick count for
  std::vector<bool> m_storedAll;                 // Data::storedAll
  std::map<QCPGraph*, size_t> m_storedGraphs;    // graphs drawn from m_stored (drawVisible)
  std::vector<QCPGraph*> m_sparseGraphs;  ///< runs of few points: marked when few are in view
  std::vector<double> m_drawnFactor;             // per run, as drawn
  std::vector<storage::SpecDifference> m_diffs;
  QComboBox* m_summaryMetric;
  QLabel* m_loadWarning;
  PlotFrame* m_overlayFrame;
  PlotFrame* m_summaryFrame;
  QCustomPlot* m_overlay;
  QCustomPlot* m_summary;
  QTableWidget* m_diff;
  QSplitter* m_bottom;
  QToolButton* m_enlarge;
  QLabel* m_hint;
  QLabel* m_axisNote;
};

}  // namespace stagewise::ui
