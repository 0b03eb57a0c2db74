// A TorchScript model against the same network as a built-in family (issue 33, docs/benchmarks.md):
// an MLP on synthetic data, once as model.kind "mlp" and once as a scripted Sequential of the
// same layers (made in C++ with torch::jit::Module::define, as the tests make theirs), cut into
// the same 4 stages and trained in local and backprop mode, in interleaved rounds. Prints
// samples/s (after the engine's 20-step warm-up) per round and the medians.
//
//   bench_torchscript [--steps N] [--rounds R] [--width W] [--features F]

#include <cstdio>
#include <filesystem>
#include <map>

#include "bench_common.h"
#include "script_models.h"
#include "stagewise/engine/engine.h"
#include "stagewise/engine/omp_wait.h"

using namespace stagewise::engine;
using stagewise::bench::arg;
using stagewise::bench::median;

namespace {

/// fc1 act1 fc2 act2 fc3 act3 fc4: the mlp family's hidden {W, W, W} with ReLU, child by child.
torch::jit::Module scriptedMlp(int64_t features, int64_t width, int64_t classes) {
  torch::manual_seed(1);
  auto top = script_models::module("Net");
  std::string forward = "def forward(self, x):\n";
  int64_t in = features;
  for (int i = 1; i <= 4; ++i) {
    const std::string n = std::to_string(i);
    const int64_t out = i == 4 ? classes : width;
    top.register_module("fc" + n, script_models::linear("Fc" + n, in, out));
    forward += "    x = self.fc" + n + ".forward(x)\n";
    if (i < 4) {
      top.register_module("act" + n, script_models::relu("Act" + n));
      forward += "    x = self.act" + n + ".forward(x)\n";
    }
    in = out;
  }
  forward += "    return x\n";
  top.define(forward);
  return top;
}

double samplesPerSec(const ExperimentSpec& spec) {
  auto run = createRun(spec, nullptr);
  run->start();
  const RunSummary s = run->wait();
  if (s.status != RunStatus::Completed) {
    std::fprintf(stderr, "bench_torchscript: %s %s run failed: %s\n", spec.model.kind.c_str(),
                 toString(spec.mode).c_str(), s.error.c_str());
    std::exit(1);
  }
  return s.samplesPerSec;
}

}  // namespace

int main(int argc, char** argv) {
  ensureOmpWaitDefault(argv);  // as the CLI and the workbench do (may re-execute)
  const int64_t steps = std::stoll(arg(argc, argv, "--steps", "300"));
  const int rounds = std::stoi(arg(argc, argv, "--rounds", "3"));
  const int width = std::stoi(arg(argc, argv, "--width", "512"));
  const int features = std::stoi(arg(argc, argv, "--features", "256"));
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "stagewise-bench-torchscript";
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "mlp.pt").string();

  ExperimentSpec base;
  base.dataset.kind = "synthetic";
  base.dataset.syntheticFeatures = features;
  base.dataset.syntheticClasses = 10;
  base.dataset.syntheticTrain = 8192;
  base.train.batchSize = 64;
  base.train.maxSteps = steps;
  base.train.backpropThreads = 1;
  base.eval.interval = 0;
  base.probe.interval = -1;
  scriptedMlp(features, width, 10).save(file);

  ExperimentSpec family = base;
  family.model.kind = "mlp";
  family.model.hidden = {width, width, width};
  family.model.activation = "relu";
  family.partition.cuts = {1, 2, 3};  // fc1 | fc2 | fc3 | classifier
  ExperimentSpec script = base;
  script.model = ModelSpec{};
  script.model.kind = "torchscript";
  script.model.path = file;
  script.partition.cuts = {2, 4, 6};  // fc1 act1 | fc2 act2 | fc3 act3 | fc4

  std::printf("mlp %d-%d-%d-%d-10 on synthetic data, batch 64, %lld steps, 4 stages of 1 thread\n",
              features, width, width, width, static_cast<long long>(steps));
  std::map<std::string, std::vector<double>> rows;
  for (int r = 0; r < rounds; ++r)
    for (Mode mode : {Mode::Local, Mode::Backprop})
      for (const ExperimentSpec* spec : {&family, &script}) {
        // Which model goes first alternates, so neither always runs on a warmer machine.
        const ExperimentSpec* first = r % 2 == 0 ? spec : (spec == &family ? &script : &family);
        ExperimentSpec s = *first;
        s.mode = mode;
        const double v = samplesPerSec(s);
        const std::string row = toString(mode) + " " + s.model.kind;
        rows[row].push_back(v);
        std::printf("round %d  %-22s %9.0f samples/s\n", r + 1, row.c_str(), v);
        std::fflush(stdout);
      }
  std::printf("\nmedian of %d rounds:\n", rounds);
  for (const std::string mode : {"local", "backprop"}) {
    const double f = median(rows[mode + " mlp"]), t = median(rows[mode + " torchscript"]);
    std::printf("%-9s family %9.0f  torchscript %9.0f  ratio %.3f\n", mode.c_str(), f, t, t / f);
  }
  return 0;
}
