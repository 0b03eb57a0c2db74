// Times each layer's forward + backward, for balancing cuts by measured cost rather than FLOPs.

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>

#include "data/tensor_data.h"
#include "model/class_loss.h"
#include "model/torch_model.h"
#include "optim/fused_adam.h"
#include "runtime/bounded_queue.h"
#include "runtime/thread_setup.h"
#include "stagewise/engine/dataset.h"
#include "stagewise/engine/engine.h"
#include "stagewise/engine/malloc_tuning.h"
#include "stagewise/engine/partition.h"

namespace stagewise::engine {

namespace {

void syncIfCuda(const torch::Device& d) {
  if (d.is_cuda()) torch::cuda::synchronize(d.index());
}

/// How long backprop's step is timed at least. Every speed-up is over it, and 0.1 s (five steps
/// of the CNN preset) put six profiles of the CNN between 17.7 and 23.9 ms against 18.3 and
/// 18.7 ms a step in its runs (2026-12-03).
constexpr double kBackpropSeconds = 1.0;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

/// The median seconds of a call of `work`: three warm-up calls, then at least `repeats` timed
/// ones and at least `minSeconds` of them (at most 400), so short operations get enough samples.
template <class F>
double timed(int repeats, const torch::Device& device, F&& work, double minSeconds = 0.1) {
  std::vector<double> times;
  double total = 0;
  for (int r = 0; r < 3 + 400; ++r) {
    syncIfCuda(device);
    const auto t0 = std::chrono::steady_clock::now();
    work();
    syncIfCuda(device);
    if (r < 3) continue;
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    total += times.back();
    if (static_cast<int>(times.size()) >= repeats && total >= minSeconds) break;
  }
  return median(times);
}

/// Runs `work` for 0.3 s: a fresh thread, or a fresh team of intra-op threads, runs slower at
/// first (the BLAS's and the allocator's first touches; measured: stage 0 timed 1.5x its later
/// self; backprop's two threads, in a process's first profile, about 1.2x a later profile's).
template <class F>
void warmUp(F&& work) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  while (std::chrono::steady_clock::now() < until) work();
}

torch::Tensor forwardAll(std::vector<torch::nn::Sequential>& layers, int first, int last,
                         torch::Tensor h) {
  for (int i = first; i <= last; ++i) h = layers[static_cast<size_t>(i)]->forward(h);
  return h;
}

/// Stage `stage`'s local step on two threads at once (two copies of its modules), over
/// `alone` (its time on one): how much two computing stages slow each other down. The copies
/// start together after their warm-up, and each keeps working until both have timed their
/// calls, so every timed call runs beside the other copy (a copy that finished first and
/// stopped would leave the other's last calls alone, and the medians would read no contention).
double contention(const ExperimentSpec& spec, const ModelPlan& plan, const StagePlan& stage,
                  const InputShape& shape, int repeats, double alone) {
  if (availableCores() < 2 || alone <= 0) return 1;
  std::vector<double> times(2, 0);
  std::exception_ptr error;
  std::atomic<int> ready{0}, timedCopies{0};
  std::atomic<bool> failed{false};
  std::mutex errorMutex;
  auto work = [&](int copy) {
    try {
      setupComputeThread(stage.settings.threads, {});
      auto layers = buildLayers(spec.model, plan, spec.train.seed);
      std::vector<torch::nn::Sequential> all(layers.begin() + stage.firstLayer,
                                             layers.begin() + stage.lastLayer + 1);
      if (!stage.isLast)
        all.push_back(buildAuxHead(stage.settings,
                                   plan.layers[static_cast<size_t>(stage.lastLayer)].outShape,
                                   shape.numClasses, spec.train.seed));
      auto opt = makeOptimizer(spec.train, 1.0, parametersOf(all));
      InputShape in = shape;  // the stage's input: a later stage's is the activations
      if (stage.firstLayer > 0) {
        in.dims = plan.layers[static_cast<size_t>(stage.firstLayer - 1)].outShape;
        in.sequence = false;
      }
      const torch::Tensor x = randomInputs(in, spec.train.batchSize),
                          y = randomLabels(shape, spec.train.batchSize);
      auto step = [&] {
        clearGradients(*opt);
        classLoss(forwardAll(all, 0, static_cast<int>(all.size()) - 1, x), y).backward();
        opt->step();
      };
      for (int r = 0; r < 3; ++r) step();
      ++ready;
      while (ready.load() < 2 && !failed.load()) std::this_thread::yield();
      std::vector<double> own;
      double total = 0;
      bool mine = false;  // this copy has timed enough calls
      while (!failed.load() && (!mine || timedCopies.load() < 2)) {
        const auto t0 = std::chrono::steady_clock::now();
        step();
        if (mine) continue;
        own.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        total += own.back();
        if (static_cast<int>(own.size()) >= repeats && total >= 0.1) mine = true, ++timedCopies;
      }
      times[static_cast<size_t>(copy)] = median(own);
    } catch (...) {
      std::lock_guard lock(errorMutex);
      if (!error) error = std::current_exception();
      failed = true;
    }
  };
  std::thread a(work, 0), b(work, 1);
  a.join(), b.join();
  if (error) std::rethrow_exception(error);
  return std::max(1.0, 0.5 * (times[0] + times[1]) / alone);
}

/// CPU seconds the calling thread has run (CLOCK_THREAD_CPUTIME_ID).
double threadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

/// The first two cores this process may run on (one when it has only one).
std::vector<int> twoCores() {
  std::vector<int> cores;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cores;
  for (int c = 0; c < CPU_SETSIZE && cores.size() < 2; ++c)
    if (CPU_ISSET(c, &set)) cores.push_back(c);
  return cores;
}

/// A value through two BoundedQueues between two threads and back, the threads on two different
/// cores as a run's stage threads mostly are (left to the scheduler, the woken thread tends to
/// run on the waker's core, where a handoff is ten times cheaper than across cores: measured on
/// the 2-core VM, about 3 us against 34 us one way). Gives half the round trip and the CPU time
/// a send or a receive costs its thread (the futex wake-up and wait).
struct Handoff {
  double seconds = 0;
  double cpuSeconds = 0;
};
Handoff measureHandoff() {
  constexpr int kWarmup = 200, kTrips = 2000;
  const std::vector<int> cores = twoCores();
  auto pin = [&](size_t i) {
    if (cores.size() == 2) (void)setupComputeThread(1, {cores[i]});
  };
  BoundedQueue<int> there(1), back(1);
  double echoCpu = 0, mainCpu = 0, wall = 0;
  std::thread echo([&] {
    pin(1);
    const double c0 = threadCpuSeconds();
    while (auto v = there.pop())
      if (!back.push(*v)) break;
    echoCpu = threadCpuSeconds() - c0;
  });
  std::thread ping([&] {
    pin(0);
    for (int i = 0; i < kWarmup; ++i) there.push(i), back.pop();
    const double c0 = threadCpuSeconds();
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kTrips; ++i) there.push(i), back.pop();
    wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    mainCpu = threadCpuSeconds() - c0;
    there.close();
  });
  ping.join();
  echo.join();
  Handoff h;
  h.seconds = wall / (2.0 * kTrips);
  // Each thread sent kTrips values and received kTrips (the echo also its warm-up's).
  h.cpuSeconds = (mainCpu / (2.0 * kTrips) + echoCpu / (2.0 * (kTrips + kWarmup))) / 2;
  return h;
}

}  // namespace

