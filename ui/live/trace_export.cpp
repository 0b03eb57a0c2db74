#include "live/trace_export.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QWidget>
#include <exception>

#include "common/app_settings.h"
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

QString defaultTracePath(int64_t runId) {
  return QDir(AppSettings::lastExportDir())
      .filePath(QStringLiteral("run-%1.trace.json").arg(runId));
}

void exportTraceWithDialog(QWidget* parent, const storage::RunStore& store, int64_t runId) {
  const QString path =
      QFileDialog::getSaveFileName(parent, QObject::tr("Export trace"), defaultTracePath(runId),
                                   QObject::tr("Chrome trace (*.json)"));
  if (path.isEmpty()) return;
  AppSettings::setLastExportDir(QFileInfo(path).absolutePath());
  const QString error = exportTrace(store, runId, path);
  if (!error.isEmpty()) QMessageBox::warning(parent, QObject::tr("Export trace failed"), error);
}

}  // namespace stagewise::ui
