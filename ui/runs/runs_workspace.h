#pragma once
// The Runs workspace: every run in the store in a sortable, filterable table; compare the
// selected ones; edit notes and tags; delete; export CSV; open a run's spec in Design. Runs
// written by another process appear within two seconds.

#include <QTimer>
#include <QWidget>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "runs/resume_target.h"
#include "runs/store_executor.h"
#include "stagewise/engine/run.h"
#include "stagewise/engine/spec.h"

class QAction;
class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QScrollArea;
class QTableView;
class QSplitter;
class QTabWidget;
class QToolButton;

namespace stagewise::ui {

class ComparePanel;
class RunTableColumns;
class RunTableModel;
class StudyGroupTable;

class RunsWorkspace : public QWidget {
  Q_OBJECT
 public:
  explicit RunsWorkspace(std::shared_ptr<storage::RunStore> store, QWidget* parent = nullptr);
  ~RunsWorkspace() override;

  RunTableModel* model() const { return m_model; }
  QTableView* table() const { return m_table; }
  /// The run list's "Export CSV…" (also in its right-click menu): every listed run, the columns
  /// shown.
  QAction* exportTableAction() const { return m_exportTable; }
  ComparePanel* comparePanel() const { return m_compare; }
  /// The chosen study's grouped table (the Groups tab beside the run list).
  StudyGroupTable* groupTable() const { return m_groups; }
  QTabWidget* listTabs() const { return m_listTabs; }
  /// The filter: plain text, or a run query (docs/query.md). A query that does not parse is
  /// outlined, its tooltip says what and at which column, and the table keeps the last good one.
  QLineEdit* searchEdit() const { return m_search; }
  /// The saved queries' menu beside the filter.
  QToolButton* savedQueriesButton() const { return m_saved; }
  QComboBox* statusCombo() const { return m_status; }
  QComboBox* modeCombo() const { return m_mode; }
  /// "Any study", then every study in the store (item data: its id), refreshed as it changes.
  QComboBox* studyCombo() const { return m_study; }
  QPushButton* openButton() const { return m_open; }
  QPushButton* deleteButton() const { return m_delete; }
  QPushButton* exportButton() const { return m_export; }
  QPushButton* resumeButton() const { return m_resume; }
  /// Trains the selected run's spec again with its change history (emits replayRequested).
  QPushButton* runAgainButton() const { return m_runAgain; }
  /// The selected run's change and partition history (empty when it changed nothing).
  QLabel* historyLabel() const { return m_history; }
  QPushButton* reportButton() const { return m_report; }
  /// Offer "Resume" (the engine can continue runs from checkpoints).
  void setResumeAvailable(bool available);
  QPushButton* saveMetaButton() const { return m_saveMeta; }
  QLineEdit* tagsEdit() const { return m_tags; }
  QPlainTextEdit* notesEdit() const { return m_notes; }
  StoreExecutor* executor() const { return m_executor.get(); }
  /// The runs the panels (compare, tags, notes) show, sorted by id. Every action (delete, tag,
  /// note, export, resume, open) acts on these. The table's highlight follows them by id through
  /// refreshes, re-sorts and pages, so it never moves to another run under the user.
  std::vector<int64_t> selectedRunIds() const { return m_shown; }
  /// Selects these runs (session restore): at once if the list holds them, else once it has
  /// loaded; ids no longer in the store are left out.
  void selectRuns(const std::vector<int64_t>& ids);
  /// The filter's text and the study it shows (-1: any), as the session keeps them.
  QString filterText() const;
  qint64 studyFilter() const;
  /// Puts the filter back as the session left it (issue 36); a study not listed yet is chosen
  /// once the studies have loaded.
  void restoreFilter(const QString& text, qint64 study);
  /// The selected run's buttons as the window's actions (Export CSV…, Save notes and tags,
  /// Resume, Run again), for the command palette: enabled as the buttons are now.
  void updatePaletteActions();
  /// True while the tags or notes have edits not yet saved.
  bool hasUnsavedMeta() const { return m_metaDirty; }
  /// Asked when a field edited here (`field`: "tags" or "notes") was also changed outside the
  /// workbench since it was shown: true writes the user's value, false keeps the stored one
  /// (then shown). By default a question box.
  using ConflictChooser =
      std::function<bool(const QString& field, const QString& stored, const QString& mine)>;
  void setConflictChooser(ConflictChooser chooser) { m_chooseConflict = std::move(chooser); }
  /// How often the store is checked for runs written elsewhere (default 2 s).
  void setPollInterval(int ms) { m_poll.setInterval(ms); }
  /// How long a click on the list keeps its order still (default 1 s), even once the pointer
  /// has left it.
  void setClickHold(int ms) { m_clickHold.setInterval(ms); }

