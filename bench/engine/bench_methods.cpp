// The training methods side by side: local, pipelined backprop (GPipe and 1F1B) and backprop, for
// every preset at 2 and 4 stages, in interleaved rounds; the bytes each method measured per
// boundary (pipeline / local, the paper's 2x) and local mode's prediction of them; the peak
// activations each stage held; and pipeline efficiency against the micro-batch count. Prints
// tables (docs/benchmarks.md, "Methods").
//
// With `gpt` among the presets (issue 34): tokens/s (samples/s x dataset.context) of the
// gpt-text-4stage preset at its own 4 stages, local, pipeline and backprop side by side in the
// same interleaved rounds.
//
//   bench_methods [--steps N] [--rounds R] [--presets mlp,cnn,vit,gpt]

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "bench_common.h"
#include "stagewise/engine/engine.h"
#include "stagewise/engine/omp_wait.h"

using namespace stagewise::engine;
using stagewise::bench::arg;
using stagewise::bench::median;
using stagewise::bench::variant;

namespace {

RunSummary train(const ExperimentSpec& spec) {
  auto run = createRun(spec, nullptr);
  run->start();
  RunSummary s = run->wait();
  if (s.status != RunStatus::Completed) {
    std::fprintf(stderr, "bench_methods: %s run failed: %s\n", toString(spec.mode).c_str(),
                 s.error.c_str());
    std::exit(1);
  }
  return s;
}

std::string mb(double bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", bytes / 1e6);
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  ensureOmpWaitDefault(argv);  // as the CLI and the workbench do (may re-execute)
  const int64_t steps = std::stoll(arg(argc, argv, "--steps", "300"));
  const int rounds = std::stoi(arg(argc, argv, "--rounds", "3"));
  const std::string presets = arg(argc, argv, "--presets", "mlp,cnn,vit");
  const EngineInfo info = engineInfo();
  std::printf(
      "BLAS: %s | OpenMP workers: %s | %d cores | %lld steps per run | %d interleaved rounds, "
      "medians | probe/eval off\n\n",
      info.blas.c_str(), info.openmpWait.c_str(), info.hardwareCores, static_cast<long long>(steps),
      rounds);

  struct Mode {
    const char* label;
    std::vector<std::string> sets;
  };
  const std::vector<Mode> modes = {{"local", {"mode=local"}},
                                   {"pipe-gpipe", {"mode=pipeline", "pipeline.schedule=gpipe"}},
                                   {"pipe-1f1b", {"mode=pipeline", "pipeline.schedule=1f1b"}},
                                   {"backprop", {"mode=backprop"}}};

  std::printf("samples/s (median) and measured bytes per sample across every boundary\n");
  std::printf("%-6s %3s | %9s %9s %9s %9s | %8s | %11s %11s %11s %9s\n", "preset", "K", "local",
              "pipe-gpipe", "pipe-1f1b", "backprop", "pipe/loc", "local B/smp", "pred B/smp",
              "pipe B/smp", "pipe/loc");
  std::ostringstream memory, allocator;
  for (const std::string family : {"mlp", "cnn", "vit"}) {
    if (presets.find(family) == std::string::npos) continue;
    const ExperimentSpec preset =
        loadSpec(STAGEWISE_SOURCE_DIR "/resources/experiments/" + family + "-fmnist-4stage.json");
    for (const int k : {2, 4}) {
      const ExperimentSpec base =
          variant(preset, {"train.max_steps=" + std::to_string(steps), "probe.interval=-1",
                           "eval.interval=0", "partition.balance=flops",
                           "partition.stages=" + std::to_string(k)});
      std::map<std::string, std::vector<double>> sps;
      std::map<std::string, RunSummary> last;
      for (int r = 0; r < rounds; ++r)
        for (const auto& m : modes) {
          const RunSummary s = train(variant(base, m.sets));
          sps[m.label].push_back(s.samplesPerSec);
          last[m.label] = s;
        }
      auto bytesPerSample = [&](const RunSummary& s, bool withGradients) {
        double total = 0;
        for (const auto& st : s.stages)
          total += double(st.bytesSent) + (withGradients ? double(st.gradBytesSent) : 0);
        return total / double(std::max<int64_t>(1, s.samples));
      };
      double predicted = 0;
      for (const auto& st : last["local"].stages) predicted += double(st.backpropBytes);
      predicted /= double(std::max<int64_t>(1, last["local"].samples));
      const double local = bytesPerSample(last["local"], false),
                   pipe = bytesPerSample(last["pipe-gpipe"], true);
      std::printf("%-6s %3d | %9.0f %9.0f %9.0f %9.0f | %8.2f | %11.0f %11.0f %11.0f %9.2f\n",
                  family.c_str(), k, median(sps["local"]), median(sps["pipe-gpipe"]),
                  median(sps["pipe-1f1b"]), median(sps["backprop"]),
                  median(sps["pipe-gpipe"]) / std::max(1e-9, median(sps["local"])), local,
                  predicted, pipe, pipe / std::max(1e-9, local));
      std::fflush(stdout);
      char line[256];
      for (const char* m : {"local", "pipe-gpipe", "pipe-1f1b", "backprop"}) {
        std::snprintf(line, sizeof line, "%-6s %3d %-11s", family.c_str(), k, m);
        memory << line;
        for (const auto& st : last[m].stages) memory << " " << mb(double(st.peakActivationBytes));
        memory << "\n";
        allocator << line;
        for (const auto& st : last[m].stages)
          allocator << " "
                    << (st.peakMemoryBytes >= 0 ? mb(double(st.peakMemoryBytes))
                                                : std::string("-"));
        allocator << "\n";
      }
    }
  }
  std::printf("\npeak activation MB held per stage (tensor sizes, not the allocator)\n%s",
              memory.str().c_str());
  std::printf(
      "\npeak_memory_bytes per stage, MB (the counting allocator: everything the stage's thread"
      " allocated and still held; the last round)\n%s",
      allocator.str().c_str());

  // issue 34: the language model on text, in tokens/s.
  if (presets.find("gpt") != std::string::npos) {
    const ExperimentSpec base = variant(
        loadSpec(STAGEWISE_SOURCE_DIR "/resources/experiments/gpt-text-4stage.json"),
        {"train.max_steps=" + std::to_string(steps), "probe.interval=-1", "eval.interval=0"});
    const double context = static_cast<double>(base.dataset.context);
    std::map<std::string, std::vector<double>> tps;
    for (int r = 0; r < rounds; ++r)
      for (const auto& m : modes)
        tps[m.label].push_back(train(variant(base, m.sets)).samplesPerSec * context);
    std::printf(
        "\ntokens/s (median; samples/s x context %d) of gpt-text-4stage at its 4 stages\n"
        "%9s %10s %9s %9s | %8s\n%9.0f %10.0f %9.0f %9.0f | %8.2f\n",
        static_cast<int>(context), "local", "pipe-gpipe", "pipe-1f1b", "backprop", "loc/bp",
        median(tps["local"]), median(tps["pipe-gpipe"]), median(tps["pipe-1f1b"]),
        median(tps["backprop"]), median(tps["local"]) / std::max(1e-9, median(tps["backprop"])));
    std::fflush(stdout);
  }

  // Pipeline efficiency against M, on the default preset at 4 stages.
  if (presets.find("mlp") != std::string::npos) {
    const ExperimentSpec preset =
        loadSpec(STAGEWISE_SOURCE_DIR "/resources/experiments/mlp-fmnist-4stage.json");
    const ExperimentSpec base =
        variant(preset, {"train.max_steps=" + std::to_string(steps), "probe.interval=-1",
                         "eval.interval=0", "mode=pipeline"});
    std::printf("\npipeline efficiency against micro-batches M (mlp, 4 stages, batch %d)\n",
                base.train.batchSize);
    std::printf("%4s | %11s %9s %9s | %11s %9s %9s\n", "M", "gpipe /s", "eff", "act MB", "1f1b /s",
                "eff", "act MB");
    for (const int m : {1, 2, 4, 8, 16}) {
      std::vector<double> g, f, ge, fe;
      RunSummary gl, fl;
      for (int r = 0; r < rounds; ++r) {
        gl = train(variant(
            base, {"pipeline.micro_batches=" + std::to_string(m), "pipeline.schedule=gpipe"}));
        fl = train(variant(
            base, {"pipeline.micro_batches=" + std::to_string(m), "pipeline.schedule=1f1b"}));
        g.push_back(gl.samplesPerSec), f.push_back(fl.samplesPerSec);
        ge.push_back(gl.pipelineEfficiency), fe.push_back(fl.pipelineEfficiency);
      }
      std::printf("%4d | %11.0f %9.2f %9s | %11.0f %9.2f %9s\n", m, median(g), median(ge),
                  mb(double(gl.stages[0].peakActivationBytes)).c_str(), median(f), median(fe),
                  mb(double(fl.stages[0].peakActivationBytes)).c_str());
      std::fflush(stdout);
    }
  }
  return 0;
}
