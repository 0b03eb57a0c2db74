#include <cmath>
#include <nlohmann/json.hpp>

#include "stagewise/engine/machine_load.h"
#include "stagewise/engine/metrics.h"

namespace stagewise::engine {

using nlohmann::json;

// JSON has no NaN: a value not measured (kNoValue) is null.
static json num(double v) {
  return std::isfinite(v) ? json(v) : json(nullptr);
}

static json loadJson(const MachineLoad& l) {
  return {{"load_average", num(l.loadAverage)},
          {"steal_share", num(l.stealShare)},
          {"cores", l.cores > 0 ? json(l.cores) : json(nullptr)}};
}

std::string summaryToJson(const RunSummary& s) {
  json stages = json::array();
  for (const auto& st : s.stages)
    stages.push_back(
        {{"index", st.index},
         {"device", st.device},
         {"layers", {st.firstLayer, st.lastLayer}},
         {"threads", st.threads},
         {"steps", st.steps},
         {"final_loss", num(st.finalLoss)},
         {"final_accuracy", num(st.finalAccuracy)},
         {"compute_fraction", num(st.computeFraction)},
         {"wait_fraction", num(st.waitFraction)},
         {"blocked_fraction", num(st.blockedFraction)},
         {"bytes_sent", st.bytesSent},
         {"grad_bytes_sent", st.gradBytesSent},
         {"backprop_bytes", st.backpropBytes},
         {"grad_cosine", num(st.gradCosine)},
         {"bubble_measured", num(st.bubbleMeasured)},
         {"bubble_planned", num(st.bubblePlanned)},
         {"peak_activation_bytes", st.peakActivationBytes},
         {"peak_memory_bytes", st.peakMemoryBytes >= 0 ? json(st.peakMemoryBytes) : json(nullptr)},
         {"mean_step_seconds", num(st.meanStepSeconds)},
         {"param_checksum", num(st.paramChecksum)}});
  const json doc = {{"status", toString(s.status)},
                    {"mode", toString(s.mode)},
                    {"steps", s.steps},
                    {"samples", s.samples},
                    {"samples_per_sec", num(s.samplesPerSec)},
                    {"test_accuracy", num(s.testAccuracy)},
                    {"test_loss", num(s.testLoss)},
                    {"test_perplexity", num(s.testPerplexity)},
                    {"test_bits_per_byte", num(s.testBitsPerByte)},
                    {"val_accuracy", num(s.valAccuracy)},
                    {"val_loss", num(s.valLoss)},
                    {"wall_seconds", num(s.wallSeconds)},
                    {"paused_seconds", num(s.pausedSeconds)},
                    {"cpu_utilization", num(s.cpuUtilization)},
                    {"pipeline_efficiency", num(s.pipelineEfficiency)},
                    {"overlap_layers", s.overlapLayers},
                    {"overlap_delay", s.overlapDelay},
                    {"train_flops", s.trainFlops},
                    {"measure_share", num(s.measureShare)},
                    {"measure_budget", num(s.measureBudget)},
                    {"measure_points",
                     {{"probes", s.probePoints},
                      {"evaluations", s.evalPoints},
                      {"left_out", s.thinnedPoints},
                      {"skipped", s.skippedPoints}}},
                    {"blas", s.blas},
                    {"threads", s.threads},
                    {"flush_denormal", s.flushDenormal},
                    {"load_start", loadJson(s.loadStart)},
                    {"load_end", loadJson(s.loadEnd)},
                    {"error", s.error.empty() ? json(nullptr) : json(s.error)},
                    {"failed_stage", s.failedStage >= 0 ? json(s.failedStage) : json(nullptr)},
                    {"stages", stages}};
  return doc.dump();
}

static MachineLoad loadFrom(const json& j) {
  MachineLoad l;
  if (!j.is_object()) return l;
  if (j.contains("load_average") && j["load_average"].is_number())
    l.loadAverage = j["load_average"].get<double>();
  if (j.contains("steal_share") && j["steal_share"].is_number())
    l.stealShare = j["steal_share"].get<double>();
  if (j.contains("cores") && j["cores"].is_number_integer()) l.cores = j["cores"].get<int>();
  return l;
}

RunLoad runLoadFromSummary(int64_t runId, const std::string& summaryJson) {
  RunLoad r;
  r.runId = runId;
  const json doc = json::parse(summaryJson, nullptr, false);
  if (!doc.is_object()) return r;
  if (doc.contains("load_start")) r.start = loadFrom(doc["load_start"]);
  if (doc.contains("load_end")) r.end = loadFrom(doc["load_end"]);
  return r;
}

}  // namespace stagewise::engine
