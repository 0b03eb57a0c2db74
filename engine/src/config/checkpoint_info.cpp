#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "stagewise/engine/checkpoint.h"

namespace stagewise::engine {

namespace fs = std::filesystem;

static std::string newestStep(const fs::path& dir) {
  int64_t best = -1;
  std::string found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("step-", 0) != 0 || !fs::exists(e.path() / "state.json")) continue;
    try {
      int64_t s = std::stoll(name.substr(5));
      if (s > best) best = s, found = e.path().string();
    } catch (const std::exception&) {
    }
  }
  return found;
}

CheckpointInfo readCheckpointInfo(const std::string& path) {
  fs::path folder = path;
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) throw std::runtime_error(path + ": no such checkpoint folder");
  if (!fs::exists(folder / "state.json")) {
    std::string newest = newestStep(folder);
    if (newest.empty())
      throw std::runtime_error(
          path + ": not a checkpoint (no state.json here or in a step-N folder inside)");
    folder = newest;
  }
  std::ifstream in(folder / "state.json");
  nlohmann::json state = nlohmann::json::parse(in, nullptr, false);
  if (state.is_discarded() || !state.is_object() || !state.contains("step") ||
      !state.contains("spec"))
    throw std::runtime_error((folder / "state.json").string() +
                             ": damaged checkpoint state (not the JSON expected)");
  CheckpointInfo info;
  info.path = folder.string();
  info.step = state.value("step", int64_t{0});
  info.totalSteps = state.value("total_steps", int64_t{0});
  if (state.contains("elapsed_s") && state["elapsed_s"].is_number())
    info.elapsedS = std::max(0.0, state["elapsed_s"].get<double>());
  info.stages = state.value("stages", 0);
  info.specJson = state["spec"].dump();
  try {
    info.spec = parseSpec(info.specJson);
  } catch (const SpecError& e) {
    throw std::runtime_error((folder / "state.json").string() +
                             ": its spec is not valid here: " + e.what());
  }
  for (int k = 0; k < info.stages; ++k)
    if (!fs::exists(folder / ("stage-" + std::to_string(k) + ".pt")))
      throw std::runtime_error(info.path + ": stage-" + std::to_string(k) + ".pt is missing");
  return info;
}

std::string defaultCheckpointDir(const std::string& runName) {
  std::string base;
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg)
    base = xdg;
  else if (const char* home = std::getenv("HOME"); home && *home)
    base = std::string(home) + "/.local/share";
  else
    base = ".";
  std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  std::string name = runName.empty() ? "run" : runName;
  for (auto& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
  return base + "/stagewise/checkpoints/" + name + "-" + stamp;
}

}  // namespace stagewise::engine
