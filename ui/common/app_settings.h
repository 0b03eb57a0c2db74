#pragma once
// The workbench's saved preferences (QSettings keys in one place).

#include <QByteArray>
#include <QList>
#include <QRect>
#include <QSize>
#include <QString>
#include <QStringList>

#include "common/theme.h"
#include "stagewise/study/search_views.h"

namespace stagewise::ui {

/// What the workbench reopens with (issue 36 §4, session restore): the experiment, the
/// workspace shown and the runs selected in Runs when it was last closed.
struct SessionState {
  QString specFile;       ///< the experiment's file; empty: it had none
  QString designJson;     ///< without a file: the design as experiment JSON (study included)
  int workspace = 0;      ///< Design, Train, Runs
  QList<qint64> runs;     ///< run ids selected in Runs
  int trainModes = 0;     ///< Train's mode set (the mode combo's data); 0: not saved
  QString storePath;      ///< the run store the session used (--db included); empty: none
  QString runsFilter;     ///< the Runs filter's text (plain text or a run query)
  qint64 runsStudy = -1;  ///< the study the Runs filter showed; -1: any
};

struct AppSettings {
  /// The store to open without --db or STAGEWISE_DB: the last session's (issue 36: one given
  /// with --db is kept), else the one chosen in File → Choose run store. Empty: not set.
  static QString storePath();
  static void setStorePath(const QString& path);
  static Theme theme();
  static void setTheme(Theme theme);
  static QByteArray windowGeometry();
  static QByteArray windowState();
  /// `screen`: the screen's available size the geometry was saved on (windowSizeForScreen).
  static void setWindow(const QByteArray& geometry, const QByteArray& state, QSize screen);
  static QSize windowScreen();  ///< invalid when not saved (an older version's settings)
  /// The window's client rectangle (QWidget::normalGeometry(), without the frame) and whether it
  /// was maximized, as it closed: restored with setGeometry(), which places the client area
  /// exactly (restoreGeometry() moved a window at the screen's top one title bar lower each
  /// start, issue 36). Invalid when not saved.
  static QRect windowRect();
  static bool windowMaximized();
  static void setWindowRect(const QRect& clientRect, bool maximized);
  static QString lastSpecDir();
  static void setLastSpecDir(const QString& dir);
  /// Where the last replication report was saved (default: the home folder).
  static QString lastReportDir();
  static void setLastReportDir(const QString& dir);
  /// Where the last trace or plot was exported (default: the documents folder, else home):
  /// never the working directory the app happened to start in.
  static QString lastExportDir();
  static void setLastExportDir(const QString& dir);
  /// `fileName` in lastExportDir(): what every export dialog proposes (issue 36: a dialog given
  /// a bare name opened in the working directory, the source checkout).
  static QString exportPath(const QString& fileName);
  /// Keeps the folder of a path an export dialog returned (nothing for an empty one, a
  /// cancelled dialog); returns `path`.
  static QString keepExportPath(const QString& path);
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
  /// The last session (empty when none was saved).
  static SessionState session();
  static void setSession(const SessionState& state);
  /// Train's plot settings beside the smoothing: the x axis (0: step, 1: wall time) and the
  /// log-scale loss.
  static int trainXAxis();
  static void setTrainXAxis(int axis);
  static bool trainLogLoss();
  static void setTrainLogLoss(bool on);
  static constexpr int kMaxRecent = 8;
};

/// The size to reopen a window at: a size saved on a screen clearly smaller than this one
/// (20 % or more in a dimension) grows in proportion (issue 36 §3: a window remembered from a
/// laptop stayed small on a large monitor); otherwise the saved size. Never beyond `screen`.
QSize windowSizeForScreen(QSize saved, QSize savedScreen, QSize screen);

/// Where to reopen a window saved at client rectangle `saved` on a screen whose available size
/// (less the frame) was `savedScreen`, now that it is `room` with `area` the screen's available
/// geometry: the size from windowSizeForScreen(), the saved position kept while the window
/// fits the area there, else moved the least to fit it.
QRect windowRectForScreen(QRect saved, QSize savedScreen, QSize room, QRect area);

}  // namespace stagewise::ui
