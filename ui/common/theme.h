#pragma once
// Light and dark palettes, and the colours stages keep everywhere (canvas, plots, bars).

#include <QColor>
#include <QString>

class QApplication;
class QCustomPlot;

namespace stagewise::ui {

enum class Theme { Light, Dark };

Theme themeFromString(const QString& name);  ///< "dark" -> Dark, anything else Light
QString toString(Theme theme);

/// Sets the Fusion style and the theme's palette on the application.
void applyTheme(QApplication& app, Theme theme);
/// The theme currently applied (read back from the application palette).
bool isDarkPalette();

/// A distinct colour for stage `index` (never repeats), readable on both palettes.
QColor stageColor(int index);
/// Axis, grid and background colours of a plot taken from the current palette.
void stylePlot(QCustomPlot* plot);

}  // namespace stagewise::ui
