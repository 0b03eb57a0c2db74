#pragma once
#include <torch/torch.h>  // free here: the engine precompiles it
// What every method's stage step shares (methods.cpp's local and backprop steps,
// pipeline_step.cpp's pipelined-backprop step): the stage, its channels, the fault hooks, the
// layers' forward pass and the update. Private to the runtime.

#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/error_text.h"
#include "runtime/method.h"

namespace stagewise::engine::step_detail {

inline std::string layerName(const StageRuntime& s, size_t i) {
  const auto& info = s.layerInfo[i];
  return "layer " + std::to_string(info.index) + " (" + info.name + ": " + info.description + ")";
}

/// Where non-finite values first appear, for the failure message.
inline std::string firstNonFinite(const StageRuntime& s, const torch::Tensor& input,
                                  const std::vector<torch::Tensor>& outputs) {
  if (!torch::isfinite(input).all().item<bool>()) return "its input already holds NaN or inf";
  for (size_t i = 0; i < outputs.size(); ++i)
    if (!torch::isfinite(outputs[i]).all().item<bool>())
      return "first in the output of " + layerName(s, i);
  return "in the head's logits or the loss";
}

inline int64_t bytesOf(const torch::Tensor& t) {
  return t.defined() ? t.numel() * static_cast<int64_t>(t.element_size()) : 0;
}

/// What every method's stage step shares: the stage, its forward channels, the fault hooks,
/// the layers' forward pass and the update (clipping, learning-rate schedule, optimizer step).
class StepBase : public StageStep {
 public:
  void finish() override {
    if (m_out) m_out->close(/*drop=*/false);
    if (m_gradOut) m_gradOut->close(/*drop=*/false);
  }
  void setLrScale(double scale, int64_t step) override {
    const auto& t = m_ctx.spec.train;
    auto& groups = m_stage.optimizer->param_groups();
    const double f =
        t.lrSchedule != "constant" || t.warmupSteps > 0 ? lrFactor(t, step, m_ctx.totalSteps) : 1.0;
    for (size_t g = 0; g < groups.size(); ++g) {
      m_baseLr[g] = t.lr * scale;  // as makeOptimizer sets it
      groups[g].options().set_lr(m_baseLr[g] * f);
    }
  }

 protected:
  /// `gradients`: the method sends boundary gradients upstream (the run made ctx.gradChannels).
  StepBase(RunContext& ctx, StageRuntime& stage, bool gradients)
      : m_ctx(ctx),
        m_stage(stage),
        m_k(stage.plan.index),
        m_in(*ctx.channels[static_cast<size_t>(stage.plan.index)]),
        m_out(stage.isLast ? nullptr
                           : ctx.channels[static_cast<size_t>(stage.plan.index) + 1].get()),
        m_gradIn(gradients && !stage.isLast ? ctx.gradChannels[static_cast<size_t>(m_k)].get()
                                            : nullptr),
        m_gradOut(gradients && m_k > 0 ? ctx.gradChannels[static_cast<size_t>(m_k) - 1].get()
                                       : nullptr) {
    for (auto& g : stage.optimizer->param_groups()) m_baseLr.push_back(g.options().get_lr());
    for (auto& g : stage.optimizer->param_groups())
      for (auto& p : g.params()) m_params.push_back(p);
  }

