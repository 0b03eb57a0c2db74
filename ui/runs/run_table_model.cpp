#include "runs/run_table_model.h"

#include <QColor>
#include <QDateTime>

#include "common/format.h"

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
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant RunTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return {};
  static const char* const kNames[] = {"#",         "Name",      "Date",     "Model",
                                       "Stages",    "Devices",   "Mode",     "Status",
                                       "Test acc.", "Samples/s", "Duration", "Tags"};
  if (role == Qt::DisplayRole && section >= 0 && section < kColumnCount) return tr(kNames[section]);
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
        Q_EMIT reloaded();
      },
      [this](const QString& message) {
        m_countPending = false;
        Q_EMIT loadFailed(message);
      });
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
  m_executor->post<std::vector<RunRecord>>(
      self,
      [filter, order, page](storage::RunReader& reader, storage::RunStore&) {
        return reader.listRuns(filter, order, kPageSize, page * kPageSize);
      },
      [self, generation, page](std::vector<RunRecord> rows) {
        if (generation != self->m_generation) return;
        --self->m_pendingPages;
        self->m_pages[page] = std::move(rows);
        const int first = page * kPageSize;
        const int last = std::min(self->m_count, first + kPageSize) - 1;
        if (last >= first)
          Q_EMIT self->dataChanged(self->index(first, 0), self->index(last, kColumnCount - 1));
        Q_EMIT self->pageLoaded(page);
      },
      [self, generation](const QString& message) {
        if (generation == self->m_generation) --self->m_pendingPages;
        Q_EMIT self->loadFailed(message);
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
  switch (column) {
    case kId:
      return qint64(r.id);
    case kName:
      return QString::fromStdString(r.name.empty() ? "(unnamed)" : r.name);
    case kDate:
      return QDateTime::fromMSecsSinceEpoch(r.createdAtMs)
          .toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
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
      if (index.column() == kName)  // the whole name (the cell elides its middle), then notes
        return QString::fromStdString(r->notes.empty() ? r->name : r->name + "\n\n" + r->notes);
      return {};
  }
  return {};
}

}  // namespace stagewise::ui
