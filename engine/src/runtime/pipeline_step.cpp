// Pipelined backprop (GPipe fill-drain, 1F1B, interleaved, zb-h1): the method, its stage step
// and the turn the stages of one worker take under interleaved. The step's shared parts are
// StepBase's (step_base.h); local updates and backprop are in methods.cpp.

#include <algorithm>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <set>

#include "model/class_loss.h"
#include "model/layer_modules.h"
#include "optim/fused_adam.h"
#include "runtime/step_base.h"
#include "stagewise/engine/pipeline_schedule.h"

namespace stagewise::engine::step_detail {

namespace {

/// interleaved: the stages one worker runs (stage w, w + workers, ...) keep their own threads but
/// take turns, pass by pass, in the worker's order, so that the worker computes one pass at a time
/// as one thread running its v chunks would.
class WorkerTurn {
 public:
  /// Waits until pass `index` of `step` is the worker's next; false once the run stops.
  bool await(int64_t step, size_t index, const RunControl& control) {
    std::unique_lock lock(m_mutex);
    if (m_step < 0) m_step = step;  // the segment's first step
    while (m_step != step || m_next != index) {
      if (control.stopRequested()) return false;
      m_cv.wait_for(lock, std::chrono::milliseconds(20));
    }
    return true;
  }
  /// Pass `index` of the `total` passes of `step` is done, with its `spans`: the next one's
  /// turn. After the worker's last pass of the step, its measured bubble: the idle share of the
  /// union of every chunk's passes (bubble()).
  void done(int64_t step, size_t index, size_t total, const StepSpan* spans, size_t count) {
    double bubble = std::numeric_limits<double>::quiet_NaN();
    {
      std::lock_guard lock(m_mutex);
      m_stepSpans.insert(m_stepSpans.end(), spans, spans + count);
      m_next = index + 1;
      if (m_next >= total) {
        m_step = step + 1;
        m_next = 0;
        bubble = schedule::measuredBubble(m_stepSpans);
        m_stepSpans.clear();
      }
    }
    m_cv.notify_all();
    if (!std::isnan(bubble)) m_bubble->add(bubble);
  }
  std::shared_ptr<const WorkerBubble> bubble() const { return m_bubble; }

 private:
  std::mutex m_mutex;
  std::condition_variable m_cv;
  int64_t m_step = -1;
  size_t m_next = 0;
  std::vector<StepSpan> m_stepSpans;  ///< the worker's passes of step m_step so far
  const std::shared_ptr<WorkerBubble> m_bubble = std::make_shared<WorkerBubble>();
};

/// A pipelined-backprop step: the batch as M micro-batches through every stage, the model's loss
/// on the last one, the boundary gradients back, and one update per stage per batch once every
/// micro-batch is through (a flush: the next batch starts on the new weights). The stage runs its
/// operations in the order schedule::workerOrders gives it: F, the forward; BW, the whole
/// backward (gpipe, 1f1b); or B and W (zb-h1): B the gradient of the stage's input, sent upstream
/// at once, W the weights' gradient, later. With pipeline.recompute the forward keeps only the
/// stage's input and runs again, with autograd, before the micro-batch's backward.
class PipelineStep final : public StepBase {
 public:
  /// `turn`: interleaved, the turn this stage's worker shares with its other stages.
  PipelineStep(RunContext& ctx, StageRuntime& stage, const PipelineSpec& pipeline, int stages,
               std::shared_ptr<WorkerTurn> turn)
      : StepBase(ctx, stage, /*gradients=*/true),
        m_micro(pipeline.microBatches > 0 ? pipeline.microBatches : stages),
        m_schedule(pipeline.schedule),
        m_recompute(pipeline.recompute),
        m_stages(stages),
        m_chunks(turn ? pipeline.chunks : 1),
        m_turn(std::move(turn)) {}

