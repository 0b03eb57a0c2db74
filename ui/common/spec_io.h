#pragma once
// Experiment files: presets shipped in the resources, opening and saving the engine's JSON spec.

#include <QString>
#include <QStringList>

#include "stagewise/engine/spec.h"
#include "stagewise/study/study.h"

namespace stagewise::ui {

/// Resource path of the default experiment.
inline constexpr const char* kDefaultPresetPath = ":/experiments/mlp-fmnist-4stage.json";

struct Preset {
  QString title;  ///< from the spec's name, or the file name
  QString path;   ///< resource or file path
};

/// Presets compiled into the resources (":/experiments/*.json"), sorted by file name.
QList<Preset> builtinPresets();

/// Reads a spec from a file or resource path. Throws engine::SpecError naming the file.
engine::ExperimentSpec readSpecFile(const QString& path);
/// Reads a spec and its "study" object (empty when it has none). Throws engine::SpecError
/// naming the file (a bad study object: the field "study...").
engine::ExperimentSpec readExperimentFile(const QString& path, study::StudyObject& study);
/// The experiment as the JSON a file holds: the spec, and its study unless that is empty.
std::string experimentJson(const engine::ExperimentSpec& spec, const study::StudyObject& study);
/// Reads experiment JSON (experimentJson's) and its study. Throws engine::SpecError or
/// study::StudyError.
engine::ExperimentSpec parseExperimentJson(const std::string& json, study::StudyObject& study);
/// Writes the spec as canonical JSON, with its study (unless it is empty) as the "study"
/// object. Returns an empty string, or what went wrong.
QString writeSpecFile(const QString& path, const engine::ExperimentSpec& spec,
                      const study::StudyObject& study = {});

/// The default experiment: the default preset, or an equivalent built-in spec if the preset is
/// missing from this build.
engine::ExperimentSpec defaultSpec();

/// The name the presets follow: `<model kind>-<dataset>-<stages>stage` ("mlp-fmnist-4stage").
/// A design whose name is still this pattern is renamed when its family, dataset or stage count
/// changes (DesignDocument::edit); a name the user typed is kept.
std::string autoExperimentName(const engine::ExperimentSpec& spec);

}  // namespace stagewise::ui
