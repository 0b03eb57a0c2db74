// The plan of a pipeline step and the measured bubble: see pipeline_plan.h.

#include "stagewise/engine/pipeline_plan.h"

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include "stagewise/engine/model_plan.h"
#include "stagewise/engine/partition.h"

namespace stagewise::engine::schedule {
namespace {

double duration(const Action& a, const PassTimes& t) {
  switch (a.op) {
    case Op::F:
      return t.f;
    case Op::B:
      return t.recompute + t.b;
    case Op::W:
      return t.w;
    case Op::BW:
      return t.recompute + t.b + t.w;
  }
  return 0;
}

bool isCompute(SpanKind k) {
  return k == SpanKind::Forward || k == SpanKind::Backward || k == SpanKind::Weight ||
         k == SpanKind::Recompute || k == SpanKind::Step || k == SpanKind::Aux;
}

}  // namespace

Plan simulate(const std::vector<std::vector<Action>>& orders, const std::vector<PassTimes>& times) {
  const int stages = static_cast<int>(times.size());
  // (stage, kind, micro) -> end; kind 0: forward, 1: input gradient (B or BW), 2: W (or BW)
  std::map<std::tuple<int, int, int>, double> ended;
  auto endOf = [&](int s, int kind, int i) -> const double* {
    const auto it = ended.find({s, kind, i});
    return it == ended.end() ? nullptr : &it->second;
  };
  Plan plan;
  plan.workers.resize(orders.size());
  std::vector<size_t> next(orders.size(), 0);
  std::vector<double> free(orders.size(), 0);
  for (bool moved = true; moved;) {
    moved = false;
    for (size_t w = 0; w < orders.size(); ++w) {
      while (next[w] < orders[w].size()) {
        const Action& a = orders[w][next[w]];
        if (a.stage < 0 || a.stage >= stages)
          throw std::invalid_argument("the plan has pass times for " + std::to_string(stages) +
                                      " stages; the schedule has stage " + std::to_string(a.stage));
        std::vector<const double*> needs;
        if (a.op == Op::F && a.stage > 0) needs.push_back(endOf(a.stage - 1, 0, a.micro));
        if (a.op == Op::B || a.op == Op::BW) {
          needs.push_back(endOf(a.stage, 0, a.micro));
          if (a.stage + 1 < stages) needs.push_back(endOf(a.stage + 1, 1, a.micro));
        }
        if (a.op == Op::W) needs.push_back(endOf(a.stage, 1, a.micro));
        if (std::find(needs.begin(), needs.end(), nullptr) != needs.end()) break;
        double start = free[w];
        for (const double* e : needs) start = std::max(start, *e);
        const double end = start + duration(a, times[static_cast<size_t>(a.stage)]);
        plan.workers[w].push_back({a, start, end});
        free[w] = end;
        if (a.op == Op::F) ended[{a.stage, 0, a.micro}] = end;
        if (a.op == Op::B || a.op == Op::BW) ended[{a.stage, 1, a.micro}] = end;
        if (a.op == Op::W || a.op == Op::BW) ended[{a.stage, 2, a.micro}] = end;
        ++next[w];
        moved = true;
      }
    }
  }
  for (size_t w = 0; w < orders.size(); ++w)
    if (next[w] != orders[w].size())
      throw std::invalid_argument("the schedule deadlocks: worker " + std::to_string(w) +
                                  " waits forever at its pass " + std::to_string(next[w] + 1));
  double busyAll = 0;
  for (const auto& row : plan.workers) {
    double busy = 0;
    for (const auto& p : row) busy += p.end - p.start;
    busyAll += busy;
    const double window = row.empty() ? 0 : row.back().end - row.front().start;
    plan.workerBubble.push_back(window > 0 ? std::max(0.0, 1 - busy / window) : 0);
    if (!row.empty()) plan.stepSeconds = std::max(plan.stepSeconds, row.back().end);
  }
  const double capacity = plan.stepSeconds * static_cast<double>(orders.size());
  plan.stepBubble = capacity > 0 ? std::max(0.0, 1 - busyAll / capacity) : 0;
  return plan;
}

Plan planStep(const std::string& schedule, int micro, int chunks,
              const std::vector<PassTimes>& times) {
  return simulate(workerOrders(schedule, static_cast<int>(times.size()), micro, chunks), times);
}

std::vector<int> heldMicroBatches(const std::vector<std::vector<Action>>& orders, int stages) {
  std::vector<int> held(static_cast<size_t>(std::max(0, stages)), 0);
  std::vector<int> most = held;
  for (const auto& row : orders)
    for (const auto& a : row) {
      if (a.stage < 0 || a.stage >= stages) continue;
      int& h = held[static_cast<size_t>(a.stage)];
      if (a.op == Op::F) most[static_cast<size_t>(a.stage)] = std::max(most[a.stage], ++h);
      if (a.op == Op::W || a.op == Op::BW) --h;
    }
  return most;
}

std::vector<int64_t> peakHeldBytes(const std::vector<std::vector<Action>>& orders, int stages,
                                   const std::vector<int64_t>& activationBytes,
                                   const std::vector<int64_t>& inputBytes,
                                   const std::vector<int64_t>& gradientBytes, bool recompute) {
  const size_t n = static_cast<size_t>(std::max(0, stages));
  std::vector<int64_t> cur(n, 0), peak(n, 0);
  std::map<std::pair<int, int>, int64_t> of;  // (stage, micro) -> what it holds
  auto at = [](const std::vector<int64_t>& v, size_t k) { return k < v.size() ? v[k] : 0; };
  for (const auto& row : orders)
    for (const auto& a : row) {
      if (a.stage < 0 || a.stage >= stages) continue;
      const size_t k = static_cast<size_t>(a.stage);
      auto hold = [&](int64_t bytes) {
        of[{a.stage, a.micro}] += bytes;
        cur[k] += bytes;
        peak[k] = std::max(peak[k], cur[k]);
      };
      if (a.op == Op::F) hold(recompute ? at(inputBytes, k) : at(activationBytes, k));
      if ((a.op == Op::B || a.op == Op::BW) && recompute) hold(at(activationBytes, k));
      if (a.op == Op::B) hold(at(gradientBytes, k));
      if (a.op == Op::W || a.op == Op::BW) {
        const auto it = of.find({a.stage, a.micro});
        if (it != of.end()) {
          cur[k] -= it->second;
          of.erase(it);
        }
      }
    }
  return peak;
}

namespace {
int64_t outputBytes(const ModelPlan& plan, int layer) {
  if (layer < 0 || static_cast<size_t>(layer) >= plan.layers.size()) return 0;
  int64_t bytes = 4;
  for (int64_t d : plan.layers[static_cast<size_t>(layer)].outShape) bytes *= d;
  return bytes;
}
}  // namespace

std::vector<int64_t> heldActivationBytes(const PartitionPlan& partition, const ModelPlan& plan) {
  std::vector<int64_t> out;
  for (const StagePlan& s : partition.stages) {
    int64_t bytes = s.isLast ? outputBytes(plan, s.lastLayer) : 0;
    for (int i = s.firstLayer; i <= s.lastLayer; ++i)
      if (i >= 0 && static_cast<size_t>(i) < plan.layers.size())
        bytes += plan.layers[static_cast<size_t>(i)].activationBytes;
    out.push_back(bytes);
  }
  return out;
}

std::vector<int64_t> heldGradientBytes(const PartitionPlan& partition, const ModelPlan& plan) {
  std::vector<int64_t> out;
  for (const StagePlan& s : partition.stages) {
    int64_t bytes = 0;
    if (s.index > 0)
      for (int i = s.firstLayer; i <= s.lastLayer; ++i)
        if (i != s.lastLayer || s.isLast) bytes += outputBytes(plan, i);  // else from downstream
    out.push_back(bytes);
  }
  return out;
}

std::vector<ScheduleEstimate> compareSchedules(const std::vector<PassTimes>& times, int micro,
                                               const std::vector<int64_t>& activationBytes,
                                               const std::vector<int64_t>& inputBytes,
                                               bool recompute,
                                               const std::vector<int64_t>& gradientBytes,
                                               int chunks) {
  const int stages = static_cast<int>(times.size());
  std::vector<ScheduleEstimate> out;
  for (const std::string& name : scheduleNames()) {
    ScheduleEstimate e;
    e.schedule = name;
    if (name == "interleaved") {
      e.exampleChunks = chunks <= 1;
      e.chunks = chunks > 1 ? chunks : 2;
    }
    std::vector<PassTimes> t = times;
    for (auto& p : t) {
      if (name != "zb-h1") {  // one backward pass: B and W together
        p.b += p.w;
        p.w = 0;
      }
      p.recompute = recompute ? p.f : 0;
    }
    try {
      const auto orders = workerOrders(name, stages, micro, e.chunks);
      const Plan plan = simulate(orders, t);
      e.bubble = plan.stepBubble;
      e.stepSeconds = plan.stepSeconds;
      e.peakActivationBytes =
          peakHeldBytes(orders, stages, activationBytes, inputBytes, gradientBytes, recompute);
    } catch (const std::invalid_argument& err) {
      e.refused = err.what();
    }
    out.push_back(std::move(e));
  }
  return out;
}

double measuredBubble(const std::vector<StepSpan>& spans) {
  std::vector<std::pair<double, double>> busy;
  for (const auto& s : spans)
    if (isCompute(s.kind) && s.endS > s.startS) busy.emplace_back(s.startS, s.endS);
  if (busy.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(busy.begin(), busy.end());
  // The union of the compute spans (a recompute span may sit inside its backward's).
  double covered = 0;
  double from = busy.front().first;
  double to = busy.front().second;
  double last = to;
  for (const auto& [s, e] : busy) {
    if (s > to) {
      covered += to - from;
      from = s;
      to = e;
    } else {
      to = std::max(to, e);
    }
    last = std::max(last, e);
  }
  covered += to - from;
  const double window = last - busy.front().first;
  return std::max(0.0, 1 - covered / window);
}

}  // namespace stagewise::engine::schedule
