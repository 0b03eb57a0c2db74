// The training methods: local updates and backprop here, pipelined backprop (GPipe fill-drain,
// 1F1B, interleaved, zb-h1) in pipeline_step.cpp. Each is a Method (the layout of its stages) and
// a StageStep (one stage's training step, on step_base.h's StepBase); the worker loop around a
// step, the loader, channels, meters, probe and checkpoints are shared.

#include <algorithm>
#include <cmath>
#include <deque>
#include <numbers>

#include "model/class_loss.h"
#include "optim/fused_adam.h"
#include "runtime/method.h"
#include "runtime/step_base.h"

namespace stagewise::engine {

double lrFactor(const TrainSpec& t, int64_t step, int64_t totalSteps) {
  if (t.warmupSteps > 0 && step < t.warmupSteps)
    return static_cast<double>(step + 1) / static_cast<double>(t.warmupSteps);
  if (t.lrSchedule == "constant") return 1.0;
  const double span = static_cast<double>(totalSteps - t.warmupSteps);
  if (span <= 0) return 1.0;
  const double p = std::clamp(static_cast<double>(step - t.warmupSteps) / span, 0.0, 1.0);
  if (t.lrSchedule == "cosine") return 0.5 * (1.0 + std::cos(std::numbers::pi * p));
  return 1.0 - p;  // linear
}

namespace {

using step_detail::bytesOf;
using step_detail::StepBase;

/// A local step: forward, send the activations on at once, then the stage's own loss (its aux
/// head, or the model's head on the last stage), backward and update. Nothing comes back, except
/// with overlapping updates (local.overlap = L > 0): then a stage also sends the gradient of its
/// loss with respect to its input back up, and applies the one it got for step t at its own step
/// t + D (D = train.queue_capacity + 1), backpropagated through its last L layers recomputed from
/// their stored input of step t with the current weights. Backprop mode is this step on one
/// stage that holds the whole model.
class LocalStep final : public StepBase {
 public:
  LocalStep(RunContext& ctx, StageRuntime& stage, int overlap)
      : StepBase(ctx, stage, overlap > 0),
        m_overlap(overlap),
        m_delay(ctx.spec.train.queueCapacity + 1) {}

  std::optional<StepResult> run() override {
    StepResult r;
    r.startedAt = m_ctx.now();
    std::optional<Batch> batch = receive(m_in, r);
    if (!batch) return std::nullopt;
    const int64_t step = batch->step;
    arrived(r, step);
    stepHooks(step);
    torch::Tensor x = input(batch->x, step);
    torch::Tensor y = batch->y.to(m_stage.device, /*non_blocking=*/true);
    if (m_gradOut) x.requires_grad_(true);  // the gradient of our loss goes back up

    // Per step, so the activations are freed with the step and the allocator reuses hot memory.
    std::vector<torch::Tensor> outputs;
    torch::Tensor h = forward(x, outputs);
    if (m_gradIn) {
      // The input of the last L layers, kept until the next stage's gradient for it is applied.
      const size_t n = outputs.size(), l = static_cast<size_t>(m_overlap);
      m_kept.push_back({step, (l >= n ? x : outputs[n - l - 1]).detach()});
    }
    if (m_out) {
      // Send before our backward pass so the next stage can start at once.
      const int64_t actBytes = bytesOf(h);
      const int64_t labelBytes = bytesOf(batch->y);
      if (!send(*m_out, Batch{step, h.detach(), batch->y}, r)) return std::nullopt;
      m_stage.bytesSent += actBytes + labelBytes;
      const bool lastBoundary = m_k + 2 == static_cast<int>(m_ctx.channels.size());
      m_stage.backpropBytes += 2 * actBytes + (lastBoundary ? labelBytes : 0);
    }
    torch::Tensor logits = m_stage.isLast ? h : m_stage.modules.aux->forward(h);
    torch::Tensor loss = classLoss(logits, y);
    const double lossValue = loss.item<double>();
    checkLoss(lossValue, step, x, outputs);
    clearGradients(*m_stage.optimizer);
    loss.backward();
    if (m_gradOut && !sendGradient(x.grad(), step, r)) return std::nullopt;
    if (m_gradIn && step - m_delay >= m_ctx.startStep && !applyDownstream(step - m_delay, r))
      return std::nullopt;
    if (m_ctx.spec.train.clipNorm > 0) clip(gradNormSquared());
    this->step(step);
    r.hasLoss = true;
    r.loss = lossValue;
    r.accuracy = static_cast<double>(correctCount(logits, y)) / static_cast<double>(y.numel());
    r.samples = batch->y.size(0);

    int64_t actBytes = logits.numel() * 4;
    for (const auto& o : outputs) actBytes += bytesOf(o);
    for (const auto& k : m_kept) actBytes += bytesOf(k.input);
    m_stage.peakActivationBytes = std::max(m_stage.peakActivationBytes, actBytes);
    return r;
  }

