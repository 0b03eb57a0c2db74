#include "stagewise/engine/model_plan.h"
#include "stagewise/engine/model_plan_prefix.h"

#include "model/layer_plan.h"
#include "model/plan_hooks.h"

#include <map>
#include <numeric>

namespace stagewise::engine {

int64_t InputShape::numel() const {
  return std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>());
}

int64_t ModelPlan::totalParams() const {
  int64_t n = 0;
  for (const auto& l : layers) n += l.params;
  return n;
}

int64_t ModelPlan::totalFlops() const {
  int64_t n = 0;
  for (const auto& l : layers) n += l.flops;
  return n;
}

int64_t ModelPlan::inputBytes() const {
  return input.numel() * 4;
}

namespace {

/// "conv2", "relu3": a layer without a name is called by its kind and its count in the model.
std::string defaultName(const std::string& type, std::map<std::string, int>& counts) {
  static const std::map<std::string, std::string> shortNames = {{"linear", "fc"},
                                                                {"conv2d", "conv"},
                                                                {"batchnorm1d", "bn"},
                                                                {"batchnorm2d", "bn"},
                                                                {"layernorm", "ln"},
                                                                {"maxpool2d", "maxpool"},
                                                                {"avgpool2d", "avgpool"},
                                                                {"adaptive_avgpool2d", "pool"},
                                                                {"residual", "res"},
                                                                {"sequential", "seq"},
                                                                {"transformer_block", "block"},
                                                                {"causal_block", "block"}};
  const auto it = shortNames.find(type);
  const std::string base = it == shortNames.end() ? type : it->second;
  return base + std::to_string(++counts[base]);
}

}  // namespace

ModelPlan planModelPrefix(const ModelSpec& model, const InputShape& input, PlanError& error) {
  error = {};
  ModelPlan plan;
  plan.input = input;
  const auto fail = [&](int layer, const std::string& field, const std::string& message) {
    error.layer = layer;
    error.field = field;
    error.message = message;
    return plan;
  };
  if (input.numClasses < 2) return fail(-1, "dataset", "the dataset needs at least 2 classes");
  std::vector<LayerSpec> layers;
  try {
    if (model.kind == "torchscript") {  // only LibTorch can read the file: the engine's hook
      detail::planTorchScript(model, plan);
      return plan;
    }
    layers = familyLayers(model, input);
  } catch (const SpecError& e) {
    plan.layers.clear();
    return fail(-1, e.field(), e.message());
  }
  if (layers.empty())
    return fail(-1, "model.layers",
                "needs at least one layer; the last one gives the classes, e.g. "
                "{\"type\": \"linear\", \"out\": " +
                    std::to_string(input.numClasses) + "}");
  std::vector<int64_t> shape = input.dims;
  std::map<std::string, int> counts;
  for (size_t i = 0; i < layers.size(); ++i) {
    const std::string field = "model.layers." + std::to_string(i);
    detail::LayerCost cost;
    try {
      cost = detail::planLayer(layers[i], shape, field);
    } catch (const SpecError& e) {
      return fail(static_cast<int>(i), e.field(), e.message());
    }
    LayerInfo l;
    l.index = static_cast<int>(i);
    l.name = layers[i].name.empty() ? defaultName(layers[i].type, counts) : layers[i].name;
    l.description = cost.description;
    l.outShape = cost.out;
    l.params = cost.params;
    l.flops = cost.flops;
    l.activationBytes = cost.activationBytes;
    plan.layers.push_back(l);
    shape = cost.out;
  }
  const int last = static_cast<int>(layers.size()) - 1;
  const std::string lastField = "model.layers." + std::to_string(last);
  if (input.sequence) {
    const std::vector<int64_t> want = {input.dims.at(0), input.numClasses};
    if (shape != want)
      return fail(last, lastField,
                  "the last layer (" + layers.back().type + ") outputs " +
                      detail::shapeText(shape) + " but a text model predicts every next " +
                      "byte: it must output " + detail::shapeText(want) + " (a linear layer to " +
                      std::to_string(input.numClasses) + ")");
    return plan;
  }
  if (shape != std::vector<int64_t>{input.numClasses})
    return fail(last, lastField,
                "the last layer (" + layers.back().type + ") outputs " + detail::shapeText(shape) +
                    " but the dataset has " + std::to_string(input.numClasses) +
                    " classes: end with " + (shape.size() > 1 ? "a flatten and " : "") +
                    "{\"type\": \"linear\", \"out\": " + std::to_string(input.numClasses) + "}");
  return plan;
}

ModelPlan planModel(const ModelSpec& model, const InputShape& input) {
  PlanError error;
  ModelPlan plan = planModelPrefix(model, input, error);
  if (!error.empty()) throw SpecError(error.field, error.message);
  return plan;
}

AuxCost auxHeadCost(const std::string& kind, int hidden, const std::vector<int64_t>& inShape,
                    int numClasses) {
  const int64_t in =
      std::accumulate(inShape.begin(), inShape.end(), int64_t{1}, std::multiplies<>());
  AuxCost cost;
  if (kind == "lm" && inShape.size() == 2) {  // per token: LayerNorm, Linear to the vocabulary
    const int64_t n = inShape[0], d = inShape[1];
    cost.params = 2 * d + d * numClasses + numClasses;
    cost.flops = n * (5 * d + 2 * d * numClasses + numClasses);
  } else if (kind == "mlp") {
    cost.params = in * hidden + hidden + int64_t{hidden} * numClasses + numClasses;
    cost.flops = 2 * in * hidden + 2 * int64_t{hidden} * numClasses;
  } else if (kind == "conv" && inShape.size() == 3) {
    const int64_t c = inShape[0], hw = inShape[1] * inShape[2];
    cost.params = 9 * c * c + 2 * c + c * numClasses + numClasses;
    cost.flops = 2 * 9 * c * c * hw + 4 * c * hw + c * hw + 2 * c * numClasses;
  } else if (kind == "token" && inShape.size() == 2) {
    const int64_t n = inShape[0], d = inShape[1];
    cost.params = 2 * d + d * numClasses + numClasses;
    cost.flops = 5 * n * d + 2 * d * numClasses;
  } else {
    cost.params = in * numClasses + numClasses;
    cost.flops = 2 * in * numClasses;
  }
  return cost;
}

}  // namespace stagewise::engine
