#include "runtime/stage_worker.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <thread>

#include "optim/fused_adam.h"
#include "runtime/snapshot.h"
#include "runtime/thread_setup.h"

namespace stagewise::engine {

int64_t totalStepsFor(const ExperimentSpec& spec, int64_t trainSize) {
  if (spec.train.maxSteps > 0) return spec.train.maxSteps;
  const int64_t perEpoch = (trainSize + spec.train.batchSize - 1) / spec.train.batchSize;
  return perEpoch * spec.train.epochs;
}

void runLoader(RunContext& ctx, const TensorData& data) {
  try {
    setupComputeThread(1, {});
    const int64_t n = data.trainX.size(0);
    const int64_t batch = ctx.spec.train.batchSize;
    const int64_t perEpoch = (n + batch - 1) / batch;
    std::mt19937_64 rng(ctx.spec.train.seed);
    std::vector<int64_t> order(static_cast<size_t>(n));
    auto shuffle = [&] {
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng);
    };
    // The order is a function of (seed, step): a resumed run replays the shuffles before it.
    const int64_t epoch = ctx.startStep / perEpoch;
    for (int64_t e = 0; e <= epoch; ++e) shuffle();
    int64_t pos = (ctx.startStep - epoch * perEpoch) * batch;
    const size_t stages = ctx.channels.size();
    const bool pin = torch::Device(ctx.spec.stageSettings(0).device).is_cuda();
    for (int64_t step = ctx.startStep; step < ctx.totalSteps; ++step) {
      if (!ctx.control.waitIfPaused() || ctx.drain.load()) break;
      if (ctx.checkpoint && ctx.checkpointInterval > 0 && step > ctx.startStep && step % ctx.checkpointInterval == 0) {
        // Let the pipeline drain so every stage stands at `step`, then save.
        auto allDone = [&] {
          for (size_t k = 1; k <= stages; ++k)
            if (ctx.produced[k].load(std::memory_order_acquire) < step) return false;
          return true;
        };
        while (!allDone())
          if (!ctx.control.sleepFor(std::chrono::microseconds(200))) break;
        if (ctx.control.stopRequested()) break;
        ctx.checkpoint(step);
      }
      if (pos >= n) {
        shuffle();
        pos = 0;
      }
      const int64_t take = std::min(batch, n - pos);
      auto idx = torch::from_blob(order.data() + pos, {take}, torch::kInt64);
      pos += take;
      Batch b{step, data.trainX.index_select(0, idx), data.trainY.index_select(0, idx)};
      if (pin) b.x = b.x.pin_memory(), b.y = b.y.pin_memory();
      if (!ctx.channels[0]->send(std::move(b))) break;
      ctx.produced[0].store(step + 1, std::memory_order_release);
    }
    ctx.channels[0]->close(/*drop=*/false);
  } catch (const std::exception& e) {
    ctx.fail(-1, std::string("data loader: ") + e.what());
  }
}

namespace {

std::string errorText(const std::exception& e) {
  if (auto* c = dynamic_cast<const c10::Error*>(&e)) return c->what_without_backtrace();
  return e.what();
}

std::string layerName(const StageRuntime& s, size_t i) {
  const auto& info = s.layerInfo[i];
  return "layer " + std::to_string(info.index) + " (" + info.name + ": " + info.description + ")";
}

/// Where non-finite values first appear, for the failure message.
std::string firstNonFinite(const StageRuntime& s, const torch::Tensor& input,
                           const std::vector<torch::Tensor>& outputs) {
  if (!torch::isfinite(input).all().item<bool>()) return "its input already holds NaN or inf";
  for (size_t i = 0; i < outputs.size(); ++i)
    if (!torch::isfinite(outputs[i]).all().item<bool>()) return "first in the output of " + layerName(s, i);
  return "in the head's logits or the loss";
}

}  // namespace

