#include "stagewise/engine/model_plan.h"

#include "model/plan_hooks.h"
#include "model/plans.h"

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

int64_t ModelPlan::inputBytes() const { return input.numel() * 4; }

static std::string activationName(const std::string& a) {
  if (a == "gelu") return "GELU";
  if (a == "tanh") return "Tanh";
  return "ReLU";
}

static std::string normName(const std::string& n) {
  if (n == "layernorm") return "LayerNorm + ";
  if (n == "batchnorm") return "BatchNorm + ";
  return "";
}

namespace detail {

void planMlp(const ModelSpec& model, ModelPlan& plan) {
  const InputShape& input = plan.input;
  if (model.hidden.empty()) throw SpecError("model.hidden", "needs at least one hidden width");
  int64_t in = input.numel();
  for (size_t i = 0; i < model.hidden.size(); ++i) {
    const int64_t w = model.hidden[i];
    if (w < 1)
      throw SpecError("model.hidden[" + std::to_string(i) + "]", "width must be at least 1");
    LayerInfo l;
    l.index = static_cast<int>(i);
    l.name = "fc" + std::to_string(i + 1);
    l.description = "Linear " + std::to_string(in) + "→" + std::to_string(w) + " + " +
                    normName(model.norm) + activationName(model.activation);
    l.outShape = {w};
    l.params = in * w + w;
    l.flops = 2 * in * w + 2 * w;
    l.activationBytes = w * 4;
    if (model.norm == "layernorm" || model.norm == "batchnorm") {
      // A scale and a shift per feature (batch norm's running statistics are buffers, not
      // parameters); about 5 FLOPs per feature for layer norm (mean, variance, normalise,
      // affine), 4 for batch norm (as the cnn plan counts it); the Linear's output is kept too.
      l.params += 2 * w;
      l.flops += (model.norm == "layernorm" ? 5 : 4) * w;
      l.activationBytes += w * 4;
    }
    plan.layers.push_back(l);
    in = w;
  }
  LayerInfo c;
  c.index = static_cast<int>(model.hidden.size());
  c.name = "classifier";
  c.description = "Linear " + std::to_string(in) + "→" + std::to_string(input.numClasses);
  c.outShape = {input.numClasses};
  c.params = in * input.numClasses + input.numClasses;
  c.flops = 2 * in * input.numClasses;
  c.activationBytes = int64_t{input.numClasses} * 4;
  plan.layers.push_back(c);
}

}  // namespace detail

ModelPlan planModel(const ModelSpec& model, const InputShape& input) {
  if (input.numClasses < 2) throw SpecError("dataset", "the dataset needs at least 2 classes");
  ModelPlan plan;
  plan.input = input;
  if (model.kind == "mlp") detail::planMlp(model, plan);
  else if (model.kind == "cnn") detail::planCnn(model, plan);
  else if (model.kind == "vit") detail::planVit(model, plan);
  else if (model.kind == "torchscript") detail::planTorchScript(model, plan);
  else throw SpecError("model.kind", "unknown model '" + model.kind + "'; use mlp, cnn, vit or torchscript");
  return plan;
}

AuxCost auxHeadCost(const std::string& kind, int hidden, const std::vector<int64_t>& inShape,
                    int numClasses) {
  const int64_t in = std::accumulate(inShape.begin(), inShape.end(), int64_t{1}, std::multiplies<>());
  AuxCost cost;
  if (kind == "mlp") {
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
