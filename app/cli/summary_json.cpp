#include "summary_json.h"

#include <cmath>
#include <cstdio>
#include <string>

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

std::string summaryTable(const engine::RunSummary& s, int rank) {
  std::string out;
  char line[256];
  char speed[64];
  if (std::isfinite(s.samplesPerSec))
    std::snprintf(speed, sizeof speed, "%.0f samples/s", s.samplesPerSec);
  else  // the run ended inside the 20-step warm-up
    std::snprintf(speed, sizeof speed, "samples/s not measured (under 20 steps)");
  std::string accuracy;
  if (std::isfinite(s.testAccuracy)) {
    char a[64];
    std::snprintf(a, sizeof a, "test accuracy %.4f", s.testAccuracy);
    accuracy = a;
  } else if (rank > 0) {  // it trained its stages; rank 0 gathers the weights and evaluates
    accuracy = "no test accuracy here (rank " + std::to_string(rank) + " trained stage";
    accuracy += s.stages.size() == 1 ? " " : "s ";
    for (size_t i = 0; i < s.stages.size(); ++i)
      accuracy += (i ? ", S" : "S") + std::to_string(s.stages[i].index + 1);
    accuracy += "; rank 0 evaluates the whole model)";
  } else {
    accuracy = "not evaluated";
  }
  std::snprintf(line, sizeof line, "%s run %s: %lld steps in %.1f s, %s, ",
                engine::toString(s.mode).c_str(), engine::toString(s.status).c_str(),
                static_cast<long long>(s.steps), s.wallSeconds, speed);
  out += line + accuracy + "\n";
  if (std::isfinite(s.testBitsPerByte)) {  // a language model (docs/metrics.md)
    std::snprintf(line, sizeof line,
                  "test loss %.4f nats per byte: %.4f bits per byte, perplexity %.3f\n", s.testLoss,
                  s.testBitsPerByte, s.testPerplexity);
    out += line;
  }
  // sent: activations and labels downstream; back: gradients upstream (pipeline); both measured.
  // act-peak: the largest activations the stage held at once (tensor sizes, not the allocator).
  // mem-peak: the most the allocator held for the stage at once (its thread's allocations).
  out +=
      "stage  layers   device  thr  steps   loss    acc     compute wait   blocked  grad-cos  "
      "sent(MiB) back(MiB) act-peak(MiB) mem-peak(MiB)\n";
  // A value not measured (backprop has no gradient cosine, a CPU-less memory peak) is "-", not
  // "nan" (issue 36 §2.5).
  const auto cell = [](double v, const char* format, int width) {
    char buf[32];
    if (std::isfinite(v))
      std::snprintf(buf, sizeof buf, format, v);
    else
      std::snprintf(buf, sizeof buf, "%*s", width, "-");
    return std::string(buf);
  };
  // Stages and layers numbered from 1 as in the workbench (S1, layers 1..3; the JSON keeps the
  // 0-based `index`), bytes in IEC units (issue 36 §3: one unit system).
  constexpr double kMiB = 1024.0 * 1024.0;
  for (const auto& st : s.stages) {
    std::snprintf(
        line, sizeof line,
        "%5s  %2d..%-3d  %-6s  %3d  %6lld  %s  %s  %6.1f%% %5.1f%% %6.1f%%  %s  "
        "%9.1f %9.1f %13.3f %s\n",
        ("S" + std::to_string(st.index + 1)).c_str(), st.firstLayer + 1, st.lastLayer + 1,
        st.device.c_str(), st.threads, static_cast<long long>(st.steps),
        cell(st.finalLoss, "%.4f", 6).c_str(), cell(st.finalAccuracy, "%.4f", 6).c_str(),
        100 * st.computeFraction, 100 * st.waitFraction, 100 * st.blockedFraction,
        cell(st.gradCosine, "%8.4f", 8).c_str(), st.bytesSent / kMiB, st.gradBytesSent / kMiB,
        st.peakActivationBytes / kMiB,
        cell(st.peakMemoryBytes >= 0 ? st.peakMemoryBytes / kMiB : std::nan(""), "%13.3f", 13)
            .c_str());
    out += line;
  }
  if (!s.error.empty()) out += "error: " + s.error + "\n";
  return out;
}

}  // namespace stagewise::cli
