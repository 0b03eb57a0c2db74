#include "live/event_log.h"

#include <QHeaderView>
#include <QScrollBar>
#include <QStyledItemDelegate>
#include <algorithm>

namespace stagewise::ui {

namespace {

// Tree views ask a delegate for a row's height without the column's width, so wrapped text
// would stay one line high: this one measures the message at its column's width.
class WrappingDelegate : public QStyledItemDelegate {
 public:
  WrappingDelegate(QTreeView* view, int column)
      : QStyledItemDelegate(view), m_view(view), m_column(column) {}
  QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override {
    QSize size = QStyledItemDelegate::sizeHint(option, index);
    if (index.column() != m_column) return size;
    const int width = m_view->header()->sectionSize(m_column) - 8;
    if (width <= 0) return size;
    const QRect text = option.fontMetrics.boundingRect(
        QRect(0, 0, width, 1 << 20), Qt::TextWordWrap, index.data(Qt::DisplayRole).toString());
    size.setHeight(std::max(size.height(), text.height() + 4));
    return size;
  }

 private:
  QTreeView* m_view;
  int m_column;
};

}  // namespace

EventLog::EventLog(QWidget* parent) : QTreeWidget(parent) {
  setColumnCount(5);
  setHeaderLabels({tr("Time"), tr("Run"), tr("Stage"), tr("Event"), tr("Message")});
  setRootIsDecorated(false);
  setAlternatingRowColors(true);
  // Long messages (a failure's reason, a path) wrap in the message column instead of being cut
  // at the edge; the other columns are as wide as their text.
  setWordWrap(true);
  setItemDelegate(new WrappingDelegate(this, 4));
  setUniformRowHeights(false);
  // A word longer than the column (a path) cannot wrap: it ends in "…", its tooltip in full.
  setTextElideMode(Qt::ElideRight);
  header()->setStretchLastSection(true);
  header()->setSectionResizeMode(QHeaderView::ResizeToContents);
  header()->setSectionResizeMode(4, QHeaderView::Stretch);
  // Row heights follow the message column's width: a tree view keeps the heights it measured
  // when the rows were laid out, so lay them out again once the column has its width.
  connect(header(), &QHeaderView::sectionResized, this, [this](int section) {
    if (section == 4) scheduleDelayedItemsLayout();
  });
  setToolTip(tr("Events of the current session: starts, pauses, stops, warnings and errors."));
}

void EventLog::append(const QString& time, const QString& phase, const QString& stage,
                      const QString& kind, const QString& message, const QColor& color) {
  const bool atEnd = verticalScrollBar()->value() == verticalScrollBar()->maximum();
  auto* item = new QTreeWidgetItem(this, {time, phase, stage, kind, message});
  item->setToolTip(4, message);
  if (color.isValid())
    for (int c = 0; c < columnCount(); ++c) item->setForeground(c, color);
  scheduleDelayedItemsLayout();
  if (atEnd) scrollToItem(item);
}

QString EventLog::eventKindLabel(engine::EventKind kind) {
  // Words for people, not the identifiers of the JSON and the store ("stop_requested").
  switch (kind) {
    case engine::EventKind::Started:
      return tr("started");
    case engine::EventKind::Paused:
      return tr("paused");
    case engine::EventKind::Resumed:
      return tr("resumed");
    case engine::EventKind::StopRequested:
      return tr("stop requested");
    case engine::EventKind::Completed:
      return tr("completed");
    case engine::EventKind::Stopped:
      return tr("stopped");
    case engine::EventKind::Failed:
      return tr("failed");
    case engine::EventKind::Checkpoint:
      return tr("checkpoint");
    case engine::EventKind::Info:
      return tr("info");
    case engine::EventKind::Warning:
      return tr("warning");
  }
  return QString::fromStdString(engine::toString(kind));
}

void EventLog::addEvent(const QString& phase, const engine::RunEvent& event) {
  QColor color;
  if (event.kind == engine::EventKind::Failed) color = QColor(0xd0, 0x30, 0x30);
  if (event.kind == engine::EventKind::Warning) color = QColor(0xc0, 0x80, 0x10);
  append(QStringLiteral("%1 s").arg(event.timeS, 0, 'f', 2), phase,
         event.stage >= 0 ? tr("S%1").arg(event.stage + 1) : QString(), eventKindLabel(event.kind),
         QString::fromStdString(event.message), color);
}

void EventLog::addNote(const QString& text, bool error) {
  append(QString(), QString(), QString(), error ? tr("error") : tr("note"), text,
         error ? QColor(0xd0, 0x30, 0x30) : QColor());
}

QStringList EventLog::messages() const {
  QStringList out;
  for (int i = 0; i < topLevelItemCount(); ++i) out << topLevelItem(i)->text(4);
  return out;
}

QStringList EventLog::kinds() const {
  QStringList out;
  for (int i = 0; i < topLevelItemCount(); ++i) out << topLevelItem(i)->text(3);
  return out;
}

}  // namespace stagewise::ui
