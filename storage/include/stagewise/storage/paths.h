#pragma once
// Where the run store lives.

#include <optional>
#include <string>

namespace stagewise::storage {

/// `$XDG_DATA_HOME/stagewise/runs.db`, else `~/.local/share/stagewise/runs.db` (HOME unset:
/// the current directory). Creates nothing.
std::string defaultDbPath();

/// The database path to use, first that is set and non-empty: `explicitPath` (a `--db` value),
/// the `STAGEWISE_DB` environment variable, `appSetting` (a saved GUI preference), then
/// defaultDbPath(). Creates the parent directories of the result; throws StoreError when that
/// fails.
std::string resolveDbPath(const std::optional<std::string>& explicitPath = std::nullopt,
                          const std::optional<std::string>& appSetting = std::nullopt);

}  // namespace stagewise::storage
