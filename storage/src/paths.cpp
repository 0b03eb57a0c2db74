#include "stagewise/storage/paths.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "stagewise/storage/store_error.h"

namespace stagewise::storage {

namespace fs = std::filesystem;

namespace {

std::optional<std::string> envValue(const char* name) {
  const char* value = std::getenv(name);
  if (!value || !*value) return std::nullopt;
  return std::string(value);
}

}  // namespace

std::string defaultDbPath() {
  fs::path base;
  // XDG says a relative XDG_DATA_HOME is invalid and must be ignored.
  if (auto xdg = envValue("XDG_DATA_HOME"); xdg && fs::path(*xdg).is_absolute()) {
    base = *xdg;
  } else if (auto home = envValue("HOME")) {
    base = fs::path(*home) / ".local" / "share";
  } else {
    base = fs::current_path();
  }
  return (base / "stagewise" / "runs.db").string();
}

std::string resolveDbPath(const std::optional<std::string>& explicitPath,
                          const std::optional<std::string>& appSetting) {
  std::string path;
  if (explicitPath && !explicitPath->empty()) {
    path = *explicitPath;
  } else if (auto env = envValue("STAGEWISE_DB")) {
    path = *env;
  } else if (appSetting && !appSetting->empty()) {
    path = *appSetting;
  } else {
    path = defaultDbPath();
  }
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    fs::create_directories(parent, ec);
    if (ec) {
      throw StoreError("cannot create the folder '" + parent.string() + "' for the run store: " +
                       ec.message() + " (choose another path with --db or STAGEWISE_DB)");
    }
  }
  return path;
}

}  // namespace stagewise::storage
