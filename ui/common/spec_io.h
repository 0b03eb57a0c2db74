#pragma once
// Experiment files: presets shipped in the resources, opening and saving the engine's JSON spec.

#include <QString>
#include <QStringList>

#include "stagewise/engine/spec.h"

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
/// Writes the spec as canonical JSON. Returns an empty string, or what went wrong.
QString writeSpecFile(const QString& path, const engine::ExperimentSpec& spec);

/// The default experiment: the default preset, or an equivalent built-in spec if the preset is
/// missing from this build.
engine::ExperimentSpec defaultSpec();

}  // namespace stagewise::ui
