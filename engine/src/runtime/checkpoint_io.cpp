#include "runtime/checkpoint_io.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "runtime/memory_meter.h"
#include "stagewise/engine/checkpoint.h"

namespace stagewise::engine {

namespace fs = std::filesystem;

std::string saveCheckpoint(const std::string& dir, int64_t step, int64_t totalSteps,
                           const std::string& specJson,
                           const std::vector<std::unique_ptr<StageRuntime>>& stages,
                           bool injectFailure, const RunTotals& totals) {
  const fs::path final = fs::path(dir) / ("step-" + std::to_string(step));
  const fs::path tmp = fs::path(dir) / ("step-" + std::to_string(step) + ".partial");
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  try {
    torch::NoGradGuard noGrad;
    for (size_t k = 0; k < stages.size(); ++k) {
      torch::serialize::OutputArchive archive;
      auto body = stages[k]->modules.bodyState();
      auto aux = stages[k]->modules.auxState();
      for (size_t i = 0; i < body.size(); ++i)
        archive.write("body." + std::to_string(i), body[i].detach().cpu());
      for (size_t i = 0; i < aux.size(); ++i)
        archive.write("aux." + std::to_string(i), aux[i].detach().cpu());
      torch::serialize::OutputArchive optimizer;
      stages[k]->optimizer->save(optimizer);
      archive.write("optimizer", optimizer);
      archive.save_to((tmp / ("stage-" + std::to_string(k) + ".pt")).string());
    }
    // The cumulative counters, so a resumed run's series and summary continue from here.
    nlohmann::json counters = nlohmann::json::array();
    for (const auto& st : stages) {
      const StageMeter::Totals t = st->meter.totals();
      counters.push_back(
          {{"bytes_sent", st->bytesSent},
           {"grad_bytes_sent", st->gradBytesSent},
           {"backprop_bytes", st->backpropBytes},
           // peaks: a resumed run's is the whole run's (issue 36's walkthrough)
           {"peak_activation_bytes", st->peakActivationBytes},
           {"peak_memory_bytes",
            memory::runPeak(memory::stagePeak(st->memorySlot, st->plan.settings.device),
                            st->peakMemoryFloor)},
           // the stage's steps, times and measured bubble: its summary is the whole run's
           {"steps", t.steps},
           {"compute_s", t.computeS},
           {"wait_s", t.waitS},
           {"blocked_s", t.blockedS},
           {"bubble_sum", st->bubble.measuredSum()},
           {"bubble_steps", st->bubble.measuredSteps()}});
    }
    if (injectFailure)
      throw std::runtime_error("injected failure after the stage files (debug.fail_checkpoint)");
    nlohmann::json state = {{"format", 1},
                            {"step", step},
                            {"total_steps", totalSteps},
                            {"elapsed_s", totals.elapsedS},
                            {"measured_samples", totals.measuredSamples},
                            {"measured_s", totals.measuredS},
                            {"stages", stages.size()},
                            {"counters", counters},
                            {"spec", nlohmann::json::parse(specJson)}};
    std::ofstream out(tmp / "state.json");
    out << state.dump(2) << "\n";
    out.close();
    if (!out) throw std::runtime_error("cannot write " + (tmp / "state.json").string());
    fs::remove_all(final);
    fs::rename(tmp, final);
  } catch (...) {
    // A checkpoint is whole or absent: never a partial folder that looks like one.
    std::error_code ec;
    fs::remove_all(tmp, ec);
    throw;
  }
  return final.string();
}

int64_t loadCheckpoint(const std::string& folder,
                       const std::vector<std::unique_ptr<StageRuntime>>& stages,
                       RunTotals* totals) {
  CheckpointInfo info = readCheckpointInfo(folder);
  if (info.stages != static_cast<int>(stages.size()))
    throw std::runtime_error(info.path + ": the checkpoint has " + std::to_string(info.stages) +
                             " stages but this run has " + std::to_string(stages.size()) +
                             "; resume with the checkpoint's own partition");
  // The counters (absent in checkpoints written before they were saved: they then restart,
  // and `totals->complete` says so).
  {
    std::ifstream in(std::filesystem::path(info.path) / "state.json");
    const nlohmann::json state = nlohmann::json::parse(in, nullptr, false);
    bool complete =
        state.is_object() && state.contains("measured_samples") && state.contains("measured_s");
    if (state.is_object() && state.contains("counters") && state["counters"].is_array() &&
        state["counters"].size() == stages.size()) {
      for (size_t k = 0; k < stages.size(); ++k) {
        const auto& c = state["counters"][k];
        if (!c.is_object()) {
          complete = false;
          continue;
        }
        stages[k]->bytesSent = c.value("bytes_sent", int64_t{0});
        stages[k]->gradBytesSent = c.value("grad_bytes_sent", int64_t{0});
        stages[k]->backpropBytes = c.value("backprop_bytes", int64_t{0});
        stages[k]->peakActivationBytes = c.value("peak_activation_bytes", int64_t{0});
        stages[k]->peakMemoryFloor = std::max<int64_t>(0, c.value("peak_memory_bytes", int64_t{0}));
        if (!c.contains("steps")) {
          complete = false;
          continue;
        }
        stages[k]->meter.continueFrom({c.value("steps", int64_t{0}), c.value("compute_s", 0.0),
                                       c.value("wait_s", 0.0), c.value("blocked_s", 0.0)});
        stages[k]->bubble.continueFrom(c.value("bubble_sum", 0.0),
                                       c.value("bubble_steps", int64_t{0}));
      }
    } else {
      complete = false;
    }
    if (totals) {
      totals->elapsedS = info.elapsedS;
      totals->complete = complete;
      if (complete) {
        totals->measuredSamples = state.value("measured_samples", int64_t{0});
        totals->measuredS = state.value("measured_s", 0.0);
      }
    }
  }
  torch::NoGradGuard noGrad;
  for (size_t k = 0; k < stages.size(); ++k) {
    const std::string file =
        (fs::path(info.path) / ("stage-" + std::to_string(k) + ".pt")).string();
    try {
      torch::serialize::InputArchive archive;
      archive.load_from(file, stages[k]->device);  // optimizer state lands on the stage's device
      auto restore = [&](const std::vector<torch::Tensor>& targets, const std::string& prefix) {
        for (size_t i = 0; i < targets.size(); ++i) {
          torch::Tensor t;
          archive.read(prefix + std::to_string(i), t);
          if (t.sizes() != targets[i].sizes())
            throw std::runtime_error("tensor " + prefix + std::to_string(i) + " has another shape");
          targets[i].copy_(t);
        }
      };
      restore(stages[k]->modules.bodyState(), "body.");
      restore(stages[k]->modules.auxState(), "aux.");
      torch::serialize::InputArchive optimizer;
      archive.read("optimizer", optimizer);
      stages[k]->optimizer->load(optimizer);
    } catch (const c10::Error& e) {
      throw std::runtime_error(file + ": cannot restore stage " + std::to_string(k) + " (" +
                               e.what_without_backtrace() + ")");
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(file + ": cannot restore stage " + std::to_string(k) + " (" +
                               e.what() + ")");
    }
  }
  return info.step;
}

}  // namespace stagewise::engine
