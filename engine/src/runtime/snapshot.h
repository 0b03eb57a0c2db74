#pragma once
#include <torch/torch.h>  // free here: the engine precompiles it
// Consistent parameter snapshots for the probe and the evaluator. Each stage copies its own
// parameters between two of its own steps (after finishing step s); a snapshot is complete when
// every stage has offered step s. Copies never feed back into training.

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>

#include "runtime/measure_budget.h"

namespace stagewise::engine {

struct Snapshot {
  int64_t step = 0;
  bool probe = false;
  bool eval = false;
  /// Run time at which the last stage offered (finished `step`): the time its probe and
  /// evaluation are recorded at, however long they wait for the analysis thread. -1: unknown.
  double timeS = -1;
  std::vector<std::vector<torch::Tensor>> body;  ///< per stage
  std::vector<std::vector<torch::Tensor>> aux;   ///< per stage (empty for the last)
};

class SnapshotCoordinator {
 public:
  /// `budget` (outliving the coordinator) decides which of the points its intervals ask for are
  /// measured; the first stage to offer a step asks it.
  SnapshotCoordinator(int stages, MeasureBudget& budget);

  /// True if stages should offer their parameters after finishing `step`.
  bool wanted(int64_t step) const;
  /// Called by stage `stage` after finishing `step` (only when wanted()), at run time `timeS`.
  /// Copies the parameters unless the step is left out (budget, or the analysis thread behind).
  void offer(int stage, int64_t step, const std::vector<torch::Tensor>& body,
             const std::vector<torch::Tensor>& aux, double timeS = -1);
  /// Blocks until a complete snapshot is ready; empty once closed.
  std::optional<Snapshot> next();
  /// Distributed runs, ranks other than 0: offers go to `forward` (which sends them to rank 0,
  /// where the complete snapshots are assembled) instead of being kept here.
  using Forward =
      std::function<void(int stage, int64_t step, const std::vector<torch::Tensor>& body,
                         const std::vector<torch::Tensor>& aux)>;
  void setForward(Forward forward) { m_forward = std::move(forward); }
  /// No more offers. With `drop` false (the run ended normally) the snapshots already complete
  /// are still handed out by next() before it returns empty, so no probe or evaluation that was
  /// taken is lost; with `drop` true (a stop or a failure) they are discarded and counted.
  void close(bool drop = false);
  /// Snapshots skipped because the analysis thread was behind.
  int64_t dropped() const;
  /// Snapshots discarded by close(drop) or left incomplete when the run ended.
  int64_t discarded() const;

 private:
  Forward m_forward;
  int m_stages;
  MeasureBudget& m_budget;
  mutable std::mutex m_mutex;
  std::condition_variable m_cv;
  struct Pending {
    int count = 0;
    bool skip = false;
    int kinds = 0;  ///< MeasureBudget kinds decided for the step
    Snapshot snapshot;
  };
  std::map<int64_t, Pending> m_partial;
  std::deque<Snapshot> m_ready;
  bool m_closed = false;
  int64_t m_dropped = 0;
  int64_t m_discarded = 0;
};

}  // namespace stagewise::engine
