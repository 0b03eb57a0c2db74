#include "runs/run_table_model.h"

#include <cmath>

#include <QColor>
#include <QDateTime>

#include <algorithm>
#include <set>

#include "common/format.h"
#include "common/table_export.h"
#include "stagewise/storage/spec_diff.h"
#include "stagewise/study/results.h"

namespace stagewise::ui {

using storage::RunColumn;
using storage::RunRecord;

RunTableModel::RunTableModel(StoreExecutor* executor, QObject* parent)
    : QAbstractTableModel(parent), m_executor(executor) {
  reload();
}

int RunTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : m_count;
}

int RunTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount + kMaxKeyColumns;
}

QVariant RunTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return {};
  if (section >= kColumnCount) {
    const size_t key = size_t(section - kColumnCount);
    if (key >= m_keyColumns.size())
      return role == Qt::DisplayRole ? QVariant(QString()) : QVariant();
    if (role == Qt::DisplayRole) return QString::fromStdString(m_keyColumns[key]);
    if (role == Qt::ToolTipRole)
      return tr("Spec key %1: its value differs among the listed runs (not sortable)")
          .arg(QString::fromStdString(m_keyColumns[key]));
    return {};
  }
  static const char* const kNames[] = {"#",         "Name",      "Date",     "Model",
                                       "Stages",    "Devices",   "Mode",     "Status",
                                       "Test acc.", "Samples/s", "Duration", "Tags"};
  if (role == Qt::DisplayRole && section >= 0 && section < kColumnCount) return tr(kNames[section]);
  if (role == kExportRole && section == kSamplesPerSec) return tr("Samples/s");
  if (role == kExportRole && section == kDuration) return tr("Duration (s)");
  if (role == Qt::ToolTipRole && (section == kDevices || section == kTags))
    return tr("Not sortable");
  if (role == Qt::ToolTipRole && section == kId)
    return tr("The run's id, as in the legends, the bars and the spec diff (#12)");
  if (role == Qt::ToolTipRole && section == kSamplesPerSec)
    return tr(
        "Training samples per second after the warm-up; for a run still training, its "
        "latest measurement");
  return {};
}

void RunTableModel::reload() {
  const quint64 generation = ++m_generation;
  m_countPending = true;
  const storage::RunFilter filter = m_filter;
  m_executor->post<int64_t>(
      this,
      [filter](storage::RunReader& reader, storage::RunStore&) { return reader.countRuns(filter); },
      [this, generation](int64_t count) {
        if (generation != m_generation) return;
        beginResetModel();
        m_count = int(count);
        m_pages.clear();
        m_requested.clear();
        m_pendingPages = 0;
        m_countPending = false;
        endResetModel();
        updateKeyColumns();
        Q_EMIT reloaded();
        checkSettled();
      },
      [this](const QString& message) {
        m_countPending = false;
        Q_EMIT loadFailed(message);
        checkSettled();
      });
}

void RunTableModel::loadAll(std::function<void()> ready) {
  m_whenAllLoaded.push_back(std::move(ready));
  if (!m_countPending)
    for (int page = 0; page * kPageSize < m_count; ++page) requestPage(page);
  checkSettled();
}

void RunTableModel::checkSettled() {
  if (m_whenAllLoaded.empty() || !isSettled()) return;
  // The count arrived after loadAll was asked: ask for the pages it now knows of.
  bool asked = false;
  for (int page = 0; page * kPageSize < m_count; ++page)
    if (!m_requested[page]) requestPage(page), asked = true;
  if (asked) return;
  auto callbacks = std::move(m_whenAllLoaded);
  m_whenAllLoaded.clear();
  for (auto& ready : callbacks) ready();
}

std::set<int64_t> RunTableModel::flattenedIds() const {
  std::set<int64_t> ids;
  for (const auto& [id, flat] : m_flatSpecs)
    if (!flat.empty()) ids.insert(id);
  return ids;
}

// Whether the run of spec `flat` (flattened, mode "local" when absent) reads `key`.
static bool readsKey(const std::map<std::string, std::string>& flat, const std::string& key) {
  const auto mode = flat.find("mode");
  return study::modeReadsKey(mode != flat.end() ? mode->second : std::string("local"), key);
}

