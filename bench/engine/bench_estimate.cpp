// The estimate per method against the measured runs: for every preset at 2 and 4 stages, the
// speed-ups over backprop that estimateMethods predicts from a measured MethodProfile
// (profileMethods), beside the speed-ups the engine measures, in paired rounds (each round
// profiles, then trains local, pipeline and backprop one after the other). Prints a table
// (docs/benchmarks.md, "The estimate per method"). Target: within 15 % (median over rounds).
// Side by side in the same rounds, the errors the same profile gives with other models: "1q",
// one run queue for all cores instead of one per core (perCoreQueues false); "noC", without the
// cold costs (an operation after another stage's on its core costs what it costs repeated);
// "noQ", without the CPU each queue operation costs (handoffCpuSeconds 0); "noH", a core pulls
// any waiting thread, cache hot or not (migrationCostSeconds 0).
//
//   bench_estimate [--steps N] [--rounds R] [--presets mlp,cnn,vit] [--stages 2,4] [--verbose 1]
//                  [--trace STEP]
// --verbose 1 prints the profile, the mean measured span per stage and kind, and the kernel's
// counts per thread of each run (CPU ms a step, ms a step runnable but waiting for a core,
// switch-ins a step; /proc/self/task/*/schedstat).
// --trace prints every span of step STEP of each pipeline run (stage, forward/backward/update,
// micro-batch, start and end in ms from the step's first span), in start order: where a stage
// waits with its input there while the other core idles.

#include <dirent.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "bench_common.h"
#include "stagewise/engine/dataset.h"
#include "stagewise/engine/engine.h"
#include "stagewise/engine/omp_wait.h"

using namespace stagewise::engine;
using stagewise::bench::arg;
using stagewise::bench::median;
using stagewise::bench::variant;

namespace {

/// --verbose: the mean measured span per stage and kind (forward, backward, update); --trace:
/// every span of one step.
struct SpanStats : RunObserver {
  std::mutex mutex;
  std::map<std::pair<int, int>, std::pair<double, int>> sum;  // (stage, kind*2 + update)
  int64_t traceStep = -1;
  std::vector<StepSpan> traced;
  void onSpans(const std::vector<StepSpan>& spans) override {
    std::lock_guard lock(mutex);
    for (const auto& s : spans) {
      auto& v = sum[{s.stage, static_cast<int>(s.kind) * 2 + (s.micro < 0 ? 1 : 0)}];
      v.first += s.endS - s.startS, ++v.second;
      if (s.step == traceStep) traced.push_back(s);
    }
  }
  void print() {
    for (auto& [key, v] : sum)
      std::fprintf(stderr, "  measured stage %d kind %d: %.3f ms x %d\n", key.first, key.second,
                   1e3 * v.first / v.second, v.second);
  }
  void printTrace() {
    if (traced.empty()) return;
    std::sort(traced.begin(), traced.end(),
              [](const StepSpan& a, const StepSpan& b) { return a.startS < b.startS; });
    const double t0 = traced.front().startS;
    std::fprintf(stderr, "  step %lld, every span (ms from its first):\n",
                 static_cast<long long>(traceStep));
    for (const auto& s : traced) {
      const char* kind = s.kind == SpanKind::Forward ? "F" : s.micro < 0 ? "U" : "B";
      std::fprintf(stderr, "    stage %d %s%s %7.3f -> %7.3f (%.3f)\n", s.stage, kind,
                   s.micro < 0 ? "" : std::to_string(s.micro).c_str(), 1e3 * (s.startS - t0),
                   1e3 * (s.endS - t0), 1e3 * (s.endS - s.startS));
    }
  }
};
/// --verbose: what the kernel counts for each of the run's named threads (sw-run, sw-loader,
/// sw-stage-N, ...; a stage's OpenMP workers take its name), read from /proc/self/task/*/schedstat
/// every 20 ms while the run lasts: CPU time, time runnable but waiting for a core, and how many
/// times it was switched in.
class ThreadClocks {
 public:
  ThreadClocks()
      : m_sampler([this] {
          while (!m_stop.load()) {
            sample();
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
          }
        }) {}
  ~ThreadClocks() { stop(); }
  void stop() {
    if (m_stop.exchange(true)) return;
    m_sampler.join();
  }
  void print(int64_t steps, double samplesPerSec, int64_t batch, int cores) {
    stop();
    // Idle core time per step in the steady state: the cores' time a step (from samples/s) less
    // the stage threads' and the loader's CPU (start-up included, so a little low).
    double cpu = 0;
    for (const auto& [tid, c] : m_last)
      if (c.name.rfind("sw-stage-", 0) == 0 || c.name == "sw-loader") cpu += 1e-9 * c.runNs;
    for (const auto& [tid, c] : m_last)
      std::fprintf(stderr,
                   "  kernel %-10s: cpu %.3f ms/step, runnable waiting %.3f ms/step, "
                   "%.2f switch-ins/step\n",
                   c.name.c_str(), 1e-6 * c.runNs / steps, 1e-6 * c.waitNs / steps,
                   static_cast<double>(c.slices) / steps);
    if (samplesPerSec > 0)
      std::fprintf(stderr, "  kernel idle cores about %.3f ms/step\n",
                   1e3 * (cores * batch / samplesPerSec - cpu / steps));
  }

