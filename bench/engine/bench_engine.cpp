// Throughput of local parallelism vs backprop on the default preset, the engine's overhead over
// plain LibTorch loops, the probe's cost and accuracy at equal wall time. Prints a table; every
// ratio is measured side by side in one run (rows interleaved, best of --repeats).
//
//   bench_engine [--repeats N] [--steps N] [--json FILE] [--skip-accuracy] [--only TEXT] [--batch N]
//
// --only keeps the rows whose name contains TEXT (e.g. "local loop, 2"; several: "a|b"), --batch one batch size:
// for profiling one row under perf; ratios whose rows did not run are left out.

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "data/tensor_data.h"
#include "plain_loops.h"
#include "stagewise/engine/engine.h"
#include "stagewise/engine/omp_wait.h"
#ifdef STAGEWISE_HAVE_STORE
#include <filesystem>

#include "stagewise/recorder/recorder.h"
#include "stagewise/storage/run_store.h"
#endif

using namespace stagewise;
using namespace stagewise::engine;

namespace {

struct Row {
  std::string name;
  std::string mode;
  int batch = 32;
  int threadsPerStage = 1;
  int stages = 1;
  double samplesPerSec = 0;
  double efficiency = -1;
  double cpu = -1;
};

ExperimentSpec variant(const ExperimentSpec& base, const std::vector<std::string>& sets) {
  return parseSpec(applyOverrides(specToJson(base), sets));
}

RunSummary runEngine(const ExperimentSpec& spec, RunObserver* observer = nullptr) {
  auto run = createRun(spec, observer);
  run->start();
  return run->wait();
}

#ifdef STAGEWISE_HAVE_STORE
// The same run, recorded into a fresh run store (every point, span and event).
RunSummary runRecorded(const ExperimentSpec& spec) {
  const auto path = std::filesystem::temp_directory_path() / "stagewise-bench-store.db";
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + suffix);
  storage::RunStore store(path.string());
  recorder::Recorder rec(store);
  return runEngine(spec, &rec);
}
#endif

