#pragma once
// Saving a QCustomPlot as PNG, SVG or PDF, or its data as CSV, chosen by the file's suffix.

#include <QString>

class QCustomPlot;
class QWidget;

namespace stagewise::ui {

/// Writes `plot` to `path`; returns an empty string, or what went wrong. A .csv holds one row
/// per drawn point of each graph and bar set: series, x, y (the axes' labels head the columns).
QString exportPlot(QCustomPlot* plot, const QString& path, int width = 0, int height = 0,
                   const QString& title = {});
/// Asks for a file name (PNG/SVG/PDF/CSV) and exports; reports failure in a message box.
void exportPlotWithDialog(QCustomPlot* plot, const QString& title, QWidget* parent);

}  // namespace stagewise::ui
