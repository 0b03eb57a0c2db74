#include "runs/run_table_columns.h"

#include <QApplication>
#include <QEvent>
#include <QHeaderView>
#include <QStyle>
#include <QStyledItemDelegate>
#include <QTableView>
#include <algorithm>
#include <utility>

#include "runs/run_table_model.h"

namespace stagewise::ui {

namespace {
/// Draws the Name column's text elided by RunTableColumns::elideName.
class NameDelegate : public QStyledItemDelegate {
 public:
  using QStyledItemDelegate::QStyledItemDelegate;

 protected:
  void initStyleOption(QStyleOptionViewItem* option, const QModelIndex& index) const override {
    QStyledItemDelegate::initStyleOption(option, index);
    const QStyle* style = option->widget ? option->widget->style() : QApplication::style();
    const int margin =
        style->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, option->widget) + 1;
    const int width = option->rect.width() - 2 * margin;
    if (width > 0)
      option->text = RunTableColumns::elideName(option->text, option->fontMetrics, width);
  }
};
}  // namespace

QString RunTableColumns::elideName(const QString& name, const QFontMetrics& metrics, int width) {
  if (metrics.horizontalAdvance(name) <= width) return name;
  static const QString kSeparator = QStringLiteral(" · ");
  const int at = name.indexOf(kSeparator);
  if (at < 0) return metrics.elidedText(name, Qt::ElideMiddle, width);
  QString head = name.left(at + kSeparator.size());
  if (metrics.horizontalAdvance(head) > width / 3)
    head = metrics.elidedText(name.left(at), Qt::ElideRight, width / 3) + kSeparator;
  const int room = width - metrics.horizontalAdvance(head);
  // The items between the first (a trial's label, the mode) and the last (the seed) lose their
  // start first (their values are in the key columns); then the start of what is left.
  QString rest = name.mid(at + kSeparator.size());
  const QStringList items = rest.split(QStringLiteral(", "));
  if (metrics.horizontalAdvance(rest) > room && items.size() > 2) {
    const QString first = items.front() + QStringLiteral(", ");
    const QString last = QStringLiteral(", ") + items.back();
    const QString middle = items.mid(1, items.size() - 2).join(QStringLiteral(", "));
    const int left = room - metrics.horizontalAdvance(first + last);
    // The middle items' ends (`…batch_size=64`) while they fit a few characters, else "…".
    rest = first +
           (left > metrics.horizontalAdvance(QStringLiteral("x=00…"))
                ? metrics.elidedText(middle, Qt::ElideLeft, left)
                : QStringLiteral("…")) +
           last;
  }
  return head + metrics.elidedText(rest, Qt::ElideLeft, room);
}

RunTableColumns::RunTableColumns(QTableView* table, RunTableModel* model)
    : QObject(table), m_table(table), m_model(model) {
  auto* header = m_table->horizontalHeader();
  const QFontMetrics metrics = m_table->fontMetrics();
  header->resizeSection(RunTableModel::kName, 220);
  header->resizeSection(RunTableModel::kId,
                        metrics.horizontalAdvance(QStringLiteral("#99999")) + 12);
  // The short columns as wide as their longest word (the date without its year and seconds:
  // the tooltip has them), so the key columns fit at 1366 px.
  for (const auto& [column, widest] : {std::pair{RunTableModel::kDate, "12-31 23:59"},
                                       {RunTableModel::kModel, "Model"},
                                       {RunTableModel::kStages, "Stages"},
                                       {RunTableModel::kDevices, "Devices"},
                                       {RunTableModel::kMode, "backprop"},
                                       {RunTableModel::kStatus, "interrupted"}})
    header->resizeSection(column, metrics.horizontalAdvance(QString::fromLatin1(widest)) + 20);
  // The differing spec keys right after Name (issue 36: at 1366 px they were past the right
  // edge). Only the view's order moves: the model's columns, Ctrl+C and Export CSV keep theirs.
  for (int k = 0; k < RunTableModel::kMaxKeyColumns; ++k)
    header->moveSection(header->visualIndex(RunTableModel::kColumnCount + k),
                        header->visualIndex(RunTableModel::kName) + 1 + k);
  // Then what a comparison reads (mode, status, accuracy, speed, duration, tags); the columns
  // that rarely tell runs apart (date, model, stages, devices) go last, so at 1366 px it is
  // they that scroll out of view (the walkthrough found Mode and Test acc. past the edge).
  for (const int column : {RunTableModel::kDate, RunTableModel::kModel, RunTableModel::kStages,
                           RunTableModel::kDevices})
    header->moveSection(header->visualIndex(column), header->count() - 1);
  connect(m_model, &QAbstractItemModel::headerDataChanged, this, &RunTableColumns::showKeyColumns);
  connect(m_model, &RunTableModel::pageLoaded, this, [this] {
    showKeyColumns();
    fitNameColumn();
  });
  connect(header, &QHeaderView::sectionResized, this, [this](int section, int, int) {
    if (section == RunTableModel::kName && !m_fitting) m_nameWidthByUser = true;
  });
  m_table->viewport()->installEventFilter(this);
  m_table->setItemDelegateForColumn(RunTableModel::kName, new NameDelegate(m_table));
  showKeyColumns();
}

