// The model families as generators of `model.layers` lists: planModel and buildLayers see only
// layer lists, so one planner, one builder and one drawing serve every kind. The expansions
// construct their modules in the order the families' own modules did, so each family keeps its
// initial weights (and losses) bit for bit (tests/engine/test_layers.cpp against the old builder
// in tests/engine/legacy_family_model.cpp).

#include "stagewise/engine/model_plan.h"

namespace stagewise::engine {

namespace {

LayerSpec layer(std::string type) {
  LayerSpec l;
  l.type = std::move(type);
  return l;
}

LayerSpec linear(int64_t out) {
  LayerSpec l = layer("linear");
  l.out = out;
  return l;
}

/// 3x3 convolution, padding 1, no bias (batch norm follows).
LayerSpec conv3x3(int64_t out, int stride) {
  LayerSpec l = layer("conv2d");
  l.out = out, l.kernel = 3, l.padding = 1, l.bias = false;
  if (stride != 1) l.stride = stride;
  return l;
}

LayerSpec sequential(std::string name, std::vector<LayerSpec> inner) {
  LayerSpec l = layer("sequential");
  l.name = std::move(name);
  l.layers = std::move(inner);
  return l;
}

void checkImage(const std::string& kind, const InputShape& input) {
  if (input.dims.size() != 3)
    throw SpecError("model.kind", "a " + kind +
                                      " needs image inputs [channels, height, width]; this "
                                      "dataset has " +
                                      std::to_string(input.dims.size()) +
                                      "-dimensional samples: use mlp");
}

std::vector<LayerSpec> mlpLayers(const ModelSpec& m, const InputShape& input) {
  if (m.hidden.empty()) throw SpecError("model.hidden", "needs at least one hidden width");
  std::vector<LayerSpec> out;
  for (size_t i = 0; i < m.hidden.size(); ++i) {
    if (m.hidden[i] < 1)
      throw SpecError("model.hidden[" + std::to_string(i) + "]", "width must be at least 1");
    std::vector<LayerSpec> inner;
    if (i == 0 && input.dims.size() > 1) inner.push_back(layer("flatten"));
    inner.push_back(linear(m.hidden[i]));
    if (m.norm == "layernorm") inner.push_back(layer("layernorm"));
    if (m.norm == "batchnorm") inner.push_back(layer("batchnorm1d"));
    inner.push_back(layer(m.activation == "gelu"   ? "gelu"
                          : m.activation == "tanh" ? "tanh"
                                                   : "relu"));
    out.push_back(sequential("fc" + std::to_string(i + 1), std::move(inner)));
  }
  LayerSpec classifier = linear(input.numClasses);
  classifier.name = "classifier";
  out.push_back(classifier);
  return out;
}

std::vector<LayerSpec> cnnLayers(const ModelSpec& m, const InputShape& input) {
  checkImage("cnn", input);
  if (m.channels.empty()) throw SpecError("model.channels", "needs at least one group width");
  if (m.blocks.size() != m.channels.size())
    throw SpecError("model.blocks", "lists " + std::to_string(m.blocks.size()) +
                                        " groups but model.channels lists " +
                                        std::to_string(m.channels.size()) +
                                        ": give one block count per width");
  for (size_t g = 0; g < m.channels.size(); ++g) {
    if (m.channels[g] < 1 || m.channels[g] > 4096)
      throw SpecError("model.channels[" + std::to_string(g) + "]",
                      "width must be between 1 and 4096");
    if (m.blocks[g] < 1 || m.blocks[g] > 64)
      throw SpecError("model.blocks[" + std::to_string(g) + "]", "must be between 1 and 64");
  }
  std::vector<LayerSpec> out;
  out.push_back(
      sequential("stem", {conv3x3(m.channels[0], 1), layer("batchnorm2d"), layer("relu")}));
  for (size_t g = 0; g < m.channels.size(); ++g)
    for (int b = 0; b < m.blocks[g]; ++b) {
      // ResNet basic block: 3x3 conv-BN-ReLU, 3x3 conv-BN, plus the input (a 1x1 projection
      // where the shape changes), ReLU. The first block of every group after the first halves
      // H and W.
      const int stride = (g > 0 && b == 0) ? 2 : 1;
      LayerSpec residual = layer("residual");
      residual.layers = {conv3x3(m.channels[g], stride), layer("batchnorm2d"), layer("relu"),
                         conv3x3(m.channels[g], 1), layer("batchnorm2d")};
      out.push_back(sequential("block" + std::to_string(g + 1) + "." + std::to_string(b + 1),
                               {residual, layer("relu")}));
    }
  out.push_back(sequential(
      "classifier", {layer("adaptive_avgpool2d"), layer("flatten"), linear(input.numClasses)}));
  return out;
}

std::vector<LayerSpec> vitLayers(const ModelSpec& m, const InputShape& input) {
  checkImage("vit", input);
  const auto& in = input.dims;
  if (m.patch < 1 || in[1] % m.patch != 0 || in[2] % m.patch != 0)
    throw SpecError("model.patch", "patch size " + std::to_string(m.patch) +
                                       " must divide the image size " + std::to_string(in[1]) +
                                       "x" + std::to_string(in[2]));
  if (m.dim < 1 || m.dim > 4096) throw SpecError("model.dim", "must be between 1 and 4096");
  if (m.heads < 1 || m.dim % m.heads != 0)
    throw SpecError("model.heads", std::to_string(m.heads) + " heads must divide model.dim " +
                                       std::to_string(m.dim));
  if (m.depth < 1 || m.depth > 64) throw SpecError("model.depth", "must be between 1 and 64");
  if (m.mlpRatio < 1 || m.mlpRatio > 16)
    throw SpecError("model.mlp_ratio", "must be between 1 and 16");
  std::vector<LayerSpec> out;
  LayerSpec embed = layer("patch_embed");
  embed.name = "patch_embed";
  embed.patch = m.patch, embed.dim = m.dim;
  out.push_back(embed);
  for (int b = 0; b < m.depth; ++b) {
    LayerSpec block = layer("transformer_block");
    block.name = "encoder" + std::to_string(b + 1);
    block.heads = m.heads, block.mlpRatio = m.mlpRatio;
    out.push_back(block);
  }
  // No class token: LayerNorm, the tokens' mean, the classifier.
  out.push_back(sequential("classifier",
                           {layer("layernorm"), layer("token_mean"), linear(input.numClasses)}));
  return out;
}

/// A GPT on bytes: token and position embedding, `depth` pre-norm causal blocks (one cuttable
/// layer each), a final LayerNorm and a linear layer to the vocabulary at every position.
std::vector<LayerSpec> gptLayers(const ModelSpec& m, const InputShape& input) {
  if (!input.sequence || input.dims.size() != 1)
    throw SpecError("model.kind", "a gpt reads token ids: set dataset.kind to text");
  if (m.dim < 1 || m.dim > 4096) throw SpecError("model.dim", "must be between 1 and 4096");
  if (m.heads < 1 || m.dim % m.heads != 0)
    throw SpecError("model.heads", std::to_string(m.heads) + " heads must divide model.dim " +
                                       std::to_string(m.dim));
  if (m.depth < 1 || m.depth > 64) throw SpecError("model.depth", "must be between 1 and 64");
  if (m.mlpRatio < 1 || m.mlpRatio > 16)
    throw SpecError("model.mlp_ratio", "must be between 1 and 16");
  std::vector<LayerSpec> out;
  LayerSpec embed = layer("token_embed");
  embed.name = "token_embed";
  embed.dim = m.dim;
  out.push_back(embed);
  for (int b = 0; b < m.depth; ++b) {
    LayerSpec block = layer("causal_block");
    block.name = "block" + std::to_string(b + 1);
    block.heads = m.heads, block.mlpRatio = m.mlpRatio;
    out.push_back(block);
  }
  out.push_back(sequential("lm_head", {layer("layernorm"), linear(input.numClasses)}));
  return out;
}

}  // namespace

std::vector<LayerSpec> familyLayers(const ModelSpec& model, const InputShape& input) {
  if (model.kind == "layers") return model.layers;
  if (input.sequence && model.kind != "gpt")  // token ids are not pixels or features
    throw SpecError("model.kind",
                    "a text dataset needs a gpt model (byte tokens, every next byte "
                    "predicted); the " +
                        model.kind + " classifies images or features");
  if (model.kind == "mlp") return mlpLayers(model, input);
  if (model.kind == "cnn") return cnnLayers(model, input);
  if (model.kind == "vit") return vitLayers(model, input);
  if (model.kind == "gpt") return gptLayers(model, input);
  throw SpecError("model.kind", "unknown model '" + model.kind +
                                    "'; use mlp, cnn, vit, gpt, layers or torchscript");
}

}  // namespace stagewise::engine
