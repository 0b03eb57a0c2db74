// Every preset: samples/s local (as shipped) vs backprop at its best thread count, pipeline
// efficiency, test accuracy after the same wall time, and the cuts balanced by measured layer
// time against the FLOPs balance (both trained side by side). Prints a table.
//
//   bench_presets [--steps N] [--json FILE]

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "bench_common.h"
#include "stagewise/engine/dataset.h"
#include "stagewise/engine/engine.h"
#include "stagewise/engine/omp_wait.h"
#include "stagewise/engine/partition.h"

using namespace stagewise::engine;
using stagewise::bench::arg;
using stagewise::bench::variant;

namespace {

RunSummary train(const ExperimentSpec& spec, double budgetS = 0) {
  auto run = createRun(spec, nullptr);
  run->start();
  if (budgetS > 0 && !run->waitFor(std::chrono::milliseconds(static_cast<int64_t>(budgetS * 1000))))
    run->requestStop();
  return run->wait();
}

std::string cutsText(const std::vector<int>& cuts) {
  std::string s = "[";
  for (size_t i = 0; i < cuts.size(); ++i) s += (i ? "," : "") + std::to_string(cuts[i]);
  return s + "]";
}

}  // namespace

int main(int argc, char** argv) {
  ensureOmpWaitDefault(argv);  // as the CLI and the workbench do (may re-execute)
  const int64_t steps = std::stoll(arg(argc, argv, "--steps", "300"));
  const std::string jsonPath = arg(argc, argv, "--json", "");
  const EngineInfo info = engineInfo();
  std::printf(
      "BLAS: %s | OpenMP workers: %s | %d cores | %lld steps per throughput row | probe/eval off "
      "in throughput rows\n\n",
      info.blas.c_str(), info.openmpWait.c_str(), info.hardwareCores,
      static_cast<long long>(steps));
  nlohmann::json out = nlohmann::json::array();
  std::printf("%-20s %10s %10s %8s %7s %9s | %-12s %9s %-12s %9s | %8s %8s\n", "preset", "local/s",
              "bp-best/s", "ratio", "bp-thr", "pipe-eff", "cuts(time)", "local/s", "cuts(flops)",
              "local/s", "acc-loc", "acc-bp");
  for (const std::string name : {"mlp-fmnist-4stage", "cnn-fmnist-4stage", "vit-fmnist-4stage"}) {
    const ExperimentSpec preset =
        loadSpec(STAGEWISE_SOURCE_DIR "/resources/experiments/" + name + ".json");
    const std::string maxSteps = "train.max_steps=" + std::to_string(steps);
    const ExperimentSpec quiet =
        variant(preset, {maxSteps, "probe.interval=-1", "eval.interval=0"});
    const RunSummary local = train(quiet);
    double bpBest = 0;
    int bpThreads = 1;
    for (int t = 1; t <= info.hardwareCores; ++t) {
      RunSummary b =
          train(variant(quiet, {"mode=backprop", "train.backprop_threads=" + std::to_string(t)}));
      if (b.samplesPerSec > bpBest) bpBest = b.samplesPerSec, bpThreads = t;
    }
    // balance by measured time vs by FLOPs, trained side by side
    const ModelPlan plan = planModel(preset.model, probeInputShape(preset.dataset));
    const LayerProfile profile = profileLayers(quiet, 6);
    const auto byTime = balanceCuts(profile.seconds, preset.stageCount());
    const auto byFlops = balanceCuts(flopCosts(plan), preset.stageCount());
    nlohmann::json cutsTime = byTime, cutsFlops = byFlops;
    const RunSummary timeRun = train(variant(quiet, {"partition.cuts=" + cutsTime.dump()}));
    const RunSummary flopsRun = train(variant(quiet, {"partition.cuts=" + cutsFlops.dump()}));
    // accuracy after the same wall time: local as shipped trains `steps`, backprop gets its time
    const RunSummary accLocal =
        train(variant(preset, {maxSteps, "probe.interval=-1", "eval.interval=0"}));
    const RunSummary accBp =
        train(variant(preset, {"probe.interval=-1", "eval.interval=0", "mode=backprop",
                               "train.backprop_threads=" + std::to_string(bpThreads)}),
              accLocal.wallSeconds);
    std::printf("%-20s %10.0f %10.0f %8.3f %7d %8.0f%% | %-12s %9.0f %-12s %9.0f | %8.4f %8.4f\n",
                name.c_str(), local.samplesPerSec, bpBest, local.samplesPerSec / bpBest, bpThreads,
                100 * local.pipelineEfficiency, cutsText(byTime).c_str(), timeRun.samplesPerSec,
                cutsText(byFlops).c_str(), flopsRun.samplesPerSec, accLocal.testAccuracy,
                accBp.testAccuracy);
    out.push_back({{"preset", name},
                   {"local_samples_per_sec", local.samplesPerSec},
                   {"backprop_best_samples_per_sec", bpBest},
                   {"backprop_best_threads", bpThreads},
                   {"pipeline_efficiency", local.pipelineEfficiency},
                   {"cuts_by_time", byTime},
                   {"cuts_by_flops", byFlops},
                   {"samples_per_sec_cuts_by_time", timeRun.samplesPerSec},
                   {"samples_per_sec_cuts_by_flops", flopsRun.samplesPerSec},
                   {"equal_time_seconds", accLocal.wallSeconds},
                   {"equal_time_accuracy_local", accLocal.testAccuracy},
                   {"equal_time_accuracy_backprop", accBp.testAccuracy},
                   {"equal_time_backprop_steps", accBp.steps}});
  }
  if (!jsonPath.empty()) std::ofstream(jsonPath) << out.dump(2) << "\n";
  return 0;
}
