// What counting memory costs a stage's step, resolved below 1 % (issue 14): one stage of the
// default preset (its first two layers and aux head, batch 32, the fused Adam) steps on one
// thread, alternately with the counting allocator and with LibTorch's own, in paired rounds of
// the same steps (the CPU allocator is swapped between rounds by priority; a tensor is always
// freed by the allocator that made it). A single-threaded loop scatters far less than a run of
// four stage threads on two cores, where `memory_count.sh` could not resolve 1 %. It also counts
// the allocations per step, and times allocating and freeing alone, so the cost can be checked
// against what the per-allocation overhead predicts.
//
//   build/bench/engine/bench_memory_count [--rounds 20] [--steps 1500]
#include <c10/core/CPUAllocator.h>
#include <torch/torch.h>

#include <atomic>
#include <chrono>
#include <cstdio>

#include "bench_common.h"
#include "model/torch_model.h"
#include "optim/fused_adam.h"
#include "runtime/memory_meter.h"
#include "runtime/thread_setup.h"
#include "stagewise/engine/dataset.h"
#include "stagewise/engine/partition.h"

using namespace stagewise;
using namespace stagewise::engine;
using Clock = std::chrono::steady_clock;

namespace {

/// Counts allocations, passing them to `base` unchanged (for the allocations per step).
class CountCalls final : public c10::Allocator {
 public:
  explicit CountCalls(c10::Allocator* base) : m_base(base) {}
  c10::DataPtr allocate(size_t n) const override {
    m_calls.fetch_add(1, std::memory_order_relaxed);
    return m_base->allocate(n);
  }
  c10::DeleterFnPtr raw_deleter() const override { return m_base->raw_deleter(); }
  int64_t calls() const { return m_calls.load(); }

 private:
  c10::Allocator* m_base;
  mutable std::atomic<int64_t> m_calls{0};
};

int g_priority = 10;  // each swap outranks the last
void use(c10::Allocator* a) {
  c10::SetCPUAllocator(a, static_cast<uint8_t>(++g_priority));
}

struct Stage {
  std::vector<torch::nn::Sequential> layers;
  torch::nn::Sequential aux{nullptr};
  std::unique_ptr<FusedAdam> opt;
};

Stage stageZero() {
  ExperimentSpec spec =
      loadSpec(STAGEWISE_SOURCE_DIR "/resources/experiments/mlp-fmnist-4stage.json");
  const ModelPlan plan = planModel(spec.model, probeInputShape(spec.dataset));
  auto layers = buildLayers(spec.model, plan, 1);
  const PartitionPlan partition = makePartition(spec, plan);
  const StagePlan& p = partition.stages.front();
  Stage s;
  for (int i = p.firstLayer; i <= p.lastLayer; ++i) s.layers.push_back(layers[size_t(i)]);
  s.aux = buildAuxHead(p.settings, plan.layers[size_t(p.lastLayer)].outShape, 10, 7);
  auto params = parametersOf(s.layers);
  for (auto& q : s.aux->parameters()) params.push_back(q);
  s.opt = std::make_unique<FusedAdam>(params, torch::optim::AdamOptions(1e-3));
  return s;
}

double steps(Stage& s, const torch::Tensor& x, const torch::Tensor& y, int n) {
  const auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) {
    torch::Tensor h = x;
    for (auto& l : s.layers) h = l->forward(h);
    torch::nn::functional::cross_entropy(s.aux->forward(h), y).backward();
    s.opt->step();
    for (auto& g : s.opt->param_groups())
      for (auto& p : g.params()) p.mutable_grad() = torch::Tensor();
  }
  return std::chrono::duration<double>(Clock::now() - t0).count() / n;
}

/// Seconds per allocation and free of the sizes a step makes (64 B .. 1 MB).
double allocFree(int n) {
  c10::Allocator* a = c10::GetCPUAllocator();
  const size_t sizes[] = {64, 4096, 65536, 131072, 1048576};
  const auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) {
    c10::DataPtr p = a->allocate(sizes[i % 5]);
  }
  return std::chrono::duration<double>(Clock::now() - t0).count() / n;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = std::stoi(bench::arg(argc, argv, "--rounds", "20"));
  const int n = std::stoi(bench::arg(argc, argv, "--steps", "1500"));
  setupComputeThread(1, {});
  c10::Allocator* base = c10::GetCPUAllocator();
  if (!memory::install()) {
    std::fprintf(stderr,
                 "bench_memory_count: the counting allocator is off (STAGEWISE_COUNT_MEMORY=0?)\n");
    return 2;
  }
  c10::Allocator* counting = c10::GetCPUAllocator();
  const int slot = memory::acquire(1);
  const memory::ThreadTag tag(slot);  // counted, as a stage thread is
  Stage s = stageZero();
  torch::manual_seed(1);
  const torch::Tensor x = torch::randn({32, 784});
  const torch::Tensor y = torch::randint(10, {32}, torch::kInt64);
  steps(s, x, y, 200);  // warm-up: the optimizer state, the caches

  static CountCalls counter(base);
  use(&counter);
  steps(s, x, y, 100);
  const double perStep = double(counter.calls()) / 100;

  std::vector<double> ratios, with, without, allocWith, allocWithout;
  for (int r = 0; r < rounds; ++r) {
    // Alternate which goes first: a slow phase of the machine falls on both.
    for (int k = 0; k < 2; ++k) {
      const bool counted = (r + k) % 2 == 0;
      use(counted ? counting : base);
      (counted ? with : without).push_back(steps(s, x, y, n));
      for (int b = 0; b < 10; ++b) (counted ? allocWith : allocWithout).push_back(allocFree(20000));
    }
    ratios.push_back(without.back() / with.back());
  }
  use(counting);
  const double overhead = bench::median(allocWith) - bench::median(allocWithout);
  std::printf(
      "one stage of mlp-fmnist-4stage (2 layers + aux head, batch 32, fused Adam), one "
      "thread, %d paired rounds of %d steps\n",
      rounds, n);
  std::printf("| | counting allocator | LibTorch's | \n|---|---|---|\n");
  std::printf("| step (median) | %.1f us | %.1f us |\n", bench::median(with) * 1e6,
              bench::median(without) * 1e6);
  std::printf("| allocate + free (median) | %.1f ns | %.1f ns |\n", bench::median(allocWith) * 1e9,
              bench::median(allocWithout) * 1e9);
  std::printf("allocations per step: %.1f\n", perStep);
  std::printf(
      "steps/s ratio counted / uncounted, paired rounds: median %.4f (min %.4f, max %.4f)\n",
      bench::median(ratios), *std::min_element(ratios.begin(), ratios.end()),
      *std::max_element(ratios.begin(), ratios.end()));
  // The counting runs inside the allocation calls, so it cannot cost more than they take:
  // every counted allocation and free of a step, whole, against the step.
  const double bound = bench::median(allocWith) * perStep / bench::median(without);
  std::printf("difference per allocation (counting - LibTorch's): %.1f ns, %.4f %% of a step\n",
              overhead * 1e9, 100 * overhead * perStep / bench::median(without));
  std::printf("upper bound, every counted allocate + free of a step: %.3f %% of the step\n",
              100 * bound);
  std::printf("target: the counting costs <= 1 %% of samples/s: %s (bound %.3f %%)\n",
              bound <= 0.01 ? "yes" : "NO", 100 * bound);
  return 0;
}
