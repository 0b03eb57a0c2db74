#pragma once
// A report's plots as data, and their rendering to SVG with PLplot (Debian's libplplot, its
// built-in svg driver): the report command is Qt-free, so it cannot draw with QCustomPlot, and
// a plotting library of our own is what docs/architecture.md says not to write. The workbench
// shows the same SVG (rendered by QtSvg for the in-app view and the PDF).

#include <string>
#include <vector>

namespace stagewise::report {

/// One series of a plot. `lo`/`hi` (same length as `y`, or empty) draw a band around the line;
/// bar plots read `x` as the category index (0, 1, ...) and draw `y` as bars, one group of bars
/// per category with one bar per series.
struct PlotSeries {
  std::string label;
  std::vector<double> x;
  std::vector<double> y;
  std::vector<double> lo;
  std::vector<double> hi;
  enum class Style { Line, Points, LinePoints, Bars } style = Style::Line;
  int color = -1;  ///< palette index; -1: the series' position in the plot
};

struct Plot {
  std::string title;
  std::string xLabel;
  std::string yLabel;
  bool logX = false;
  bool logY = false;
  std::vector<PlotSeries> series;
  std::vector<std::string> categories;  ///< bar plots: the x axis' category names
  /// Vertical marker lines (e.g. the machine's core count) with their labels.
  std::vector<double> markers;
  std::vector<std::string> markerLabels;
  /// Fixed y range (both set and lo < hi); otherwise fitted to the data.
  double yMin = 0, yMax = 0;
};

/// The plot as a standalone SVG document (no external reference: the XML prolog and DOCTYPE
/// are left out so it can be inlined in HTML). Width and height in SVG user units. Throws
/// std::runtime_error when PLplot cannot draw (no svg driver). Thread-safe (PLplot is not: the
/// calls are serialised).
std::string renderSvg(const Plot& plot, int width = 640, int height = 400);

/// The palette's colours as "#rrggbb", for legends drawn outside the plot (HTML tables).
std::string paletteColor(int index);

}  // namespace stagewise::report
