#include "stagewise/engine/spec.h"

#include <algorithm>

#include "stagewise/engine/pipeline_schedule.h"

namespace stagewise::engine {

std::string toString(Mode mode) {
  switch (mode) {
    case Mode::Local:
      return "local";
    case Mode::Backprop:
      return "backprop";
    case Mode::Pipeline:
      return "pipeline";
  }
  return "local";
}

std::optional<Mode> modeFromString(std::string_view text) {
  if (text == "local") return Mode::Local;
  if (text == "backprop") return Mode::Backprop;
  if (text == "pipeline") return Mode::Pipeline;
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
  if (o.rank) s.rank = *o.rank;
  return s;
}

std::vector<int> assignRanks(const ExperimentSpec& spec, int numStages, int worldSize) {
  if (worldSize < 1) throw SpecError("", "the world size must be at least 1");
  if (spec.mode == Mode::Backprop)
    throw SpecError("mode",
                    "backprop runs in one process (the whole model is one stage); spread "
                    "stages over processes with mode=local or mode=pipeline, or run without "
                    "--dist / launch");
  if (spec.checkpoint.enabled())
    throw SpecError("checkpoint",
                    "checkpoints are not supported in a distributed run yet; remove "
                    "checkpoint.interval and checkpoint.dir");
  if (numStages < worldSize)
    throw SpecError("partition.cuts", "a run of " + std::to_string(worldSize) +
                                          " processes needs at least " + std::to_string(worldSize) +
                                          " stages, this one has " + std::to_string(numStages) +
                                          "; add cuts or start fewer processes");
  // interleaved: a worker's chunks take turns on its own threads, so a worker is one process:
  // rank r runs the stages of worker r (r, r + W, ...), and every boundary crosses processes.
  const int chunks = spec.pipeline.chunks;
  const bool interleaved = spec.mode == Mode::Pipeline && spec.pipeline.schedule == "interleaved" &&
                           chunks > 1 && worldSize > 1;
  if (interleaved) {
    const int workers = numStages / chunks;
    if (numStages % chunks != 0)
      throw SpecError("pipeline.chunks", "interleaved needs the " + std::to_string(numStages) +
                                             " stages to be a multiple of " +
                                             std::to_string(chunks) + " chunks");
    auto count = [](int n, const std::string& noun) {
      return std::to_string(n) + " " + noun + (n == 1 ? "" : noun.ends_with('s') ? "es" : "s");
    };
    if (worldSize != workers)
      throw SpecError("pipeline.chunks",
                      "interleaved with " + std::to_string(chunks) + " chunks runs its " +
                          std::to_string(numStages) + " stages on " + count(workers, "worker") +
                          ", one process each: start " + count(workers, "process") + ", not " +
                          std::to_string(worldSize) + " (or change pipeline.chunks)");
  }
  std::vector<int> ranks(static_cast<size_t>(numStages));
  for (int k = 0; k < numStages; ++k) {
    const int explicitRank = spec.stageSettings(k).rank;
    const std::string field =
        k < static_cast<int>(spec.stages.size()) && spec.stages[static_cast<size_t>(k)].rank
            ? "stages[" + std::to_string(k) + "].rank"
            : "stage_defaults.rank";
    if (explicitRank >= worldSize)
      throw SpecError(field, "rank " + std::to_string(explicitRank) +
                                 " does not exist in a run of " + std::to_string(worldSize) +
                                 " processes (ranks 0.." + std::to_string(worldSize - 1) + ")");
    if (explicitRank < -1) throw SpecError(field, "must be a rank >= 0, or -1 for the default");
    if (interleaved) {
      const int worker = schedule::workerOf(k, numStages, chunks);
      if (explicitRank >= 0 && explicitRank != worker)
        throw SpecError(field, "interleaved runs stage " + std::to_string(k) + " on worker " +
                                   std::to_string(worker) + " (stage mod " +
                                   std::to_string(worldSize) + "), whose process is rank " +
                                   std::to_string(worker) + ", not " +
                                   std::to_string(explicitRank) + "; set it to " +
                                   std::to_string(worker) + " or remove it");
      ranks[static_cast<size_t>(k)] = worker;
      continue;
    }
    ranks[static_cast<size_t>(k)] =
        explicitRank >= 0 ? explicitRank
                          : static_cast<int>(static_cast<int64_t>(k) * worldSize / numStages);
  }
  for (int r = 0; r < worldSize; ++r)
    if (std::find(ranks.begin(), ranks.end(), r) == ranks.end())
      throw SpecError("stages", "rank " + std::to_string(r) +
                                    " would run no stage; map stages to ranks with "
                                    "stages[i].rank, or start " +
                                    std::to_string(worldSize - 1) + " processes or fewer");
  return ranks;
}

}  // namespace stagewise::engine