  std::optional<StepResult> run() override {
    StepResult r;
    r.startedAt = m_ctx.now();
    // Stage 0 splits the loader's batch; the others learn the split from its first micro-batch.
    Current c;
    c.first = receive(m_in, r);
    if (!c.first) return std::nullopt;
    c.step = c.first->step;
    arrived(r, c.step);
    stepHooks(c.step);
    c.m = c.first->micros;
    c.rows = c.first->rows;
    if (m_k == 0) {
      c.rows = c.first->x.size(0);
      c.m = static_cast<int>(std::min<int64_t>(m_micro, c.rows));
      auto xs = torch::tensor_split(c.first->x, c.m), ys = torch::tensor_split(c.first->y, c.m);
      for (int i = 0; i < c.m; ++i)
        c.split.push_back(
            Batch{c.step, xs[static_cast<size_t>(i)], ys[static_cast<size_t>(i)], i, c.m, c.rows});
    } else if (c.first->micro != 0 || c.rows < 1) {
      throw std::runtime_error("pipeline: step " + std::to_string(c.step) +
                               " began with micro-batch " + std::to_string(c.first->micro) +
                               " of " + std::to_string(c.m));
    }
    c.held.resize(static_cast<size_t>(c.m));
    c.sharedParameters = sharesParameters();
    m_cur = &c;
    clearGradients(*m_stage.optimizer);

    const std::vector<schedule::Action>& actions = order(c.m);
    for (size_t n = 0; n < actions.size(); ++n) {
      const schedule::Action& a = actions[n];
      if (a.stage != m_k) continue;  // another chunk of our worker (interleaved)
      if (m_turn) {
        // Waiting for the worker's turn (its other chunk computes) is idle time of this chunk,
        // not compute: it goes to the waits, as waiting for an input does (issue 37's
        // walkthrough: two chunks of one worker summed to 144 % compute).
        const double t0 = m_ctx.now();
        if (!m_turn->await(c.step, n, m_ctx.control)) return std::nullopt;
        const double t1 = m_ctx.now();
        r.waitS += t1 - t0;
        if (t1 - t0 > kMinWaitSpan)
          r.waits.push_back({m_k, c.step, t0, t1, SpanKind::Wait, a.micro});
      }
      const size_t spansBefore = r.spans.size();
      bool ok = true;
      switch (a.op) {
        case schedule::Op::F:
          ok = forwardMicro(a.micro, r);
          break;
        case schedule::Op::BW:
          ok = backwardMicro(a.micro, r);
          break;
        case schedule::Op::B:
          ok = inputGradient(a.micro, r);
          break;
        case schedule::Op::W:
          weightGradient(a.micro, r);
          break;
      }
      if (m_turn)
        m_turn->done(c.step, n, actions.size(), r.spans.data() + spansBefore,
                     r.spans.size() - spansBefore);
      if (!ok) return std::nullopt;
    }

    if (m_ctx.spec.train.clipNorm > 0) {
      // The whole model's norm, as backprop clips it.
      const std::optional<double> total =
          m_ctx.normBarrier ? m_ctx.normBarrier->arrive(m_k, c.step, gradNormSquared())
                            : gradNormSquared();
      if (!total) return std::nullopt;
      clip(*total);
    }
    const double update = m_ctx.now();
    this->step(c.step);
    r.spans.push_back({m_k, c.step, update, m_ctx.now(), SpanKind::Backward, -1});  // the update
    if (m_stage.isLast) {
      r.hasLoss = true;
      r.loss = c.lossSum;
      r.accuracy =
          static_cast<double>(c.correct) / static_cast<double>(std::max<int64_t>(1, c.predictions));
    }
    r.samples = c.rows;
    return r;
  }