std::string arg(int argc, char** argv, const std::string& name, const std::string& fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (argv[i] == name) return argv[i + 1];
  return fallback;
}
bool flag(int argc, char** argv, const std::string& name) {
  for (int i = 1; i < argc; ++i)
    if (argv[i] == name) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  ensureOmpWaitDefault(argv);  // as the CLI and the workbench do (may re-execute)
  const int repeats = std::stoi(arg(argc, argv, "--repeats", "2"));
  const int64_t steps32 = std::stoll(arg(argc, argv, "--steps", "500"));
  const std::string jsonPath = arg(argc, argv, "--json", "");
  const ExperimentSpec preset = loadSpec(STAGEWISE_SOURCE_DIR "/resources/experiments/mlp-fmnist-4stage.json");
  const EngineInfo info = engineInfo();
  const int cores = info.hardwareCores;
  std::printf("BLAS: %s | OpenMP workers: %s | LibTorch %s | %d cores | denormals flushed in every compute thread | Adam lr 1e-3 (fused CPU update)\n",
              info.blas.c_str(), info.openmpWait.c_str(), info.torchVersion.c_str(), cores);
  std::printf("preset: mlp-fmnist-4stage (8x512 MLP, Fashion-MNIST); probe and eval off in throughput rows\n\n");
  const TensorData data = loadTensorData(preset.dataset, preset.train.seed);

  std::vector<Row> rows;
  std::map<std::string, double> best;
  int rep = 0;
  auto record = [&](Row r) {
    // progress on stderr, one line per measurement (the table below keeps the best of each row)
    std::fprintf(stderr, "  [repeat %d/%d] %-46s batch %3d  %8.0f samples/s\n", rep + 1, repeats, r.name.c_str(),
                 r.batch, r.samplesPerSec);
    auto& b = best[r.name + "/" + std::to_string(r.batch)];
    b = std::max(b, r.samplesPerSec);
    for (auto& existing : rows)
      if (existing.name == r.name && existing.batch == r.batch) {
        if (r.samplesPerSec > existing.samplesPerSec) existing = r;
        return;
      }
    rows.push_back(r);
  };
  const std::vector<std::string> quiet = {"probe.interval=-1", "eval.interval=0"};
  const std::string only = arg(argc, argv, "--only", "");
  const int onlyBatch = std::stoi(arg(argc, argv, "--batch", "0"));
  auto want = [&](const std::string& name) {
    if (only.empty()) return true;
    for (size_t from = 0; from <= only.size();) {  // alternatives separated by '|'
      const size_t comma = std::min(only.find('|', from), only.size());
      if (name.find(only.substr(from, comma - from)) != std::string::npos) return true;
      from = comma + 1;
    }
    return false;
  };
  const bool filtered = !only.empty() || onlyBatch != 0;

  for (rep = 0; rep < repeats; ++rep) {
    for (int batch : {32, 128}) {
      if (onlyBatch != 0 && batch != onlyBatch) continue;
      const int64_t steps = batch == 32 ? steps32 : std::max<int64_t>(60, steps32 / 3);
      auto sets = quiet;
      sets.push_back("train.batch_size=" + std::to_string(batch));
      sets.push_back("train.max_steps=" + std::to_string(steps));
      const ExperimentSpec base = variant(preset, sets);
      for (int t = 1; t <= cores; ++t) {
        const std::string tn = std::to_string(t) + "t";
        if (want("plain backprop loop, " + tn)) {
          auto p = bench::plainBackprop(base, data, steps, t);
          record({"plain backprop loop, " + tn, "backprop", batch, t, 1, p.samplesPerSec});
        }
        if (batch == 32 && t == 1 && want("plain backprop loop, 1t, torch::optim::Adam")) {
          // before/after: the same loop with LibTorch's own Adam
          auto q = bench::plainBackprop(base, data, steps, t, bench::AdamImpl::Torch);
          record({"plain backprop loop, 1t, torch::optim::Adam", "backprop", batch, t, 1, q.samplesPerSec});
        }
        if (want("engine backprop, " + tn)) {
          auto spec = variant(base, {"mode=backprop", "train.backprop_threads=" + std::to_string(t)});
          RunSummary s = runEngine(spec);
          record({"engine backprop, " + tn, "backprop", batch, t, 1, s.samplesPerSec, -1, s.cpuUtilization});
        }
      }
      for (int k : {2, 4}) {
        auto spec = variant(base, k == 2 ? std::vector<std::string>{"partition.cuts=[4]"} : std::vector<std::string>{});
        const std::string kn = std::to_string(k) + " stages";
        if (want("plain local loop, " + kn)) {
          auto p = bench::plainLocal(spec, data, steps);
          record({"plain local loop, " + kn, "local", batch, 1, k, p.samplesPerSec});
        }
        if (batch == 32 && k == 2 && want("plain local loop, 2 stages, torch::optim::Adam")) {
          auto q = bench::plainLocal(spec, data, steps, bench::AdamImpl::Torch);
          record({"plain local loop, 2 stages, torch::optim::Adam", "local", batch, 1, k, q.samplesPerSec});
        }
        if (want("engine local, " + kn)) {
          RunSummary s = runEngine(spec);
          record({"engine local, " + kn, "local", batch, 1, k, s.samplesPerSec, s.pipelineEfficiency,
                  s.cpuUtilization});
        }
      }
    }
    if (onlyBatch != 0 && onlyBatch != 32) continue;
#ifdef STAGEWISE_HAVE_STORE
    if (want("engine local, 4 stages, recorded to the store")) {
      auto spec = variant(preset, {"probe.interval=-1", "eval.interval=0", "train.max_steps=" + std::to_string(steps32)});
      RunSummary s = runRecorded(spec);
      record({"engine local, 4 stages, recorded to the store", "local", 32, 1, 4, s.samplesPerSec,
              s.pipelineEfficiency, s.cpuUtilization});
    }
#endif
    // the probe and evaluator's cost, on the default preset as shipped
    if (want("engine local, 4 stages, probe/100 + eval/500")) {
      auto probed = variant(preset, {"train.max_steps=" + std::to_string(steps32)});
      RunSummary s = runEngine(probed);
      record({"engine local, 4 stages, probe/100 + eval/500", "local", 32, 1, 4, s.samplesPerSec,
              s.pipelineEfficiency, s.cpuUtilization});
    }
  }

  std::printf("%-46s %-8s %5s %6s %10s %8s %6s\n", "row (best of repeats)", "mode", "batch", "thr/st", "samples/s",
              "pipe-eff", "cpu");
  for (const auto& r : rows)
    std::printf("%-46s %-8s %5d %6d %10.0f %8s %5.0f%%\n", r.name.c_str(), r.mode.c_str(), r.batch,
                r.threadsPerStage, r.samplesPerSec,
                r.efficiency >= 0 ? (std::to_string(static_cast<int>(r.efficiency * 100 + 0.5)) + "%").c_str() : "-",
                r.cpu >= 0 ? r.cpu * 100 : 0.0);

  nlohmann::json ratios;
  std::printf("\nratios (measured side by side)\n");
  for (int batch : {32, 128}) {
    auto g = [&](const std::string& n) { return best[n + "/" + std::to_string(batch)]; };
    double bp1 = g("engine backprop, 1t"), bpBest = 0;
    for (int t = 1; t <= cores; ++t) bpBest = std::max(bpBest, g("engine backprop, " + std::to_string(t) + "t"));
    const double l2 = g("engine local, 2 stages"), l4 = g("engine local, 4 stages");
    auto line = [&](const std::string& what, double v, const std::string& target) {
      if (!std::isfinite(v) || v <= 0) return;  // a row left out by --only / --batch
      std::printf("  batch %3d  %-52s %6.3f  %s\n", batch, what.c_str(), v, target.c_str());
      ratios[std::to_string(batch)][what] = v;
    };
    line("local 2 stages / backprop 1 thread", l2 / bp1, batch == 32 ? "(target >= 1.90)" : "");
    line("local 2 stages / backprop best threads", l2 / bpBest, batch == 32 ? "(target >= 1.15)" : "");
    line("local 4 stages / backprop best threads", l4 / bpBest, "");
    line("engine backprop 1t / plain loop 1t", bp1 / g("plain backprop loop, 1t"), "(target >= 0.97)");
    if (cores > 1)
      line("engine backprop 2t / plain loop 2t", g("engine backprop, 2t") / g("plain backprop loop, 2t"), "(target >= 0.97)");
    line("engine local 2 stages / plain local loop", l2 / g("plain local loop, 2 stages"), "(target >= 0.97)");
    line("engine local 4 stages / plain local loop", l4 / g("plain local loop, 4 stages"), "(target >= 0.97)");
    if (batch == 32) {
      line("fused Adam / torch::optim::Adam, plain backprop 1t",
           g("plain backprop loop, 1t") / g("plain backprop loop, 1t, torch::optim::Adam"), "(the optimizer's gain)");
      line("fused Adam / torch::optim::Adam, plain local 2 stages",
           g("plain local loop, 2 stages") / g("plain local loop, 2 stages, torch::optim::Adam"), "");
      line("torch Adam, plain: local 2 st / backprop 1t",
           g("plain local loop, 2 stages, torch::optim::Adam") / g("plain backprop loop, 1t, torch::optim::Adam"), "");
      line("probe+eval on / off (4 stages)", g("engine local, 4 stages, probe/100 + eval/500") / l4, "(cost of the probe)");
#ifdef STAGEWISE_HAVE_STORE
      line("recorded to the store / not recorded (4 stages)", g("engine local, 4 stages, recorded to the store") / l4,
           "(target >= 0.98)");
#endif
    }
  }

  nlohmann::json accuracy;
  if (!flag(argc, argv, "--skip-accuracy") && !filtered) {
    // Equal wall time: local (4 stages, as shipped) trains one epoch; backprop at its best thread
    // count gets the same wall time, then both are evaluated on the full test set.
    std::printf("\naccuracy after the same wall time (one epoch of the local run)\n");
    auto local = variant(preset, {"probe.interval=-1", "eval.interval=0"});
    RunSummary l = runEngine(local);
    auto bp = variant(local, {"mode=backprop", "train.backprop_threads=0"});
    auto run = createRun(bp, nullptr);
    run->start();
    const auto budget = std::chrono::duration<double>(l.wallSeconds);
    if (!run->waitFor(std::chrono::duration_cast<std::chrono::milliseconds>(budget))) run->requestStop();
    RunSummary b = run->wait();
    std::printf("  local 4 stages : %6.1f s, %5lld steps, test accuracy %.4f\n", l.wallSeconds,
                static_cast<long long>(l.steps), l.testAccuracy);
    std::printf("  backprop (%dt)  : %6.1f s, %5lld steps, test accuracy %.4f\n", b.threads, b.wallSeconds,
                static_cast<long long>(b.steps), b.testAccuracy);
    accuracy = {{"local", {{"seconds", l.wallSeconds}, {"steps", l.steps}, {"test_accuracy", l.testAccuracy}}},
                {"backprop", {{"seconds", b.wallSeconds}, {"steps", b.steps}, {"test_accuracy", b.testAccuracy}}}};
  }

  if (!jsonPath.empty()) {
    nlohmann::json out;
    out["blas"] = info.blas;
    out["cores"] = cores;
    for (const auto& r : rows)
      out["rows"].push_back({{"name", r.name}, {"mode", r.mode}, {"batch", r.batch}, {"samples_per_sec", r.samplesPerSec},
                             {"pipeline_efficiency", r.efficiency}, {"cpu", r.cpu}});
    out["ratios"] = ratios;
    out["accuracy_equal_time"] = accuracy;
    std::ofstream(jsonPath) << out.dump(2) << "\n";
  }
  return 0;
}
