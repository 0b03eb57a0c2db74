#pragma once
// A stage's bubble, planned against measured (docs/metrics.md, "Bubble: planned against
// measured"). BubbleMeter measures a worker's bubble step by step from its spans and keeps the
// mean pass times the plan needs; BubbleBoard gathers every stage's pass times in one process
// and plans the bubble from them. Torch-free.

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "stagewise/engine/metrics.h"
#include "stagewise/engine/pipeline_plan.h"
#include "stagewise/engine/spec.h"

namespace stagewise::engine {

// Per stage, every report interval (~250 ms), and in the summary as bubble_measured /
// bubble_planned. (metrics.h's series list is the place for these names once it is free.)
inline constexpr const char* kBubbleMeasuredSeries = "bubble_measured";
inline constexpr const char* kBubblePlannedSeries = "bubble_planned";

/// interleaved: the measured bubble of one worker whose v chunks run on v threads taking turns.
/// The worker is idle only when none of its chunks computes, so its bubble comes from the union
/// of its chunks' spans of a step (a chunk alone is idle while its partner computes: measured
/// per chunk, interleaved read ~0.5 against a plan of ~0.1, and the plan is per worker).
/// Fed by the worker's turn at the end of each of its steps; read by its chunks' meters.
/// Thread-safe (a short lock).
class WorkerBubble {
 public:
  void add(double bubble);
  double mean() const;    ///< over the steps so far; NaN before the first
  double recent() const;  ///< over the last BubbleMeter::kRecent steps; NaN before the first

 private:
  mutable std::mutex m_mutex;
  double m_sum = 0;
  int64_t m_steps = 0;
  std::deque<double> m_recent;
};

/// One worker's measured bubble and pass times (pipeline mode). Owned and written by the
/// worker's thread; read by others only after it has joined (as StageMeter).
class BubbleMeter {
 public:
  /// One step's spans of the worker. Spans of no micro-batch (the update) are left out: the
  /// schedule does not plan them.
  void addStep(const std::vector<StepSpan>& spans);
  double measured() const;        ///< mean over the run's steps; NaN before the first
  double recentMeasured() const;  ///< mean over the last kRecent steps; NaN before the first
  /// Mean seconds per micro-batch pass of each stage the worker ran, by stage.
  std::map<int, schedule::PassTimes> passTimes() const;
  int microBatches() const { return m_micro; }  ///< of the last step
  /// The sum behind measured() and its steps, as a checkpoint records them; continueFrom()
  /// makes a resumed run's mean the whole run's.
  double measuredSum() const { return m_bubbleSum; }
  int64_t measuredSteps() const { return m_steps; }
  void continueFrom(double sum, int64_t steps) {
    m_bubbleSum = sum;
    m_steps = steps;
  }
  /// interleaved: measured() and recentMeasured() read the worker's bubble (shared by its
  /// chunks) instead of this chunk's own; the pass times stay this chunk's.
  void measureAsWorker(std::shared_ptr<const WorkerBubble> worker) { m_worker = std::move(worker); }

  static constexpr size_t kRecent = 20;

 private:
  struct Sums {
    double f = 0, b = 0, w = 0, r = 0;
    int64_t nf = 0, nb = 0, nw = 0, nr = 0;
  };
  std::map<int, Sums> m_sums;
  double m_bubbleSum = 0;
  int64_t m_steps = 0;
  std::deque<double> m_recent;
  int m_micro = 0;
  std::shared_ptr<const WorkerBubble> m_worker;
};

/// Every stage's pass times in one process, posted by the stage threads, and the bubble the
/// schedule plans from them. Across processes each rank's board holds its own stages; rank 0's
/// also takes the other ranks' entries (live with their report batches, final with their
/// reports), so it plans every stage. Thread-safe (a short lock).
class BubbleBoard {
 public:
  /// What one stage posted: its pass times (pipeline) or step seconds (local), and the board's
  /// micro-batches per step when it did.
  struct Entry {
    int stage = 0;
    schedule::PassTimes times;
    double stepSeconds = 0;
    int micro = 0;
  };

  /// Pipeline mode: the schedule's name and chunks, as the spec has them. Local mode: an empty
  /// schedule; the plan is then the slowest stage's pace.
  BubbleBoard(std::string schedule, int chunks, int stages);

  /// Pipeline: a stage's mean pass times and the step's micro-batches.
  void post(int stage, const schedule::PassTimes& times, int micro);
  /// Local: a stage's mean compute seconds per step.
  void postStepSeconds(int stage, double seconds);
  /// Another board's entry (a stage another process ran), as that board had it.
  void post(const Entry& entry);
  /// The stages posted so far, in stage order.
  std::vector<Entry> entries() const;
  /// Per stage: the planned bubble, NaN for every stage until each has posted (or where the
  /// schedule cannot be planned). Local: 1 - own step / slowest stage's step.
  std::vector<double> planned() const;

 private:
  std::string m_schedule;
  int m_chunks;
  mutable std::mutex m_mutex;
  std::vector<schedule::PassTimes> m_times;
  std::vector<double> m_stepSeconds;
  std::vector<bool> m_posted;
  int m_micro = 0;
};

/// The board of a run with `stages` stages: pipeline mode plans its schedule, local mode the
/// slowest stage's pace; backprop mode has none (null).
std::unique_ptr<BubbleBoard> makeBubbleBoard(const ExperimentSpec& spec, int stages);

}  // namespace stagewise::engine
