#pragma once
// The schedule simulation behind estimateMethods (partition.h): stage threads running their
// operations on a number of cores, as the kernel's scheduler would run them. Internal (torch-free);
// separate so that tests can check schedules operation by operation.

#include <cstddef>
#include <vector>

namespace stagewise::engine::sim {

/// One operation of a stage thread in the simulated schedule.
struct SimOp {
  double work = 0;            ///< seconds alone on its threads
  std::vector<size_t> after;  ///< operations (ids) that must have finished
  bool handoff = false;       ///< the inputs came from another thread
  /// Extra seconds when it starts cold (simulateCoreQueues only: the other models do not know
  /// which core a thread runs on): on a core that another thread has run on since `coldSince`,
  /// an earlier operation of the same thread, started (or not on the core that one started on).
  /// Without `coldSince`: on a core whose last thread was another one.
  double cold = 0;
  static constexpr size_t kNone = static_cast<size_t>(-1);
  size_t coldSince = kNone;
  double end = -1;  ///< when it finished (simulated)
};

/// What the per-core queues' schedule did within a window of simulated time, per thread: the
/// kernel's per-thread counts (/proc/<pid>/task/<tid>/schedstat) to set beside a real run's.
struct SimStats {
  double from = 0, to = 0;        ///< the window
  std::vector<double> running;    ///< seconds on a core
  std::vector<double> queued;     ///< seconds runnable, waiting for a core
  std::vector<double> switchIns;  ///< times given a core
  double idleCoreSeconds = 0;     ///< summed over cores
};

/// Time slices with a run queue per core, as Linux keeps them (one-thread stages only):
/// - A thread stays with the core it last ran on; thread j starts on core (j + startCore) mod
///   cores.
/// - When its input is there it joins that core's queue, and runs at once if the core is free.
///   It does not move to another core that is idle already.
/// - A core whose thread blocks takes the next thread of its own queue; with none, it pulls the
///   longest-waiting thread of the longest other queue (the balancing a core does as it goes
///   idle) that is not cache hot: one that last left a core `migrationCost` seconds ago or more
///   (or has not run yet).
/// - A core that is idle already pulls only at the scheduler's tick, every `tick` seconds, the
///   first at tickPhase x tick.
/// - Slices as in the one-queue model, per core: a running thread gives way to one waiting on its
///   core after `slice` seconds. Threads compute `contention` slower while more than one runs.
/// - An operation that starts cold (SimOp::coldSince) takes its `cold` seconds more: the caches
///   hold another thread's data.
/// So two stages that wake each other on one core take turns there while the other core idles
/// until the next tick: what the engine's spans show at four stages on two cores
/// (docs/benchmarks.md, "The estimate per method").
/// `stats` (optional) counts the window it gives.
void simulateCoreQueues(std::vector<SimOp>& ops, const std::vector<std::vector<size_t>>& threadOps,
                        int cores, double handoff, double contention, double slice, double tick,
                        double tickPhase, size_t startCore, SimStats* stats = nullptr,
                        double migrationCost = 0);

/// Per-core queues: how many tick phases and start layouts the estimate averages over.
constexpr int kVariants = 8;

/// Runs every thread's operations in order on `cores` cores and sets the end time of every
/// operation (ops[id].end): time slices of `slice` seconds with a queue per core (perCoreQueues,
/// for threads of one intra-op thread each; idle cores pull every `tick` seconds; `variant`
/// picks the tick's phase and the threads' first cores) or one queue for all; slice 0:
/// processor sharing.
/// `stats`: as simulateCoreQueues's (per-core queues only; left alone otherwise).
void simulate(std::vector<SimOp>& ops, const std::vector<std::vector<size_t>>& threadOps,
              const std::vector<int>& threadWidth, int cores, double handoff, double contention,
              double slice, bool perCoreQueues, double tick, int variant, SimStats* stats = nullptr,
              double migrationCost = 0);

/// The steady-state seconds per step from the last stage's step ends: over the second quarter
/// of the simulated steps, past the start-up and before the upstream stages (which run ahead by
/// up to the queue's capacity) end and leave the last one alone.
double period(const std::vector<double>& stepEnds);

}  // namespace stagewise::engine::sim
