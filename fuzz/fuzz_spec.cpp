// libFuzzer: experiment spec parsing, --set overrides, validation, model plan and partition.
// Input: a JSON document, then optional override lines ("key=value"). Only SpecError may escape
// the library; a parsed spec must survive a round trip through its canonical JSON.
#include <cstddef>
#include <cstdint>
#include <string>

#include "stagewise/engine/partition.h"

using namespace stagewise::engine;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> sets;
  size_t nl = text.find('\n');
  std::string json = text.substr(0, nl);
  while (nl != std::string::npos && sets.size() < 8) {
    size_t next = text.find('\n', nl + 1);
    sets.push_back(text.substr(nl + 1, next == std::string::npos ? std::string::npos : next - nl - 1));
    nl = next;
  }
  try {
    ExperimentSpec spec = parseSpec(sets.empty() ? json : applyOverrides(json, sets));
    if (specToJson(parseSpec(specToJson(spec))) != specToJson(spec)) __builtin_trap();
    InputShape shape{{1, 28, 28}, 10};
    auto problems = validateSpec(spec, 9, {"cpu"});
    if (!problems.empty()) return 0;
    ModelPlan plan = planModel(spec.model, shape);
    if (plan.layers.size() > 200) return 0;
    PartitionPlan partition = makePartition(spec, plan);
    estimateSpeed(partition, plan, spec.train.batchSize, 2);
  } catch (const SpecError&) {
  }
  return 0;
}