  /// Receives from `channel`; the time it waits goes to `r.waitS`, and a wait longer than
  /// kMinWaitSpan to the timeline as a Wait span.
  std::optional<Batch> receive(Channel& channel, StepResult& r) {
    const double t0 = m_ctx.now();
    std::optional<Batch> b = channel.recv();
    const double t1 = m_ctx.now();
    r.waitS += t1 - t0;
    if (b && t1 - t0 > kMinWaitSpan)
      r.waits.push_back({m_k, b->step, t0, t1, SpanKind::Wait, b->micros > 1 ? b->micro : -1});
    return b;
  }
  /// Sends on `channel`; the time it blocks goes to `r.blockedS` (and, when longer than
  /// kMinWaitSpan, to the timeline as a Blocked span). False once closed.
  bool send(Channel& channel, Batch b, StepResult& r) {
    const int64_t step = b.step;
    const int micro = b.micros > 1 ? b.micro : -1;
    const double t0 = m_ctx.now();
    const bool ok = channel.send(std::move(b));
    const double t1 = m_ctx.now();
    r.blockedS += t1 - t0;
    if (ok && t1 - t0 > kMinWaitSpan)
      r.waits.push_back({m_k, step, t0, t1, SpanKind::Blocked, micro});
    return ok;
  }
  /// Sends the gradient of our input of `step` (micro-batch `micro` of `micros`) upstream,
  /// counted in grad_bytes_sent. False once closed.
  bool sendGradient(const torch::Tensor& g, int64_t step, StepResult& r, int micro = 0,
                    int micros = 1, int64_t rows = 0) {
    const int64_t bytes = bytesOf(g);
    if (!send(*m_gradOut, Batch{step, g, torch::Tensor(), micro, micros, rows}, r)) return false;
    m_stage.gradBytesSent += bytes;
    return true;
  }
  /// The input arrived: note when, and how the queue and the upstream stage stand.
  void arrived(StepResult& r, int64_t step) {
    r.step = step;
    r.inputAt = m_ctx.now();
    r.depth = m_in.depth();
    r.upstream = m_ctx.produced[static_cast<size_t>(m_k)].load(std::memory_order_acquire);
  }
  /// debug.delay_ms and debug.fail_at_step.
  void stepHooks(int64_t step) {
    const auto& settings = m_stage.plan.settings;
    if (settings.delayMs > 0) m_ctx.control.sleepFor(std::chrono::milliseconds(settings.delayMs));
    if (m_k == m_ctx.spec.debug.stage && step == m_ctx.spec.debug.failAtStep)
      throw std::runtime_error("injected failure at step " + std::to_string(step) +
                               " (debug.fail_at_step)");
  }
  /// The stage's input on its device (debug.nan_at_step applied).
  torch::Tensor input(const torch::Tensor& x, int64_t step) {
    // Non-blocking from pinned host memory (the loader pins when stage 0 is on a GPU); the
    // loss.item() below waits for the device, so the host timers include GPU work.
    torch::Tensor d = x.to(m_stage.device, /*non_blocking=*/true);
    if (m_k == m_ctx.spec.debug.stage && step == m_ctx.spec.debug.nanAtStep)
      d = d * std::numeric_limits<float>::quiet_NaN();
    return d;
  }
  /// The stage's layers; every layer's output is kept in `outputs` for the failure message.
  torch::Tensor forward(torch::Tensor h, std::vector<torch::Tensor>& outputs) {
    for (size_t i = 0; i < m_stage.modules.layers.size(); ++i) {
      try {
        h = m_stage.modules.layers[i]->forward(h);
      } catch (const std::exception& e) {
        throw std::runtime_error(layerName(m_stage, i) + ": " + errorText(e));
      }
      outputs.push_back(h);
    }
    return h;
  }
  void checkLoss(double value, int64_t step, const torch::Tensor& x,
                 const std::vector<torch::Tensor>& outputs) {
    if (!std::isfinite(value))
      throw std::runtime_error("non-finite loss (" + std::to_string(value) + ") at step " +
                               std::to_string(step) + "; " + firstNonFinite(m_stage, x, outputs));
  }
  /// Squared norm of the stage's gradients.
  double gradNormSquared() const {
    torch::NoGradGuard noGrad;
    double sum = 0;
    for (const auto& p : m_params)
      if (p.grad().defined()) sum += p.grad().to(torch::kFloat64).pow(2).sum().item<double>();
    return sum;
  }
  /// Scales the gradients so that their norm, `totalNormSquared` over everything clipped
  /// together, is at most train.clip_norm (as torch.nn.utils.clip_grad_norm_ does).
  void clip(double totalNormSquared) {
    const double coef = m_ctx.spec.train.clipNorm / (std::sqrt(totalNormSquared) + 1e-6);
    if (coef >= 1.0) return;
    torch::NoGradGuard noGrad;
    for (auto& p : m_params)
      if (p.grad().defined()) p.grad().mul_(coef);
  }
  /// Learning-rate schedule and optimizer step. Clipping is the method's (what it clips over).
  void step(int64_t step) {
    const auto& t = m_ctx.spec.train;
    if (t.lrSchedule != "constant" || t.warmupSteps > 0) {
      const double f = lrFactor(t, step, m_ctx.totalSteps);
      auto& groups = m_stage.optimizer->param_groups();
      for (size_t g = 0; g < groups.size(); ++g) groups[g].options().set_lr(m_baseLr[g] * f);
    }
    m_stage.optimizer->step();
  }

  RunContext& m_ctx;
  StageRuntime& m_stage;
  const int m_k;
  Channel& m_in;
  Channel* m_out;
  Channel* m_gradIn;   ///< gradients of our output, from the next stage
  Channel* m_gradOut;  ///< gradients of our input, to the previous stage
  std::vector<double> m_baseLr;
  std::vector<torch::Tensor> m_params;
};

/// The pipelined-backprop method (pipeline_step.cpp).
std::unique_ptr<Method> makePipelineMethod(const ExperimentSpec& spec);

}  // namespace stagewise::engine::step_detail
