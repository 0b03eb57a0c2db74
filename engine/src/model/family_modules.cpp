#include "model/family_modules.h"

#include <limits>

namespace stagewise::engine {

namespace nn = torch::nn;

PatchEmbedImpl::PatchEmbedImpl(int64_t channels, int64_t patch, int64_t dim, int64_t tokens) {
  proj = register_module("proj", nn::Conv2d(nn::Conv2dOptions(channels, dim, patch).stride(patch)));
  pos = register_parameter("pos", torch::randn({1, tokens, dim}) * 0.02);
}

torch::Tensor PatchEmbedImpl::forward(torch::Tensor x) {
  return proj(x).flatten(2).transpose(1, 2) + pos;
}

TokenEmbedImpl::TokenEmbedImpl(int64_t vocabulary, int64_t dim, int64_t tokens) {
  embed = register_module("embed", nn::Embedding(vocabulary, dim));
  pos = register_parameter("pos", torch::randn({1, tokens, dim}) * 0.02);
}

torch::Tensor TokenEmbedImpl::forward(torch::Tensor x) {
  return embed(x) + pos.slice(1, 0, x.size(1));
}

EncoderBlockImpl::EncoderBlockImpl(int64_t dim, int64_t h, int64_t hidden, bool c)
    : heads(h), causal(c) {
  ln1 = register_module("ln1", nn::LayerNorm(nn::LayerNormOptions({dim})));
  qkv = register_module("qkv", nn::Linear(dim, 3 * dim));
  proj = register_module("proj", nn::Linear(dim, dim));
  ln2 = register_module("ln2", nn::LayerNorm(nn::LayerNormOptions({dim})));
  fc1 = register_module("fc1", nn::Linear(dim, hidden));
  fc2 = register_module("fc2", nn::Linear(hidden, dim));
}

torch::Tensor EncoderBlockImpl::forward(torch::Tensor x) {
  const int64_t b = x.size(0), n = x.size(1), d = x.size(2), hd = d / heads;
  auto parts = qkv(ln1(x)).reshape({b, n, 3, heads, hd}).permute({2, 0, 3, 1, 4});
  auto q = parts[0], k = parts[1], v = parts[2];
  auto scores = q.matmul(k.transpose(-2, -1)) / std::sqrt(static_cast<double>(hd));
  if (causal)  // position t sees positions <= t: the strict upper triangle is -inf
    scores = scores.masked_fill(
        torch::ones({n, n}, torch::TensorOptions().dtype(torch::kBool).device(x.device())).triu(1),
        -std::numeric_limits<float>::infinity());
  auto att = torch::softmax(scores, -1);
  auto o = att.matmul(v).transpose(1, 2).reshape({b, n, d});
  x = x + proj(o);
  return x + fc2(torch::gelu(fc1(ln2(x))));
}

TokenHeadImpl::TokenHeadImpl(int64_t dim, int64_t classes) {
  ln = register_module("ln", nn::LayerNorm(nn::LayerNormOptions({dim})));
  fc = register_module("fc", nn::Linear(dim, classes));
}

torch::Tensor TokenHeadImpl::forward(torch::Tensor x) {
  return fc(ln(x).mean(1));
}

}  // namespace stagewise::engine
