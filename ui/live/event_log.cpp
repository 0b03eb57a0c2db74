#include "live/event_log.h"

#include <QHeaderView>
#include <QScrollBar>

namespace stagewise::ui {

EventLog::EventLog(QWidget* parent) : QTreeWidget(parent) {
  setColumnCount(5);
  setHeaderLabels({tr("Time"), tr("Run"), tr("Stage"), tr("Event"), tr("Message")});
  setRootIsDecorated(false);
  setUniformRowHeights(true);
  setAlternatingRowColors(true);
  header()->setStretchLastSection(true);
  header()->setSectionResizeMode(QHeaderView::ResizeToContents);
  setToolTip(tr("Events of the current session: starts, pauses, stops, warnings and errors."));
}

void EventLog::append(const QString& time, const QString& phase, const QString& stage,
                      const QString& kind, const QString& message, const QColor& color) {
  const bool atEnd = verticalScrollBar()->value() == verticalScrollBar()->maximum();
  auto* item = new QTreeWidgetItem(this, {time, phase, stage, kind, message});
  item->setToolTip(4, message);
  if (color.isValid())
    for (int c = 0; c < columnCount(); ++c) item->setForeground(c, color);
  if (atEnd) scrollToItem(item);
}

void EventLog::addEvent(const QString& phase, const engine::RunEvent& event) {
  QColor color;
  if (event.kind == engine::EventKind::Failed) color = QColor(0xd0, 0x30, 0x30);
  if (event.kind == engine::EventKind::Warning) color = QColor(0xc0, 0x80, 0x10);
  append(QStringLiteral("%1 s").arg(event.timeS, 0, 'f', 2), phase,
         event.stage >= 0 ? tr("S%1").arg(event.stage + 1) : QString(),
         QString::fromStdString(engine::toString(event.kind)),
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

}  // namespace stagewise::ui