 private:
  /// What a micro-batch holds between its forward and its backward.
  struct Held {
    torch::Tensor x, y, h, loss;          ///< y: the labels, for the last stage's recomputed loss
    std::vector<torch::Tensor> outputs;   ///< every layer's output (zb-h1's W starts from them)
    std::vector<torch::Tensor> outGrads;  ///< their gradients, from zb-h1's B
    torch::Tensor grad;                   ///< the gradient of our output, from downstream
    std::vector<torch::Tensor> rng;       ///< the dropout generators before the first forward
    double share = 0;                     ///< its share of the batch's rows
    int64_t bytes = 0;
  };
  /// One step's state.
  struct Current {
    int64_t step = 0;
    int m = 0;
    int64_t rows = 0;
    std::vector<Batch> split;
    std::optional<Batch> first;
    std::vector<Held> held;
    int64_t heldBytes = 0;
    double lossSum = 0;
    int64_t correct = 0, predictions = 0;  // a text batch predicts every token
    bool sharedParameters = false;         ///< see weightGradient
  };

  /// Our worker's actions for `m` micro-batches: this stage's, and under interleaved its other
  /// chunks' (chunks = 1: worker k runs stage k alone).
  const std::vector<schedule::Action>& order(int m) {
    if (m != m_orderMicro) {
      try {
        const int worker = schedule::workerOf(m_k, m_stages, m_chunks);
        m_order =
            schedule::workerOrders(m_schedule, m_stages, m, m_chunks)[static_cast<size_t>(worker)];
      } catch (const std::invalid_argument& e) {
        throw std::runtime_error(std::string(e.what()) + " (a batch of " +
                                 std::to_string(m_cur->rows) + " rows gives " + std::to_string(m) +
                                 " micro-batches)");
      }
      m_orderMicro = m;
    }
    return m_order;
  }
  Held& held(int i) { return m_cur->held[static_cast<size_t>(i)]; }
  void hold(Held& hd, int64_t bytes) {
    hd.bytes += bytes;
    m_cur->heldBytes += bytes;
    m_stage.peakActivationBytes = std::max(m_stage.peakActivationBytes, m_cur->heldBytes);
  }
  void release(Held& hd) {
    m_cur->heldBytes -= hd.bytes;
    hd = Held{};
  }
  void span(SpanKind kind, double begin, int micro, StepResult& r) {
    r.spans.push_back({m_k, m_cur->step, begin, m_ctx.now(), kind, micro});
  }

  std::optional<Batch> next(int i, StepResult& r) {
    Current& c = *m_cur;
    if (m_k == 0) return std::move(c.split[static_cast<size_t>(i)]);
    if (i == 0) return std::move(c.first);
    std::optional<Batch> b = receive(m_in, r);
    if (b && (b->step != c.step || b->micro != i))
      throw std::runtime_error("pipeline: expected micro-batch " + std::to_string(i) + " of step " +
                               std::to_string(c.step) + ", got " + std::to_string(b->micro) +
                               " of step " + std::to_string(b->step));
    return b;
  }

  bool forwardMicro(int i, StepResult& r) {
    Current& c = *m_cur;
    std::optional<Batch> b = next(i, r);
    if (!b) return false;
    const double begin = m_ctx.now();
    Held& hd = held(i);
    hd.x = input(b->x, c.step);
    if (m_k > 0) hd.x.requires_grad_(true);
    torch::Tensor y = b->y.to(m_stage.device, /*non_blocking=*/true);
    // Weighted by its share of the batch, so the accumulated gradient is the full batch's.
    hd.share = static_cast<double>(y.size(0)) / static_cast<double>(c.rows);
    if (m_recompute) hd.rng = dropoutStates();
    std::vector<torch::Tensor> outputs;
    {
      // Recomputing: this pass builds no graph, and only the input is kept.
      std::optional<torch::NoGradGuard> noGrad;
      if (m_recompute) noGrad.emplace();
      hd.h = forward(hd.x, outputs);
      if (m_stage.isLast) {
        torch::Tensor ce = classLoss(hd.h, y);
        const double value = ce.item<double>();
        checkLoss(value, c.step, hd.x, outputs);
        hd.loss = ce * hd.share;
        c.lossSum += value * hd.share;
        c.correct += correctCount(hd.h, y);
        c.predictions += y.numel();
      }
    }
    span(SpanKind::Forward, begin, i, r);
    if (!m_stage.isLast) {
      const int64_t actBytes = bytesOf(hd.h), labelBytes = bytesOf(b->y);
      if (!send(*m_out, Batch{c.step, hd.h.detach(), b->y, i, c.m, c.rows}, r)) return false;
      m_stage.bytesSent += actBytes + labelBytes;
    }
    if (m_recompute) {
      hd.h = torch::Tensor();
      hd.loss = torch::Tensor();
      if (m_stage.isLast) hd.y = y;
      hold(hd, bytesOf(hd.x) + bytesOf(hd.y));
    } else {
      hold(hd, activationBytes(outputs));
      hd.outputs = std::move(outputs);
    }
    return true;
  }

