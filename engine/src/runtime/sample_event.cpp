// The event that carries a language model's sample (run.h): written by the run's analysis
// thread, read back by the Train workspace's Sample panel.
#include <cstdlib>

#include "stagewise/engine/run.h"

namespace stagewise::engine {

namespace {
constexpr const char* kPrefix = "sample at step ";
}

std::string sampleEventMessage(int64_t step, const std::string& text) {
  return kPrefix + std::to_string(step) + ": " + text;
}

std::optional<std::pair<int64_t, std::string>> sampleFromEvent(const std::string& message) {
  const std::string prefix = kPrefix;
  if (message.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  const size_t colon = message.find(": ", prefix.size());
  if (colon == std::string::npos || colon == prefix.size()) return std::nullopt;
  const std::string number = message.substr(prefix.size(), colon - prefix.size());
  if (number.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return std::make_pair(std::strtoll(number.c_str(), nullptr, 10), message.substr(colon + 2));
}

}  // namespace stagewise::engine
