#pragma once
// The shipped experiment presets: where they are (installed next to the program, or in the
// source tree of a build) and how a bare preset name given to --config finds its file.

#include <string>
#include <vector>

namespace stagewise::cli {

/// The presets folder: `<program>/../share/stagewise/experiments` when installed, else the
/// source tree's `resources/experiments`; empty when neither exists.
std::string presetDir();
/// The preset files in it (names only, sorted).
std::vector<std::string> presetNames();
/// An experiment file's text; UsageError "cannot open experiment file" when it cannot be read.
std::string readConfigText(const std::string& path);
/// `path` itself when it exists; else, for a bare name (`mlp-fmnist-4stage`, with or without
/// `.json`), that preset's file; else `path` unchanged (the caller reports it missing).
std::string resolveConfig(const std::string& path);

}  // namespace stagewise::cli
