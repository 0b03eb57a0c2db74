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

/// Bytes to tokens: an embedding of the 256 byte values plus learned positions. [B,T] int64 →
/// [B,T,D]
struct TokenEmbedImpl : torch::nn::Module {
  TokenEmbedImpl(int64_t vocabulary, int64_t dim, int64_t tokens);
  torch::Tensor forward(torch::Tensor x);
  torch::nn::Embedding embed{nullptr};
  torch::Tensor pos;
};
TORCH_MODULE(TokenEmbed);

/// Pre-norm transformer encoder block: x + Attn(LN(x)); x + MLP(LN(x)). [B,N,D] → [B,N,D].
/// `causal`: position t attends to positions <= t only (the mask is the block's own: LibTorch
/// 1.13 has no fused attention with a causal flag).
struct EncoderBlockImpl : torch::nn::Module {
  EncoderBlockImpl(int64_t dim, int64_t heads, int64_t hidden, bool causal = false);
  torch::Tensor forward(torch::Tensor x);
  torch::nn::LayerNorm ln1{nullptr}, ln2{nullptr};
  torch::nn::Linear qkv{nullptr}, proj{nullptr}, fc1{nullptr}, fc2{nullptr};
  int64_t heads;
  bool causal;
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