void RunTableModel::updateKeyColumns() {
  std::set<int64_t> loaded;  // the runs of the loaded pages (their specs came with them)
  for (const auto& [page, rows] : m_pages)
    for (const auto& r : rows) loaded.insert(r.id);
  for (auto it = m_flatSpecs.begin(); it != m_flatSpecs.end();)
    it = loaded.count(it->first) ? std::next(it) : m_flatSpecs.erase(it);
  // Distinct values per key over the loaded runs; a run without the key adds "absent".
  std::map<std::string, std::set<std::string>> values;
  for (const auto& [id, flat] : m_flatSpecs)
    for (const auto& [key, value] : flat) values[key].insert(value);
  std::vector<std::pair<size_t, std::string>> differing;
  for (auto& [key, set] : values) {
    if (key == "name" || key.rfind("checkpoint.", 0) == 0) continue;
    // A key the fixed columns show (Mode, Model) is not repeated (issue 36: `mode` twice).
    if (key == "mode" || key == "model.kind") continue;
    size_t count = set.size();
    // A run lacking the key counts as one more value, unless its mode does not read the key.
    for (const auto& [id, flat] : m_flatSpecs)
      if (!flat.count(key) && readsKey(flat, key)) {
        ++count;
        break;
      }
    if (count > 1) differing.emplace_back(count, key);
  }
  // issue 36: the columns a researcher compares first (train.lr before eval.interval).
  std::stable_sort(differing.begin(), differing.end(), [](const auto& a, const auto& b) {
    const int ra = keyRank(a.second), rb = keyRank(b.second);
    return ra != rb ? ra < rb : a.first > b.first;
  });
  std::vector<std::string> keys;
  for (const auto& [count, key] : differing)
    if (keys.size() < size_t(kMaxKeyColumns)) keys.push_back(key);
  const bool changed = keys != m_keyColumns;
  m_keyColumns = std::move(keys);
  updateShortNames();
  if (changed)
    Q_EMIT headerDataChanged(Qt::Horizontal, kColumnCount, kColumnCount + kMaxKeyColumns - 1);
  if (m_count > 0)
    Q_EMIT dataChanged(index(0, kColumnCount),
                       index(m_count - 1, kColumnCount + kMaxKeyColumns - 1));
}

std::map<int64_t, std::string> RunTableModel::shortNames(
    const std::vector<std::pair<int64_t, std::string>>& names) {
  // A study names its runs "<study> · <item>, <item>, …": group the names by what precedes
  // " · " and drop the items every name of the group has (issue 36: four rows of a report read
  // "report 2026-12-…tches=1, seed 1", the part that told them apart elided).
  static const std::string kSeparator = " · ";
  struct Split {
    int64_t id;
    std::string head;
    std::vector<std::string> items;
  };
  std::map<std::string, std::vector<Split>> groups;
  for (const auto& [id, name] : names) {
    const size_t at = name.find(kSeparator);
    if (at == std::string::npos) continue;
    Split split{id, name.substr(0, at), {}};
    std::string rest = name.substr(at + kSeparator.size());
    for (size_t start = 0;;) {
      const size_t comma = rest.find(", ", start);
      split.items.push_back(rest.substr(start, comma - start));
      if (comma == std::string::npos) break;
      start = comma + 2;
    }
    groups[split.head].push_back(std::move(split));
  }
  std::map<int64_t, std::string> out;
  for (const auto& [head, members] : groups) {
    if (members.size() < 2) continue;
    std::set<std::string> common(members.front().items.begin(), members.front().items.end());
    for (const auto& m : members) {
      const std::set<std::string> mine(m.items.begin(), m.items.end());
      std::erase_if(common, [&mine](const std::string& item) { return !mine.count(item); });
    }
    if (common.empty()) continue;
    for (const auto& m : members) {
      std::string kept;
      for (const auto& item : m.items)
        if (!common.count(item)) kept += (kept.empty() ? "" : ", ") + item;
      if (!kept.empty()) out[m.id] = head + kSeparator + kept;
    }
  }
  return out;
}

void RunTableModel::updateShortNames() {
  std::vector<std::pair<int64_t, std::string>> names;
  for (const auto& [page, rows] : m_pages)
    for (const auto& r : rows) names.emplace_back(r.id, r.name);
  auto fresh = shortNames(names);
  if (fresh == m_shortNames) return;
  m_shortNames = std::move(fresh);
  if (m_count > 0) Q_EMIT dataChanged(index(0, kName), index(m_count - 1, kName));
}

