#include "runtime/stage_worker.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <thread>
#include <tuple>

#include "runtime/error_text.h"
#include "runtime/memory_meter.h"
#include "runtime/snapshot.h"
#include "runtime/thread_setup.h"

namespace stagewise::engine {

int64_t totalStepsFor(const ExperimentSpec& spec, int64_t trainSize) {
  if (spec.train.maxSteps > 0) return spec.train.maxSteps;
  const int64_t perEpoch = (trainSize + spec.train.batchSize - 1) / spec.train.batchSize;
  return perEpoch * spec.train.epochs;
}

torch::Tensor augmentBatch(const torch::Tensor& x, uint64_t seed, int64_t step) {
  // Seeded by (seed, step) alone: the same crops and flips whatever the timing, and a resumed
  // run replays them.
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull ^
                      static_cast<uint64_t>(step) * 0xBF58476D1CE4E5B9ull ^ 0xA06ull);
  const int64_t h = x.size(2), w = x.size(3), pad = std::max<int64_t>(1, h / 8);
  torch::Tensor padded = torch::constant_pad_nd(x, {pad, pad, pad, pad}, 0);
  std::vector<torch::Tensor> out;
  out.reserve(static_cast<size_t>(x.size(0)));
  for (int64_t i = 0; i < x.size(0); ++i) {
    const auto dy = static_cast<int64_t>(rng() % static_cast<uint64_t>(2 * pad + 1));
    const auto dx = static_cast<int64_t>(rng() % static_cast<uint64_t>(2 * pad + 1));
    torch::Tensor s = padded[i].slice(1, dy, dy + h).slice(2, dx, dx + w);
    if (rng() & 1) s = s.flip({2});
    out.push_back(s);
  }
  return torch::stack(out).contiguous();
}

void runLoader(RunContext& ctx, const TensorData& data) {
  try {
    nameThread("sw-loader");
    setupComputeThread(1, {});
    const int64_t n = data.trainCount();
    const int64_t batch = ctx.spec.train.batchSize;
    const bool text = data.trainText.defined();  // windows drawn by (seed, step), no shuffle
    const int64_t perEpoch = (n + batch - 1) / batch;
    std::mt19937_64 rng(ctx.spec.train.seed);
    std::vector<int64_t> order(text ? 0 : static_cast<size_t>(n));
    auto shuffle = [&] {
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng);
    };
    // The order is a function of (seed, step): a resumed run, and each segment after a live
    // re-partition, replays the shuffles before it.
    const int64_t from = ctx.segmentStart;
    const int64_t epoch = from / perEpoch;
    for (int64_t e = 0; e <= epoch && !text; ++e) shuffle();
    int64_t pos = (from - epoch * perEpoch) * batch;
    const size_t stages = ctx.channels.size();
    const bool pin = torch::Device(ctx.spec.stageSettings(0).device).is_cuda();
    for (int64_t step = from; step < ctx.totalSteps; ++step) {
      if (!ctx.control.waitIfPaused() || ctx.drain.load()) break;
      if (step >= ctx.stopAt.load()) {  // a re-partition: the stages drain, the segment ends
        ctx.stoppedAtS.store(ctx.now());
        ctx.stoppedAt.store(step);
        break;
      }
      if (ctx.checkpoint && ctx.checkpointInterval > 0 && step > ctx.startStep &&
          step % ctx.checkpointInterval == 0) {
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
      Batch b{step, {}, {}};
      if (text) {
        // Window i of the run is at textWindowOffset(seed, i): a full batch every step.
        std::tie(b.x, b.y) =
            textWindows(data, ctx.spec.dataset.context, ctx.spec.train.seed, step * batch, batch);
      } else {
        if (pos >= n) {
          shuffle();
          pos = 0;
        }
        const int64_t take = std::min(batch, n - pos);
        auto idx = torch::from_blob(order.data() + pos, {take}, torch::kInt64);
        pos += take;
        b.x = data.trainX.index_select(0, idx);
        b.y = data.trainY.index_select(0, idx);
      }
      if (ctx.spec.dataset.augment && b.x.dim() == 4)
        b.x = augmentBatch(b.x, ctx.spec.train.seed, step);
      if (pin) b.x = b.x.pin_memory(), b.y = b.y.pin_memory();
      if (!ctx.channels[0]->send(std::move(b))) break;
      ctx.produced[0].store(step + 1, std::memory_order_release);
    }
    ctx.channels[0]->close(/*drop=*/false);
  } catch (const std::exception& e) {
    ctx.fail(-1, std::string("data loader: ") + errorText(e));
  }
}