 private:
  struct Clock {
    std::string name;
    double runNs = 0, waitNs = 0;
    long long slices = 0;
  };
  void sample() {
    DIR* dir = opendir("/proc/self/task");
    if (!dir) return;
    while (const dirent* e = readdir(dir)) {
      const std::string tid = e->d_name;
      if (tid == "." || tid == "..") continue;
      std::string name;
      std::getline(std::ifstream("/proc/self/task/" + tid + "/comm"), name);
      if (name.rfind("sw-", 0) != 0) continue;
      Clock c{name};
      if (std::ifstream("/proc/self/task/" + tid + "/schedstat") >> c.runNs >> c.waitNs >> c.slices)
        m_last[std::stoll(tid)] = c;
    }
    closedir(dir);
  }
  std::map<long long, Clock> m_last;  // tid: its last reading
  std::atomic<bool> m_stop{false};
  std::thread m_sampler;
};

bool g_verbose = false;
int64_t g_traceStep = -1;

double trainSps(const ExperimentSpec& spec) {
  SpanStats stats;
  const bool trace = g_traceStep >= 0 && spec.mode == Mode::Pipeline;
  stats.traceStep = trace ? g_traceStep : -1;
  auto run = createRun(spec, g_verbose || trace ? &stats : nullptr);
  std::optional<ThreadClocks> clocks;
  if (g_verbose) clocks.emplace();
  run->start();
  const RunSummary s = run->wait();
  if (clocks)
    clocks->print(spec.train.maxSteps, s.samplesPerSec, spec.train.batchSize,
                  engineInfo().hardwareCores);
  if (s.status != RunStatus::Completed) {
    std::fprintf(stderr, "bench_estimate: %s run failed: %s\n", toString(spec.mode).c_str(),
                 s.error.c_str());
    std::exit(1);
  }
  if (g_verbose) stats.print();
  if (trace) stats.printTrace();
  return s.samplesPerSec;
}

}  // namespace

