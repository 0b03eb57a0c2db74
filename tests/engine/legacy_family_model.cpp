// The old family builder, verbatim but for names (test-only; see legacy_family_model.h).
#include "legacy_family_model.h"

#include "model/family_modules.h"

namespace legacy {

using namespace stagewise::engine;

namespace {

/// ResNet basic block: 3x3 conv-BN-ReLU, 3x3 conv-BN, identity or 1x1 projection shortcut, ReLU.
struct BasicBlockImpl : torch::nn::Module {
  BasicBlockImpl(int64_t cin, int64_t cout, int64_t stride) {
    namespace nn = torch::nn;
    conv1 = register_module("conv1", nn::Conv2d(nn::Conv2dOptions(cin, cout, 3).stride(stride).padding(1).bias(false)));
    bn1 = register_module("bn1", nn::BatchNorm2d(cout));
    conv2 = register_module("conv2", nn::Conv2d(nn::Conv2dOptions(cout, cout, 3).padding(1).bias(false)));
    bn2 = register_module("bn2", nn::BatchNorm2d(cout));
    if (stride != 1 || cin != cout)
      shortcut = register_module(
          "shortcut", nn::Sequential(nn::Conv2d(nn::Conv2dOptions(cin, cout, 1).stride(stride).bias(false)),
                                     nn::BatchNorm2d(cout)));
  }
  torch::Tensor forward(torch::Tensor x) {
    auto out = torch::relu(bn1(conv1(x)));
    out = bn2(conv2(out));
    return torch::relu(out + (shortcut ? shortcut->forward(x) : x));
  }
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr};
  torch::nn::Sequential shortcut{nullptr};
};
TORCH_MODULE(BasicBlock);

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

void seedFor(uint64_t seed, uint64_t salt) { torch::manual_seed(seed * 1000003ull + salt); }

void initialise(const torch::nn::Module& module, const std::string& init,
                const std::string& activation) {
  if (init != "kaiming" && init != "xavier") return;
  namespace ini = torch::nn::init;
  torch::NoGradGuard noGrad;
  const bool tanh = activation == "tanh";
  auto reset = [&](torch::Tensor& weight, torch::Tensor& bias) {
    if (init == "kaiming")
      ini::kaiming_normal_(
          weight, 0.0, torch::kFanIn,
          tanh ? ini::NonlinearityType(torch::kTanh) : ini::NonlinearityType(torch::kReLU));
    else
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

}  // namespace

std::vector<torch::nn::Sequential> buildFamilyLayers(const ModelSpec& spec, const ModelPlan& plan,
                                                     uint64_t seed) {
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

}  // namespace legacy
