#pragma once
// The order in which each pipeline worker runs its micro-batches' passes, per schedule (gpipe,
// 1f1b, interleaved, zb-h1). The engine executes these orders; the plan (pipeline_plan.h), the
// Design estimate and `stagewise-cli inspect` simulate them. See docs/metrics.md, "Bubble".

#include <string>
#include <vector>

namespace stagewise::engine::schedule {

/// A pass of one micro-batch through one stage. F: forward; B: the input's gradient alone
/// (zb-h1, sent upstream at once); W: the weights' gradient (zb-h1, deferred); BW: a whole
/// backward, B and W together (gpipe, 1f1b, interleaved).
enum class Op { F, B, W, BW };

/// One pass: `stage` is the model stage (under interleaved: the chunk) index, 0-based.
struct Action {
  int stage = 0;
  Op op = Op::F;
  int micro = 0;
  friend bool operator==(const Action&, const Action&) = default;
};

/// Each worker's actions for one step, in order. gpipe: every F, then every BW. 1f1b: stage k
/// runs min(p - 1 - k, m) F's, then an F and a BW in turn, then the remaining BW's. zb-h1: 1f1b's
/// order with each BW split into B and W, stage k's W's lagging its B's by up to k (stage 0 runs
/// B W at once, the last stage keeps p - 1 back) and the rest at the end: with F = B = W it plans
/// (p - 1) F idle where 1f1b plans 3 (p - 1) F. interleaved: Megatron's interleaved 1F1B. workers =
/// stages / chunks; worker w runs stages w, w + workers, w + 2 workers, ... (Megatron's
/// assignment). chunks must be 1 unless schedule is "interleaved" (where chunks 1 gives 1f1b's
/// order). Interleaved runs its micro-batches in rounds of at least `workers`
/// (torch.distributed.pipelining's ScheduleInterleaved1F1B): with m below the worker count one
/// round of m, otherwise m / workers rounds, which must divide m. Throws std::invalid_argument,
/// with a message naming the field to change, for what cannot be scheduled.
std::vector<std::vector<Action>> workerOrders(const std::string& schedule, int stages, int micro,
                                              int chunks = 1);

/// The worker that runs `stage`: stage mod (stages / chunks).
int workerOf(int stage, int stages, int chunks);

/// The schedules workerOrders knows, in the order the UI offers them.
const std::vector<std::string>& scheduleNames();

/// "F", "B", "W" or "BW".
const char* opName(Op op);

}  // namespace stagewise::engine::schedule
