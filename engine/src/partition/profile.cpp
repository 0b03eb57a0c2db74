// Times each layer's forward + backward, for balancing cuts by measured cost rather than FLOPs.

#include <algorithm>
#include <chrono>
#include <thread>

#include "data/tensor_data.h"
#include "model/torch_model.h"
#include "runtime/thread_setup.h"
#include "stagewise/engine/dataset.h"
#include "stagewise/engine/engine.h"
#include "stagewise/engine/partition.h"

namespace stagewise::engine {

namespace {

void syncIfCuda(const torch::Device& d) {
  if (d.is_cuda()) torch::cuda::synchronize(d.index());
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

LayerProfile profileLayers(const ExperimentSpec& spec, int repeats, const std::function<bool(int, int)>& progress) {
  const InputShape shape = probeInputShape(spec.dataset);
  const ModelPlan plan = planModel(spec.model, shape);
  const PartitionPlan partition = makePartition(spec, plan);
  LayerProfile out;
  std::exception_ptr error;
  // A thread of its own, set up like a stage thread (intra-op threads, denormals, pinning).
  std::thread worker([&] {
    try {
      auto layers = buildLayers(spec.model, plan, spec.train.seed);
      const int total = static_cast<int>(layers.size());
      std::vector<int64_t> dims = {spec.train.batchSize};
      dims.insert(dims.end(), shape.dims.begin(), shape.dims.end());
      torch::Tensor h = torch::randn(dims);
      int done = 0;
      for (const auto& stage : partition.stages) {
        setupComputeThread(stage.settings.threads, stage.settings.cores);
        const torch::Device device(stage.settings.device);
        for (int i = stage.firstLayer; i <= stage.lastLayer; ++i) {
          auto& layer = layers[static_cast<size_t>(i)];
          layer->to(device);
          torch::Tensor input = h.to(device).detach().requires_grad_(i > 0);
          std::vector<double> times;
          torch::Tensor output;
          for (int r = 0; r < repeats + 2; ++r) {  // two warm-up rounds
            syncIfCuda(device);
            auto t0 = std::chrono::steady_clock::now();
            output = layer->forward(input);
            output.backward(torch::ones_like(output));
            syncIfCuda(device);
            if (r >= 2) times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
          }
          out.seconds.push_back(median(times));
          out.devices.push_back(stage.settings.device);
          h = output.detach().cpu();
          if (progress && !progress(++done, total)) throw std::runtime_error("profiling cancelled");
        }
      }
    } catch (...) {
      error = std::current_exception();
    }
  });
  worker.join();
  if (error) std::rethrow_exception(error);
  return out;
}

}  // namespace stagewise::engine
