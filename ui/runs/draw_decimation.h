#pragma once
// The points of a stored series to draw over the visible x range of a plot: every one when they
// fit its pixel columns, else each column's extremes, so that zooming in draws what is stored
// (issue 36's walkthrough: the Runs overlay drew every 8th point however far one zoomed in).

#include <utility>
#include <vector>

namespace stagewise::ui {

/// The points of `stored` (x ascending; x times `factor` is the drawn x) to draw over the drawn
/// range [lo, hi] at `columns` pixel columns: all the points in it when there are at most four a
/// column, else, per column, its first, lowest, highest and last point in x order (the line
/// through them reaches every stored extreme). The nearest point outside each end is kept so the
/// line runs to the plot's edges. Non-finite values are left out. x stays on the storage axis.
std::vector<std::pair<double, double>> pointsToDraw(
    const std::vector<std::pair<double, double>>& stored, double factor, double lo, double hi,
    int columns);

}  // namespace stagewise::ui
