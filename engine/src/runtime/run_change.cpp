#include "runtime/run_change.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace stagewise::engine {

std::string cutsText(const std::vector<int>& cuts) {
  std::string s = "[";
  for (size_t i = 0; i < cuts.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(cuts[i]);
  }
  s += ']';
  return s;
}

std::vector<int> cutsFromText(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_array())
    throw std::invalid_argument("partition.cuts needs a list of layer indices, like [2,4]; got '" +
                                text + "'");
  std::vector<int> cuts;
  for (const auto& v : j) {
    if (!v.is_number_integer())
      throw std::invalid_argument("partition.cuts needs whole layer indices, like [2,4]; got '" +
                                  text + "'");
    cuts.push_back(v.get<int>());
  }
  return cuts;
}

bool splitStageKey(const std::string& key, int& stage, std::string& setting) {
  static const std::regex re(R"(stages\.(\d{1,4})\.([a-z_]+))");
  std::smatch m;
  if (!std::regex_match(key, m, re)) return false;
  stage = std::stoi(m[1].str());
  setting = m[2].str();
  return true;
}

std::string stageValueText(const std::string& setting, double value) {
  if (!std::isfinite(value)) throw std::invalid_argument(setting + " needs a finite number");
  if (setting == "delay_ms" || setting == "threads") {
    if (value != std::floor(value))
      throw std::invalid_argument(setting + " needs a whole number; got " + std::to_string(value));
    if (setting == "delay_ms" && (value < 0 || value > 600000))
      throw std::invalid_argument("delay_ms needs 0 to 600000 milliseconds");
    if (setting == "threads" && (value < 1 || value > 1024))
      throw std::invalid_argument("threads needs 1 to 1024 intra-op threads");
    return std::to_string(static_cast<int64_t>(value));
  }
  if (setting == "lr_scale") {
    if (value <= 0) throw std::invalid_argument("lr_scale needs a number above 0");
    std::ostringstream out;
    out.precision(17);
    out << value;
    return out.str();
  }
  throw std::invalid_argument("'" + setting +
                              "' cannot change while a run trains: use delay_ms, lr_scale or "
                              "threads");
}

std::string stageLabel(int index) {
  return "S" + std::to_string(index + 1);
}

std::string stageLayoutText(const std::vector<std::pair<int, int>>& firstLast) {
  std::string out;
  for (size_t k = 0; k < firstLast.size(); ++k) {
    if (!out.empty()) out += ", ";
    out += stageLabel(static_cast<int>(k)) + ": layers " + std::to_string(firstLast[k].first + 1) +
           "-" + std::to_string(firstLast[k].second + 1);
  }
  return out;
}

std::string stagePauseMessage(int index, bool paused, int64_t step) {
  return stageLabel(index) + (paused ? " paused" : " resumed") + " at step " + std::to_string(step);
}

std::string changeEventMessage(int64_t step, const std::string& key, const std::string& value) {
  return "change at step " + std::to_string(step) + ": " + key + "=" + value;
}

RunChange parseRunChange(const std::string& text) {
  static const std::regex re(R"(\s*(\d+)\s*:\s*([A-Za-z0-9_.]+)\s*=\s*(.+?)\s*)");
  std::smatch m;
  if (!std::regex_match(text, m, re))
    throw std::invalid_argument("'" + text +
                                "': a change is STEP:KEY=VALUE, like 500:partition.cuts=[4] or "
                                "200:stages.1.delay_ms=20");
  RunChange c;
  c.step = std::stoll(m[1].str());
  c.key = m[2].str();
  const std::string value = m[3].str();
  int stage = 0;
  std::string setting;
  if (c.key == "partition.cuts") {
    c.value = cutsText(cutsFromText(value));
  } else if (splitStageKey(c.key, stage, setting)) {
    if (setting != "delay_ms" && setting != "lr_scale" && setting != "threads")
      throw std::invalid_argument("'" + text + "': '" + setting +
                                  "' cannot change while a run trains: use delay_ms, lr_scale or "
                                  "threads");
    double v = 0;
    try {
      size_t used = 0;
      v = std::stod(value, &used);
      if (used != value.size()) throw std::invalid_argument(value);
    } catch (const std::exception&) {
      throw std::invalid_argument("'" + text + "': " + setting + " needs a number; got '" + value +
                                  "'");
    }
    try {
      c.value = stageValueText(setting, v);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("'" + text + "': " + e.what());
    }
  } else {
    throw std::invalid_argument("'" + text + "': unknown key '" + c.key +
                                "'; use partition.cuts, stages.N.delay_ms, stages.N.lr_scale or "
                                "stages.N.threads");
  }
  return c;
}

std::optional<RunChange> changeFromEvent(const std::string& message) {
  static const std::regex re(
      R"((?:change|repartition) at step (\d+): ([A-Za-z0-9_.]+)=([^\s;]+).*)");
  std::smatch m;
  if (!std::regex_match(message, m, re)) return std::nullopt;
  RunChange c;
  c.step = std::stoll(m[1].str());
  c.key = m[2].str();
  c.value = m[3].str();
  static const std::regex pause(R"(.*; pause ([0-9.eE+-]+) s.*)");
  std::smatch p;
  if (std::regex_match(message, p, pause)) c.pauseS = std::stod(p[1].str());
  return c;
}

}  // namespace stagewise::engine
