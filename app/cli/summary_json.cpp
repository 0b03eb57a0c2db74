#include "summary_json.h"

#include <cmath>
#include <cstdio>

namespace stagewise::cli {

nlohmann::json summaryJson(const engine::RunSummary& s, std::optional<int64_t> runId,
                           const std::vector<engine::RunChange>* changes) {
  nlohmann::json out = {{"run_id", runId ? nlohmann::json(*runId) : nlohmann::json(nullptr)}};
  out.update(nlohmann::json::parse(engine::summaryToJson(s)));
  if (changes) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& c : *changes) {
      // The value as JSON where it is JSON ([4], 0.5), else as text.
      nlohmann::json value = nlohmann::json::parse(c.value, nullptr, false);
      if (value.is_discarded()) value = c.value;
      list.push_back({{"step", c.step}, {"key", c.key}, {"value", value}, {"pause_s", c.pauseS}});
    }
    out["changes"] = list;
  }
  return out;
}

std::string summaryTable(const engine::RunSummary& s) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line,
                "%s run %s: %lld steps in %.1f s, %.0f samples/s, test accuracy %.4f\n",
                engine::toString(s.mode).c_str(), engine::toString(s.status).c_str(),
                static_cast<long long>(s.steps), s.wallSeconds, s.samplesPerSec, s.testAccuracy);
  out += line;
  // sent: activations and labels downstream; back: gradients upstream (pipeline); both measured.
  // act-peak: the largest activations the stage held at once (tensor sizes, not the allocator).
  // mem-peak: the most the allocator held for the stage at once (its thread's allocations).
  out +=
      "stage  layers   device  thr  steps   loss    acc     compute wait   blocked  grad-cos  "
      "sent(MB)  back(MB)  act-peak(MB)  mem-peak(MB)\n";
  for (const auto& st : s.stages) {
    std::snprintf(line, sizeof line,
                  "%5d  %2d..%-3d  %-6s  %3d  %6lld  %.4f  %.4f  %6.1f%% %5.1f%% %6.1f%%  %8.4f  "
                  "%8.1f  %8.1f  %12.3f  %12.3f\n",
                  st.index, st.firstLayer, st.lastLayer, st.device.c_str(), st.threads,
                  static_cast<long long>(st.steps), st.finalLoss, st.finalAccuracy,
                  100 * st.computeFraction, 100 * st.waitFraction, 100 * st.blockedFraction,
                  st.gradCosine, st.bytesSent / 1e6, st.gradBytesSent / 1e6,
                  st.peakActivationBytes / 1e6,
                  st.peakMemoryBytes >= 0 ? st.peakMemoryBytes / 1e6 : std::nan(""));
    out += line;
  }
  if (!s.error.empty()) out += "error: " + s.error + "\n";
  return out;
}

}  // namespace stagewise::cli