  /// What the layers' outputs (and the last stage's logits, counted again for the loss) hold.
  int64_t activationBytes(const std::vector<torch::Tensor>& outputs) const {
    int64_t bytes = 0;
    for (const auto& o : outputs) bytes += bytesOf(o);
    if (m_stage.isLast && !outputs.empty()) bytes += outputs.back().numel() * 4;
    return bytes;
  }

  /// pipeline.recompute: the forward again, with autograd, on the held input, with the dropout
  /// masks of the first pass and without a second update of the batch-norm statistics.
  void recompute(int i, StepResult& r) {
    const double begin = m_ctx.now();
    Held& hd = held(i);
    const std::vector<torch::Tensor> current = dropoutStates();
    setDropoutStates(hd.rng);
    std::vector<torch::Tensor> buffers;
    {
      torch::NoGradGuard noGrad;
      for (auto& layer : m_stage.modules.layers)
        for (auto& b : layer->buffers()) buffers.push_back(b.clone());
    }
    std::vector<torch::Tensor> outputs;
    hd.h = forward(hd.x, outputs);
    if (m_stage.isLast) hd.loss = classLoss(hd.h, hd.y) * hd.share;
    {
      // Through a new version counter, as batch norm's own update is: the recomputed graph saved
      // the statistics, and a version bump would fail its backward (training mode does not read
      // them there).
      torch::NoGradGuard noGrad;
      size_t n = 0;
      for (auto& layer : m_stage.modules.layers)
        for (auto& b : layer->buffers()) b.variable_data().copy_(buffers[n++]);
    }
    setDropoutStates(current);
    hold(hd, activationBytes(outputs));
    hd.outputs = std::move(outputs);
    span(SpanKind::Recompute, begin, i, r);
  }

  std::vector<SeededDropoutImpl*> dropouts() const {
    std::vector<SeededDropoutImpl*> out;
    for (const auto& layer : m_stage.modules.layers)
      for (const auto& module : layer->modules(/*include_self=*/false))
        if (auto* d = dynamic_cast<SeededDropoutImpl*>(module.get())) out.push_back(d);
    return out;
  }
  std::vector<torch::Tensor> dropoutStates() const {
    std::vector<torch::Tensor> out;
    for (auto* d : dropouts()) out.push_back(d->generator.get_state());
    return out;
  }
  void setDropoutStates(const std::vector<torch::Tensor>& states) {
    const auto ds = dropouts();
    for (size_t j = 0; j < ds.size() && j < states.size(); ++j)
      ds[j]->generator.set_state(states[j]);
  }

  /// The gradient of micro-batch `i`'s output, from the next stage (none on the last).
  bool receiveGradient(int i, Held& hd, StepResult& r) {
    if (m_stage.isLast) return true;
    std::optional<Batch> g = receive(*m_gradIn, r);
    if (!g) return false;
    if (g->step != m_cur->step || g->micro != i)
      throw std::runtime_error("pipeline: expected the gradient of micro-batch " +
                               std::to_string(i) + " of step " + std::to_string(m_cur->step) +
                               ", got " + std::to_string(g->micro) + " of step " +
                               std::to_string(g->step));
    hd.grad = g->x.to(m_stage.device);
    return true;
  }
  /// The whole backward of micro-batch `i` from its loss or its output's gradient.
  void backwardAll(Held& hd) {
    if (m_stage.isLast)
      hd.loss.backward();
    else
      hd.h.backward(hd.grad);
  }