LayerProfile profileLayers(const ExperimentSpec& spec, int repeats,
                           const std::function<bool(int, int)>& progress) {
  tuneMalloc();  // as a run has it
  const InputShape shape = probeInputShape(spec.dataset);
  const ModelPlan plan = planModel(spec.model, shape);
  const PartitionPlan partition = makePartition(spec, plan);
  LayerProfile out;
  std::exception_ptr error;
  // A thread of its own, set up like a stage thread (intra-op threads, denormals, pinning).
  std::thread worker([&] {
    try {
      auto layers = buildLayers(spec.model, plan, spec.train.seed);
      const int total = static_cast<int>(layers.size());
      torch::Tensor h = randomInputs(shape, spec.train.batchSize);
      int done = 0;
      for (const auto& stage : partition.stages) {
        setupComputeThread(stage.settings.threads, stage.settings.cores);
        const torch::Device device(stage.settings.device);
        for (int i = stage.firstLayer; i <= stage.lastLayer; ++i) {
          auto& layer = layers[static_cast<size_t>(i)];
          layer->to(device);
          torch::Tensor input = h.to(device).detach().requires_grad_(i > 0);
          std::vector<double> times;
          torch::Tensor output;
          for (int r = 0; r < repeats + 2; ++r) {  // two warm-up rounds
            syncIfCuda(device);
            auto t0 = std::chrono::steady_clock::now();
            output = layer->forward(input);
            output.backward(torch::ones_like(output));
            syncIfCuda(device);
            if (r >= 2)
              times.push_back(
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
          }
          out.seconds.push_back(median(times));
          out.devices.push_back(stage.settings.device);
          h = output.detach().cpu();
          if (progress && !progress(++done, total)) throw std::runtime_error("profiling cancelled");
        }
      }
    } catch (...) {
      error = std::current_exception();
    }
  });
  worker.join();
  if (error) std::rethrow_exception(error);
  return out;
}

MethodProfile profileMethods(const ExperimentSpec& spec, int repeats,
                             const std::function<bool(int, int)>& progress) {
  tuneMalloc();  // as a run has it
  const InputShape shape = probeInputShape(spec.dataset);
  const ModelPlan plan = planModel(spec.model, shape);
  const PartitionPlan partition = makePartition(spec, plan);
  const int k = static_cast<int>(partition.stages.size());
  MethodProfile out;
  out.batchSize = spec.train.batchSize;
  out.microBatches = static_cast<int>(std::min<int64_t>(
      spec.pipeline.microBatches > 0 ? spec.pipeline.microBatches : k, spec.train.batchSize));
  out.backpropThreads =
      spec.train.backpropThreads > 0 ? spec.train.backpropThreads : availableCores();
  std::exception_ptr error;
  std::thread worker([&] {
    try {
      torch::manual_seed(spec.train.seed);
      auto layers = buildLayers(spec.model, plan, spec.train.seed);
      torch::Tensor x = randomInputs(shape, spec.train.batchSize);  // each stage's input in turn
      const torch::Tensor modelInput = x, y = randomLabels(shape, spec.train.batchSize);
      const int64_t micro = (spec.train.batchSize + out.microBatches - 1) / out.microBatches;
      auto loss = [](const torch::Tensor& logits, const torch::Tensor& labels) {
        return classLoss(logits, labels);
      };
      const int total = k + 1;
      // What each stage keeps for the cold timings after the loop.
      struct Kept {
        std::vector<torch::nn::Sequential> all, body;
        std::unique_ptr<torch::optim::Optimizer> localOpt, bodyOpt;
        torch::Tensor input, labels, mx, my;
        bool isLast = false;
      };
      std::vector<Kept> kept;
      bool oneThreadCpu = true;  // the schedules the per-core queues simulate
      for (const auto& stage : partition.stages) {
        oneThreadCpu = oneThreadCpu && stage.settings.threads == 1 &&
                       torch::Device(stage.settings.device).is_cpu();
        setupComputeThread(stage.settings.threads, stage.settings.cores);
        const torch::Device device(stage.settings.device);
        std::vector<torch::nn::Sequential> body(layers.begin() + stage.firstLayer,
                                                layers.begin() + stage.lastLayer + 1);
        for (auto& l : body) l->to(device);
        std::vector<torch::nn::Sequential> all = body;
        if (!stage.isLast)
          all.push_back(buildAuxHead(stage.settings,
                                     plan.layers[static_cast<size_t>(stage.lastLayer)].outShape,
                                     shape.numClasses, spec.train.seed));
        all.back()->to(device);
        auto localOpt = makeOptimizer(spec.train, stage.settings.lrScale, parametersOf(all));
        auto bodyOpt = makeOptimizer(spec.train, stage.settings.lrScale, parametersOf(body));
        const torch::Tensor input = x.to(device), labels = y.to(device);
        const int last = static_cast<int>(all.size()) - 1;
        if (stage.index == 0)
          warmUp([&] {
            clearGradients(*localOpt);
            loss(forwardAll(all, 0, last, input), labels).backward();
          });
        out.localStep.push_back(timed(repeats, device, [&] {
          clearGradients(*localOpt);
          loss(forwardAll(all, 0, last, input), labels).backward();
          localOpt->step();
        }));
        // One micro-batch: the input needs its gradient (it goes upstream) past stage 0; the
        // output's gradient stands in for the one that comes back.
        const torch::Tensor mx = input.narrow(0, 0, micro).detach().requires_grad_(stage.index > 0);
        const torch::Tensor my = labels.narrow(0, 0, micro);
        const int bodyLast = static_cast<int>(body.size()) - 1;
        out.pipelineMicro.push_back(timed(repeats, device, [&] {
          torch::Tensor h = forwardAll(body, 0, bodyLast, mx);
          if (stage.isLast)
            loss(h, my).backward();
          else
            h.backward(torch::ones_like(h));
        }));
        out.pipelineForward.push_back(
            timed(repeats, device, [&] { (void)forwardAll(body, 0, bodyLast, mx); }));
        out.pipelineUpdate.push_back(timed(repeats, device, [&] { bodyOpt->step(); }));
        // The whole step as the stage runs it: every micro-batch forward, every one backward
        // (the gradients cleared first, then accumulated), the update. The simulation scales
        // the parts above to it: they miss the held activations' colder caches.
        const double whole = timed(repeats, device, [&] {
          clearGradients(*bodyOpt);
          std::vector<torch::Tensor> held;
          for (int i = 0; i < out.microBatches; ++i)
            held.push_back(forwardAll(body, 0, bodyLast, mx));
          for (auto& h : held)
            if (stage.isLast)
              loss(h, my).backward();
            else
              h.backward(torch::ones_like(h));
          bodyOpt->step();
        });
        const double parts =
            out.microBatches * out.pipelineMicro.back() + out.pipelineUpdate.back();
        if (parts > 0 && whole > parts) {
          const double scale = whole / parts;
          out.pipelineMicro.back() *= scale, out.pipelineForward.back() *= scale,
              out.pipelineUpdate.back() *= scale;
        }
        {
          torch::NoGradGuard noGrad;
          x = forwardAll(body, 0, bodyLast, input).detach().cpu();
        }
        kept.push_back({all, body, std::move(localOpt), std::move(bodyOpt), input, labels, mx, my,
                        stage.isLast});
        if (progress && !progress(stage.index + 1, total))
          throw std::runtime_error("profiling cancelled");
      }
      // Cold: the stages' operations taken in turn on this one thread, each right after
      // another stage's, as a core that several stage threads share runs them. What one costs
      // more than the same operation repeated (above) is its cold cost.
      if (oneThreadCpu && k > 1) {
        const size_t n = kept.size();
        std::vector<std::vector<double>> fwdTimes(n), bwdTimes(n), updTimes(n), localTimes(n);
        auto time = [](auto&& work) {
          const auto t0 = std::chrono::steady_clock::now();
          work();
          return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        };
        double spent = 0;
        for (int r = 0; r < 2 + 400; ++r) {  // two warm-up rounds
          std::vector<double> f(n), b(n), u(n), l(n);
          std::vector<torch::Tensor> held(n);
          // Forwards in stage order, then backwards, updates and local steps: no operation
          // follows one of its own stage.
          for (size_t s = 0; s < n; ++s)
            f[s] = time([&] {
              held[s] = forwardAll(kept[s].body, 0, static_cast<int>(kept[s].body.size()) - 1,
                                   kept[s].mx);
            });
          for (size_t s = 0; s < n; ++s)
            b[s] = time([&] {
              if (kept[s].isLast)
                loss(held[s], kept[s].my).backward();
              else
                held[s].backward(torch::ones_like(held[s]));
            });
          for (size_t s = 0; s < n; ++s) u[s] = time([&] { kept[s].bodyOpt->step(); });
          for (size_t s = 0; s < n; ++s)
            l[s] = time([&] {
              auto& st = kept[s];
              clearGradients(*st.localOpt);
              loss(forwardAll(st.all, 0, static_cast<int>(st.all.size()) - 1, st.input), st.labels)
                  .backward();
              st.localOpt->step();
            });
          if (r < 2) continue;
          for (size_t s = 0; s < n; ++s) {
            fwdTimes[s].push_back(f[s]), bwdTimes[s].push_back(b[s]), updTimes[s].push_back(u[s]),
                localTimes[s].push_back(l[s]);
            spent += f[s] + b[s] + u[s] + l[s];
          }
          if (r - 1 >= repeats && spent >= 0.1) break;
        }
        for (size_t s = 0; s < n; ++s) {
          const double fwd = out.pipelineForward[s],
                       bwd = std::max(0.0, out.pipelineMicro[s] - out.pipelineForward[s]);
          out.pipelineForwardCold.push_back(std::max(0.0, median(fwdTimes[s]) - fwd));
          out.pipelineBackwardCold.push_back(std::max(0.0, median(bwdTimes[s]) - bwd));
          out.pipelineUpdateCold.push_back(
              std::max(0.0, median(updTimes[s]) - out.pipelineUpdate[s]));
          out.localStepCold.push_back(std::max(0.0, median(localTimes[s]) - out.localStep[s]));
        }
      }
      // Backprop: the whole model on the first stage's device, at its thread count, on a thread
      // of its own as a run has it (this one's OpenMP state is the stages').
      std::exception_ptr backpropError;
      std::thread backprop([&] {
        try {
          setupComputeThread(out.backpropThreads, {});
          const torch::Device device(partition.stages.front().settings.device);
          std::vector<torch::nn::Sequential> model = layers;
          for (auto& l : model) l->to(device);
          auto opt = makeOptimizer(spec.train, 1.0, parametersOf(model));
          const torch::Tensor input = modelInput.to(device), labels = y.to(device);
          auto backpropStep = [&] {
            clearGradients(*opt);
            loss(forwardAll(model, 0, static_cast<int>(model.size()) - 1, input), labels)
                .backward();
            opt->step();
          };
          warmUp(backpropStep);  // its team of intra-op threads is new
          out.backpropStep = timed(repeats, device, backpropStep, kBackpropSeconds);
        } catch (...) {
          backpropError = std::current_exception();
        }
      });
      backprop.join();
      if (backpropError) std::rethrow_exception(backpropError);
      out.contention =
          contention(spec, plan, partition.stages.front(), shape, repeats, out.localStep.front());
      const Handoff handoff = measureHandoff();
      out.handoffSeconds = handoff.seconds;
      out.handoffCpuSeconds = handoff.cpuSeconds;
      if (progress && !progress(total, total)) throw std::runtime_error("profiling cancelled");
    } catch (...) {
      error = std::current_exception();
    }
  });
  worker.join();
  if (error) std::rethrow_exception(error);
  return out;
}

}  // namespace stagewise::engine
