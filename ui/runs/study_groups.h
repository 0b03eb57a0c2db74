#pragma once
// The grouped table of a study (Runs → Groups): one row per group of runs equal in the chosen
// keys (by default every varied key, so the seeds are what a group pools), with n, mean ± sample
// std of test accuracy, samples/s, wall time and training FLOPs, time-to-target (over the runs
// that reached it, "k of n"), and whether the group is on the front; or one row per run. It is
// `stagewise-cli study show` in the workbench, from the same code (stagewise_study_results).
// A search shows its tuned comparison beside the groups: per point of the vary grid, the
// settings its search chose, the validation value they were chosen on, and the tuned runs' test
// accuracy as mean ± 95 % CI (Student t) over the tuned seeds; below both, the study views
// (parallel coordinates, best so far, slices, importance). The groups' spread is std, standard error, 95 % CI or
// min–max, as chosen (kept in the settings, and the overlay's band follows it).

#include <QWidget>
#include <optional>
#include <set>

#include "runs/store_executor.h"
#include "stagewise/study/results.h"

class QComboBox;
class QDoubleSpinBox;
class QHBoxLayout;
class QLabel;
class QTableWidget;
class QToolButton;
class QSplitter;

namespace stagewise::ui {

class StudyViews;

class StudyGroupTable : public QWidget {
  Q_OBJECT
 public:
  explicit StudyGroupTable(StoreExecutor* executor, QWidget* parent = nullptr);

  /// Shows the study `id` (<= 0: none).
  void setStudy(int64_t id);
  /// Groups only the study's runs this filter admits (the Runs filter: text, query, status,
  /// mode; its study is ignored), as the run list shows them; the note says "n of N".
  void setRunFilter(const storage::RunFilter& filter);
  /// The completed runs grouped, and of how many the study has (equal when nothing is
  /// filtered out).
  int groupedRuns() const;
  int studyRuns() const { return m_studyRuns; }
  int64_t study() const { return m_study; }

  /// How rows are made: by the chosen keys (every key but the seed by default), or one per run.
  QComboBox* groupByCombo() const { return m_groupBy; }
  /// The keys to group by (checkable actions of the Keys menu).
  QToolButton* keysButton() const { return m_keys; }
  /// Checks exactly these keys (the others are pooled, like the seeds).
  void setGroupKeys(const std::vector<std::string>& keys);
  QDoubleSpinBox* targetSpin() const { return m_target; }
  QTableWidget* table() const { return m_table; }
  QLabel* note() const { return m_note; }
  /// The spread shown after ± (std, standard error, 95 % CI, min–max).
  QComboBox* spreadCombo() const { return m_spread; }
  /// A search's tuned comparison, one row per vary point (hidden for a grid study).
  QTableWidget* tunedTable() const { return m_tunedTable; }
  QLabel* tunedNote() const { return m_tunedNote; }
  /// The search's study views (hidden for a grid study).
  StudyViews* views() const { return m_views; }
  /// The study as loaded (empty before).
  const std::optional<study::StudyResults>& results() const { return m_results; }
  /// The groups as shown (empty before the study has loaded, and when rows are runs).
  const std::vector<study::Group>& groups() const { return m_groups; }
  bool isLoaded() const { return m_loadedTicket == m_ticket; }
  /// The height this tab needs to show `rows` rows of the groups table (a grid study's tab:
  /// the bar, the header, the rows); the Runs workspace gives it at least 8 (issue 36).
  int heightForRows(int rows) const;
  /// A row of the tables: a text line and a little.
  int rowHeight() const;
  /// The height the Runs workspace gives this tab: a grid study's 8 rows (heightForRows), or a
  /// search's tuned comparison at its least height and 6 rows of its groups below.
  int preferredHeight() const;

 public Q_SLOTS:
  void reload();

 Q_SIGNALS:
  void loaded();

 private:
  void fill();
  void fillTuned();
  std::vector<std::string> chosenKeys() const;

  StoreExecutor* m_executor;
  int64_t m_study = 0;
  storage::RunFilter m_filter;                  ///< study unset
  bool m_filtered = false;                      ///< m_filter admits fewer than all runs
  int m_studyRuns = 0;                          ///< the study's completed runs before the filter
  std::optional<std::set<int64_t>> m_admitted;  ///< the runs the filter admits (filtered)
  quint64 m_ticket = 0;
  quint64 m_loadedTicket = 0;
  std::optional<study::StudyResults> m_results;
  std::vector<study::Group> m_groups;
  QComboBox* m_groupBy;
  QToolButton* m_keys;
  QDoubleSpinBox* m_target;
  QLabel* m_note;
  QTableWidget* m_table;
  QHBoxLayout* m_groupsBar;  ///< Group by, Keys, target, spread and the note
  QComboBox* m_spread;
  QWidget* m_tunedBox;
  QWidget* m_groupsBox;  ///< the bar and the groups table (the tuned comparison beside it)
  QLabel* m_tunedNote;
  QTableWidget* m_tunedTable;
  StudyViews* m_views;
};

}  // namespace stagewise::ui
