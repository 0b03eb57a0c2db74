// Residual CNN: stem, ResNet basic blocks (3x3 conv-BN-ReLU, 3x3 conv-BN, shortcut, ReLU), and a
// pooled classifier. The first block of every group after the first halves H and W.

#include "model/plans.h"

namespace stagewise::engine::detail {

namespace {

int64_t convParams(int64_t cin, int64_t cout, int k) { return cin * cout * k * k; }
int64_t convFlops(int64_t cin, int64_t cout, int k, int64_t h, int64_t w) { return 2 * cin * cout * k * k * h * w; }

}  // namespace

void planCnn(const ModelSpec& m, ModelPlan& plan) {
  const auto& in = plan.input.dims;
  if (in.size() != 3)
    throw SpecError("model.kind", "a cnn needs image inputs [channels, height, width]; this dataset has " +
                                      std::to_string(in.size()) + "-dimensional samples: use mlp");
  if (m.channels.empty()) throw SpecError("model.channels", "needs at least one group width");
  if (m.blocks.size() != m.channels.size())
    throw SpecError("model.blocks", "lists " + std::to_string(m.blocks.size()) + " groups but model.channels lists " +
                                        std::to_string(m.channels.size()) + ": give one block count per width");
  for (size_t g = 0; g < m.channels.size(); ++g) {
    if (m.channels[g] < 1 || m.channels[g] > 4096)
      throw SpecError("model.channels[" + std::to_string(g) + "]", "width must be between 1 and 4096");
    if (m.blocks[g] < 1 || m.blocks[g] > 64)
      throw SpecError("model.blocks[" + std::to_string(g) + "]", "must be between 1 and 64");
  }
  int64_t c = in[0], h = in[1], w = in[2];
  const int64_t c0 = m.channels[0];
  LayerInfo stem;
  stem.index = 0;
  stem.name = "stem";
  stem.description = "Conv3x3 " + std::to_string(c) + "→" + std::to_string(c0) + " + BN + ReLU";
  stem.outShape = {c0, h, w};
  stem.params = convParams(c, c0, 3) + 2 * c0;
  stem.flops = convFlops(c, c0, 3, h, w) + 4 * c0 * h * w;
  stem.activationBytes = c0 * h * w * 4;
  plan.layers.push_back(stem);
  c = c0;
  for (size_t g = 0; g < m.channels.size(); ++g) {
    for (int b = 0; b < m.blocks[g]; ++b) {
      const int stride = (g > 0 && b == 0) ? 2 : 1;
      const int64_t cout = m.channels[g];
      const int64_t ho = convOut(h, stride), wo = convOut(w, stride);
      LayerInfo l;
      l.index = static_cast<int>(plan.layers.size());
      l.name = "block" + std::to_string(g + 1) + "." + std::to_string(b + 1);
      l.description = "ResBlock " + std::to_string(c) + "→" + std::to_string(cout) + (stride == 2 ? " /2" : "");
      l.outShape = {cout, ho, wo};
      l.params = convParams(c, cout, 3) + convParams(cout, cout, 3) + 4 * cout;
      l.flops = convFlops(c, cout, 3, ho, wo) + convFlops(cout, cout, 3, ho, wo) + 8 * cout * ho * wo;
      if (stride != 1 || c != cout) {  // projection shortcut
        l.params += convParams(c, cout, 1) + 2 * cout;
        l.flops += convFlops(c, cout, 1, ho, wo) + 4 * cout * ho * wo;
      }
      l.activationBytes = 3 * cout * ho * wo * 4;  // both convs' outputs and the sum
      plan.layers.push_back(l);
      c = cout, h = ho, w = wo;
    }
  }
  LayerInfo head;
  head.index = static_cast<int>(plan.layers.size());
  head.name = "classifier";
  head.description = "AvgPool + Linear " + std::to_string(c) + "→" + std::to_string(plan.input.numClasses);
  head.outShape = {plan.input.numClasses};
  head.params = c * plan.input.numClasses + plan.input.numClasses;
  head.flops = c * h * w + 2 * c * plan.input.numClasses;
  head.activationBytes = (c + plan.input.numClasses) * 4;
  plan.layers.push_back(head);
}

}  // namespace stagewise::engine::detail
