#pragma once
// The main window assembles the three workspaces (Design, Train, Runs), the menus and
// shortcuts, the status bar and the saved window state. It implements none of them.

#include <QMainWindow>
#include <QPointer>
#include <functional>
#include <memory>

#include "common/services.h"

class QAction;
class QMenu;
class QMimeData;
class QLabel;
class QTabWidget;
class QTableView;

namespace stagewise::storage {
class RunStore;
}

namespace stagewise::ui {

class CommandPalette;
class DesignDocument;
class DesignWorkspace;
class EngineController;
class ReportView;
class RunsWorkspace;
class TrainWorkspace;
struct ResumeTarget;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  /// `store` may be null (no run store: the Runs workspace says so).
  MainWindow(EngineServices services, std::shared_ptr<storage::RunStore> store,
             QWidget* parent = nullptr);
  ~MainWindow() override;

  enum Workspace { kDesign = 0, kTrain = 1, kRuns = 2 };
  void showWorkspace(Workspace workspace);
  Workspace currentWorkspace() const;

  DesignDocument* document() const { return m_doc; }
  DesignWorkspace* designWorkspace() const { return m_design; }
  TrainWorkspace* trainWorkspace() const { return m_train; }
  RunsWorkspace* runsWorkspace() const { return m_runs; }
  EngineController* controller() const { return m_controller; }
  QAction* runAction() const { return m_runAction; }
  QAction* stopAction() const { return m_stopAction; }
  QAction* studyAction() const { return m_studyAction; }
  QAction* reportAction() const { return m_reportAction; }
  /// The last replication report shown (null before one, or once closed).
  ReportView* reportView() const;
  /// File › Export: every export the workbench has (the Timeline's trace, a plot, the run list,
  /// the Groups, tuned and spec-difference tables), so the menus and the palette list them.
  QMenu* exportMenu() const { return m_exportMenu; }
  QAction* exportTraceAction() const { return m_exportTrace; }
  QAction* exportPlotAction() const { return m_exportPlot; }
  /// What the export actions ask, answered in place of their dialogs (tests): the file to
  /// write (empty: cancelled) and which of the listed plot titles (-1: cancelled).
  struct ExportAnswers {
    std::function<QString(const QString& caption, const QString& proposed)> savePath;
    std::function<int(const QStringList& titles)> plot;
  };
  void setExportAnswers(ExportAnswers answers) { m_exportAnswers = std::move(answers); }
  /// The plots of the workspace shown, by title, as "Export a plot…" lists them.
  QStringList exportablePlots() const;

 public Q_SLOTS:
  void startRun();
  /// Queues the study designed in Design (Run → Run study).
  void startStudy();
  /// Runs → Replication report…: asks quick or full, then starts it.
  void askReport();
  /// Runs the replication report's suite for the designed experiment in the study queue; the
  /// report opens when its findings are judged. False (with the reason shown) when it cannot.
  bool startReport(bool quick);
  /// The report's adaptation line when the design has unsaved edits (empty when none).
  QStringList unsavedEditsNote() const;
  /// Continues a run from a checkpoint folder (asks for it when `path` is empty).
  void resumeFromCheckpoint(const QString& path = {});
  void about();
  void showShortcuts();
  /// View → Command palette (Ctrl+Shift+P): every enabled action, found by fuzzy search.
  void showCommandPalette();
  void openGuide();

 public:
  /// Every menu shortcut with what it does (Help → Keyboard shortcuts), as HTML.
  QString shortcutsText() const;
  /// The user guide's file, or empty when none is found.
  static QString userGuidePath();
  /// The experiment file a drag carries (one local .json file), or empty.
  static QString droppedSpec(const QMimeData* mime);
  /// Opens the experiment a drop carries (after the drop returns); false if it carries none.
  bool openDropped(const QMimeData* mime);
  QMenu* recentMenu() const { return m_recentMenu; }
 public Q_SLOTS:
  /// Picks the run store file used from the next start (saved in the settings).
  void chooseStore();

 protected:
  void closeEvent(QCloseEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  void buildMenus();
  void buildExportMenu(QMenu* file);
  /// Enables each export that has something to write now (before the menu or palette shows).
  void updateExportActions();
  void exportTimelineTrace();
  void exportPlotOfWorkspace();
  /// Writes `table` as CSV to a file asked for (proposing `baseName`.csv).
  void exportTableCsv(const QTableView* table, const QString& baseName);
  /// The file to export to: ExportAnswers::savePath, else a save dialog (its folder remembered).
  QString askExportPath(const QString& caption, const QString& proposed, const QString& filter);
  void updateRecentMenu();
  /// The screen's available size less the window frame.
  QSize availableSize() const;
  /// Reopens the window where and as large as it closed (grown on a clearly larger screen).
  void restoreWindow();
  /// Saves what restoreWindow() reads (the window is closing).
  void saveWindow();
  /// Shrinks the window to the screen and brings it back onto it.
  void fitToScreen();
  /// Reopens the last session's experiment, workspace and selected runs (the default
  /// experiment, with a status message, when its file is gone or its JSON does not read).
  void restoreSession();
  /// Saves what restoreSession() reopens (the window is closing).
  void saveSession();
  /// Saves tags and notes edited in Runs and not saved yet (the window is closing).
  void saveRunsMeta();
  void updateTitle();
  void updateRunActions();
  void setTheme(bool dark);
  /// How a close during a run was answered.
  enum class QuitAnswer { Cancel, StopAndQuit, SaveStopAndQuit };
  /// One question for everything a close during a run needs: stop the run, and (when the
  /// design has unsaved changes) whether to save it.
  QuitAnswer askStopAndQuit(bool designModified);
  void startResume(const ResumeTarget& target);

  EngineServices m_services;
  std::shared_ptr<storage::RunStore> m_store;
  QString m_chosenStore;  ///< chosen in File → Choose run store during this session
  DesignDocument* m_doc;
  EngineController* m_controller;
  QTabWidget* m_tabs;
  DesignWorkspace* m_design;
  TrainWorkspace* m_train;
  RunsWorkspace* m_runs = nullptr;
  QAction* m_runAction = nullptr;
  QAction* m_pauseAction = nullptr;
  QAction* m_stopAction = nullptr;
  QAction* m_studyAction = nullptr;
  QAction* m_resumeAction = nullptr;
  QAction* m_reportAction = nullptr;
  QPointer<ReportView> m_reportView;
  QMenu* m_recentMenu = nullptr;
  QMenu* m_exportMenu = nullptr;
  QAction* m_exportTrace = nullptr;
  QAction* m_exportPlot = nullptr;
  QAction* m_exportGroups = nullptr;
  QAction* m_exportTuned = nullptr;
  QAction* m_exportDiff = nullptr;
  ExportAnswers m_exportAnswers;
  CommandPalette* m_palette = nullptr;
  QLabel* m_engineLabel;
  bool m_quitWhenStopped = false;  // closing waits for the run to stop and be saved
};

}  // namespace stagewise::ui
