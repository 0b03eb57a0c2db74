#include "model/layer_modules.h"

#include <ATen/CPUGeneratorImpl.h>

#include "model/family_modules.h"
#include "model/layer_plan.h"

namespace stagewise::engine {

namespace nn = torch::nn;

ResidualImpl::ResidualImpl(nn::Sequential b, nn::Sequential s) {
  body = register_module("body", std::move(b));
  if (s) shortcut = register_module("shortcut", std::move(s));
}

torch::Tensor ResidualImpl::forward(torch::Tensor x) {
  auto out = body->forward(x);
  return out + (shortcut ? shortcut->forward(x) : x);
}

SeededDropoutImpl::SeededDropoutImpl(double probability, uint64_t seed)
    : p(probability), generator(at::detail::createCPUGenerator(seed)) {}

torch::Tensor SeededDropoutImpl::forward(torch::Tensor x) {
  if (!is_training() || p == 0) return x;
  auto keep = torch::empty(x.sizes(), x.options().device(torch::kCPU)).bernoulli_(1 - p, generator);
  return x * keep.to(x.device()) / (1 - p);
}

namespace {

nn::AnyModule makeModule(const LayerSpec& l, const std::vector<int64_t>& in,
                         const std::string& field, uint64_t seed);

/// The inner layers, in order, each fed the previous one's output shape.
std::vector<int64_t> appendInner(nn::SequentialImpl& into, const std::vector<LayerSpec>& layers,
                                 std::vector<int64_t> shape, const std::string& field,
                                 uint64_t seed) {
  for (size_t j = 0; j < layers.size(); ++j) {
    const std::string at = field + ".layers." + std::to_string(j);
    into.push_back(makeModule(layers[j], shape, at, seed * 31 + j + 1));
    shape = detail::planLayer(layers[j], shape, at).out;
  }
  return shape;
}

nn::AnyModule makeModule(const LayerSpec& l, const std::vector<int64_t>& in,
                         const std::string& field, uint64_t seed) {
  const std::string& t = l.type;
  // Checks the shapes and values (throws SpecError naming the layer), and gives the output.
  const std::vector<int64_t> out = detail::planLayer(l, in, field).out;
  if (t == "linear")
    return nn::AnyModule(nn::Linear(nn::LinearOptions(in.back(), l.out).bias(l.bias)));
  if (t == "conv2d")
    return nn::AnyModule(nn::Conv2d(nn::Conv2dOptions(in[0], l.out, l.kernel)
                                        .stride(l.stride == 0 ? 1 : l.stride)
                                        .padding(l.padding)
                                        .groups(l.groups)
                                        .bias(l.bias)));
  if (t == "batchnorm1d") return nn::AnyModule(nn::BatchNorm1d(in[0]));
  if (t == "batchnorm2d") return nn::AnyModule(nn::BatchNorm2d(in[0]));
  if (t == "layernorm") return nn::AnyModule(nn::LayerNorm(nn::LayerNormOptions({in.back()})));
  if (t == "relu") return nn::AnyModule(nn::ReLU());
  if (t == "gelu") return nn::AnyModule(nn::GELU());
  if (t == "silu") return nn::AnyModule(nn::SiLU());
  if (t == "tanh") return nn::AnyModule(nn::Tanh());
  if (t == "maxpool2d")
    return nn::AnyModule(nn::MaxPool2d(nn::MaxPool2dOptions(l.kernel)
                                           .stride(l.stride == 0 ? l.kernel : l.stride)
                                           .padding(l.padding)));
  if (t == "avgpool2d")
    return nn::AnyModule(nn::AvgPool2d(nn::AvgPool2dOptions(l.kernel)
                                           .stride(l.stride == 0 ? l.kernel : l.stride)
                                           .padding(l.padding)));
  if (t == "adaptive_avgpool2d")
    return nn::AnyModule(nn::AdaptiveAvgPool2d(
        nn::AdaptiveAvgPool2dOptions({l.outputSize[0], l.outputSize[1]})));
  if (t == "flatten") return nn::AnyModule(nn::Flatten());
  if (t == "dropout") return nn::AnyModule(SeededDropout(l.p, seed));
  if (t == "token_mean") return nn::AnyModule(TokenMean());
  if (t == "patch_embed") return nn::AnyModule(PatchEmbed(in[0], l.patch, l.dim, out[0]));
  if (t == "transformer_block")
    return nn::AnyModule(EncoderBlock(in[1], l.heads, in[1] * l.mlpRatio));
  if (t == "causal_block")
    return nn::AnyModule(EncoderBlock(in[1], l.heads, in[1] * l.mlpRatio, /*causal=*/true));
  if (t == "token_embed") return nn::AnyModule(TokenEmbed(detail::kByteVocabulary, l.dim, in[0]));
  if (t == "sequential") {
    LayerSequence inner;
    appendInner(*inner, l.layers, in, field, seed);
    return nn::AnyModule(inner);
  }
  if (t == "residual") {
    nn::Sequential body;
    appendInner(*body, l.layers, in, field, seed);
    nn::Sequential shortcut{nullptr};
    if (out != in) {
      if (in.size() == 3) {
        const auto stride = detail::projectionStride(in, out);
        shortcut = nn::Sequential(
            nn::Conv2d(nn::Conv2dOptions(in[0], out[0], 1)
                           .stride(torch::ExpandingArray<2>({stride[0], stride[1]}))
                           .bias(false)),
            nn::BatchNorm2d(out[0]));
      } else {
        shortcut = nn::Sequential(nn::Linear(in.back(), out.back()));
      }
    }
    return nn::AnyModule(Residual(body, shortcut));
  }
  throw SpecError(field + ".type", "unknown layer type '" + t + "'");
}

}  // namespace

void appendLayerModules(nn::Sequential& into, const LayerSpec& layer,
                        const std::vector<int64_t>& in, const std::string& field, uint64_t seed) {
  if (layer.type == "sequential") {
    detail::planLayer(layer, in, field);  // the whole entry's checks first
    appendInner(*into, layer.layers, in, field, seed);
  } else {
    into->push_back(makeModule(layer, in, field, seed));
  }
}

}  // namespace stagewise::engine