void runStage(RunContext& ctx, StageRuntime& stage) {
  const int k = stage.plan.index;
  try {
    const StageSettings& settings = stage.plan.settings;
    const std::string note = setupComputeThread(settings.threads, settings.cores);
    if (!note.empty()) ctx.reporter.event({EventKind::Warning, ctx.now(), k, note});
    const bool isLast = stage.isLast;
    Channel& in = *ctx.channels[static_cast<size_t>(k)];
    Channel* out = isLast ? nullptr : ctx.channels[static_cast<size_t>(k) + 1].get();
    const auto& debug = ctx.spec.debug;
    double lastReport = -1;
    std::vector<MetricPoint> points;

    while (true) {
      if (!ctx.control.waitIfPaused()) break;
      const double tPaused = ctx.now();
      std::optional<Batch> batch = in.recv();
      if (!batch) break;
      const double t1 = ctx.now();
      const int64_t step = batch->step;
      const size_t depth = in.depth();
      const int64_t upstream = ctx.produced[static_cast<size_t>(k)].load(std::memory_order_acquire);

      if (settings.delayMs > 0) ctx.control.sleepFor(std::chrono::milliseconds(settings.delayMs));
      if (k == debug.stage && step == debug.failAtStep)
        throw std::runtime_error("injected failure at step " + std::to_string(step) + " (debug.fail_at_step)");
      // Non-blocking from pinned host memory (the loader pins when stage 0 is on a GPU); the
      // loss.item() below waits for the device, so the host timers include GPU work.
      torch::Tensor x = batch->x.to(stage.device, /*non_blocking=*/true);
      torch::Tensor y = batch->y.to(stage.device, /*non_blocking=*/true);
      if (k == debug.stage && step == debug.nanAtStep) x = x * std::numeric_limits<float>::quiet_NaN();

      // Per step, so the activations are freed with the step and the allocator reuses hot memory.
      std::vector<torch::Tensor> outputs;
      torch::Tensor h = x;
      for (size_t i = 0; i < stage.modules.layers.size(); ++i) {
        try {
          h = stage.modules.layers[i]->forward(h);
        } catch (const std::exception& e) {
          throw std::runtime_error(layerName(stage, i) + ": " + errorText(e));
        }
        outputs.push_back(h);
      }
      double blocked = 0;
      if (out) {
        // Send before our backward pass so the next stage can start at once.
        const double tb = ctx.now();
        Batch next{step, h.detach(), batch->y};
        const int64_t actBytes = h.numel() * static_cast<int64_t>(h.element_size());
        const int64_t labelBytes = batch->y.numel() * static_cast<int64_t>(batch->y.element_size());
        if (!out->send(std::move(next))) break;
        blocked = ctx.now() - tb;
        stage.bytesSent += actBytes + labelBytes;
        stage.backpropBytes += 2 * actBytes + (k + 2 == static_cast<int>(ctx.channels.size()) ? labelBytes : 0);
      }
      torch::Tensor logits = isLast ? h : stage.modules.aux->forward(h);
      torch::Tensor loss = torch::nn::functional::cross_entropy(logits, y);
      const double lossValue = loss.item<double>();
      if (!std::isfinite(lossValue))
        throw std::runtime_error("non-finite loss (" + std::to_string(lossValue) + ") at step " +
                                 std::to_string(step) + "; " + firstNonFinite(stage, x, outputs));
      clearGradients(*stage.optimizer);
      loss.backward();
      stage.optimizer->step();
      const double accuracy = logits.detach().argmax(1).eq(y).to(torch::kFloat32).mean().item<double>();

      int64_t actBytes = logits.numel() * 4;
      for (const auto& o : outputs) actBytes += o.numel() * static_cast<int64_t>(o.element_size());
      stage.peakActivationBytes = std::max(stage.peakActivationBytes, actBytes);

      if (ctx.snapshots && ctx.snapshots->wanted(step))
        ctx.snapshots->offer(k, step, stage.modules.bodyState(), stage.modules.auxState());

      const double t2 = ctx.now();
      ctx.produced[static_cast<size_t>(k) + 1].store(step + 1, std::memory_order_release);
      stage.meter.addStep(t2, (t2 - t1) - blocked, t1 - tPaused, blocked);
      stage.meter.addLoss(lossValue, accuracy);
      ctx.reporter.addSpan({k, step, t1, t2});
      points.push_back({series::kLoss, k, -1, step, t2, lossValue});
      points.push_back({series::kAccuracy, k, -1, step, t2, accuracy});
      points.push_back({series::kQueueDepth, k, -1, step, t2, static_cast<double>(depth)});
      points.push_back({series::kStaleness, k, -1, step, t2, static_cast<double>(std::max<int64_t>(0, upstream - step - 1))});
      if (isLast) {
        const int64_t done = ctx.lastStageSteps.fetch_add(1) + 1 - ctx.startStep;
        if (done == 20) ctx.warmupEndS.store(t2);
        else if (done > 20) ctx.samplesAfterWarmup.fetch_add(batch->y.size(0));
        ctx.lastStepEndS.store(t2);
      }
      if (t2 - lastReport >= 0.25) {
        lastReport = t2;
        auto f = stage.meter.window();
        points.push_back({series::kComputeFraction, k, -1, step, t2, f.compute});
        points.push_back({series::kWaitFraction, k, -1, step, t2, f.wait});
        points.push_back({series::kBlockedFraction, k, -1, step, t2, f.blocked});
        points.push_back({series::kStepsPerSec, k, -1, step, t2, stage.meter.windowStepsPerSec()});
        points.push_back({series::kBytesSent, k, -1, step, t2, static_cast<double>(stage.bytesSent)});
        points.push_back({series::kBackpropBytes, k, -1, step, t2, static_cast<double>(stage.backpropBytes)});
        points.push_back({series::kActivationBytes, k, -1, step, t2, static_cast<double>(stage.peakActivationBytes)});
      }
      ctx.reporter.add(points);
    }
    if (out) out->close(/*drop=*/false);
  } catch (const std::exception& e) {
    ctx.fail(k, "stage " + std::to_string(k) + ": " + errorText(e));
  } catch (...) {
    ctx.fail(k, "stage " + std::to_string(k) + ": unknown error");
  }
}

}  // namespace stagewise::engine
