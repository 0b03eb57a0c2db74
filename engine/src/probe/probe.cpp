#include "probe/probe.h"

#include "model/class_loss.h"

namespace stagewise::engine {

namespace {

torch::Tensor forwardBody(StageModules& s, torch::Tensor h) {
  for (auto& layer : s.layers) h = layer->forward(h);
  return h;
}

void zeroGrads(const std::vector<torch::Tensor>& params) {
  for (auto p : params)
    if (p.grad().defined()) p.mutable_grad() = torch::Tensor();
}

/// The products a cosine needs of one pair of tensors, in float64.
struct Products {
  double dot = 0, na = 0, nb = 0;
};

Products products(const torch::Tensor& a, const torch::Tensor& b) {
  if (a.device().is_cpu() && b.device().is_cpu() && a.scalar_type() == torch::kFloat32 &&
      b.scalar_type() == torch::kFloat32 && a.is_contiguous() && b.is_contiguous() &&
      a.numel() == b.numel()) {
    // One pass in float64 without making float64 copies of both gradients.
    const float* x = a.data_ptr<float>();
    const float* y = b.data_ptr<float>();
    Products p;
    for (int64_t i = 0, n = a.numel(); i < n; ++i) {
      const double u = x[i], v = y[i];
      p.dot += u * v, p.na += u * u, p.nb += v * v;
    }
    return p;
  }
  auto x = a.to(torch::kFloat64).flatten();
  auto y = b.to(torch::kFloat64).flatten();
  return {x.dot(y).item<double>(), x.dot(x).item<double>(), y.dot(y).item<double>()};
}

/// Cosine over tensors [begin, end) of per-tensor products, summed in tensor order (the stage's
/// value and each layer's read the same products: each tensor is converted once).
double cosine(const std::vector<Products>& p, size_t begin, size_t end) {
  double dot = 0, na = 0, nb = 0;
  for (size_t i = begin; i < end; ++i) dot += p[i].dot, na += p[i].na, nb += p[i].nb;
  if (na <= 0 || nb <= 0) return 0;
  return dot / std::sqrt(na * nb);
}

/// The parameters' gradients, taken from them (they are left without one): no copy, and the
/// next backward pass starts from none.
std::vector<torch::Tensor> gradsOf(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> out;
  for (auto p : params) {
    out.push_back(p.grad().defined() ? p.grad().detach() : torch::zeros_like(p));
    if (p.grad().defined()) p.mutable_grad() = torch::Tensor();
  }
  return out;
}

}  // namespace

void loadParams(StageModules& modules, const std::vector<torch::Tensor>& body,
                const std::vector<torch::Tensor>& aux) {
  torch::NoGradGuard noGrad;
  auto b = modules.bodyState();
  for (size_t i = 0; i < b.size() && i < body.size(); ++i) b[i].copy_(body[i]);
  auto a = modules.auxState();
  for (size_t i = 0; i < a.size() && i < aux.size(); ++i) a[i].copy_(aux[i]);
}

namespace {

/// The gradients of `output` (seeded with `seed`; none for a scalar loss) with respect to
/// `params`, and to `input` appended last when it is defined. Touches no parameter's .grad.
std::vector<torch::Tensor> gradientsOf(const torch::Tensor& output, const torch::Tensor& seed,
                                       const std::vector<torch::Tensor>& params,
                                       const torch::Tensor& input, bool retain) {
  std::vector<torch::Tensor> inputs = params;
  if (input.defined()) inputs.push_back(input);
  // model.layers: a stage may hold no parameters (a pool, a flatten), and then the first stage's
  // output may not depend on anything that takes a gradient.
  if (inputs.empty()) return {};
  if (!output.requires_grad()) {
    for (auto& t : inputs) t = torch::zeros_like(t);
    return inputs;
  }
  std::vector<torch::Tensor> seeds;
  if (seed.defined()) seeds.push_back(seed);
  auto g = torch::autograd::grad({output}, inputs, seeds, retain, /*create_graph=*/false,
                                 /*allow_unused=*/true);
  for (size_t i = 0; i < g.size(); ++i)
    if (!g[i].defined()) g[i] = torch::zeros_like(inputs[i]);
  return g;
}

/// Chunked local updates: one forward pass serves both gradients. Every stage runs on its input
/// as a leaf of its own. Its loss gives its local gradient; the last stage's loss is the model's,
/// so its local gradient is the true one, and the true gradient of each stage before it comes
/// from carrying the gradient of the next stage's input back through the stage's kept graph:
/// the same operations as one end-to-end backward pass, with a quarter less work than a second
/// forward and backward.
void sharedForward(std::vector<StageModules>& stages, const std::vector<bool>& isLast,
                   const torch::Tensor& x, const torch::Tensor& y,
                   std::vector<std::vector<torch::Tensor>>& trueGrad,
                   std::vector<std::vector<torch::Tensor>>& localGrad) {
  const size_t k = stages.size();
  std::vector<torch::Tensor> in(k), out(k);
  for (size_t i = 0; i < k; ++i) {
    in[i] = i == 0 ? x : out[i - 1].detach().requires_grad_(true);
    out[i] = forwardBody(stages[i], in[i]);
  }
  torch::Tensor carried;  // the true gradient of the input of stage i + 1
  for (size_t i = 0; i < k; ++i) {
    if (isLast[i]) break;
    const auto loss = classLoss(stages[i].aux->forward(out[i]), y);
    localGrad[i] = gradientsOf(loss, {}, stages[i].bodyParams(), {}, /*retain=*/true);
  }
  {
    const size_t last = k - 1;
    const auto loss = classLoss(out[last], y);
    auto g = gradientsOf(loss, {}, stages[last].bodyParams(), last > 0 ? in[last] : torch::Tensor(),
                         /*retain=*/false);
    if (last > 0) carried = g.back(), g.pop_back();
    localGrad[last] = g;
    trueGrad[last] = g;
  }
  for (size_t i = k - 1; i-- > 0;) {
    auto g = gradientsOf(out[i], carried, stages[i].bodyParams(), i > 0 ? in[i] : torch::Tensor(),
                         /*retain=*/false);
    if (i > 0) carried = g.back(), g.pop_back();
    trueGrad[i] = std::move(g);
  }
}

/// The true gradient from one end-to-end pass, then the local ones stage by stage (with overlap
/// the next stage's loss reaches back over the last L layers).
void twoPass(std::vector<StageModules>& stages, const std::vector<bool>& isLast,
             const torch::Tensor& x, const torch::Tensor& y, int overlap,
             std::vector<std::vector<torch::Tensor>>& trueGrad,
             std::vector<std::vector<torch::Tensor>>& localGrad) {
  const size_t k = stages.size();
  // True gradient: one end-to-end forward and backward through every stage.
  for (auto& s : stages) zeroGrads(s.bodyParams());
  {
    torch::Tensor h = x;
    for (auto& s : stages) h = forwardBody(s, h);
    classLoss(h, y).backward();
    for (size_t i = 0; i < k; ++i) trueGrad[i] = gradsOf(stages[i].bodyParams());
  }
  // Local gradients: each stage on its detached input, through its own head. With overlap the
  // next stage's input is the output of this stage's last L layers recomputed from their
  // (detached) input, so the next stage's loss also reaches those layers, and only those.
  for (auto& s : stages) zeroGrads(s.bodyParams()), zeroGrads(s.auxParams());
  torch::Tensor in = x;
  for (size_t i = 0; i < k; ++i) {
    auto& s = stages[i];
    std::vector<torch::Tensor> outs;
    torch::Tensor h = in;
    for (auto& layer : s.layers) outs.push_back(h = layer->forward(h));
    torch::Tensor logits = isLast[i] ? h : s.aux->forward(h);
    classLoss(logits, y).backward();
    if (i > 0) localGrad[i - 1] = gradsOf(stages[i - 1].bodyParams());  // now complete
    if (overlap > 0 && !isLast[i]) {
      const size_t n = s.layers.size(), l = std::min(n, static_cast<size_t>(overlap));
      torch::Tensor tail = (l >= n ? in : outs[n - l - 1]).detach();
      for (size_t j = n - l; j < n; ++j) tail = s.layers[j]->forward(tail);
      in = tail;  // attached to this stage's last L layers
    } else {
      in = h.detach();
    }
  }
  localGrad[k - 1] = gradsOf(stages[k - 1].bodyParams());
}

ProbeResult cosines(std::vector<StageModules>& stages,
                    const std::vector<std::vector<torch::Tensor>>& trueGrad,
                    const std::vector<std::vector<torch::Tensor>>& localGrad) {
  const size_t k = stages.size();
  ProbeResult r;
  for (size_t i = 0; i < k; ++i) {
    std::vector<Products> p;
    for (size_t t = 0; t < localGrad[i].size(); ++t)
      p.push_back(products(localGrad[i][t], trueGrad[i][t]));
    r.stage.push_back(cosine(p, 0, p.size()));
    std::vector<double> perLayer;
    size_t offset = 0;
    for (auto& layer : stages[i].layers) {
      const size_t n = layer->parameters().size();
      perLayer.push_back(cosine(p, offset, offset + n));
      offset += n;
    }
    r.layer.push_back(perLayer);
  }
  return r;
}
}  // namespace

ProbeResult gradientCosine(std::vector<StageModules>& stages, const std::vector<bool>& isLast,
                           const torch::Tensor& x, const torch::Tensor& y, int overlap) {
  const size_t k = stages.size();
  std::vector<std::vector<torch::Tensor>> trueGrad(k), localGrad(k);
  // Both gradients in training mode (batch statistics), as the stages compute theirs; the copies'
  // running statistics are reloaded with every snapshot.
  if (overlap > 0)
    twoPass(stages, isLast, x, y, overlap, trueGrad, localGrad);
  else
    sharedForward(stages, isLast, x, y, trueGrad, localGrad);
  return cosines(stages, trueGrad, localGrad);
}

ProbeResult gradientCosineTwoPass(std::vector<StageModules>& stages,
                                  const std::vector<bool>& isLast, const torch::Tensor& x,
                                  const torch::Tensor& y, int overlap) {
  std::vector<std::vector<torch::Tensor>> trueGrad(stages.size()), localGrad(stages.size());
  twoPass(stages, isLast, x, y, overlap, trueGrad, localGrad);
  return cosines(stages, trueGrad, localGrad);
}

EvalResult evaluate(std::vector<StageModules>& stages, const torch::Tensor& x,
                    const torch::Tensor& y, int64_t chunk) {
  torch::NoGradGuard noGrad;
  for (auto& s : stages) s.setTraining(false);  // batch norm: running statistics
  const int64_t n = x.size(0);
  double lossSum = 0;
  int64_t correct = 0, predictions = 0;
  for (int64_t begin = 0; begin < n; begin += chunk) {
    const int64_t end = std::min(n, begin + chunk);
    torch::Tensor h = x.slice(0, begin, end);
    for (auto& s : stages) h = forwardBody(s, h);
    auto target = y.slice(0, begin, end);
    lossSum += classLossSum(h, target).item<double>();
    correct += correctCount(h, target);
    predictions += target.numel();  // a text sample predicts every next byte
  }
  for (auto& s : stages) s.setTraining(true);
  EvalResult r;
  r.loss = predictions > 0 ? lossSum / static_cast<double>(predictions) : 0;
  r.accuracy =
      predictions > 0 ? static_cast<double>(correct) / static_cast<double>(predictions) : 0;
  return r;
}

}  // namespace stagewise::engine
