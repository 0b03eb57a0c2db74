#include "model/torch_model.h"

namespace stagewise::engine {

namespace {

torch::nn::AnyModule activation(const std::string& name) {
  if (name == "gelu") return torch::nn::AnyModule(torch::nn::GELU());
  if (name == "tanh") return torch::nn::AnyModule(torch::nn::Tanh());
  return torch::nn::AnyModule(torch::nn::ReLU());
}

int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

// Construction draws from the global generator: seed it per module so every layer's initial
// weights depend only on (seed, layer), never on construction order or other threads.
void seedFor(uint64_t seed, uint64_t salt) {
  torch::manual_seed(seed * 1000003ull + salt);
}

}  // namespace

std::vector<torch::nn::Sequential> buildLayers(const ModelSpec& spec, const ModelPlan& plan,
                                               uint64_t seed) {
  std::vector<torch::nn::Sequential> layers;
  int64_t in = plan.input.numel();
  const size_t hidden = spec.hidden.size();
  for (size_t i = 0; i < plan.layers.size(); ++i) {
    seedFor(seed, i);
    torch::nn::Sequential layer;
    if (i == 0 && plan.input.dims.size() > 1) layer->push_back(torch::nn::Flatten());
    const int64_t out = numel(plan.layers[i].outShape);
    layer->push_back(torch::nn::Linear(in, out));
    if (i < hidden) layer->push_back(activation(spec.activation));
    layers.push_back(layer);
    in = out;
  }
  return layers;
}

torch::nn::Sequential buildAuxHead(const StageSettings& settings, const std::vector<int64_t>& inShape,
                                   int numClasses, uint64_t seed) {
  seedFor(seed, 500000);
  torch::nn::Sequential head;
  const int64_t in = numel(inShape);
  if (inShape.size() > 1) head->push_back(torch::nn::Flatten());
  if (settings.auxHead == "mlp") {
    head->push_back(torch::nn::Linear(in, settings.auxHidden));
    head->push_back(torch::nn::ReLU());
    head->push_back(torch::nn::Linear(settings.auxHidden, numClasses));
  } else {
    head->push_back(torch::nn::Linear(in, numClasses));
  }
  return head;
}

std::vector<torch::Tensor> parametersOf(const std::vector<torch::nn::Sequential>& modules) {
  std::vector<torch::Tensor> out;
  for (const auto& m : modules)
    for (const auto& p : m->parameters()) out.push_back(p);
  return out;
}

}  // namespace stagewise::engine
