#pragma once
#include <string>
#include <vector>

#include "stagewise/engine/spec.h"

namespace stagewise::cli {

int trainCommand(const std::vector<std::string>& args);
int inspectCommand(const std::vector<std::string>& args);
/// `launch`: one run in N local processes (ranks) over c10d.
int launchCommand(const std::vector<std::string>& args);
/// `runs resume ID`: continues a stored run from its newest checkpoint (needs the store).
int runsResumeCommand(const std::vector<std::string>& args);
/// `import MODEL.pt --out NAME.stagewise.json`: an experiment for a TorchScript model.
int importCommand(const std::vector<std::string>& args);
/// `runs export-model ID --out FILE.pt`: a torchscript run's trained network (needs the store).
int runsExportModelCommand(const std::vector<std::string>& args);
/// `study run|resume|list|show|export` (needs the store).
int studyCommand(const std::vector<std::string>& args);
/// `report`: the paper's findings checked against runs made here (needs the store).
int reportCommand(const std::vector<std::string>& args);

/// Reads --config FILE and applies every --set override. Throws SpecError / UsageError.
engine::ExperimentSpec specFromArgs(const std::string& configPath,
                                    const std::vector<std::string>& sets);

}  // namespace stagewise::cli
