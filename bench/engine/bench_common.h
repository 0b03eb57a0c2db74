#pragma once
// What the engine benchmarks share: `--name value` arguments, a spec with overrides, the median.

#include <algorithm>
#include <string>
#include <vector>

#include "stagewise/engine/spec.h"

namespace stagewise::bench {

/// The value after `name` on the command line, else `fallback`.
inline std::string arg(int argc, char** argv, const std::string& name,
                       const std::string& fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (argv[i] == name) return argv[i + 1];
  return fallback;
}

/// `base` with `key=value` overrides applied, as `--set` applies them.
inline engine::ExperimentSpec variant(const engine::ExperimentSpec& base,
                                      const std::vector<std::string>& sets) {
  return engine::parseSpec(engine::applyOverrides(engine::specToJson(base), sets));
}

/// The upper median (the middle value of an odd count); 0 when empty.
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace stagewise::bench
