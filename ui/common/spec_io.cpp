#include "common/spec_io.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>

namespace stagewise::ui {

QList<Preset> builtinPresets() {
  QList<Preset> out;
  const QDir dir(QStringLiteral(":/experiments"));
  for (const QString& file : dir.entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name)) {
    const QString path = dir.filePath(file);
    Preset preset{QFileInfo(file).completeBaseName(), path};
    try {
      const auto spec = readSpecFile(path);
      if (!spec.name.empty()) preset.title = QString::fromStdString(spec.name);
    } catch (const engine::SpecError&) {
      preset.title += QStringLiteral(" (invalid)");
    }
    out.push_back(preset);
  }
  return out;
}

engine::ExperimentSpec readSpecFile(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly))
    throw engine::SpecError("", "cannot open experiment file: " + file.errorString().toStdString(),
                            path.toStdString());
  const QByteArray bytes = file.readAll();
  try {
    return engine::parseSpec(
        std::string_view(bytes.constData(), static_cast<size_t>(bytes.size())));
  } catch (const engine::SpecError& e) {
    throw engine::SpecError(e.field(), e.message(), path.toStdString());
  }
}

QString writeSpecFile(const QString& path, const engine::ExperimentSpec& spec) {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly)) return file.errorString();
  const std::string json = engine::specToJson(spec) + "\n";
  if (file.write(json.data(), static_cast<qint64>(json.size())) != static_cast<qint64>(json.size()))
    return file.errorString();
  if (!file.commit()) return file.errorString();
  return {};
}

engine::ExperimentSpec defaultSpec() {
  if (QFile::exists(QLatin1String(kDefaultPresetPath))) {
    try {
      return readSpecFile(QLatin1String(kDefaultPresetPath));
    } catch (const engine::SpecError&) {
      // fall through to the built-in equivalent
    }
  }
  engine::ExperimentSpec spec;
  spec.name = "mlp-fmnist-4stage";
  spec.model.hidden = std::vector<int>(8, 512);
  spec.partition.cuts = {2, 4, 6};
  spec.train.batchSize = 64;
  spec.train.maxSteps = 2000;
  spec.eval.interval = 500;
  return spec;
}

}  // namespace stagewise::ui