int main(int argc, char** argv) {
  ensureOmpWaitDefault(argv);  // as the CLI and the workbench do (may re-execute)
  const int64_t steps = std::stoll(arg(argc, argv, "--steps", "1000"));
  const int rounds = std::stoi(arg(argc, argv, "--rounds", "5"));
  const std::string presets = arg(argc, argv, "--presets", "mlp,cnn,vit");
  const std::string stageList = arg(argc, argv, "--stages", "2,4");
  const bool verbose = arg(argc, argv, "--verbose", "0") == "1";
  g_verbose = verbose;
  g_traceStep = std::stoll(arg(argc, argv, "--trace", "-1"));
  const EngineInfo info = engineInfo();
  std::printf(
      "BLAS: %s | %d cores | %lld steps per run | %d paired rounds, medians | probe/eval off\n"
      "speed-up = samples/s over backprop's; err = predicted / measured - 1 (median of the "
      "rounds' ratios)\n\n",
      info.blas.c_str(), info.hardwareCores, static_cast<long long>(steps), rounds);
  std::printf(
      "%-6s %2s | %9s %9s %9s | %9s %9s %7s | %9s %9s %7s | %7s | %7s %7s | %7s %7s | %7s %7s | "
      "%7s %7s\n",
      "preset", "K", "local/s", "pipe/s", "bp/s", "loc pred", "loc meas", "err", "pipe pred",
      "pipe meas", "err", "bubble", "loc 1q", "pipe 1q", "loc noC", "pipe noC", "loc noQ",
      "pipe noQ", "loc noH", "pipe noH");
  for (const std::string family : {"mlp", "cnn", "vit"}) {
    if (presets.find(family) == std::string::npos) continue;
    const ExperimentSpec preset =
        loadSpec(STAGEWISE_SOURCE_DIR "/resources/experiments/" + family + "-fmnist-4stage.json");
    for (const int k : {2, 4}) {
      if (stageList.find(std::to_string(k)) == std::string::npos) continue;
      const ExperimentSpec base =
          variant(preset, {"train.max_steps=" + std::to_string(steps), "probe.interval=-1",
                           "eval.interval=0", "partition.balance=flops",
                           "partition.stages=" + std::to_string(k)});
      std::map<std::string, std::vector<double>> v;
      for (int r = 0; r < rounds; ++r) {
        const MethodProfile profile = profileMethods(base);
        const PartitionPlan partition =
            makePartition(base, planModel(base.model, probeInputShape(base.dataset)));
        const MethodEstimate e =
            estimateMethods(profile, partition, info.hardwareCores, false, 4, verbose);
        MethodProfile warm = profile;
        warm.localStepCold.clear(), warm.pipelineForwardCold.clear(),
            warm.pipelineBackwardCold.clear(), warm.pipelineUpdateCold.clear();
        const MethodEstimate nc = estimateMethods(warm, partition, info.hardwareCores);
        MethodProfile oneQueue = profile;
        oneQueue.perCoreQueues = false;
        const MethodEstimate oq = estimateMethods(oneQueue, partition, info.hardwareCores);
        MethodProfile noQueue = profile;
        noQueue.handoffCpuSeconds = 0;
        const MethodEstimate nq = estimateMethods(noQueue, partition, info.hardwareCores);
        MethodProfile anyPull = profile;
        anyPull.migrationCostSeconds = 0;
        const MethodEstimate nh = estimateMethods(anyPull, partition, info.hardwareCores);
        if (verbose) {
          std::fprintf(stderr,
                       "profile ms: backprop %.3f (%d threads), M %d, handoff %.4f (cpu %.4f a "
                       "queue operation), contention %.2f\n",
                       1e3 * profile.backpropStep, profile.backpropThreads, profile.microBatches,
                       1e3 * profile.handoffSeconds, 1e3 * profile.handoffCpuSeconds,
                       profile.contention);
          for (size_t s = 0; s < profile.localStep.size(); ++s)
            std::fprintf(stderr,
                         "  stage %zu: local %.3f, micro %.3f (forward %.3f), update %.3f\n", s,
                         1e3 * profile.localStep[s], 1e3 * profile.pipelineMicro[s],
                         1e3 * profile.pipelineForward[s], 1e3 * profile.pipelineUpdate[s]);
          for (size_t s = 0; s < profile.localStepCold.size(); ++s)
            std::fprintf(
                stderr,
                "  stage %zu cold: local +%.3f, forward +%.3f, backward +%.3f, update +%.3f\n", s,
                1e3 * profile.localStepCold[s], 1e3 * profile.pipelineForwardCold[s],
                1e3 * profile.pipelineBackwardCold[s], 1e3 * profile.pipelineUpdateCold[s]);
          std::fprintf(stderr, "  predicted /s: local %.0f pipe %.0f bp %.0f\n",
                       e.localSamplesPerSec, e.pipelineSamplesPerSec, e.backpropSamplesPerSec);
          // The simulated schedules' counts, to set beside the kernel's for the runs below.
          for (const auto& [name, t] :
               {std::pair{"local", &e.localThreads}, std::pair{"pipeline", &e.pipelineThreads}}) {
            for (size_t j = 0; j < t->running.size(); ++j)
              std::fprintf(stderr,
                           "  simulated %-8s sw-stage-%zu: cpu %.3f ms/step, runnable waiting "
                           "%.3f ms/step, %.2f switch-ins/step\n",
                           name, j, 1e3 * t->running[j], 1e3 * t->queued[j], t->switchIns[j]);
            if (!t->running.empty())
              std::fprintf(stderr, "  simulated %-8s idle cores %.3f ms/step\n", name,
                           1e3 * t->idleCoreSeconds);
          }
        }
        const double local = trainSps(variant(base, {"mode=local"}));
        const double pipe = trainSps(variant(base, {"mode=pipeline"}));
        const double bp = trainSps(variant(base, {"mode=backprop"}));
        v["local"].push_back(local), v["pipe"].push_back(pipe), v["bp"].push_back(bp);
        v["locPred"].push_back(e.localSpeedup), v["locMeas"].push_back(local / bp);
        v["pipePred"].push_back(e.pipelineSpeedup), v["pipeMeas"].push_back(pipe / bp);
        v["locErr"].push_back(e.localSpeedup / (local / bp) - 1);
        v["pipeErr"].push_back(e.pipelineSpeedup / (pipe / bp) - 1);
        v["bubble"].push_back(e.bubbleFraction);
        v["locErrNc"].push_back(nc.localSpeedup / (local / bp) - 1);
        v["pipeErrNc"].push_back(nc.pipelineSpeedup / (pipe / bp) - 1);
        v["locErr1q"].push_back(oq.localSpeedup / (local / bp) - 1);
        v["pipeErr1q"].push_back(oq.pipelineSpeedup / (pipe / bp) - 1);
        v["locErrNq"].push_back(nq.localSpeedup / (local / bp) - 1);
        v["pipeErrNq"].push_back(nq.pipelineSpeedup / (pipe / bp) - 1);
        v["locErrNh"].push_back(nh.localSpeedup / (local / bp) - 1);
        v["pipeErrNh"].push_back(nh.pipelineSpeedup / (pipe / bp) - 1);
      }
      std::printf(
          "%-6s %2d | %9.0f %9.0f %9.0f | %9.2f %9.2f %+6.0f%% | %9.2f %9.2f %+6.0f%% | %7.2f | "
          "%+6.0f%% %+6.0f%% | %+6.0f%% %+6.0f%% | %+6.0f%% %+6.0f%% | %+6.0f%% %+6.0f%%\n",
          family.c_str(), k, median(v["local"]), median(v["pipe"]), median(v["bp"]),
          median(v["locPred"]), median(v["locMeas"]), 100 * median(v["locErr"]),
          median(v["pipePred"]), median(v["pipeMeas"]), 100 * median(v["pipeErr"]),
          median(v["bubble"]), 100 * median(v["locErr1q"]), 100 * median(v["pipeErr1q"]),
          100 * median(v["locErrNc"]), 100 * median(v["pipeErrNc"]), 100 * median(v["locErrNq"]),
          100 * median(v["pipeErrNq"]), 100 * median(v["locErrNh"]), 100 * median(v["pipeErrNh"]));
      std::fflush(stdout);
    }
  }
  return 0;
}
