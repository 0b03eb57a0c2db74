#include "live/trace_export.h"

#include <QFileDialog>
#include <QMessageBox>
#include <QWidget>
#include <exception>

#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"
#include "stagewise/storage/trace.h"

namespace stagewise::ui {

QString exportTrace(const storage::RunStore& store, int64_t runId, const QString& path) {
  try {
    storage::RunReader reader(store);
    storage::writeTraceFile(reader, runId, path.toStdString());
    return {};
  } catch (const std::exception& e) {
    return QString::fromStdString(e.what());
  }
}

void exportTraceWithDialog(QWidget* parent, const storage::RunStore& store, int64_t runId) {
  const QString path = QFileDialog::getSaveFileName(parent, QObject::tr("Export trace"),
                                                    QStringLiteral("run-%1.trace.json").arg(runId),
                                                    QObject::tr("Chrome trace (*.json)"));
  if (path.isEmpty()) return;
  const QString error = exportTrace(store, runId, path);
  if (!error.isEmpty()) QMessageBox::warning(parent, QObject::tr("Export trace failed"), error);
}

}  // namespace stagewise::ui
