// Per-worker pass orders of the pipeline schedules: see pipeline_schedule.h.

#include "stagewise/engine/pipeline_schedule.h"

#include <algorithm>
#include <deque>
#include <stdexcept>

namespace stagewise::engine::schedule {
namespace {

// GPipe and 1F1B (and zb-h1, which is 1F1B with each backward split): stage k runs `warm`
// forwards, then a forward and a backward in turn, then the remaining backwards. GPipe's warm-up
// is every micro-batch; 1F1B's the stages downstream (the pipeline's fill), so at most p - k
// micro-batches' activations are held. This is the order pipeline_step.cpp's PipelineStep runs.
std::vector<Action> oneFOneB(int k, int p, int m, bool gpipe, bool split) {
  std::vector<Action> out;
  const int warm = gpipe ? m : std::min(p - 1 - k, m);
  // zb-h1: stage k's W lags its B by up to k backwards (torch.distributed.pipelining's zero
  // bubble 1F1B: rank r runs no W in its first r forward-backward pairs). Later stages thus send
  // each B upstream without a W in between, the backward reaches stage 0 sooner, and the W's
  // fill the waits that follow; every stage holds at most p micro-batches' activations (F to
  // W), 1F1B's most. Deferring at the early stages instead (p - 1 - k) plans no gain over 1F1B.
  const size_t defer = static_cast<size_t>(k);
  std::deque<int> pendingW;
  auto backward = [&](int i) {
    if (!split) {
      out.push_back({k, Op::BW, i});
      return;
    }
    out.push_back({k, Op::B, i});
    pendingW.push_back(i);
    if (pendingW.size() > defer) {
      out.push_back({k, Op::W, pendingW.front()});
      pendingW.pop_front();
    }
  };
  for (int i = 0; i < warm; ++i) out.push_back({k, Op::F, i});
  for (int i = 0; i < m - warm; ++i) {
    out.push_back({k, Op::F, warm + i});
    backward(i);
  }
  for (int i = m - warm; i < m; ++i) backward(i);
  for (int i : pendingW) out.push_back({k, Op::W, i});
  return out;
}

// Megatron's interleaved 1F1B as torch.distributed.pipelining's ScheduleInterleaved1F1B orders
// it: worker r's forward passes go through its chunks in rounds of `group` micro-batches (chunk
// 0's round, chunk 1's round, ...), its backward passes the same with the chunks reversed; a
// warm-up of (v - 1) * group + 2 (P - 1 - r) forwards, then one forward and one backward in turn.
std::vector<Action> interleaved(int r, int workers, int v, int m, int group) {
  const int total = m * v;
  const int warm = std::min((v - 1) * group + 2 * (workers - 1 - r), total);
  auto micro = [&](int i) { return (i / (group * v)) * group + i % group; };
  auto forward = [&](int i) -> Action {
    return {((i / group) % v) * workers + r, Op::F, micro(i)};
  };
  auto backward = [&](int i) -> Action {
    return {(v - 1 - (i / group) % v) * workers + r, Op::BW, micro(i)};
  };
  std::vector<Action> out;
  for (int i = 0; i < warm; ++i) out.push_back(forward(i));
  for (int i = 0; i < total - warm; ++i) {
    out.push_back(forward(warm + i));
    out.push_back(backward(i));
  }
  for (int i = total - warm; i < total; ++i) out.push_back(backward(i));
  return out;
}

}  // namespace

const std::vector<std::string>& scheduleNames() {
  static const std::vector<std::string> names{"gpipe", "1f1b", "interleaved", "zb-h1"};
  return names;
}

const char* opName(Op op) {
  switch (op) {
    case Op::F:
      return "F";
    case Op::B:
      return "B";
    case Op::W:
      return "W";
    case Op::BW:
      return "BW";
  }
  return "?";
}

int workerOf(int stage, int stages, int chunks) {
  const int workers = chunks > 0 ? stages / chunks : stages;
  return workers > 0 ? stage % workers : 0;
}

std::vector<std::vector<Action>> workerOrders(const std::string& schedule, int stages, int micro,
                                              int chunks) {
  const auto& names = scheduleNames();
  if (std::find(names.begin(), names.end(), schedule) == names.end())
    throw std::invalid_argument("pipeline.schedule: unknown schedule '" + schedule +
                                "'; use gpipe, 1f1b, interleaved or zb-h1");
  if (stages < 1) throw std::invalid_argument("the pipeline needs at least one stage");
  if (micro < 1) throw std::invalid_argument("pipeline.micro_batches: must be at least 1");
  if (chunks < 1) throw std::invalid_argument("pipeline.chunks: must be at least 1");
  if (chunks > 1 && schedule != "interleaved")
    throw std::invalid_argument("pipeline.chunks: " + std::to_string(chunks) +
                                " chunks per worker need schedule interleaved; set chunks to 1");
  if (stages % chunks != 0)
    throw std::invalid_argument("pipeline.chunks: " + std::to_string(stages) +
                                " stages do not split into " + std::to_string(chunks) +
                                " chunks per worker; cut the model into a multiple of " +
                                std::to_string(chunks) + " stages");
  const int workers = stages / chunks;
  std::vector<std::vector<Action>> orders(static_cast<size_t>(workers));
  if (schedule == "interleaved" && chunks > 1) {
    const int rounds = std::max(1, micro / workers);
    if (micro % rounds != 0)
      throw std::invalid_argument(
          "pipeline.micro_batches: interleaved runs micro-batches in rounds of at least " +
          std::to_string(workers) + " (one per worker) and " + std::to_string(micro) +
          " does not split into " + std::to_string(rounds) + " equal rounds: use a multiple of " +
          std::to_string(workers) + " (or fewer than " + std::to_string(2 * workers) + ")");
    const int group = micro / rounds;
    for (int r = 0; r < workers; ++r) orders[r] = interleaved(r, workers, chunks, micro, group);
    return orders;
  }
  const bool gpipe = schedule == "gpipe";
  const bool split = schedule == "zb-h1";
  for (int k = 0; k < stages; ++k) orders[k] = oneFOneB(k, stages, micro, gpipe, split);
  return orders;
}

}  // namespace stagewise::engine::schedule
