#pragma once
// The workbench's saved preferences (QSettings keys in one place).

#include <QByteArray>
#include <QString>
#include <QStringList>

#include "common/theme.h"
#include "stagewise/study/search_views.h"

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
  /// Where the last replication report was saved (default: the home folder).
  static QString lastReportDir();
  static void setLastReportDir(const QString& dir);
  static double smoothing();
  static void setSmoothing(double weight);
  /// Processes a local run is spread over (Train workspace); 1: stages as threads here.
  /// The spread shown around a mean in group tables and the overlay's bands.
  static study::Spread spread();
  static void setSpread(study::Spread spread);
  static int processes();
  static void setProcesses(int processes);
  /// Experiment files opened or saved, newest first (File → Open Recent), at most kMaxRecent;
  /// files that no longer exist are left out.
  static QStringList recentFiles();
  /// Puts `path` first in the recent files.
  static void addRecentFile(const QString& path);
  static void clearRecentFiles();
  /// Run queries saved in the Runs filter's Saved menu, in the order they were saved.
  static QStringList savedQueries();
  static void setSavedQueries(const QStringList& queries);
  static constexpr int kMaxRecent = 8;
};

}  // namespace stagewise::ui
