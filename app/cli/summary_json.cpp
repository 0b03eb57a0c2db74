#include "summary_json.h"

#include <cmath>
#include <cstdio>

namespace stagewise::cli {

using nlohmann::json;

static json num(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json summaryJson(const engine::RunSummary& s, std::optional<int64_t> runId) {
  json stages = json::array();
  for (const auto& st : s.stages)
    stages.push_back({{"index", st.index},
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
                      {"backprop_bytes", st.backpropBytes},
                      {"grad_cosine", num(st.gradCosine)},
                      {"peak_activation_bytes", st.peakActivationBytes},
                      {"mean_step_seconds", num(st.meanStepSeconds)},
                      {"param_checksum", num(st.paramChecksum)}});
  return {{"run_id", runId ? json(*runId) : json(nullptr)},
          {"status", engine::toString(s.status)},
          {"mode", engine::toString(s.mode)},
          {"steps", s.steps},
          {"samples_per_sec", num(s.samplesPerSec)},
          {"test_accuracy", num(s.testAccuracy)},
          {"test_loss", num(s.testLoss)},
          {"wall_seconds", num(s.wallSeconds)},
          {"cpu_utilization", num(s.cpuUtilization)},
          {"pipeline_efficiency", num(s.pipelineEfficiency)},
          {"blas", s.blas},
          {"threads", s.threads},
          {"flush_denormal", s.flushDenormal},
          {"error", s.error.empty() ? json(nullptr) : json(s.error)},
          {"failed_stage", s.failedStage >= 0 ? json(s.failedStage) : json(nullptr)},
          {"stages", stages}};
}

std::string summaryTable(const engine::RunSummary& s) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "%s run %s: %lld steps in %.1f s, %.0f samples/s, test accuracy %.4f\n",
                engine::toString(s.mode).c_str(), engine::toString(s.status).c_str(),
                static_cast<long long>(s.steps), s.wallSeconds, s.samplesPerSec, s.testAccuracy);
  out += line;
  out += "stage  layers   device  thr  steps   loss    acc     compute wait   blocked  grad-cos  sent(MB)\n";
  for (const auto& st : s.stages) {
    std::snprintf(line, sizeof line, "%5d  %2d..%-3d  %-6s  %3d  %6lld  %.4f  %.4f  %6.1f%% %5.1f%% %6.1f%%  %8.4f  %8.1f\n",
                  st.index, st.firstLayer, st.lastLayer, st.device.c_str(), st.threads,
                  static_cast<long long>(st.steps), st.finalLoss, st.finalAccuracy, 100 * st.computeFraction,
                  100 * st.waitFraction, 100 * st.blockedFraction, st.gradCosine, st.bytesSent / 1e6);
    out += line;
  }
  if (!s.error.empty()) out += "error: " + s.error + "\n";
  return out;
}

}  // namespace stagewise::cli