 private:
  /// The next stage's gradient for step `t`, through our last L layers recomputed from their
  /// input of step t with the current weights: added to this step's gradients.
  bool applyDownstream(int64_t t, StepResult& r) {
    std::optional<Batch> g = receive(*m_gradIn, r);
    if (!g) return false;
    if (g->step != t || m_kept.empty() || m_kept.front().step != t)
      throw std::runtime_error("overlap: expected the gradient of step " + std::to_string(t) +
                               ", got step " + std::to_string(g->step));
    torch::Tensor h = m_kept.front().input;
    m_kept.pop_front();
    const size_t n = m_stage.modules.layers.size(), l = std::min(n, static_cast<size_t>(m_overlap));
    for (size_t i = n - l; i < n; ++i) h = m_stage.modules.layers[i]->forward(h);
    h.backward(g->x.to(m_stage.device));
    return true;
  }

  struct Kept {
    int64_t step;
    torch::Tensor input;
  };
  const int m_overlap;
  const int64_t m_delay;
  std::deque<Kept> m_kept;
};
class LocalMethod final : public Method {
 public:
  explicit LocalMethod(int overlap) : m_overlap(overlap) {}
  Mode mode() const override { return Mode::Local; }
  bool probes() const override { return true; }
  bool sendsGradients() const override { return m_overlap > 0; }
  std::unique_ptr<StageStep> stageStep(RunContext& ctx, StageRuntime& stage) const override {
    return std::make_unique<LocalStep>(ctx, stage, m_overlap);
  }

 private:
  const int m_overlap;
};

class BackpropMethod final : public Method {
 public:
  explicit BackpropMethod(const ExperimentSpec& spec) : m_spec(spec) {}
  Mode mode() const override { return Mode::Backprop; }
  /// One stage with the whole model, on train.backprop_threads threads (default: every core).
  std::vector<StagePlan> stages(std::vector<StagePlan> partition, const ModelPlan& plan,
                                int cores) const override {
    StagePlan all = partition.front();
    all.firstLayer = 0;
    all.lastLayer = static_cast<int>(plan.layers.size()) - 1;
    all.isLast = true;
    all.params = plan.totalParams();
    all.flops = plan.totalFlops();
    all.auxParams = all.auxFlops = all.outBytes = 0;
    all.settings.threads = m_spec.train.backpropThreads > 0 ? m_spec.train.backpropThreads : cores;
    return {all};
  }
  bool auxHead(const StagePlan&) const override { return false; }
  std::unique_ptr<StageStep> stageStep(RunContext& ctx, StageRuntime& stage) const override {
    return std::make_unique<LocalStep>(ctx, stage, 0);
  }

 private:
  const ExperimentSpec& m_spec;
};

}  // namespace

std::unique_ptr<Method> makeMethod(const ExperimentSpec& spec) {
  switch (spec.mode) {
    case Mode::Backprop:
      return std::make_unique<BackpropMethod>(spec);
    case Mode::Pipeline:
      return step_detail::makePipelineMethod(spec);
    case Mode::Local:
      break;
  }
  return std::make_unique<LocalMethod>(spec.local.overlap);
}

}  // namespace stagewise::engine
