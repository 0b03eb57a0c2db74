#pragma once
// LibTorch modules of the ViT layers (patch_embed, transformer_block) and the token aux head.
// The CNN's blocks are residual layers (model/layer_modules.h).
#include <torch/torch.h>  // free here: the engine precompiles it

namespace stagewise::engine {

/// Patches to tokens: a strided convolution, flattened, plus learned positions. [B,C,H,W] → [B,N,D]
struct PatchEmbedImpl : torch::nn::Module {
  PatchEmbedImpl(int64_t channels, int64_t patch, int64_t dim, int64_t tokens);
  torch::Tensor forward(torch::Tensor x);
  torch::nn::Conv2d proj{nullptr};
  torch::Tensor pos;
};
TORCH_MODULE(PatchEmbed);

/// Pre-norm transformer encoder block: x + Attn(LN(x)); x + MLP(LN(x)). [B,N,D] → [B,N,D]
struct EncoderBlockImpl : torch::nn::Module {
  EncoderBlockImpl(int64_t dim, int64_t heads, int64_t hidden);
  torch::Tensor forward(torch::Tensor x);
  torch::nn::LayerNorm ln1{nullptr}, ln2{nullptr};
  torch::nn::Linear qkv{nullptr}, proj{nullptr}, fc1{nullptr}, fc2{nullptr};
  int64_t heads;
};
TORCH_MODULE(EncoderBlock);

/// Token pooling head: LayerNorm, mean over tokens, Linear. [B,N,D] → [B,classes]
struct TokenHeadImpl : torch::nn::Module {
  TokenHeadImpl(int64_t dim, int64_t classes);
  torch::Tensor forward(torch::Tensor x);
  torch::nn::LayerNorm ln{nullptr};
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(TokenHead);

}  // namespace stagewise::engine
