#include "runs/run_table_columns.h"

#include <QEvent>
#include <QHeaderView>
#include <QTableView>
#include <algorithm>
#include <utility>

#include "runs/run_table_model.h"

namespace stagewise::ui {

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
  connect(m_model, &QAbstractItemModel::headerDataChanged, this, &RunTableColumns::showKeyColumns);
  connect(m_model, &RunTableModel::pageLoaded, this, [this] {
    showKeyColumns();
    fitNameColumn();
  });
  connect(header, &QHeaderView::sectionResized, this, [this](int section, int, int) {
    if (section == RunTableModel::kName && !m_fitting) m_nameWidthByUser = true;
  });
  m_table->viewport()->installEventFilter(this);
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
  // The column grows to the longest shown name, up to a bound (the middle elides past it),
  // unless the user sized it. It grows only into room the list has: the columns after it
  // must not be pushed out of view at 1366 px.
  if (m_nameWidthByUser) return;
  const QFontMetrics metrics = m_table->fontMetrics();
  const int bound = metrics.horizontalAdvance(QLatin1Char('x')) * kNameColumnChars;
  int widest = 0;
  for (int row = 0; row < std::min(m_model->rowCount(), RunTableModel::kPageSize); ++row)
    if (m_model->record(row))
      widest = std::max(widest, metrics.horizontalAdvance(
                                    m_model->index(row, RunTableModel::kName).data().toString()) +
                                    16);
  auto* header = m_table->horizontalHeader();
  int last = -1;  // the shown column drawn last: it stretches over what is left
  for (int c = 0; c < m_model->columnCount(); ++c)
    if (!m_table->isColumnHidden(c) &&
        (last < 0 || header->visualIndex(c) > header->visualIndex(last)))
      last = c;
  int others = 0;
  for (int c = 0; c < m_model->columnCount(); ++c)
    if (c != RunTableModel::kName && c != last && !m_table->isColumnHidden(c))
      others += header->sectionSize(c);
  // The last column keeps room for a short value.
  const int room =
      m_table->viewport()->width() - others - metrics.horizontalAdvance(QLatin1Char('x')) * 12;
  if (widest == 0) return;  // nothing loaded yet
  // As wide as the longest name needs, not wider (a shorter list narrows it).
  const int least = metrics.horizontalAdvance(tr("Name")) + 24;
  const int width = std::max(least, std::min({bound, widest, room}));
  if (width == header->sectionSize(RunTableModel::kName)) return;
  m_fitting = true;
  header->resizeSection(RunTableModel::kName, width);
  m_fitting = false;
}

}  // namespace stagewise::ui
