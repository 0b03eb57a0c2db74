#include "optim/fused_adam.h"

#include <cmath>

#include "optim/adam_kernel.h"

namespace stagewise::engine {

namespace {

bool fusable(const torch::Tensor& t, const torch::Tensor& like) {
  return t.layout() == torch::kStrided && t.device().is_cpu() &&
         t.scalar_type() == torch::kFloat32 && t.is_contiguous() && t.sizes() == like.sizes();
}

}  // namespace

torch::Tensor FusedAdam::step(LossClosure closure) {
  torch::NoGradGuard noGrad;
  torch::Tensor loss;
  if (closure) {
    torch::AutoGradMode enable(true);
    loss = closure();
  }
  for (auto& group : param_groups_) {
    auto& options = static_cast<torch::optim::AdamOptions&>(group.options());
    const double beta1 = std::get<0>(options.betas());
    const double beta2 = std::get<1>(options.betas());
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      torch::Tensor grad = p.grad();
      TORCH_CHECK(!grad.is_sparse(), "Adam does not support sparse gradients");
      const std::string key = c10::guts::to_string(p.unsafeGetTensorImpl());
      auto found = state_.find(key);
      if (found == state_.end()) {
        auto fresh = std::make_unique<torch::optim::AdamParamState>();
        fresh->step(0);
        fresh->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        fresh->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        if (options.amsgrad())
          fresh->max_exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        found = state_.emplace(key, std::move(fresh)).first;
      }
      auto& state = static_cast<torch::optim::AdamParamState&>(*found->second);
      torch::Tensor& expAvg = state.exp_avg();
      torch::Tensor& expAvgSq = state.exp_avg_sq();
      state.step(state.step() + 1);
      const double biasCorrection1 = 1 - std::pow(beta1, state.step());
      const double biasCorrection2 = 1 - std::pow(beta2, state.step());
      const double stepSize = options.lr() / biasCorrection1;

      // Same shapes too: the loop walks p.numel() elements through all four (a loaded state of
      // another shape takes LibTorch's path, which raises).
      if (!options.amsgrad() && fusable(p, p) && fusable(grad, p) && fusable(expAvg, p) &&
          fusable(expAvgSq, p)) {
        AdamScalars s;
        s.beta1 = static_cast<float>(beta1);
        s.beta2 = static_cast<float>(beta2);
        s.beta1Double = beta1;
        s.beta2Double = beta2;
        s.eps = static_cast<float>(options.eps());
        s.weightDecay = static_cast<float>(options.weight_decay());
        s.stepSize = static_cast<float>(stepSize);
        s.sqrtBiasCorrection2 = static_cast<float>(std::sqrt(biasCorrection2));
        float* param = p.data_ptr<float>();
        const float* g = grad.data_ptr<float>();
        float* m = expAvg.data_ptr<float>();
        float* v = expAvgSq.data_ptr<float>();
        // 32k floats per task: big layers use every intra-op thread, small ones stay inline.
        at::parallel_for(0, p.numel(), 1 << 15, [&](int64_t begin, int64_t end) {
          adamUpdate(param + begin, g + begin, m + begin, v + begin, end - begin, s);
        });
        // Written through raw pointers: tell autograd, as addcdiv_ would, that p changed.
        torch::autograd::impl::bump_version(p);
        continue;
      }
      // The same operations as torch::optim::Adam (LibTorch 1.13).
      if (options.weight_decay() != 0) grad = grad.add(p, options.weight_decay());
      expAvg.mul_(beta1).add_(grad, 1 - beta1);
      expAvgSq.mul_(beta2).addcmul_(grad, grad, 1 - beta2);
      torch::Tensor denom;
      if (options.amsgrad()) {
        torch::Tensor& maxExpAvgSq = state.max_exp_avg_sq();
        torch::max_out(maxExpAvgSq, expAvgSq, maxExpAvgSq);
        denom = (maxExpAvgSq.sqrt() / std::sqrt(biasCorrection2)).add_(options.eps());
      } else {
        denom = (expAvgSq.sqrt() / std::sqrt(biasCorrection2)).add_(options.eps());
      }
      p.addcdiv_(expAvg, denom, -stepSize);
    }
  }
  return loss;
}

void clearGradients(torch::optim::Optimizer& optimizer) {
  for (auto& group : optimizer.param_groups())
    for (auto& p : group.params()) p.mutable_grad() = torch::Tensor();
}

std::unique_ptr<torch::optim::Optimizer> makeOptimizer(const TrainSpec& t, double lrScale,
                                                       std::vector<torch::Tensor> params) {
  const double lr = t.lr * lrScale;
  if (t.optimizer == "sgd")
    return std::make_unique<torch::optim::SGD>(
        params, torch::optim::SGDOptions(lr).momentum(t.momentum).weight_decay(t.weightDecay));
  return std::make_unique<FusedAdam>(params,
                                     torch::optim::AdamOptions(lr).weight_decay(t.weightDecay));
}

}  // namespace stagewise::engine
