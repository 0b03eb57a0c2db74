#pragma once
// The frame every plot of the workbench sits in: the QCustomPlot with its title row, the
// right-click menu with export (PNG, SVG, PDF, CSV), the theme's styling kept up with palette
// changes, and on request a smoothing control, a log-scale toggle and a hover read-out.

#include <QFlags>
#include <QWidget>
#include <functional>
#include <optional>
#include <vector>

class QAction;
class QCPAbstractLegendItem;
class QCPLegend;
class QCPGraph;
class QCPItemStraightLine;
class QCPItemText;
class QCPTextElement;
class QCustomPlot;
class QLabel;
class QMouseEvent;
class QSlider;
class QToolButton;

namespace stagewise::ui {

/// The IEC unit (1, 1024, 1024², ...) bytes of this size read in: 3·10⁶ -> 1024² (MiB).
double iecUnit(double bytes);
/// "B", "KiB", "MiB", "GiB", "TiB", "PiB" for iecUnit()'s values.
QString iecUnitName(double unit);
/// A tick's label in `unit`: (3 MiB, 1024²) -> "3 MiB", (1.5 MiB, 1024²) -> "1.5 MiB".
QString iecTickLabel(double bytes, double unit);

/// Adds "+N more" to `legend`: the entries it has no room for (issue 36: a legend never grows
/// past its panel); "+N" alone where "+N more" is wider than `maxWidth` (> 0). Returns it.
QCPAbstractLegendItem* addFoldedLegendItem(QCPLegend* legend, int count, int maxWidth = 0);
bool isFoldedLegendItem(const QCPAbstractLegendItem* item);
QString foldedLegendText(const QCPAbstractLegendItem* item);

/// A QCustomPlot in a titled frame with export, theme styling and optional shared controls.
/// Owners draw into plot(); what the controls mean for their data (smoothing, the y range on a
/// log axis) is theirs to apply, through the signals and the helpers here.
class PlotFrame : public QWidget {
  Q_OBJECT
 public:
  enum Feature {
    NoFeatures = 0,
    SmoothingControl = 0x1,  ///< a smoothing slider in the title row (see smoothed())
    LogScaleMenu = 0x2,      ///< "Logarithmic y axis" in the right-click menu
    LogScaleToggle = 0x6,    ///< that, and a "log y" button in the title row
    HoverReadout = 0x8,      ///< a line and the values of the listed graphs under the mouse
  };
  Q_DECLARE_FLAGS(Features, Feature)

  explicit PlotFrame(const QString& title, Features features = NoFeatures,
                     QWidget* parent = nullptr);

  QCustomPlot* plot() const { return m_plot; }
  Features features() const { return m_features; }
  QString title() const { return m_title; }
  /// The heading drawn in the plot's title row (also the default export name).
  void setTitle(const QString& title);
  /// A small control in the title row's left corner (a view switch); the row grows to fit it.
  void setCornerWidget(QWidget* widget);

  /// x read as time in seconds (`true`) or as steps: the axis label and the read-out follow.
  /// Until it is called the x axis has no label (bars, categories) and the read-out says steps.
  void setTimeAxis(bool seconds);
  bool timeAxis() const { return m_timeAxis; }
  /// x read as another quantity (samples, FLOPs): the axis label, and the read-out names the
  /// x as `readoutName` and its value ("samples 6400"). setTimeAxis() returns to steps or time.
  void setXQuantity(const QString& axisLabel, const QString& readoutName);

  /// Debiased EMA weight in [0, 1) chosen with the smoothing control (0 without one).
  double smoothing() const { return m_smoothing; }
  void setSmoothing(double weight);
  QSlider* smoothingSlider() const { return m_smoothingSlider; }

  bool logY() const { return m_logY; }
  /// Sets the y axis logarithmic or linear, and emits logYChanged. The log axis labels the
  /// decades and, as its height leaves room, 2 and 5 or more of each decade between them
  /// (0.3 to 5 reads 0.5 1 2 5, not a lone 1), no two labels closer than a line and a third.
  void setLogY(bool on);
  /// The checkable action behind the menu entry and the title-row button (disable it for a
  /// fixed range such as an accuracy).
  QAction* logYAction() const { return m_logAction; }
  QToolButton* logYButton() const { return m_logButton; }
  /// The y axis counts bytes: IEC ticks (the unit from the visible range, steps of 1, 2, 2.5
  /// or 5 ×10ⁿ of it, each label with its unit: "0 MiB", "2 MiB"; on a log axis powers of two) and
  /// the read-out's values in KiB, MiB, GiB (issue 36 §3).
  void setYBytes(bool on);
  bool yBytes() const { return m_yBytes; }
  /// A y value as the read-out writes it ("12.0 MiB" on a bytes axis, else 4 digits).
  QString valueText(double y) const;
  /// Whether `y` can be placed on the y axis as it is now (finite; positive on a log axis).
  bool onYAxis(double y) const;
  /// Sets the y range around the data's [lo, hi]: `pad` either side on a linear axis, a factor
  /// of 1.3 on a log one.
  void setYRange(double lo, double hi, double pad);