bool RunTableColumns::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() == QEvent::Resize && !m_fitting && watched == m_table->viewport())
    fitNameColumn();  // the room it may grow into changed
  return QObject::eventFilter(watched, event);
}

void RunTableColumns::showKeyColumns() {
  const QFontMetrics metrics = m_table->fontMetrics();
  const int widest = metrics.horizontalAdvance(QStringLiteral("[1,2,3,4,5,6]"));
  for (int c = RunTableModel::kColumnCount; c < m_model->columnCount(); ++c) {
    const QString key = m_model->headerData(c, Qt::Horizontal, Qt::DisplayRole).toString();
    m_table->setColumnHidden(c, key.isEmpty());
    if (key.isEmpty()) continue;
    int width = 0;
    for (int row = 0; row < std::min(m_model->rowCount(), RunTableModel::kPageSize); ++row)
      if (m_model->record(row))  // a loaded row (asking another would load its page)
        width = std::max(width,
                         metrics.horizontalAdvance(m_model->index(row, c).data().toString()) + 12);
    // The key's name whole; its values up to a bound (the middle elides).
    m_table->horizontalHeader()->resizeSection(
        c, std::max(metrics.horizontalAdvance(key) + 20, std::min(widest, width)));
  }
}

void RunTableColumns::fitNameColumn() {
  // The column is as wide as the longest shown name, up to a bound (the middle elides past
  // it), unless the user sized it.
  if (m_nameWidthByUser) return;
  const QFontMetrics metrics = m_table->fontMetrics();
  const int bound = metrics.horizontalAdvance(QLatin1Char('x')) * kNameColumnChars;
  int widest = 0;
  for (int row = 0; row < std::min(m_model->rowCount(), RunTableModel::kPageSize); ++row)
    if (m_model->record(row))
      widest = std::max(widest, metrics.horizontalAdvance(
                                    m_model->index(row, RunTableModel::kName).data().toString()) +
                                    16);
  // Beside it, in view: the id and the first kKeysInView key columns (the fixed columns after
  // them may scroll out of view at 1366 px; the keys are what tells runs apart).
  auto* header = m_table->horizontalHeader();
  int others =
      header->isSectionHidden(RunTableModel::kId) ? 0 : header->sectionSize(RunTableModel::kId);
  int keys = 0;
  for (int c = RunTableModel::kColumnCount; c < m_model->columnCount() && keys < kKeysInView; ++c)
    if (!m_table->isColumnHidden(c)) {
      others += header->sectionSize(c);
      ++keys;
    }
  const int x = metrics.horizontalAdvance(QLatin1Char('x'));
  const int room = m_table->viewport()->width() - others - x * 2;
  if (widest == 0) return;  // nothing loaded yet
  // As wide as the longest name needs, not wider (a shorter list narrows it); the room bounds
  // it down to kNameLeastChars, never below.
  const int least =
      std::max(metrics.horizontalAdvance(tr("Name")) + 24, std::min(widest, x * kNameLeastChars));
  const int width = std::max(least, std::min({bound, widest, room}));
  if (width == header->sectionSize(RunTableModel::kName)) return;
  m_fitting = true;
  header->resizeSection(RunTableModel::kName, width);
  m_fitting = false;
}

}  // namespace stagewise::ui