 public Q_SLOTS:
  void openSelectedInDesign();
  void deleteSelected(bool confirm = true);
  /// Exports the selected runs (all shown, if none is selected) as CSV.
  void exportCsv(const QString& path = {});
  void saveNotesAndTags();
  void poll();
  /// Continues the selected run from its newest checkpoint (emits resumeRequested).
  void resumeSelected();
  /// Continues from a checkpoint folder, in the stored run that wrote it if there is one.
  void resumeCheckpoint(const QString& path);
  /// Trains the selected run again with the changes it recorded, at the same steps.
  void runAgainSelected();

 Q_SIGNALS:
  void openSpecRequested(const stagewise::engine::ExperimentSpec& spec, const QString& title);
  void message(const QString& text);
  void resumeRequested(const stagewise::ui::ResumeTarget& target);
  /// Run again: `spec` with `changes` at their steps (as `stagewise-cli train --replay`).
  void replayRequested(const stagewise::engine::ExperimentSpec& spec,
                       const std::vector<stagewise::engine::RunChange>& changes,
                       const QString& title);
  /// The Replication report… button: check the paper's findings on the designed experiment.
  void reportRequested();

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;
  void showEvent(QShowEvent* event) override;

 private:
  /// The list's order stays still while the pointer is over it or just after a click (a live
  /// run's numbers would move rows under the mouse); the store's changes wait, then apply.
  void updateOrderFreeze();
  /// With the Groups tab shown, gives the list pane the tab's preferredHeight() (the overlay below
  /// keeps its least height); the user's larger split is kept.
  void fitGroupsPane();
  void applyFilter();
  /// Drops the shown runs that `filter` hides (once the store has answered which pass it).
  void dropFilteredOut(const storage::RunFilter& filter);
  /// The user changed the table's selection: the panels follow it.
  void selectionChanged();
  /// Shows m_shown in the panels.
  void showSelected();
  /// Highlights the rows that hold m_shown (after the model's rows moved or reloaded).
  void restoreSelection();
  std::vector<int64_t> tableSelection() const;
  QString describeRuns(const std::vector<int64_t>& ids) const;
  /// Saves edited tags and notes of the run they belong to (before the panels move on).
  void saveMetaIfEdited();
  void takeBaseline();
  /// Shows tags or notes changed outside the workbench (the CLI) in the editors that hold
  /// them unedited, and in the table.
  void checkMetaOutside();
  /// Asks (m_chooseConflict) about a field changed on both sides; writes or shows the result.
  void resolveConflict(int64_t id, bool tags, const std::vector<std::string>& storedTags,
                       const std::string& storedNotes, const std::vector<std::string>& mineTags,
                       const std::string& mineNotes);
  /// Re-reads the studies for the study filter; reloads the table when the chosen one changed.
  void loadStudies();
  void updateResumeButton(int64_t id);
  void updateHistory(int64_t id);

  std::unique_ptr<StoreExecutor> m_executor;
  RunTableModel* m_model;
  QTableView* m_table;
  RunTableColumns* m_columns;
  QAction* m_exportTable = nullptr;
  ComparePanel* m_compare;
  StudyGroupTable* m_groups;
  QTabWidget* m_listTabs;
  QSplitter* m_split;  ///< the list (runs or groups) above, compare and details below
  QLineEdit* m_search;
  QToolButton* m_saved;
  QComboBox* m_status;
  QComboBox* m_mode;
  QComboBox* m_study;
  QLabel* m_count;
  QPushButton* m_open;
  QPushButton* m_delete;
  QPushButton* m_export;
  QPushButton* m_report;
  QLineEdit* m_tags;
  QPlainTextEdit* m_notes;
  QPushButton* m_saveMeta;
  QPushButton* m_resume;
  QPushButton* m_runAgain;
  QLabel* m_history;
  QScrollArea* m_historyScroll;
  quint64 m_historyTicket = 0;
  quint64 m_filterTicket = 0;
  bool m_resumeAvailable = false;
  quint64 m_resumeTicket = 0;
  QTimer m_poll;
  QTimer m_filterDelay;
  QTimer m_clickHold;              ///< running: a click on the list holds its order
  bool m_pointerInList = false;    ///< the pointer is over the list's rows
  bool m_reloadDeferred = false;   ///< the store gained or lost runs while the order was held
  std::vector<int64_t> m_shown;                 ///< what the panels show (sorted ids)
  std::map<int64_t, std::string> m_shownNames;  ///< their names, for messages
  bool m_restoring = false;                     ///< selection changes made by restoreSelection()
  std::vector<int64_t> m_pendingSelection;      ///< selectRuns() before the list loaded
  int64_t m_metaRun = -1;                       ///< the run the tags and notes editors hold
  bool m_metaDirty = false;
  std::vector<std::string> m_shownTags;  ///< the stored tags and notes the editors were given
  std::string m_shownNotes;
  ConflictChooser m_chooseConflict;
  std::tuple<int64_t, int64_t, int64_t> m_signature{-1, -1, -1};
  std::map<int64_t, QString> m_studyLabels;  ///< what the study filter lists, by id
  qint64 m_pendingStudy = -1;                ///< restoreFilter()'s study, until it is listed
  std::vector<std::pair<QPushButton*, QAction*>> m_paletteActions;
};

}  // namespace stagewise::ui