QString RunTableModel::shownName(const storage::RunRecord& r) const {
  if (r.name.empty()) return QStringLiteral("(unnamed)");
  const auto it = m_shortNames.find(r.id);
  return QString::fromStdString(it != m_shortNames.end() ? it->second : r.name);
}

int RunTableModel::keyRank(const std::string& key) {
  const auto starts = [&key](const char* prefix) { return key.rfind(prefix, 0) == 0; };
  // Intervals and measurement bookkeeping say how a run was watched, not what it trained.
  if (key.find("interval") != std::string::npos || starts("eval.") || starts("probe.") ||
      starts("measure.") || starts("timeline.") || starts("checkpoint.") || key == "name")
    return 9;
  if (key == "mode") return 0;
  if (key == "train.lr") return 1;
  if (key == "train.seed") return 2;
  if (starts("partition.")) return 3;
  if (key == "train.batch_size") return 4;
  if (starts("pipeline.")) return 5;
  if (starts("local.")) return 6;
  if (starts("model.")) return 7;
  return 8;
}

void RunTableModel::setFilter(const storage::RunFilter& filter) {
  m_filter = filter;
  reload();
}

void RunTableModel::sort(int column, Qt::SortOrder order) {
  static const std::map<int, RunColumn> kSortable = {{kId, RunColumn::Id},
                                                     {kName, RunColumn::Name},
                                                     {kDate, RunColumn::CreatedAt},
                                                     {kModel, RunColumn::ModelKind},
                                                     {kStages, RunColumn::StageCount},
                                                     {kMode, RunColumn::Mode},
                                                     {kStatus, RunColumn::Status},
                                                     {kAccuracy, RunColumn::TestAccuracy},
                                                     {kSamplesPerSec, RunColumn::SamplesPerSec},
                                                     {kDuration, RunColumn::WallSeconds}};
  auto it = kSortable.find(column);
  if (it == kSortable.end()) return;
  m_order = {it->second, order == Qt::DescendingOrder};
  reload();
}

void RunTableModel::refreshLoadedPages() {
  std::vector<int> pages;
  for (const auto& [page, rows] : m_pages) pages.push_back(page);
  for (int page : pages) {
    m_requested[page] = false;
    requestPage(page);
  }
}

void RunTableModel::setOrderFrozen(bool frozen) {
  if (frozen == m_frozen) return;
  m_frozen = frozen;
  if (!frozen && m_orderStale) {
    m_orderStale = false;
    refreshLoadedPages();  // now the rows may take their sorted places
  }
}

void RunTableModel::setRunMeta(int64_t id, const std::vector<std::string>& tags,
                               const std::string& notes) {
  for (auto& [page, rows] : m_pages)
    for (size_t i = 0; i < rows.size(); ++i)
      if (rows[i].id == id) {
        rows[i].tags = tags;
        rows[i].notes = notes;
        const int row = page * kPageSize + int(i);
        Q_EMIT dataChanged(index(row, 0), index(row, kColumnCount - 1));
        return;
      }
}

