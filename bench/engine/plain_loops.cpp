#include "plain_loops.h"

#include <chrono>
#include <numeric>
#include <random>
#include <thread>

#include "model/torch_model.h"
#include "optim/fused_adam.h"
#include "runtime/bounded_queue.h"
#include "runtime/thread_setup.h"
#include "stagewise/engine/partition.h"

namespace stagewise::bench {

using namespace engine;
using Clock = std::chrono::steady_clock;

namespace {

// The same batch order as the engine's loader.
std::vector<torch::Tensor> batchIndices(const ExperimentSpec& spec, int64_t n, int64_t steps) {
  std::mt19937_64 rng(spec.train.seed);
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::vector<torch::Tensor> out;
  int64_t pos = n;
  for (int64_t s = 0; s < steps; ++s) {
    if (pos >= n) {
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng);
      pos = 0;
    }
    const int64_t take = std::min<int64_t>(spec.train.batchSize, n - pos);
    out.push_back(torch::from_blob(order.data() + pos, {take}, torch::kInt64).clone());
    pos += take;
  }
  return out;
}

struct Chain {
  std::vector<torch::nn::Sequential> layers;
  torch::Tensor forward(torch::Tensor h) {
    for (auto& l : layers) h = l->forward(h);
    return h;
  }
  std::vector<torch::Tensor> parameters() const { return parametersOf(layers); }
};

Chain chain(const std::vector<torch::nn::Sequential>& layers, int first, int last) {
  return {std::vector<torch::nn::Sequential>(layers.begin() + first, layers.begin() + last + 1)};
}

std::unique_ptr<torch::optim::Optimizer> adam(AdamImpl impl, std::vector<torch::Tensor> params, double lr) {
  if (impl == AdamImpl::Torch) return std::make_unique<torch::optim::Adam>(params, torch::optim::AdamOptions(lr));
  return std::make_unique<FusedAdam>(params, torch::optim::AdamOptions(lr));
}

}  // namespace

PlainResult plainBackprop(const ExperimentSpec& spec, const TensorData& data, int64_t steps, int threads, AdamImpl impl) {
  PlainResult r;
  std::thread t([&] {
    setupComputeThread(threads, {});
    ModelPlan plan = planModel(spec.model, data.shape);
    auto layers = buildLayers(spec.model, plan, spec.train.seed);
    auto model = chain(layers, 0, static_cast<int>(layers.size()) - 1);
    auto opt = adam(impl, model.parameters(), spec.train.lr);
    auto batches = batchIndices(spec, data.trainX.size(0), steps);
    double warmEnd = 0;
    int64_t samples = 0;
    auto t0 = Clock::now();
    for (int64_t s = 0; s < steps; ++s) {
      auto x = data.trainX.index_select(0, batches[static_cast<size_t>(s)]);
      auto y = data.trainY.index_select(0, batches[static_cast<size_t>(s)]);
      auto loss = torch::nn::functional::cross_entropy(model.forward(x), y);
      clearGradients(*opt);
      loss.backward();
      opt->step();
      loss.item<double>();
      if (s == 19) warmEnd = std::chrono::duration<double>(Clock::now() - t0).count();
      if (s > 19) samples += x.size(0);
    }
    r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    r.samplesPerSec = samples / (r.seconds - warmEnd);
  });
  t.join();
  return r;
}

PlainResult plainLocal(const ExperimentSpec& spec, const TensorData& data, int64_t steps, AdamImpl impl) {
  ModelPlan plan = planModel(spec.model, data.shape);
  auto layers = buildLayers(spec.model, plan, spec.train.seed);
  PartitionPlan part = makePartition(spec, plan);
  const size_t k = part.stages.size();
  struct Item {
    torch::Tensor x, y;
  };
  std::vector<std::unique_ptr<BoundedQueue<Item>>> queues;
  for (size_t i = 0; i < k; ++i) queues.push_back(std::make_unique<BoundedQueue<Item>>(spec.train.queueCapacity));
  auto batches = batchIndices(spec, data.trainX.size(0), steps);
  std::atomic<double> warmEnd{0};
  std::atomic<int64_t> samples{0};
  auto t0 = Clock::now();
  std::vector<std::thread> threads;
  threads.emplace_back([&] {
    setupComputeThread(1, {});
    for (int64_t s = 0; s < steps; ++s)
      queues[0]->push({data.trainX.index_select(0, batches[static_cast<size_t>(s)]),
                       data.trainY.index_select(0, batches[static_cast<size_t>(s)])});
  });
  for (size_t i = 0; i < k; ++i)
    threads.emplace_back([&, i] {
      setupComputeThread(1, {});
      const auto& st = part.stages[i];
      auto body = chain(layers, st.firstLayer, st.lastLayer);
      torch::nn::Sequential head{nullptr};
      auto params = body.parameters();
      if (!st.isLast) {
        head = buildAuxHead(st.settings, plan.layers[static_cast<size_t>(st.lastLayer)].outShape,
                            plan.input.numClasses, spec.train.seed + i);
        for (auto& p : head->parameters()) params.push_back(p);
      }
      auto opt = adam(impl, params, spec.train.lr);
      for (int64_t s = 0; s < steps; ++s) {
        Item item = *queues[i]->pop();
        auto h = body.forward(item.x);
        if (!st.isLast) queues[i + 1]->push({h.detach(), item.y});
        auto loss = torch::nn::functional::cross_entropy(st.isLast ? h : head->forward(h), item.y);
        clearGradients(*opt);
        loss.backward();
        opt->step();
        loss.item<double>();
        if (st.isLast) {
          if (s == 19) warmEnd = std::chrono::duration<double>(Clock::now() - t0).count();
          if (s > 19) samples += item.y.size(0);
        }
      }
    });
  for (auto& t : threads) t.join();
  PlainResult r;
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  r.samplesPerSec = samples / (r.seconds - warmEnd);
  return r;
}

}  // namespace stagewise::bench
