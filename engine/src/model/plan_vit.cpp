// Small Vision Transformer: patch embedding (+ learned positions), pre-norm encoder blocks
// (attention, MLP), and token pooling + classifier. No class token: heads pool tokens.

#include "model/plans.h"

namespace stagewise::engine::detail {

void planVit(const ModelSpec& m, ModelPlan& plan) {
  const auto& in = plan.input.dims;
  if (in.size() != 3)
    throw SpecError("model.kind", "a vit needs image inputs [channels, height, width]; this dataset has " +
                                      std::to_string(in.size()) + "-dimensional samples: use mlp");
  if (m.patch < 1 || in[1] % m.patch != 0 || in[2] % m.patch != 0)
    throw SpecError("model.patch", "patch size " + std::to_string(m.patch) + " must divide the image size " +
                                       std::to_string(in[1]) + "x" + std::to_string(in[2]));
  if (m.dim < 1 || m.dim > 4096) throw SpecError("model.dim", "must be between 1 and 4096");
  if (m.heads < 1 || m.dim % m.heads != 0)
    throw SpecError("model.heads", std::to_string(m.heads) + " heads must divide model.dim " + std::to_string(m.dim));
  if (m.depth < 1 || m.depth > 64) throw SpecError("model.depth", "must be between 1 and 64");
  if (m.mlpRatio < 1 || m.mlpRatio > 16) throw SpecError("model.mlp_ratio", "must be between 1 and 16");
  const int64_t c = in[0], p = m.patch, d = m.dim;
  const int64_t n = (in[1] / p) * (in[2] / p);
  const int64_t hidden = d * m.mlpRatio;
  LayerInfo embed;
  embed.index = 0;
  embed.name = "patch_embed";
  embed.description = "Patch " + std::to_string(p) + "x" + std::to_string(p) + " → " + std::to_string(n) + "x" +
                      std::to_string(d) + " + pos";
  embed.outShape = {n, d};
  embed.params = c * p * p * d + d + n * d;
  embed.flops = 2 * c * p * p * d * n;
  embed.activationBytes = n * d * 4;
  plan.layers.push_back(embed);
  for (int b = 0; b < m.depth; ++b) {
    LayerInfo l;
    l.index = static_cast<int>(plan.layers.size());
    l.name = "encoder" + std::to_string(b + 1);
    l.description = "Encoder " + std::to_string(m.heads) + "h, MLP " + std::to_string(hidden);
    l.outShape = {n, d};
    l.params = 2 * 2 * d                 // two LayerNorms
               + d * 3 * d + 3 * d        // qkv
               + d * d + d                // projection
               + d * hidden + hidden + hidden * d + d;  // MLP
    l.flops = 2 * n * d * 3 * d + 2 * 2 * n * n * d + 2 * n * d * d + 2 * 2 * n * d * hidden + 10 * n * d;
    l.activationBytes = (6 * n * d + m.heads * n * n + 2 * n * hidden) * 4;
    plan.layers.push_back(l);
  }
  LayerInfo head;
  head.index = static_cast<int>(plan.layers.size());
  head.name = "classifier";
  head.description = "LN + token pool + Linear " + std::to_string(d) + "→" + std::to_string(plan.input.numClasses);
  head.outShape = {plan.input.numClasses};
  head.params = 2 * d + d * plan.input.numClasses + plan.input.numClasses;
  head.flops = 5 * n * d + 2 * d * plan.input.numClasses;
  head.activationBytes = (n * d + d + plan.input.numClasses) * 4;
  plan.layers.push_back(head);
}

}  // namespace stagewise::engine::detail
