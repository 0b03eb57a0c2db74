#include "presets.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "cli_args.h"

namespace fs = std::filesystem;

namespace stagewise::cli {

std::string presetDir() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  std::vector<fs::path> candidates;
  if (!ec) candidates.push_back(self.parent_path().parent_path() / "share/stagewise/experiments");
#ifdef STAGEWISE_SOURCE_DIR
  candidates.push_back(fs::path(STAGEWISE_SOURCE_DIR) / "resources/experiments");
#endif
  for (const auto& dir : candidates)
    if (fs::is_directory(dir, ec)) return fs::weakly_canonical(dir, ec).string();
  return {};
}

std::vector<std::string> presetNames() {
  std::vector<std::string> names;
  const std::string dir = presetDir();
  if (dir.empty()) return names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().extension() == ".json") names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string resolveConfig(const std::string& path) {
  std::error_code ec;
  if (path.empty() || fs::exists(path, ec) || path.find('/') != std::string::npos) return path;
  const std::string dir = presetDir();
  if (dir.empty()) return path;
  for (const std::string& name : {path, path + ".json"})
    if (fs::is_regular_file(fs::path(dir) / name, ec)) return (fs::path(dir) / name).string();
  return path;
}

std::string readConfigText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("cannot open experiment file '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace stagewise::cli
