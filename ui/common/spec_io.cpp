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
  study::StudyObject ignored;
  return readExperimentFile(path, ignored);
}

engine::ExperimentSpec readExperimentFile(const QString& path, study::StudyObject& study) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly))
    throw engine::SpecError("", "cannot open experiment file: " + file.errorString().toStdString(),
                            path.toStdString());
  const QByteArray bytes = file.readAll();
  const std::string text(bytes.constData(), static_cast<size_t>(bytes.size()));
  engine::ExperimentSpec spec;
  try {
    spec = engine::parseSpec(text);
  } catch (const engine::SpecError& e) {
    throw engine::SpecError(e.field(), e.message(), path.toStdString());
  }
  try {
    study = study::studyObjectOf(text).value_or(study::StudyObject{});
  } catch (const study::StudyError& e) {
    // "study.seeds: expected ..." -> field study.seeds, message "expected ...".
    const std::string what = e.what();
    const size_t colon = what.find(": ");
    throw engine::SpecError(what.substr(0, colon),
                            colon == std::string::npos ? what : what.substr(colon + 2),
                            path.toStdString());
  }
  return spec;
}

std::string experimentJson(const engine::ExperimentSpec& spec, const study::StudyObject& study) {
  std::string json = engine::specToJson(spec);
  return study.empty() ? json : study::withStudyObject(json, study);
}

engine::ExperimentSpec parseExperimentJson(const std::string& json, study::StudyObject& study) {
  engine::ExperimentSpec spec = engine::parseSpec(json);
  study = study::studyObjectOf(json).value_or(study::StudyObject{});
  return spec;
}

QString writeSpecFile(const QString& path, const engine::ExperimentSpec& spec,
                      const study::StudyObject& study) {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly)) return file.errorString();
  std::string json = experimentJson(spec, study) + "\n";
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

std::string autoExperimentName(const engine::ExperimentSpec& spec) {
  const std::string& kind = spec.dataset.kind;
  std::string data = kind;
  if (kind == "fashion-mnist") data = "fmnist";
  else if (kind == "image_folder") data = "images";
  return spec.model.kind + "-" + data + "-" + std::to_string(spec.stageCount()) + "stage";
}

}  // namespace stagewise::ui