void RunTableModel::requestPage(int page) const {
  if (m_requested[page]) return;
  m_requested[page] = true;
  ++m_pendingPages;
  auto* self = const_cast<RunTableModel*>(this);
  const quint64 generation = m_generation;
  const storage::RunFilter filter = m_filter;
  const storage::RunOrder order = m_order;
  struct Page {
    std::vector<RunRecord> rows;
    std::vector<std::map<std::string, std::string>> flat;  // each row's spec, flattened
  };
  m_executor->post<Page>(
      self,
      [filter, order, page, known = flattenedIds()](storage::RunReader& reader,
                                                    storage::RunStore&) {
        Page out;
        out.rows = reader.listRuns(filter, order, kPageSize, page * kPageSize);
        // The list leaves the spec out; the key columns read it here, off the GUI thread.
        for (const auto& r : out.rows) {
          auto& flat = out.flat.emplace_back();
          if (known.count(r.id)) continue;  // a run's spec does not change: kept from before
          const auto full = reader.run(r.id);
          if (!full) continue;
          try {
            for (auto& [key, value] : storage::flattenJson(full->specJson)) {
              // A string reads without its JSON quotes.
              if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
                value = value.substr(1, value.size() - 2);
              flat.emplace(key, std::move(value));
            }
            // A key the run's mode does not read (a local run's pipeline.schedule) is no
            // setting of that run: its column shows "—" there, as for a key it lacks.
            const auto mode = flat.find("mode");
            const std::string m = mode != flat.end() ? mode->second : std::string("local");
            std::erase_if(flat, [&m](const auto& kv) { return !study::modeReadsKey(m, kv.first); });
          } catch (const std::exception&) {  // a spec that is not JSON: no keys
          }
        }
        return out;
      },
      [self, generation, page](Page loaded) {
        if (generation != self->m_generation) return;
        --self->m_pendingPages;
        for (size_t i = 0; i < loaded.rows.size() && i < loaded.flat.size(); ++i)
          if (!loaded.flat[i].empty() || !self->m_flatSpecs.count(loaded.rows[i].id))
            self->m_flatSpecs[loaded.rows[i].id] = std::move(loaded.flat[i]);
        if (self->m_frozen && self->m_pages.count(page)) {
          // A re-read while the order is frozen: each run's new numbers where it is shown.
          self->m_orderStale = true;
          for (auto& fresh : loaded.rows)
            for (auto& [shownPage, rows] : self->m_pages)
              for (size_t i = 0; i < rows.size(); ++i)
                if (rows[i].id == fresh.id) {
                  rows[i] = std::move(fresh);
                  const int row = shownPage * kPageSize + int(i);
                  Q_EMIT self->dataChanged(self->index(row, 0), self->index(row, kColumnCount - 1));
                }
          self->updateKeyColumns();
          Q_EMIT self->pageLoaded(page);
          self->checkSettled();
          return;
        }
        self->m_pages[page] = std::move(loaded.rows);
        const int first = page * kPageSize;
        const int last = std::min(self->m_count, first + kPageSize) - 1;
        if (last >= first)
          Q_EMIT self->dataChanged(self->index(first, 0), self->index(last, kColumnCount - 1));
        self->updateKeyColumns();
        Q_EMIT self->pageLoaded(page);
        self->checkSettled();
      },
      [self, generation](const QString& message) {
        if (generation == self->m_generation) --self->m_pendingPages;
        Q_EMIT self->loadFailed(message);
        self->checkSettled();
      });
}

const RunRecord* RunTableModel::record(int row) const {
  if (row < 0 || row >= m_count) return nullptr;
  auto it = m_pages.find(row / kPageSize);
  if (it == m_pages.end()) return nullptr;
  const size_t offset = size_t(row % kPageSize);
  return offset < it->second.size() ? &it->second[offset] : nullptr;
}

int64_t RunTableModel::runId(int row) const {
  const RunRecord* r = record(row);
  return r ? r->id : -1;
}

int RunTableModel::rowOf(int64_t id) const {
  for (const auto& [page, rows] : m_pages)
    for (size_t i = 0; i < rows.size(); ++i)
      if (rows[i].id == id) return page * kPageSize + int(i);
  return -1;
}

static QString statusText(storage::RunStatus s) {
  return QString::fromStdString(toString(s));
}

