#pragma once
// The run's events in order: starts, pauses, checkpoints, warnings and errors (in red, naming
// the stage).

#include <QTreeWidget>

#include "stagewise/engine/metrics.h"

namespace stagewise::ui {

class EventLog : public QTreeWidget {
  Q_OBJECT
 public:
  explicit EventLog(QWidget* parent = nullptr);
  void addEvent(const QString& phase, const engine::RunEvent& event);
  /// A line from the workbench itself (not the engine).
  void addNote(const QString& text, bool error = false);
  /// Every row's message, oldest first (tests, copy).
  QStringList messages() const;
  /// Every row's event column, oldest first.
  QStringList kinds() const;
  /// An event kind in words ("stop requested"), as the Event column shows it.
  static QString eventKindLabel(engine::EventKind kind);

 private:
  void append(const QString& time, const QString& phase, const QString& stage, const QString& kind,
              const QString& message, const QColor& color);
};

}  // namespace stagewise::ui
