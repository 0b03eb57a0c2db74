#include "probe/probe.h"

namespace stagewise::engine {

namespace {

torch::Tensor forwardBody(StageModules& s, torch::Tensor h) {
  for (auto& layer : s.layers) h = layer->forward(h);
  return h;
}

void zeroGrads(const std::vector<torch::Tensor>& params) {
  for (auto p : params)
    if (p.grad().defined()) p.mutable_grad().zero_();
}

double cosine(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  double dot = 0, na = 0, nb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    auto x = a[i].to(torch::kFloat64).flatten();
    auto y = b[i].to(torch::kFloat64).flatten();
    dot += x.dot(y).item<double>();
    na += x.dot(x).item<double>();
    nb += y.dot(y).item<double>();
  }
  if (na <= 0 || nb <= 0) return 0;
  return dot / std::sqrt(na * nb);
}

std::vector<torch::Tensor> gradsOf(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> out;
  for (const auto& p : params)
    out.push_back(p.grad().defined() ? p.grad().detach().clone() : torch::zeros_like(p));
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

ProbeResult gradientCosine(std::vector<StageModules>& stages, const std::vector<bool>& isLast,
                           const torch::Tensor& x, const torch::Tensor& y, int overlap) {
  const size_t k = stages.size();
  std::vector<std::vector<torch::Tensor>> trueGrad(k), localGrad(k);
  // Both gradients in training mode (batch statistics), as the stages compute theirs; the copies'
  // running statistics are reloaded with every snapshot.
  // True gradient: one end-to-end forward and backward through every stage.
  for (auto& s : stages) zeroGrads(s.bodyParams());
  {
    torch::Tensor h = x;
    for (auto& s : stages) h = forwardBody(s, h);
    torch::nn::functional::cross_entropy(h, y).backward();
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
    torch::nn::functional::cross_entropy(logits, y).backward();
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
  ProbeResult r;
  for (size_t i = 0; i < k; ++i) {
    r.stage.push_back(cosine(localGrad[i], trueGrad[i]));
    std::vector<double> perLayer;
    size_t offset = 0;
    for (auto& layer : stages[i].layers) {
      size_t n = layer->parameters().size();
      std::vector<torch::Tensor> a(localGrad[i].begin() + offset,
                                   localGrad[i].begin() + offset + n);
      std::vector<torch::Tensor> b(trueGrad[i].begin() + offset, trueGrad[i].begin() + offset + n);
      perLayer.push_back(cosine(a, b));
      offset += n;
    }
    r.layer.push_back(perLayer);
  }
  return r;
}

EvalResult evaluate(std::vector<StageModules>& stages, const torch::Tensor& x,
                    const torch::Tensor& y, int64_t chunk) {
  torch::NoGradGuard noGrad;
  for (auto& s : stages) s.setTraining(false);  // batch norm: running statistics
  const int64_t n = x.size(0);
  double lossSum = 0;
  int64_t correct = 0;
  for (int64_t begin = 0; begin < n; begin += chunk) {
    const int64_t end = std::min(n, begin + chunk);
    torch::Tensor h = x.slice(0, begin, end);
    for (auto& s : stages) h = forwardBody(s, h);
    auto target = y.slice(0, begin, end);
    lossSum +=
        torch::nn::functional::cross_entropy(
            h, target, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
            .item<double>();
    correct += h.argmax(1).eq(target).sum().item<int64_t>();
  }
  for (auto& s : stages) s.setTraining(true);
  EvalResult r;
  r.loss = n > 0 ? lossSum / static_cast<double>(n) : 0;
  r.accuracy = n > 0 ? static_cast<double>(correct) / static_cast<double>(n) : 0;
  return r;
}

}  // namespace stagewise::engine