  /// Where a graph's point nearest to `x` is, for the read-out; std::nullopt: none.
  struct HoverPoint {
    double x = 0;
    double y = 0;
  };
  using HoverLookup = std::function<std::optional<HoverPoint>(const QCPGraph*, double x)>;
  /// Replaces the default lookup (the nearest point of the graph's drawn data): a panel that
  /// draws decimated data reads the value at the step from its own series.
  void setHoverLookup(HoverLookup lookup) { m_lookup = std::move(lookup); }
  /// The step of a graph's point at `x` on an x axis other than the step (samples, FLOPs);
  /// std::nullopt: not known. With it the read-out's header names the step beside the x
  /// ("FLOPs 3.1e+11 · step 1,240"), or each line its own where the graphs' steps differ.
  using StepLookup = std::function<std::optional<qint64>(const QCPGraph*, double x)>;
  void setStepLookup(StepLookup lookup) { m_stepOf = std::move(lookup); }
  /// The last hover read-out (empty when the mouse is not over the plot).
  QString readout() const;
  void hideHover();
  /// The name the read-out gives `graph` when its legend text is shortened to fit (issue 36:
  /// the read-out said "pipe S1 grad …"). Without one it reads the graph's name.
  static void setFullName(QCPGraph* graph, const QString& name);
  static QString fullName(const QCPGraph* graph);
  /// The least name that tells `graph` apart ("pS3 fwd"): what the read-out shows in place of
  /// a full name it has no room for (issue 36: names were elided to nothing).
  static void setShortName(QCPGraph* graph, const QString& name);
  /// The read-out as drawn, per column (names shortened), and the pixels it covers in plot()
  /// (tests: every column inside the widget).
  QStringList shownReadoutColumns() const;
  QRect shownReadoutRect() const;
  /// Reads `graph` out even while it has no legend entry (one a full legend folds into
  /// "+N more"); by default the read-out lists the legend's graphs only.
  static void setReadOutUnlisted(QCPGraph* graph, bool on);

  /// Writes the plot as .png, .svg, .pdf or .csv by the file's suffix. Empty string on success.
  QString exportTo(const QString& path, int width = 0, int height = 0);

  /// The debiased exponential moving average the smoothing control stands for (as the live
  /// series smooth): NaN stays NaN and does not move the average.
  static std::vector<double> smoothed(const std::vector<double>& values, double weight);

 public Q_SLOTS:
  void exportWithDialog();
  /// Axis, grid, legend, title and read-out colours from the current palette, then a replot.
  void restyle();

 Q_SIGNALS:
  void smoothingChanged(double weight);
  void logYChanged(bool on);

 protected:
  void changeEvent(QEvent* event) override;
  bool eventFilter(QObject* watched, QEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  void buildControls();
  void applyYTicker();
  void placeTitleRow();
  void showMenu(const QPoint& pos);
  void updateHover(QMouseEvent* event);

  Features m_features;
  QString m_title;
  QCustomPlot* m_plot;
  QCPTextElement* m_heading;
  QWidget* m_corner = nullptr;
  QWidget* m_controls = nullptr;  // the title row's right side: smoothing, log y
  QSlider* m_smoothingSlider = nullptr;
  QLabel* m_smoothingValue = nullptr;
  QToolButton* m_logButton = nullptr;
  QAction* m_logAction;
  /// Sets the read-out's text on the top layer, unclipped; lines more than the plot's height
  /// holds go on in further columns to the right, so every line stays readable.
  void placeReadout(const QStringList& lines, const QStringList& shortNames);
  QFont m_readoutFont;  ///< the read-out's font at full size (placeReadout may draw it smaller)
  QCPItemText* m_hoverText = nullptr;        ///< the read-out's first column
  std::vector<QCPItemText*> m_hoverColumns;  ///< its further columns (many series, low plot)
  QString m_readout;                         ///< the whole read-out
  QCPItemStraightLine* m_hoverLine = nullptr;
  HoverLookup m_lookup;
  StepLookup m_stepOf;
  double m_smoothing = 0;
  bool m_logY = false;
  bool m_yBytes = false;
  bool m_timeAxis = false;
  QString m_xName;  // non-empty: setXQuantity's read-out name
};

}  // namespace stagewise::ui

Q_DECLARE_OPERATORS_FOR_FLAGS(stagewise::ui::PlotFrame::Features)