namespace {

/// A report's bubble points of stage k: its measured bubble (pipeline: the recent steps' mean;
/// local: its waiting share of the window) and the plan from every stage's times, after posting
/// its own.
void addBubblePoints(RunContext& ctx, StageRuntime& stage, int k, bool pipeline, int64_t s,
                     double t, const StageMeter::Fractions& window,
                     std::vector<MetricPoint>& points) {
  double measured = window.wait + window.blocked;
  if (pipeline) {
    measured = stage.bubble.recentMeasured();
    for (const auto& [stageIndex, times] : stage.bubble.passTimes())
      ctx.bubbles->post(stageIndex, times, stage.bubble.microBatches());
  } else {
    ctx.bubbles->postStepSeconds(k, stage.meter.meanComputeSeconds());
  }
  const std::vector<double> planned = ctx.bubbles->planned();
  if (!std::isnan(measured)) points.push_back({kBubbleMeasuredSeries, k, -1, s, t, measured});
  if (static_cast<size_t>(k) < planned.size() && !std::isnan(planned[static_cast<size_t>(k)]))
    points.push_back({kBubblePlannedSeries, k, -1, s, t, planned[static_cast<size_t>(k)]});
}

}  // namespace

void runStage(RunContext& ctx, StageRuntime& stage, const Method& method) {
  const int k = stage.plan.index;
  try {
    nameThread("sw-stage-" + std::to_string(k));
    const StageSettings& settings = stage.plan.settings;
    const std::string note = setupComputeThread(settings.threads, settings.cores);
    if (!note.empty()) ctx.reporter.event({EventKind::Warning, ctx.now(), k, note});
    const memory::ThreadTag tag(stage.memorySlot);  // this thread's allocations are the stage's
    std::unique_ptr<StageStep> step = method.stageStep(ctx, stage);
    const bool gradients = method.sendsGradients();
    double lastReport = -1;
    std::vector<MetricPoint> points;
    // Setting changes for the stage's step `next`: taken before the step is announced as
    // finished (produced), so a checkpoint or a drain at that step sees them applied.
    auto applyChanges = [&](int64_t next) {
      std::vector<StageRuntime::SettingChange> due;
      {
        std::lock_guard lock(stage.changeMutex);
        auto& pending = stage.pendingChanges;
        for (auto it = pending.begin(); it != pending.end();)
          if (it->step < 0 || it->step <= next) {
            due.push_back(*it);
            it = pending.erase(it);
          } else {
            ++it;
          }
      }
      for (const auto& c : due) {
        StageSettings& s = stage.plan.settings;
        if (c.setting == "delay_ms") {
          s.delayMs = static_cast<int>(c.value);
        } else if (c.setting == "threads") {
          s.threads = static_cast<int>(c.value);
          const std::string warning = setupComputeThread(s.threads, s.cores);
          if (!warning.empty()) ctx.reporter.event({EventKind::Warning, ctx.now(), k, warning});
        } else if (c.setting == "lr_scale") {
          s.lrScale = c.value;
          step->setLrScale(c.value, next);
        }
        if (ctx.onSettingChange) ctx.onSettingChange(k, next, c.setting, c.value);
      }
    };
    applyChanges(ctx.produced[static_cast<size_t>(k) + 1].load());

    while (true) {
      if (!ctx.control.waitIfPaused()) break;
      while (stage.held.load() && !ctx.control.stopRequested())
        ctx.control.sleepFor(std::chrono::milliseconds(5));
      const std::optional<StepResult> r = step->run();
      if (!r) break;
      if (ctx.snapshots && ctx.snapshots->wanted(r->step))
        ctx.snapshots->offer(k, r->step, stage.modules.bodyState(), stage.modules.auxState(),
                             ctx.now());

      const double t2 = ctx.now();
      const int64_t s = r->step;
      applyChanges(s + 1);
      ctx.produced[static_cast<size_t>(k) + 1].store(s + 1, std::memory_order_release);
      stage.meter.addStep(t2, (t2 - r->startedAt) - r->waitS - r->blockedS, r->waitS, r->blockedS);
      if (r->hasLoss) stage.meter.addLoss(r->loss, r->accuracy);
      // The compute spans and the waits, in the order they started (the timeline's order).
      std::vector<StepSpan> spans = r->spans;
      if (spans.empty()) spans.push_back({k, s, r->inputAt, t2});
      spans.insert(spans.end(), r->waits.begin(), r->waits.end());
      std::stable_sort(spans.begin(), spans.end(),
                       [](const StepSpan& a, const StepSpan& b) { return a.startS < b.startS; });
      for (const StepSpan& span : spans) ctx.reporter.addSpan(span);
      if (ctx.bubbles && method.mode() == Mode::Pipeline) stage.bubble.addStep(r->spans);
      if (r->hasLoss) {
        points.push_back({series::kLoss, k, -1, s, t2, r->loss});
        points.push_back({series::kAccuracy, k, -1, s, t2, r->accuracy});
      }
      points.push_back({series::kQueueDepth, k, -1, s, t2, static_cast<double>(r->depth)});
      points.push_back({series::kStaleness, k, -1, s, t2,
                        static_cast<double>(std::max<int64_t>(0, r->upstream - s - 1))});
      if (stage.isLast) {
        const int64_t done = ctx.lastStageSteps.fetch_add(1) + 1 - ctx.startStep;
        if (done == 20)
          ctx.warmupEndS.store(t2);
        else if (done > 20)
          ctx.samplesAfterWarmup.fetch_add(r->samples);
        ctx.lastStepEndS.store(t2);
      }
      if (t2 - lastReport >= 0.25) {
        lastReport = t2;
        auto f = stage.meter.window();
        points.push_back({series::kComputeFraction, k, -1, s, t2, f.compute});
        points.push_back({series::kWaitFraction, k, -1, s, t2, f.wait});
        points.push_back({series::kBlockedFraction, k, -1, s, t2, f.blocked});
        points.push_back({series::kStepsPerSec, k, -1, s, t2, stage.meter.windowStepsPerSec()});
        if (ctx.bubbles)
          addBubblePoints(ctx, stage, k, method.mode() == Mode::Pipeline, s, t2, f, points);
        points.push_back({series::kBytesSent, k, -1, s, t2, static_cast<double>(stage.bytesSent)});
        if (method.mode() != Mode::Pipeline)  // the prediction (0 in backprop mode)
          points.push_back(
              {series::kBackpropBytes, k, -1, s, t2, static_cast<double>(stage.backpropBytes)});
        if (gradients)
          points.push_back(
              {series::kGradBytesSent, k, -1, s, t2, static_cast<double>(stage.gradBytesSent)});
        points.push_back({series::kActivationBytes, k, -1, s, t2,
                          static_cast<double>(stage.peakActivationBytes)});
        if (const int64_t peak =
                memory::runPeak(memory::stagePeak(stage.memorySlot, stage.plan.settings.device),
                                stage.peakMemoryFloor);
            peak >= 0)
          points.push_back({series::kMemoryBytes, k, -1, s, t2, static_cast<double>(peak)});
      }
      ctx.reporter.add(points);
    }
    step->finish();
  } catch (const std::exception& e) {
    ctx.fail(k, "stage " + std::to_string(k) + ": " + errorText(e));
  } catch (...) {
    ctx.fail(k, "stage " + std::to_string(k) + ": unknown error");
  }
}

}  // namespace stagewise::engine