  /// BW: the whole backward, then the input's gradient upstream.
  bool backwardMicro(int i, StepResult& r) {
    Held& hd = held(i);
    if (m_recompute) recompute(i, r);  // before the wait: it fills the time the gradient takes
    if (!receiveGradient(i, hd, r)) return false;
    const double begin = m_ctx.now();  // the wait for the gradient is not compute
    // The input's gradient as autograd hands it on, as zb-h1's B gets it: x.grad is a copy laid
    // out like x (a ViT's patch embedding sends a transposed view), and the reductions upstream
    // over that layout differ from backprop's in the last bits.
    torch::Tensor dx;
    if (m_gradOut) hd.x.register_hook([&dx](const torch::Tensor& g) { dx = g; });
    backwardAll(hd);
    span(SpanKind::Backward, begin, i, r);
    if (m_gradOut && !sendGradient(dx, m_cur->step, r, i, m_cur->m, m_cur->rows)) return false;
    release(hd);
    return true;
  }

  /// zb-h1's B: the gradients of the stage's input and of every layer's output, not of the
  /// weights (autograd skips the weight-gradient kernels), the input's sent upstream at once.
  /// Stage 0 has no input gradient: its B only takes the gradient, and W runs the backward.
  bool inputGradient(int i, StepResult& r) {
    Held& hd = held(i);
    if (m_recompute) recompute(i, r);
    if (!receiveGradient(i, hd, r)) return false;
    const double begin = m_ctx.now();
    torch::Tensor dx;
    if (m_k > 0) {
      const size_t n = hd.outputs.size();
      std::vector<torch::Tensor> wrt{hd.x};
      std::vector<size_t> at;
      // The stage's output's gradient came from downstream (the last stage's: from its loss).
      const size_t own = m_stage.isLast ? n : n - 1;
      for (size_t j = 0; j < own; ++j)
        if (hd.outputs[j].requires_grad()) {
          wrt.push_back(hd.outputs[j]);
          at.push_back(j);
        }
      const torch::Tensor root = m_stage.isLast ? hd.loss : hd.h;
      const std::vector<torch::Tensor> seed =
          m_stage.isLast ? std::vector<torch::Tensor>{} : std::vector<torch::Tensor>{hd.grad};
      std::vector<torch::Tensor> grads = torch::autograd::grad(
          {root}, wrt, seed, /*retain_graph=*/true, /*create_graph=*/false, /*allow_unused=*/true);
      dx = grads[0];
      hd.outGrads.assign(n, torch::Tensor());
      for (size_t j = 0; j < at.size(); ++j) hd.outGrads[at[j]] = grads[j + 1];
      if (!m_stage.isLast && n > 0) hd.outGrads[n - 1] = hd.grad;
      int64_t bytes = 0;
      for (size_t j = 0; j < at.size(); ++j) bytes += bytesOf(grads[j + 1]);
      hold(hd, bytes);
    }
    span(SpanKind::Backward, begin, i, r);
    if (m_gradOut && !sendGradient(dx, m_cur->step, r, i, m_cur->m, m_cur->rows)) return false;
    return true;
  }

