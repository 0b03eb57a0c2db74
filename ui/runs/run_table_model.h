#pragma once
// All runs of the store as a table, loaded lazily a page at a time on the store thread, so ten
// thousand runs scroll smoothly. Sorting and filtering happen in SQL.

#include <QAbstractTableModel>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "runs/store_executor.h"

namespace stagewise::ui {

class RunTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    kId,
    kName,
    kDate,
    kModel,
    kStages,
    kDevices,
    kMode,
    kStatus,
    kAccuracy,
    kSamplesPerSec,
    kDuration,
    kTags,
    kColumnCount
  };
  /// After the fixed columns, up to this many columns for the spec keys whose values differ
  /// among the listed runs (mode, train.lr, seed…), as experiment trackers do; an unused one has
  /// an empty header (the view hides it).
  static constexpr int kMaxKeyColumns = 6;
  static constexpr int kPageSize = 200;
  static constexpr int kRunIdRole = Qt::UserRole + 1;

  explicit RunTableModel(StoreExecutor* executor, QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;
  void sort(int column, Qt::SortOrder order) override;

  void setFilter(const storage::RunFilter& filter);
  const storage::RunFilter& filter() const { return m_filter; }
  /// The run on `row`, if its page is loaded.
  const storage::RunRecord* record(int row) const;
  int64_t runId(int row) const;
  /// The row showing run `id` among the loaded pages, or -1.
  int rowOf(int64_t id) const;
  /// Reloads the count and drops cached pages (the store changed).
  void reload();
  /// Re-reads the pages already loaded (runs still training change their numbers).
  void refreshLoadedPages();
  /// While frozen, a re-read page updates the runs it holds where they are, without moving
  /// rows (the pointer is over the list: a row must not slide away under it); unfreezing
  /// re-reads the pages in the sort order if anything arrived meanwhile.
  void setOrderFrozen(bool frozen);
  bool isOrderFrozen() const { return m_frozen; }
  /// Sets the tags and notes of run `id` where its page is loaded, at once (read from the store
  /// by the caller): a run selected again before the page re-read arrives shows them, not the
  /// page's older copy.
  void setRunMeta(int64_t id, const std::vector<std::string>& tags, const std::string& notes);
  /// Pages held in memory (each kPageSize runs).
  int loadedPageCount() const { return int(m_pages.size()); }
  /// True once the count and every page asked for so far have arrived.
  bool isSettled() const { return m_pendingPages == 0 && !m_countPending; }
  /// Loads every page of the current filter, then calls `ready` (at once if all are loaded):
  /// an export writes every listed run, not only those scrolled to.
  void loadAll(std::function<void()> ready);
  /// The spec keys shown after the fixed columns, in column order: those whose values differ
  /// among the loaded runs (a run without the key counts as a value), the name and checkpoint
  /// keys aside; ranked by keyRank(), then most distinct values first, then by key; at most
  /// kMaxKeyColumns.
  const std::vector<std::string>& keyColumns() const { return m_keyColumns; }
  /// How soon a differing spec key gets a column (lower first): what a researcher compares
  /// (mode, train.lr, train.seed, the partition, train.batch_size, pipeline.*, local.*,
  /// model.*), then the rest, then intervals and measurement bookkeeping (eval.*, probe.*…).
  static int keyRank(const std::string& key);
  /// What the Name column shows for runs named by a study ("<study> · <item>, <item>…"): per
  /// group of names with the same study part, the items they all share are left out, so the
  /// rows read apart when elided; names not in such a group are absent (shown whole). The
  /// whole name is the cell's tooltip.
  static std::map<int64_t, std::string> shortNames(
      const std::vector<std::pair<int64_t, std::string>>& names);

 Q_SIGNALS:
  void reloaded();
  void pageLoaded(int page);
  void loadFailed(const QString& message);

 private:
  void requestPage(int page) const;
  QVariant display(const storage::RunRecord& r, int column) const;
  /// Export CSV's value (kExportRole): the stored number, full precision; else the display.
  QVariant exported(const storage::RunRecord& r, int column) const;
  /// Recomputes keyColumns() from the loaded pages; announces a change of headers and cells.
  void updateKeyColumns();
  void checkSettled();
  void updateShortNames();
  QString shownName(const storage::RunRecord& r) const;
  /// The runs whose spec is already flattened (a page re-read skips reading them again).
  std::set<int64_t> flattenedIds() const;

  StoreExecutor* m_executor;
  storage::RunFilter m_filter;
  storage::RunOrder m_order;
  int m_count = 0;
  quint64 m_generation = 0;
  bool m_countPending = false;
  bool m_frozen = false;
  bool m_orderStale = false;  ///< a page was re-read while frozen (its order not applied)
  mutable int m_pendingPages = 0;
  mutable std::map<int, std::vector<storage::RunRecord>> m_pages;
  mutable std::map<int, bool> m_requested;
  std::vector<std::string> m_keyColumns;
  std::map<int64_t, std::string> m_shortNames;  ///< shortNames() of the loaded runs
  /// Each loaded run's spec as dotted key -> value text, by run id.
  std::map<int64_t, std::map<std::string, std::string>> m_flatSpecs;
  std::vector<std::function<void()>> m_whenAllLoaded;
};

}  // namespace stagewise::ui
