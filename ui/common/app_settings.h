#pragma once
// The workbench's saved preferences (QSettings keys in one place).

#include <QByteArray>
#include <QString>

#include "common/theme.h"

namespace stagewise::ui {

struct AppSettings {
  static QString storePath();  ///< empty: not set
  static void setStorePath(const QString& path);
  static Theme theme();
  static void setTheme(Theme theme);
  static QByteArray windowGeometry();
  static QByteArray windowState();
  static void setWindow(const QByteArray& geometry, const QByteArray& state);
  static QString lastSpecDir();
  static void setLastSpecDir(const QString& dir);
  static double smoothing();
  static void setSmoothing(double weight);
  /// Processes a local run is spread over (Train workspace); 1: stages as threads here.
  static int processes();
  static void setProcesses(int processes);
};

}  // namespace stagewise::ui
