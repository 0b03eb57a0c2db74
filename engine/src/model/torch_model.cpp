#include "model/torch_model.h"

#include "model/family_modules.h"
#include "model/torchscript_model.h"
#include "model/layer_modules.h"

#include <functional>

namespace stagewise::engine {

namespace {

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

/// model.init: re-draws the weights of every Linear and convolution in `module` (the generator
/// is seeded for the module just before, so the draw depends on the seed alone) and zeroes their
/// biases. `default` keeps LibTorch's own initialisation untouched (no draw at all).
void initialise(const torch::nn::Module& module, const std::string& init,
                const std::string& activation) {
  if (init != "kaiming" && init != "xavier") return;
  namespace ini = torch::nn::init;
  torch::NoGradGuard noGrad;
  const bool tanh = activation == "tanh";
  auto reset = [&](torch::Tensor& weight, torch::Tensor& bias) {
    if (init == "kaiming")  // He: normal, fan-in, gain sqrt(2) (5/3 for tanh)
      ini::kaiming_normal_(
          weight, 0.0, torch::kFanIn,
          tanh ? ini::NonlinearityType(torch::kTanh) : ini::NonlinearityType(torch::kReLU));
    else  // Glorot: uniform, gain 1 (5/3 for tanh)
      ini::xavier_uniform_(weight, tanh ? 5.0 / 3.0 : 1.0);
    if (bias.defined()) bias.zero_();
  };
  for (const auto& m : module.modules(/*include_self=*/true)) {
    if (auto* l = m->as<torch::nn::Linear>())
      reset(l->weight, l->bias);
    else if (auto* c = m->as<torch::nn::Conv2d>())
      reset(c->weight, c->bias);
  }
}

torch::nn::Sequential makeAuxHead(const StageSettings& settings,
                                  const std::vector<int64_t>& inShape, int numClasses) {
  torch::nn::Sequential head;
  const int64_t in = numel(inShape);
  if (settings.auxHead == "conv" && inShape.size() == 3) {
    const int64_t c = inShape[0];
    head->push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(c, c, 3).padding(1).bias(false)));
    head->push_back(torch::nn::BatchNorm2d(c));
    head->push_back(torch::nn::ReLU());
    head->push_back(torch::nn::AdaptiveAvgPool2d(torch::nn::AdaptiveAvgPool2dOptions(1)));
    head->push_back(torch::nn::Flatten());
    head->push_back(torch::nn::Linear(c, numClasses));
    return head;
  }
  if (settings.auxHead == "lm" && inShape.size() == 2) {  // per token: [B,T,D] → [B,T,V]
    head->push_back(torch::nn::LayerNorm(torch::nn::LayerNormOptions({inShape[1]})));
    head->push_back(torch::nn::Linear(inShape[1], numClasses));
    return head;
  }
  if (settings.auxHead == "token" && inShape.size() == 2) {
    head->push_back(TokenHead(inShape[1], numClasses));
    return head;
  }
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

/// The activation whose gain model.init's kaiming and xavier use: a family's model.activation
/// (as before); for model.layers tanh's when every activation layer is a tanh, else ReLU's.
std::string gainActivation(const ModelSpec& spec) {
  if (spec.kind != "layers") return spec.activation;
  bool tanh = false, other = false;
  const std::function<void(const std::vector<LayerSpec>&)> visit = [&](const auto& layers) {
    for (const auto& l : layers) {
      if (l.type == "tanh") tanh = true;
      if (l.type == "relu" || l.type == "gelu" || l.type == "silu" ||
          l.type == "transformer_block" || l.type == "causal_block")
        other = true;
      visit(l.layers);
    }
  };
  visit(spec.layers);
  return tanh && !other ? "tanh" : "relu";
}

}  // namespace

std::vector<torch::nn::Sequential> buildLayers(const ModelSpec& spec, const ModelPlan& plan,
                                               uint64_t seed) {
  if (spec.kind == "torchscript") return buildTorchScriptLayers(spec, plan, seed);
  // One builder for every kind: the families are layer lists too (familyLayers).
  const std::vector<LayerSpec> list = familyLayers(spec, plan.input);
  const std::string gain = gainActivation(spec);
  std::vector<torch::nn::Sequential> layers;
  std::vector<int64_t> shape = plan.input.dims;
  for (size_t i = 0; i < list.size(); ++i) {
    seedFor(seed, i);
    torch::nn::Sequential layer;
    appendLayerModules(layer, list[i], shape, "model.layers." + std::to_string(i),
                       seed * 1000003ull + 700000 + i);
    initialise(*layer, spec.init, gain);
    layers.push_back(layer);
    shape = i < plan.layers.size() ? plan.layers[i].outShape : shape;
  }
  return layers;
}

torch::nn::Sequential buildAuxHead(const StageSettings& settings,
                                   const std::vector<int64_t>& inShape, int numClasses,
                                   uint64_t seed, const std::string& init) {
  seedFor(seed, 500000);
  torch::nn::Sequential head = makeAuxHead(settings, inShape, numClasses);
  // The mlp head's hidden layer is a ReLU's input; the others end in the logits.
  initialise(*head, init, "relu");
  return head;
}

std::vector<torch::Tensor> parametersOf(const std::vector<torch::nn::Sequential>& modules) {
  std::vector<torch::Tensor> out;
  for (const auto& m : modules)
    for (const auto& p : m->parameters()) out.push_back(p);
  return out;
}

std::vector<torch::Tensor> stateOf(const std::vector<torch::nn::Sequential>& modules) {
  std::vector<torch::Tensor> out = parametersOf(modules);
  for (const auto& m : modules)
    for (const auto& b : m->buffers()) out.push_back(b);
  return out;
}

}  // namespace stagewise::engine