  /// zb-h1's W: each layer's weight gradient from its output's gradient (B kept them), so the
  /// input-gradient chain between layers is not run twice. A parameter shared by two layers of
  /// the stage would be reached through both: then one backward over the stage's weights.
  void weightGradient(int i, StepResult& r) {
    Held& hd = held(i);
    const double begin = m_ctx.now();
    if (m_k == 0) {
      backwardAll(hd);
    } else if (m_cur->sharedParameters) {
      const torch::Tensor root = m_stage.isLast ? hd.loss : hd.h;
      torch::autograd::backward({root},
                                m_stage.isLast ? torch::autograd::variable_list{}
                                               : torch::autograd::variable_list{hd.grad},
                                /*keep_graph=*/false, /*create_graph=*/false, trainable());
    } else {
      for (size_t j = 0; j < hd.outputs.size(); ++j) {
        std::vector<torch::Tensor> weights;
        for (const auto& p : m_stage.modules.layers[j]->parameters())
          if (p.requires_grad()) weights.push_back(p);
        if (weights.empty() || !hd.outGrads[j].defined()) continue;
        torch::autograd::backward({hd.outputs[j]}, {hd.outGrads[j]}, /*keep_graph=*/true,
                                  /*create_graph=*/false, weights);
      }
    }
    span(SpanKind::Weight, begin, i, r);
    release(hd);
  }

  std::vector<torch::Tensor> trainable() const {
    std::vector<torch::Tensor> out;
    for (const auto& p : m_params)
      if (p.requires_grad()) out.push_back(p);
    return out;
  }
  /// Whether a parameter belongs to more than one of the stage's layers (tied weights).
  bool sharesParameters() const {
    std::set<const void*> seen;
    for (const auto& layer : m_stage.modules.layers) {
      std::set<const void*> mine;
      for (const auto& p : layer->parameters()) mine.insert(p.unsafeGetTensorImpl());
      for (const void* p : mine)
        if (!seen.insert(p).second) return true;
    }
    return false;
  }

  const int m_micro;
  const std::string m_schedule;
  const bool m_recompute;
  const int m_stages;
  const int m_chunks;
  const std::shared_ptr<WorkerTurn> m_turn;
  Current* m_cur = nullptr;
  std::vector<schedule::Action> m_order;
  int m_orderMicro = -1;
};

class PipelineMethod final : public Method {
 public:
  explicit PipelineMethod(const ExperimentSpec& spec) : m_spec(spec) {}
  Mode mode() const override { return Mode::Pipeline; }
  /// The partition's stages without aux heads: the model's head on the last stage trains them all.
  std::vector<StagePlan> stages(std::vector<StagePlan> partition, const ModelPlan&,
                                int) const override {
    for (auto& s : partition) {
      s.auxParams = s.auxFlops = 0;
      if (!s.isLast) s.settings.auxHead = "none";
    }
    return partition;
  }
  bool auxHead(const StagePlan&) const override { return false; }
  bool sendsGradients() const override { return true; }
  std::unique_ptr<StageStep> stageStep(RunContext& ctx, StageRuntime& stage) const override {
    const int k = static_cast<int>(ctx.channels.size());
    const auto& pl = m_spec.pipeline;
    std::shared_ptr<WorkerTurn> turn;
    if (pl.schedule == "interleaved" && pl.chunks > 1) {
      // One turn per worker, new for each segment (the stage threads start again).
      std::lock_guard lock(m_turnMutex);
      if (m_turnSegment != ctx.segmentStart || m_turns.empty()) {
        m_turns.clear();
        for (int w = 0; w < k / pl.chunks; ++w) m_turns.push_back(std::make_shared<WorkerTurn>());
        m_turnSegment = ctx.segmentStart;
      }
      turn = m_turns[static_cast<size_t>(schedule::workerOf(stage.plan.index, k, pl.chunks))];
      stage.bubble.measureAsWorker(turn->bubble());  // the worker's bubble, not the chunk's
    }
    return std::make_unique<PipelineStep>(ctx, stage, pl, k, std::move(turn));
  }

 private:
  const ExperimentSpec& m_spec;
  mutable std::mutex m_turnMutex;
  mutable std::vector<std::shared_ptr<WorkerTurn>> m_turns;
  mutable int64_t m_turnSegment = -1;
};

}  // namespace

std::unique_ptr<Method> makePipelineMethod(const ExperimentSpec& spec) {
  return std::make_unique<PipelineMethod>(spec);
}

}  // namespace stagewise::engine::step_detail
