#include "common/app_settings.h"

#include <QDir>
#include <QFileInfo>
#include <QSettings>
#include <QStandardPaths>
#include <algorithm>

namespace stagewise::ui {

QString AppSettings::storePath() {
  QSettings settings;
  // The last session's store, while it is still there (a store given once with --db in a
  // temporary folder that has since gone must not come back as a new, empty store).
  const QString last = settings.value(QStringLiteral("session/storePath")).toString();
  if (!last.isEmpty() && QFileInfo::exists(last)) return last;
  return settings.value(QStringLiteral("store/path")).toString();
}
void AppSettings::setStorePath(const QString& path) {
  QSettings().setValue(QStringLiteral("store/path"), path);
}
Theme AppSettings::theme() {
  return themeFromString(
      QSettings().value(QStringLiteral("ui/theme"), QStringLiteral("light")).toString());
}
void AppSettings::setTheme(Theme theme) {
  QSettings().setValue(QStringLiteral("ui/theme"), toString(theme));
}
QByteArray AppSettings::windowGeometry() {
  return QSettings().value(QStringLiteral("window/geometry")).toByteArray();
}
QByteArray AppSettings::windowState() {
  return QSettings().value(QStringLiteral("window/state")).toByteArray();
}
void AppSettings::setWindow(const QByteArray& geometry, const QByteArray& state, QSize screen) {
  QSettings settings;
  settings.setValue(QStringLiteral("window/geometry"), geometry);
  settings.setValue(QStringLiteral("window/state"), state);
  settings.setValue(QStringLiteral("window/screen"), screen);
}
QSize AppSettings::windowScreen() {
  return QSettings().value(QStringLiteral("window/screen")).toSize();
}

QRect AppSettings::windowRect() {
  return QSettings().value(QStringLiteral("window/clientRect")).toRect();
}
bool AppSettings::windowMaximized() {
  return QSettings().value(QStringLiteral("window/maximized"), false).toBool();
}
void AppSettings::setWindowRect(const QRect& clientRect, bool maximized) {
  QSettings settings;
  settings.setValue(QStringLiteral("window/clientRect"), clientRect);
  settings.setValue(QStringLiteral("window/maximized"), maximized);
}

QRect windowRectForScreen(QRect saved, QSize savedScreen, QSize room, QRect area) {
  if (!saved.isValid()) return saved;
  const QSize size = windowSizeForScreen(saved.size(), savedScreen, room);
  QRect out(saved.topLeft(), size);
  if (!area.isValid()) return out;
  // Moved only as far as it takes to bring it inside the area (the left and top edges win).
  if (out.right() > area.right()) out.moveRight(area.right());
  if (out.bottom() > area.bottom()) out.moveBottom(area.bottom());
  if (out.left() < area.left()) out.moveLeft(area.left());
  if (out.top() < area.top()) out.moveTop(area.top());
  return out;
}

QSize windowSizeForScreen(QSize saved, QSize savedScreen, QSize screen) {
  if (!saved.isValid() || !savedScreen.isValid() || !screen.isValid() || savedScreen.width() <= 0 ||
      savedScreen.height() <= 0)
    return saved.boundedTo(screen);
  const double wide = double(screen.width()) / savedScreen.width();
  const double tall = double(screen.height()) / savedScreen.height();
  if (wide < 1.2 && tall < 1.2) return saved.boundedTo(screen);
  const QSize grown(int(saved.width() * std::max(1.0, wide)),
                    int(saved.height() * std::max(1.0, tall)));
  return grown.boundedTo(screen);
}
QString AppSettings::lastSpecDir() {
  return QSettings().value(QStringLiteral("files/specDir")).toString();
}
void AppSettings::setLastSpecDir(const QString& dir) {
  QSettings().setValue(QStringLiteral("files/specDir"), dir);
}
QString AppSettings::lastReportDir() {
  return QSettings().value(QStringLiteral("files/reportDir"), QDir::homePath()).toString();
}
void AppSettings::setLastReportDir(const QString& dir) {
  QSettings().setValue(QStringLiteral("files/reportDir"), dir);
}
QString AppSettings::lastExportDir() {
  const QString documents = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
  const QString fallback =
      documents.isEmpty() || !QFileInfo(documents).isDir() ? QDir::homePath() : documents;
  const QString dir = QSettings().value(QStringLiteral("files/exportDir")).toString();
  return !dir.isEmpty() && QFileInfo(dir).isDir() ? dir : fallback;
}
void AppSettings::setLastExportDir(const QString& dir) {
  QSettings().setValue(QStringLiteral("files/exportDir"), dir);
}
QString AppSettings::exportPath(const QString& fileName) {
  return QDir(lastExportDir()).filePath(fileName);
}
QString AppSettings::keepExportPath(const QString& path) {
  if (!path.isEmpty()) setLastExportDir(QFileInfo(path).absolutePath());
  return path;
}
double AppSettings::smoothing() {
  return QSettings().value(QStringLiteral("train/smoothing"), 0.6).toDouble();
}
void AppSettings::setSmoothing(double weight) {
  QSettings().setValue(QStringLiteral("train/smoothing"), weight);
}

study::Spread AppSettings::spread() {
  return study::spreadFromId(QSettings()
                                 .value(QStringLiteral("runs/spread"), QStringLiteral("std"))
                                 .toString()
                                 .toStdString());
}
void AppSettings::setSpread(study::Spread spread) {
  QSettings().setValue(QStringLiteral("runs/spread"),
                       QString::fromStdString(study::spreadId(spread)));
}

int AppSettings::processes() {
  return std::max(1, QSettings().value(QStringLiteral("train/processes"), 1).toInt());
}
void AppSettings::setProcesses(int processes) {
  QSettings().setValue(QStringLiteral("train/processes"), processes);
}

QStringList AppSettings::recentFiles() {
  QStringList out;
  for (const QString& path : QSettings().value(QStringLiteral("files/recent")).toStringList())
    if (QFileInfo::exists(path) && !out.contains(path)) out << path;
  return out.mid(0, kMaxRecent);
}

void AppSettings::addRecentFile(const QString& path) {
  if (path.isEmpty() || path.startsWith(QLatin1Char(':'))) return;  // presets are in the resources
  const QString absolute = QFileInfo(path).absoluteFilePath();
  QStringList list = QSettings().value(QStringLiteral("files/recent")).toStringList();
  list.removeAll(absolute);
  list.prepend(absolute);
  QSettings().setValue(QStringLiteral("files/recent"), list.mid(0, kMaxRecent));
}

void AppSettings::clearRecentFiles() {
  QSettings().remove(QStringLiteral("files/recent"));
}

QStringList AppSettings::savedQueries() {
  return QSettings().value(QStringLiteral("runs/savedQueries")).toStringList();
}

void AppSettings::setSavedQueries(const QStringList& queries) {
  QSettings().setValue(QStringLiteral("runs/savedQueries"), queries);
}

SessionState AppSettings::session() {
  QSettings settings;
  SessionState state;
  state.specFile = settings.value(QStringLiteral("session/specFile")).toString();
  state.designJson = settings.value(QStringLiteral("session/designJson")).toString();
  state.workspace = settings.value(QStringLiteral("session/workspace"), 0).toInt();
  for (const QVariant& id : settings.value(QStringLiteral("session/runs")).toList())
    state.runs << id.toLongLong();
  state.trainModes = settings.value(QStringLiteral("session/trainModes"), 0).toInt();
  state.storePath = settings.value(QStringLiteral("session/storePath")).toString();
  state.runsFilter = settings.value(QStringLiteral("session/runsFilter")).toString();
  state.runsStudy = settings.value(QStringLiteral("session/runsStudy"), -1).toLongLong();
  return state;
}

void AppSettings::setSession(const SessionState& state) {
  QSettings settings;
  settings.setValue(QStringLiteral("session/specFile"), state.specFile);
  settings.setValue(QStringLiteral("session/designJson"), state.designJson);
  settings.setValue(QStringLiteral("session/workspace"), state.workspace);
  QVariantList runs;
  for (qint64 id : state.runs) runs << id;
  settings.setValue(QStringLiteral("session/runs"), runs);
  settings.setValue(QStringLiteral("session/trainModes"), state.trainModes);
  settings.setValue(QStringLiteral("session/storePath"), state.storePath);
  settings.setValue(QStringLiteral("session/runsFilter"), state.runsFilter);
  settings.setValue(QStringLiteral("session/runsStudy"), state.runsStudy);
}

int AppSettings::trainXAxis() {
  return std::clamp(QSettings().value(QStringLiteral("train/xAxis"), 0).toInt(), 0, 1);
}
void AppSettings::setTrainXAxis(int axis) {
  QSettings().setValue(QStringLiteral("train/xAxis"), axis);
}
bool AppSettings::trainLogLoss() {
  return QSettings().value(QStringLiteral("train/logLoss"), false).toBool();
}
void AppSettings::setTrainLogLoss(bool on) {
  QSettings().setValue(QStringLiteral("train/logLoss"), on);
}

}  // namespace stagewise::ui
