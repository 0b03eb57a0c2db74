#include "summary_json.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace stagewise::recorder::detail {

namespace {

using Json = nlohmann::json;

// JSON has no NaN: a value not measured (kNoValue) is null.
Json num(double v) {
  return std::isfinite(v) ? Json(v) : Json(nullptr);
}

}  // namespace

std::string summaryToJson(const engine::RunSummary& s) {
  Json stages = Json::array();
  for (const auto& st : s.stages) {
    stages.push_back({{"index", st.index},
                      {"device", st.device},
                      {"first_layer", st.firstLayer},
                      {"last_layer", st.lastLayer},
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
                      {"param_checksum", num(st.paramChecksum)},
                      {"mean_step_seconds", num(st.meanStepSeconds)}});
  }
  const Json doc = {{"status", engine::toString(s.status)},
                    {"mode", engine::toString(s.mode)},
                    {"steps", s.steps},
                    {"samples", s.samples},
                    {"samples_per_sec", num(s.samplesPerSec)},
                    {"test_accuracy", num(s.testAccuracy)},
                    {"test_loss", num(s.testLoss)},
                    {"wall_seconds", num(s.wallSeconds)},
                    {"cpu_utilization", num(s.cpuUtilization)},
                    {"pipeline_efficiency", num(s.pipelineEfficiency)},
                    {"blas", s.blas},
                    {"threads", s.threads},
                    {"flush_denormal", s.flushDenormal},
                    {"error", s.error},
                    {"failed_stage", s.failedStage >= 0 ? Json(s.failedStage) : Json(nullptr)},
                    {"stages", stages}};
  return doc.dump();
}

}  // namespace stagewise::recorder::detail
