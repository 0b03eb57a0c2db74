// The schedule simulation behind estimateMethods: see schedule_sim.h and docs/metrics.md, "The
// estimate per method".
#include "partition/schedule_sim.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>

namespace stagewise::engine::sim {

namespace {

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

enum class ThreadState { Blocked, Queued, Running };

/// Queues (`enqueue(j)`, after marking it Queued) every blocked thread whose next operation can
/// start at `now`; `nextReady` as in opReady. False once no thread has operations left.
template <class Enqueue>
bool wakeReady(const std::vector<SimOp>& ops, const std::vector<std::vector<size_t>>& threadOps,
               const std::vector<size_t>& next, std::vector<ThreadState>& state, double now,
               double handoff, double& nextReady, Enqueue&& enqueue) {
  bool left = false;
  for (size_t j = 0; j < threadOps.size(); ++j) {
    if (next[j] >= threadOps[j].size()) continue;
    left = true;
    if (state[j] != ThreadState::Blocked) continue;
    if (!opReady(ops, ops[threadOps[j][next[j]]], now, handoff, nextReady)) continue;
    state[j] = ThreadState::Queued;
    enqueue(j);
  }
  return left;
}

/// Runs a thread's current operation (of `order`, its operations) for `step` seconds at `speed`;
/// when it ends, at `now`, the thread moves on. True when the thread blocks: it has ended an
/// operation and its next one cannot start at `now` (it keeps its cores otherwise).
bool runFor(std::vector<SimOp>& ops, const std::vector<size_t>& order, size_t& next,
            double& remaining, double& ran, double step, double speed, double now, double handoff) {
  remaining -= step * speed, ran += step;
  if (remaining > 1e-12) return false;
  ops[order[next]].end = now;
  remaining = -1;
  ++next;
  double unused = std::numeric_limits<double>::infinity();
  return next >= order.size() || !opReady(ops, ops[order[next]], now, handoff, unused);
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
  using State = ThreadState;
  std::vector<State> state(n, State::Blocked);
  std::vector<size_t> next(n, 0);
  std::vector<double> remaining(n, -1), ran(n, 0);
  std::vector<size_t> queue;  // FIFO of runnable threads without cores
  auto width = [&](size_t j) { return std::min(cores, std::max(1, threadWidth[j])); };
  int free = cores;
  double now = 0;
  for (int guard = 0; guard < 10000000; ++guard) {
    double nextReady = std::numeric_limits<double>::infinity();
    if (!wakeReady(ops, threadOps, next, state, now, handoff, nextReady,
                   [&](size_t j) { queue.push_back(j); }))
      return;
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
    for (size_t j : running)
      if (runFor(ops, threadOps[j], next[j], remaining[j], ran[j], step, speed, now, handoff))
        state[j] = State::Blocked, free += width(j);
  }
}

}  // namespace

void simulateCoreQueues(std::vector<SimOp>& ops, const std::vector<std::vector<size_t>>& threadOps,
                        int cores, double handoff, double contention, double slice, double tick,
                        double tickPhase, size_t startCore, SimStats* stats, double migrationCost) {
  const size_t n = threadOps.size();
  if (stats) {
    stats->running.assign(n, 0), stats->queued.assign(n, 0), stats->switchIns.assign(n, 0);
    stats->idleCoreSeconds = 0;
  }
  const size_t nc = static_cast<size_t>(cores);
  using State = ThreadState;
  std::vector<State> state(n, State::Blocked);
  std::vector<size_t> next(n, 0), core(n);
  for (size_t j = 0; j < n; ++j) core[j] = (j + startCore) % nc;
  std::vector<double> remaining(n, -1), ran(n, 0);
  std::vector<double> left(n, -std::numeric_limits<double>::infinity());  // when it left a core
  constexpr size_t kIdle = static_cast<size_t>(-1);
  std::vector<size_t> running(nc, kIdle), lastOn(nc, kIdle);  // lastOn: the core's last thread
  // Cold starts: how often each core has switched threads, and each operation's core and that
  // count when it started.
  std::vector<size_t> switches(nc, 0), opCore(ops.size(), kIdle), opSwitches(ops.size(), 0);
  std::vector<std::deque<size_t>> queue(nc);
  double now = 0, nextTick = tick * tickPhase;
  auto take = [&](size_t c) {  // the core's next thread, if it is free and has one
    if (running[c] != kIdle || queue[c].empty()) return;
    const size_t j = queue[c].front();
    queue[c].pop_front();
    running[c] = j, state[j] = State::Running, ran[j] = 0, core[j] = c;
    if (stats && now >= stats->from && now < stats->to) ++stats->switchIns[j];
  };
  // Counts the time from `now` to `until` that falls in the stats' window.
  auto account = [&](double until) {
    if (!stats) return;
    const double d = std::min(until, stats->to) - std::max(now, stats->from);
    if (d <= 0) return;
    for (size_t j = 0; j < n; ++j)
      if (state[j] == State::Running)
        stats->running[j] += d;
      else if (state[j] == State::Queued)
        stats->queued[j] += d;
    for (size_t c = 0; c < nc; ++c)
      if (running[c] == kIdle) stats->idleCoreSeconds += d;
  };
  auto pull = [&](size_t c) {  // a core gone idle takes from the longest other queue
    size_t from = kIdle;
    for (size_t o = 0; o < nc; ++o)
      if (o != c && !queue[o].empty() && (from == kIdle || queue[o].size() > queue[from].size()))
        from = o;
    if (from == kIdle) return;
    // Its longest-waiting thread that is not cache hot.
    auto& q = queue[from];
    const auto cold = std::find_if(
        q.begin(), q.end(), [&](size_t j) { return now - left[j] >= migrationCost - 1e-15; });
    if (cold == q.end()) return;
    queue[c].push_back(*cold);
    q.erase(cold);
    take(c);
  };
  for (int guard = 0; guard < 10000000; ++guard) {
    double nextReady = std::numeric_limits<double>::infinity();
    if (!wakeReady(ops, threadOps, next, state, now, handoff, nextReady, [&](size_t j) {
          queue[core[j]].push_back(j);
          take(core[j]);
        }))
      return;
    if (now >= nextTick - 1e-15) {
      // The tick: idle cores pull from the others' queues. One that passed while nobody waited
      // (the simulation stops for ticks only then) found nothing to pull.
      const bool onTime = now <= nextTick + 1e-15;
      nextTick += tick * std::max(1.0, std::floor((now - nextTick) / tick + 1e-9) + 1);
      if (onTime)
        for (size_t c = 0; c < nc; ++c)
          if (running[c] == kIdle) pull(c);
    }
    // Wake for the tick only while some thread waits for a core.
    bool waiting = false;
    for (size_t c = 0; c < nc; ++c) waiting = waiting || !queue[c].empty();
    if (waiting) nextReady = std::min(nextReady, nextTick);
    // A thread that has used its slice gives way to one waiting on its core.
    for (size_t c = 0; c < nc; ++c) {
      const size_t j = running[c];
      if (j == kIdle || ran[j] < slice - 1e-15) continue;
      if (queue[c].empty()) {
        ran[j] = std::fmod(ran[j], slice);
        continue;
      }
      running[c] = kIdle, state[j] = State::Queued, left[j] = now;
      queue[c].push_back(j);
      take(c);
    }
    size_t busy = 0;
    for (size_t c = 0; c < nc; ++c) busy += running[c] != kIdle ? 1 : 0;
    if (busy == 0) {
      if (!std::isfinite(nextReady)) return;  // a cycle: cannot happen for valid schedules
      account(nextReady);
      now = nextReady;
      continue;
    }
    const double speed = busy > 1 ? 1.0 / contention : 1.0;
    double step = nextReady - now;
    for (size_t c = 0; c < nc; ++c) {
      const size_t j = running[c];
      if (j == kIdle) continue;
      const bool switched = lastOn[c] != j;
      if (switched) ++switches[c], lastOn[c] = j;
      if (remaining[j] < 0) {
        const size_t id = threadOps[j][next[j]];
        const SimOp& op = ops[id];
        const size_t since = op.coldSince;
        const bool cold = since == SimOp::kNone
                              ? switched
                              : opCore[since] != c || opSwitches[since] != switches[c];
        remaining[j] = op.work + (cold ? op.cold : 0);
        opCore[id] = c, opSwitches[id] = switches[c];
      }
      step = std::min(step, remaining[j] / speed);
      if (!queue[c].empty()) step = std::min(step, std::max(0.0, slice - ran[j]));
    }
    account(now + step);
    now += step;
    for (size_t c = 0; c < nc; ++c) {
      const size_t j = running[c];
      if (j == kIdle) continue;
      // Blocked: the core takes its own queue's next thread, or pulls one.
      if (!runFor(ops, threadOps[j], next[j], remaining[j], ran[j], step, speed, now, handoff))
        continue;
      state[j] = State::Blocked, running[c] = kIdle, left[j] = now;
      take(c);
      if (running[c] == kIdle) pull(c);
    }
  }
}

void simulate(std::vector<SimOp>& ops, const std::vector<std::vector<size_t>>& threadOps,
              const std::vector<int>& threadWidth, int cores, double handoff, double contention,
              double slice, bool perCoreQueues, double tick, int variant, SimStats* stats,
              double migrationCost) {
  if (slice > 0 && perCoreQueues)
    simulateCoreQueues(ops, threadOps, cores, handoff, contention, slice, tick,
                       static_cast<double>(variant % kVariants) / kVariants,
                       static_cast<size_t>(variant), stats, migrationCost);
  else if (slice > 0)
    simulateSlices(ops, threadOps, threadWidth, cores, handoff, contention, slice);
  else
    simulateSharing(ops, threadOps, threadWidth, cores, handoff, contention);
}

double period(const std::vector<double>& stepEnds) {
  const size_t n = stepEnds.size(), from = n / 4, to = n / 2;
  if (to <= from) return n ? stepEnds.back() / static_cast<double>(n) : 0;
  return (stepEnds[to] - stepEnds[from]) / static_cast<double>(to - from);
}

}  // namespace stagewise::engine::sim
