#include "model/torch_model.h"

#include "model/family_modules.h"
#include "model/torchscript_model.h"

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

}  // namespace

std::vector<torch::nn::Sequential> buildLayers(const ModelSpec& spec, const ModelPlan& plan,
                                               uint64_t seed) {
  if (spec.kind == "torchscript") return buildTorchScriptLayers(spec, plan, seed);
  std::vector<torch::nn::Sequential> layers;
  const auto& dims = plan.input.dims;
  for (size_t i = 0; i < plan.layers.size(); ++i) {
    seedFor(seed, i);
    const bool last = i + 1 == plan.layers.size();
    const auto& out = plan.layers[i].outShape;
    const auto& inShape = i == 0 ? dims : plan.layers[i - 1].outShape;
    torch::nn::Sequential layer;
    if (spec.kind == "cnn") {
      if (i == 0) {
        layer->push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(dims[0], out[0], 3).padding(1).bias(false)));
        layer->push_back(torch::nn::BatchNorm2d(out[0]));
        layer->push_back(torch::nn::ReLU());
      } else if (last) {
        layer->push_back(torch::nn::AdaptiveAvgPool2d(torch::nn::AdaptiveAvgPool2dOptions(1)));
        layer->push_back(torch::nn::Flatten());
        layer->push_back(torch::nn::Linear(inShape[0], out[0]));
      } else {
        const int64_t stride = inShape[1] != out[1] ? 2 : 1;
        layer->push_back(BasicBlock(inShape[0], out[0], stride));
      }
    } else if (spec.kind == "vit") {
      if (i == 0)
        layer->push_back(PatchEmbed(dims[0], spec.patch, spec.dim, out[0]));
      else if (last)
        layer->push_back(TokenHead(inShape[1], out[0]));
      else
        layer->push_back(EncoderBlock(spec.dim, spec.heads, int64_t{spec.dim} * spec.mlpRatio));
    } else {
      if (i == 0 && dims.size() > 1) layer->push_back(torch::nn::Flatten());
      layer->push_back(torch::nn::Linear(numel(inShape), numel(out)));
      if (!last && spec.norm == "layernorm")
        layer->push_back(torch::nn::LayerNorm(torch::nn::LayerNormOptions({numel(out)})));
      else if (!last && spec.norm == "batchnorm")
        layer->push_back(torch::nn::BatchNorm1d(numel(out)));
      if (!last) layer->push_back(activation(spec.activation));
    }
    initialise(*layer, spec.init, spec.activation);
    layers.push_back(layer);
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
