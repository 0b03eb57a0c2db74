#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "stagewise/engine/partition.h"

namespace stagewise::engine {

static double speedOf(int threads, const ScalingModel& m) {
  return 1.0 + m.threadEfficiency * (std::max(1, threads) - 1);
}

SpeedEstimate estimateSpeed(const PartitionPlan& partition, const ModelPlan& plan, int batchSize,
                            int cores, const ScalingModel& scaling) {
  SpeedEstimate e;
  cores = std::max(1, cores);
  const double batch = batchSize;
  // Work in FLOPs per batch: backward ~ 2x forward.
  const double bpWork = 3.0 * static_cast<double>(plan.totalFlops()) * batch;
  e.backpropTime = bpWork;
  for (int t = 1; t <= cores; ++t) {
    double time = bpWork / speedOf(t, scaling);
    if (time < e.backpropTime - 1e-9) e.backpropTime = time, e.backpropThreads = t;
  }
  std::vector<double> work;
  int threads = 0;
  double slowest = 0;
  for (const auto& s : partition.stages) {
    double w = 3.0 * static_cast<double>(s.flops + s.auxFlops) * batch;
    work.push_back(w);
    double t = w / speedOf(std::min(s.settings.threads, cores), scaling);
    e.stageTime.push_back(t);
    slowest = std::max(slowest, t);
    threads += s.settings.threads;
    if (!s.isLast) {
      e.boundaryBytes.push_back(static_cast<int64_t>((s.outBytes + 8) * batchSize));
      int64_t bp = 2 * s.outBytes * batchSize;
      // labels travel once, straight to the last stage: count them at the last boundary
      if (s.index + 2 == static_cast<int>(partition.stages.size())) bp += 8 * batchSize;
      e.backpropBoundaryBytes.push_back(bp);
    }
  }
  const double total = std::accumulate(work.begin(), work.end(), 0.0);
  for (double w : work) e.stageShare.push_back(total > 0 ? w / total : 0);
  e.coresShared = threads > cores;
  // Stages sharing cores cannot finish more than `cores` threads' worth of work per unit time.
  const double sharedBound = total / cores;
  e.localTime = std::max(slowest, e.coresShared ? sharedBound : 0.0);
  e.speedup = e.localTime > 0 ? e.backpropTime / e.localTime : 1.0;
  const double meanStage =
      e.stageTime.empty()
          ? 0
          : std::accumulate(e.stageTime.begin(), e.stageTime.end(), 0.0) / e.stageTime.size();
  e.pipelineEfficiency = e.localTime > 0 ? std::min(1.0, meanStage / e.localTime) : 1.0;
  if (e.coresShared && e.localTime > 0)
    e.pipelineEfficiency = std::min(1.0, sharedBound / e.localTime);
  return e;
}

namespace {

/// One operation of a stage thread in the simulated schedule.
struct SimOp {
  double work = 0;            ///< seconds alone on its threads
  std::vector<size_t> after;  ///< operations (ids) that must have finished
  bool handoff = false;       ///< the inputs came from another thread
  double end = -1;            ///< when it finished (simulated)
};

/// Whether `op` can start at `now`: every operation it needs has finished, and (plus the handoff
/// where its input comes from another thread) not after `now`. When the inputs are done but
/// arrive later, `nextReady` takes the earliest such time.
bool opReady(const std::vector<SimOp>& ops, const SimOp& op, double now, double handoff,
             double& nextReady) {
  double ready = 0;
  for (size_t d : op.after) {
    if (ops[d].end < 0) return false;
    ready = std::max(ready, ops[d].end + (op.handoff ? handoff : 0));
  }
  if (ready > now + 1e-15) {
    nextReady = std::min(nextReady, ready);
    return false;
  }
  return true;
}

/// Processor sharing: runnable threads share the cores in proportion to their intra-op threads
/// at every instant, `contention` slower while more than one computes.
void simulateSharing(std::vector<SimOp>& ops, const std::vector<std::vector<size_t>>& threadOps,
                     const std::vector<int>& threadWidth, int cores, double handoff,
                     double contention) {
  const size_t n = threadOps.size();
  std::vector<size_t> next(n, 0);
  std::vector<double> remaining(n, -1);  // work left of the current op; -1: not started
  double now = 0;
  for (int guard = 0; guard < 10000000; ++guard) {
    // Which threads can run now, and when the next blocked one becomes ready.
    std::vector<size_t> running;
    double nextReady = std::numeric_limits<double>::infinity();
    bool left = false;
    for (size_t j = 0; j < n; ++j) {
      if (next[j] >= threadOps[j].size()) continue;
      left = true;
      if (remaining[j] < 0) {
        const SimOp& op = ops[threadOps[j][next[j]]];
        if (!opReady(ops, op, now, handoff, nextReady)) continue;
        remaining[j] = op.work;
      }
      running.push_back(j);
    }
    if (!left) return;
    if (running.empty()) {
      if (!std::isfinite(nextReady)) return;  // a cycle: cannot happen for valid schedules
      now = nextReady;
      continue;
    }
    double demand = 0;
    for (size_t j : running) demand += threadWidth[j];
    const double share = std::min(1.0, cores / demand) / (running.size() > 1 ? contention : 1.0);
    double step = nextReady - now;
    for (size_t j : running) step = std::min(step, remaining[j] / share);
    now += step;
    for (size_t j : running) {
      remaining[j] -= step * share;
      if (remaining[j] <= 1e-12) {
        ops[threadOps[j][next[j]]].end = now;
        remaining[j] = -1;
        ++next[j];
      }
    }
  }
}

/// Time slices, as the kernel's scheduler gives them: a thread whose input is there joins the
/// back of the run queue; the queue's head takes cores when enough are free; a running thread
/// keeps its cores through operation after operation until it blocks on an input or uses up a
/// slice of `slice` seconds while others wait without a core (then it goes to the back of the
/// queue; with nobody waiting it starts a new slice). A thread that wakes while every core is
/// busy therefore waits, where processor sharing would give it a share at once. Running threads
/// compute `contention` slower while more than one runs.
void simulateSlices(std::vector<SimOp>& ops, const std::vector<std::vector<size_t>>& threadOps,
                    const std::vector<int>& threadWidth, int cores, double handoff,
                    double contention, double slice) {
  const size_t n = threadOps.size();
  enum class State { Blocked, Queued, Running };
  std::vector<State> state(n, State::Blocked);
  std::vector<size_t> next(n, 0);
  std::vector<double> remaining(n, -1), ran(n, 0);
  std::vector<size_t> queue;  // FIFO of runnable threads without cores
  auto width = [&](size_t j) { return std::min(cores, std::max(1, threadWidth[j])); };
  int free = cores;
  double now = 0;
  for (int guard = 0; guard < 10000000; ++guard) {
    double nextReady = std::numeric_limits<double>::infinity();
    bool left = false;
    for (size_t j = 0; j < n; ++j) {
      if (next[j] >= threadOps[j].size()) continue;
      left = true;
      if (state[j] != State::Blocked) continue;
      if (!opReady(ops, ops[threadOps[j][next[j]]], now, handoff, nextReady)) continue;
      state[j] = State::Queued;
      queue.push_back(j);
    }
    if (!left) return;
    auto dispatch = [&] {
      while (!queue.empty() && width(queue.front()) <= free) {
        const size_t j = queue.front();
        queue.erase(queue.begin());
        state[j] = State::Running, ran[j] = 0, free -= width(j);
      }
    };
    dispatch();  // free cores first: nobody is preempted for a thread that has one
    // A thread that has used its slice gives way to one still waiting, or starts a new slice.
    for (size_t j = 0; j < n; ++j) {
      if (state[j] != State::Running || ran[j] < slice - 1e-15) continue;
      if (queue.empty()) {
        ran[j] = std::fmod(ran[j], slice);
        continue;
      }
      state[j] = State::Queued, free += width(j);
      queue.push_back(j);
      dispatch();
    }
    std::vector<size_t> running;
    for (size_t j = 0; j < n; ++j)
      if (state[j] == State::Running) running.push_back(j);
    if (running.empty()) {
      if (!std::isfinite(nextReady)) return;  // a cycle: cannot happen for valid schedules
      now = nextReady;
      continue;
    }
    const double speed = running.size() > 1 ? 1.0 / contention : 1.0;
    double step = nextReady - now;
    for (size_t j : running) {
      if (remaining[j] < 0) remaining[j] = ops[threadOps[j][next[j]]].work;
      step = std::min(step, remaining[j] / speed);
      if (!queue.empty()) step = std::min(step, std::max(0.0, slice - ran[j]));
    }
    now += step;
    for (size_t j : running) {
      remaining[j] -= step * speed, ran[j] += step;
      if (remaining[j] > 1e-12) continue;
      ops[threadOps[j][next[j]]].end = now;
      remaining[j] = -1;
      ++next[j];
      // It keeps its cores if its next operation can start now; otherwise it blocks.
      double unused = std::numeric_limits<double>::infinity();
      if (next[j] >= threadOps[j].size() ||
          !opReady(ops, ops[threadOps[j][next[j]]], now, handoff, unused))
        state[j] = State::Blocked, free += width(j);
    }
  }
}

/// Runs every thread's operations in order on `cores` cores (time slices of `slice` seconds;
/// 0: processor sharing) and sets the end time of every operation (ops[id].end).
void simulate(std::vector<SimOp>& ops, const std::vector<std::vector<size_t>>& threadOps,
              const std::vector<int>& threadWidth, int cores, double handoff, double contention,
              double slice) {
  if (slice > 0)
    simulateSlices(ops, threadOps, threadWidth, cores, handoff, contention, slice);
  else
    simulateSharing(ops, threadOps, threadWidth, cores, handoff, contention);
}

/// The steady-state seconds per step from the last stage's step ends: over the second quarter
/// of the simulated steps, past the start-up and before the upstream stages (which run ahead by
/// up to the queue's capacity) end and leave the last one alone.
double period(const std::vector<double>& stepEnds) {
  const size_t n = stepEnds.size(), from = n / 4, to = n / 2;
  if (to <= from) return n ? stepEnds.back() / static_cast<double>(n) : 0;
  return (stepEnds[to] - stepEnds[from]) / static_cast<double>(to - from);
}

constexpr int kSimSteps = 64;

}  // namespace

double defaultSchedulerSlice(int cores) {
  const int c = std::clamp(cores, 1, 8);
  int log2 = 0;
  while ((2 << log2) <= c) ++log2;
  return 0.75e-3 * (1 + log2);
}

MethodEstimate estimateMethods(const MethodProfile& profile, const PartitionPlan& partition,
                               int cores, bool oneFOneB, int queueCapacity) {
  MethodEstimate e;
  cores = std::max(1, cores);
  const size_t k = partition.stages.size();
  const double batch = std::max(1, profile.batchSize);
  if (k == 0 || profile.localStep.size() != k || profile.pipelineMicro.size() != k ||
      profile.pipelineForward.size() != k || profile.pipelineUpdate.size() != k)
    return e;
  std::vector<int> width;
  int threads = 0;
  for (const auto& s : partition.stages) {
    width.push_back(std::max(1, s.settings.threads));
    threads += width.back();
  }
  e.coresShared = threads > cores;
  const double contention = std::max(1.0, profile.contention);
  const double slice =
      profile.sliceSeconds < 0 ? defaultSchedulerSlice(cores) : profile.sliceSeconds;

  // Local: stage s's step t needs stage s - 1's step t, and room in its output queue (stage
  // s + 1 has taken step t - capacity).
  {
    std::vector<SimOp> ops(k * kSimSteps);
    std::vector<std::vector<size_t>> order(k);
    auto id = [&](size_t s, int t) { return s * kSimSteps + static_cast<size_t>(t); };
    for (size_t s = 0; s < k; ++s)
      for (int t = 0; t < kSimSteps; ++t) {
        SimOp& op = ops[id(s, t)];
        op.work = profile.localStep[s];
        op.handoff = s > 0;
        if (s > 0) op.after.push_back(id(s - 1, t));
        if (s + 1 < k && t - queueCapacity - 1 >= 0)
          op.after.push_back(id(s + 1, t - queueCapacity - 1));
        order[s].push_back(id(s, t));
      }
    simulate(ops, order, width, cores, profile.handoffSeconds, contention, slice);
    std::vector<double> ends;
    for (int t = 0; t < kSimSteps; ++t) ends.push_back(ops[id(k - 1, t)].end);
    const double p = period(ends);
    if (p > 0) e.localSamplesPerSec = batch / p;
  }

  // Pipeline: per stage and step, M forwards, M backwards (in the schedule's order), the update.
  {
    const int m = std::max(1, profile.microBatches);
    const size_t perStep = static_cast<size_t>(2 * m + 1);
    std::vector<SimOp> ops(k * kSimSteps * perStep);
    std::vector<std::vector<size_t>> order(k);
    auto fwd = [&](size_t s, int t, int i) {
      return (s * kSimSteps + static_cast<size_t>(t)) * perStep + static_cast<size_t>(i);
    };
    auto bwd = [&](size_t s, int t, int i) { return fwd(s, t, m + i); };
    auto upd = [&](size_t s, int t) { return fwd(s, t, 2 * m); };
    double busy = 0;
    for (size_t s = 0; s < k; ++s) {
      const double f = profile.pipelineForward[s];
      const double b = std::max(0.0, profile.pipelineMicro[s] - f);
      busy += m * profile.pipelineMicro[s] + profile.pipelineUpdate[s];
      const int warm = oneFOneB ? std::min(static_cast<int>(k) - 1 - static_cast<int>(s), m) : m;
      for (int t = 0; t < kSimSteps; ++t) {
        for (int i = 0; i < m; ++i) {
          SimOp& F = ops[fwd(s, t, i)];
          F.work = f;
          if (s > 0) F.after.push_back(fwd(s - 1, t, i)), F.handoff = true;
          SimOp& B = ops[bwd(s, t, i)];
          B.work = b;
          if (s + 1 < k) B.after.push_back(bwd(s + 1, t, i)), B.handoff = true;
        }
        ops[upd(s, t)].work = profile.pipelineUpdate[s];
        for (int i = 0; i < warm; ++i) order[s].push_back(fwd(s, t, i));
        for (int i = 0; i < m - warm; ++i) {
          order[s].push_back(fwd(s, t, warm + i));
          order[s].push_back(bwd(s, t, i));
        }
        for (int i = m - warm; i < m; ++i) order[s].push_back(bwd(s, t, i));
        order[s].push_back(upd(s, t));
      }
    }
    simulate(ops, order, width, cores, profile.handoffSeconds, contention, slice);
    std::vector<double> ends;
    for (int t = 0; t < kSimSteps; ++t) ends.push_back(ops[upd(0, t)].end);
    const double p = period(ends);
    if (p > 0) {
      e.pipelineSamplesPerSec = batch / p;
      e.bubbleFraction = std::max(0.0, 1.0 - busy / static_cast<double>(k) / p);
    }
  }

  if (profile.backpropStep > 0) e.backpropSamplesPerSec = batch / profile.backpropStep;
  if (e.backpropSamplesPerSec > 0) {
    e.localSpeedup = e.localSamplesPerSec / e.backpropSamplesPerSec;
    e.pipelineSpeedup = e.pipelineSamplesPerSec / e.backpropSamplesPerSec;
  }
  return e;
}

}  // namespace stagewise::engine
