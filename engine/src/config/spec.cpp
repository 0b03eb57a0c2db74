#include "stagewise/engine/spec.h"

namespace stagewise::engine {

std::string toString(Mode mode) { return mode == Mode::Local ? "local" : "backprop"; }

std::optional<Mode> modeFromString(std::string_view text) {
  if (text == "local") return Mode::Local;
  if (text == "backprop") return Mode::Backprop;
  return std::nullopt;
}

static std::string formatSpecError(const std::string& source, const std::string& field,
                                   const std::string& message) {
  std::string out = source.empty() ? "" : source + ": ";
  if (!field.empty()) out += field + ": ";
  return out + message;
}

SpecError::SpecError(std::string field, std::string message, const std::string& source)
    : std::runtime_error(formatSpecError(source, field, message)),
      m_field(std::move(field)),
      m_message(std::move(message)) {}

int ExperimentSpec::stageCount() const {
  if (partition.balance != "manual" && partition.numStages > 0) return partition.numStages;
  return static_cast<int>(partition.cuts.size()) + 1;
}

StageSettings ExperimentSpec::stageSettings(int index) const {
  StageSettings s = stageDefaults;
  if (index < 0 || index >= static_cast<int>(stages.size())) return s;
  const StageOverride& o = stages[static_cast<size_t>(index)];
  if (o.device) s.device = *o.device;
  if (o.auxHead) s.auxHead = *o.auxHead;
  if (o.auxHidden) s.auxHidden = *o.auxHidden;
  if (o.threads) s.threads = *o.threads;
  if (o.cores) s.cores = *o.cores;
  if (o.lrScale) s.lrScale = *o.lrScale;
  if (o.delayMs) s.delayMs = *o.delayMs;
  return s;
}

}  // namespace stagewise::engine