QVariant RunTableModel::display(const RunRecord& r, int column) const {
  auto opt = [](const std::optional<double>& v, int decimals) -> QVariant {
    return v ? QVariant(QString::number(*v, 'f', decimals)) : QVariant(QStringLiteral("—"));
  };
  if (column >= kColumnCount) {
    const size_t key = size_t(column - kColumnCount);
    if (key >= m_keyColumns.size()) return QString();
    const auto flat = m_flatSpecs.find(r.id);
    if (flat == m_flatSpecs.end()) return QString();
    const auto value = flat->second.find(m_keyColumns[key]);
    if (value == flat->second.end()) return QStringLiteral("—");
    // A searched rate has 16 digits; 4 significant ones tell runs apart and fit the column (an
    // elided middle would read as another number). Export CSV writes the stored text (exported).
    const QString text = QString::fromStdString(value->second);
    // 0 micro-batches means one per stage: say the M the run used (issue 36).
    if (m_keyColumns[key] == "pipeline.micro_batches" && text == QLatin1String("0"))
      return QStringLiteral("0 (M=%1)").arg(r.stageCount);
    bool number = false;
    const double v = text.toDouble(&number);
    if (number && v != std::floor(v)) return QString::number(v, 'g', 4);
    return text;
  }
  switch (column) {
    case kId:
      return qint64(r.id);
    case kName:
      return shownName(r);
    case kDate:  // short, so the key columns fit at 1366 px; the tooltip and CSV say the second
      return QDateTime::fromMSecsSinceEpoch(r.createdAtMs).toString(QStringLiteral("MM-dd HH:mm"));
    case kModel:
      return QString::fromStdString(r.modelKind);
    case kStages:
      return r.stageCount;
    case kDevices: {
      QStringList d;
      for (const auto& s : r.devices) d << QString::fromStdString(s);
      return d.join(QStringLiteral(", "));
    }
    case kMode:
      return QString::fromStdString(r.mode);
    case kStatus:
      return statusText(r.status);
    case kAccuracy:
      return opt(r.testAccuracy, 4);
    case kSamplesPerSec:
      return r.samplesPerSec ? QVariant(formatCount(*r.samplesPerSec))
                             : QVariant(QStringLiteral("—"));
    case kDuration:
      return r.wallSeconds ? QVariant(formatDuration(*r.wallSeconds))
                           : QVariant(QStringLiteral("—"));
    case kTags: {
      QStringList t;
      for (const auto& s : r.tags) t << QString::fromStdString(s);
      return t.join(QStringLiteral(", "));
    }
  }
  return {};
}

QVariant RunTableModel::exported(const RunRecord& r, int column) const {
  // Stored numbers, not "14.5 k" or "55.2 s" (issue 36's walkthrough); a missing one is empty.
  auto number = [](const std::optional<double>& v) {
    return v ? QVariant(*v) : QVariant(QString());
  };
  if (column >= kColumnCount) {
    const size_t key = size_t(column - kColumnCount);
    if (key >= m_keyColumns.size()) return QString();
    const auto flat = m_flatSpecs.find(r.id);
    if (flat == m_flatSpecs.end()) return QString();
    const auto value = flat->second.find(m_keyColumns[key]);
    return value == flat->second.end() ? QString() : QString::fromStdString(value->second);
  }
  switch (column) {
    case kDate:
      return QDateTime::fromMSecsSinceEpoch(r.createdAtMs)
          .toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
    case kAccuracy:
      return number(r.testAccuracy);
    case kSamplesPerSec:
      return number(r.samplesPerSec);
    case kDuration:
      return number(r.wallSeconds);
    default:
      return display(r, column);
  }
}

QVariant RunTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid()) return {};
  const RunRecord* r = record(index.row());
  if (!r) {
    requestPage(index.row() / kPageSize);
    return role == Qt::DisplayRole && index.column() == kName ? QVariant(QStringLiteral("…"))
                                                              : QVariant();
  }
  switch (role) {
    case Qt::DisplayRole:
      return display(*r, index.column());
    case kExportRole:
      return exported(*r, index.column());
    case kRunIdRole:
      return qint64(r->id);
    case Qt::TextAlignmentRole:
      if (index.column() == kId || index.column() == kStages || index.column() == kAccuracy ||
          index.column() == kSamplesPerSec || index.column() == kDuration)
        return int(Qt::AlignRight | Qt::AlignVCenter);
      return {};
    case Qt::ForegroundRole:
      if (index.column() == kStatus) {
        if (r->status == storage::RunStatus::Failed) return QColor(0xd0, 0x30, 0x30);
        if (r->status == storage::RunStatus::Running) return QColor(0x2e, 0x7d, 0xd0);
        if (r->status == storage::RunStatus::Interrupted) return QColor(0xc0, 0x80, 0x10);
      }
      return {};
    case Qt::ToolTipRole:
      if (index.column() == kStatus && !r->error.empty()) return QString::fromStdString(r->error);
      if (index.column() == kDate) return exported(*r, kDate);
      if (index.column() == kName)  // the whole name (the cell elides its middle), then notes
        return QString::fromStdString(r->notes.empty() ? r->name : r->name + "\n\n" + r->notes);
      return {};
  }
  return {};
}

}  // namespace stagewise::ui
