#pragma once
// When a run probes and evaluates, within measure.budget (docs/metrics.md, "The measurement
// budget"). The intervals give the points asked for; at each, the first stage to finish the
// step asks decide(): a point is measured while the measuring's CPU time stays within the
// budget's share of the CPU time training takes, and kMinPoints of each kind spread over the
// run are measured whatever they cost. Torch-free (TSan and the unit tests build it alone).

#include <cstdint>
#include <map>
#include <mutex>
#include <set>

namespace stagewise::engine {

class MeasureBudget {
 public:
  enum Kind : int { kProbe = 1, kEval = 2 };

  /// `budget` <= 0: no budget (every point asked for is measured). Intervals as in the spec:
  /// a point after step s when (s + 1) is a multiple (0 or -1: none during training).
  /// `forcedEvals`: steps s after which an evaluation is always measured (RunOptions::
  /// evalAtSteps less one); those at or past the last step are ignored.
  MeasureBudget(double budget, int64_t totalSteps, int64_t probeInterval, int64_t evalInterval,
                int minPoints, const std::set<int64_t>& forcedEvals = {});

  /// The kinds a step is a point of (a bit set of Kind; 0: none). Never the last step: the end
  /// is measured after training, outside the budget.
  int candidates(int64_t step) const;
  /// Which of them to measure now. `trainingCpuS`: CPU seconds the run spent so far, its
  /// measuring excluded. Thread-safe.
  int decide(int64_t step, double trainingCpuS);
  /// What measuring the point decided at `step` cost in CPU seconds (the analysis thread's),
  /// charged in place of the estimate decide() reserved for it. Thread-safe.
  void charge(int64_t step, double probeS, double evalS);
  /// Cost of copying parameters for a snapshot (the stage threads'). Thread-safe.
  void chargeCopy(double cpuS);
  /// A decided point that was not measured after all (the run stopped, the analysis thread was
  /// behind): its reservation is released and it no longer counts as measured.
  void release(int64_t step);

  /// CPU seconds charged for measuring so far (reservations of points still in flight included).
  double spentS() const;
  /// CPU seconds measuring actually took so far (no reservations): the process's CPU time less
  /// this is what training took.
  double chargedS() const;
  /// spent / (training + spent): the share of the run's CPU time that went to measuring.
  double share(double trainingCpuS) const;
  double budget() const { return m_budget; }
  struct Counts {
    int64_t probes = 0, evals = 0;                ///< decided
    int64_t thinnedProbes = 0, thinnedEvals = 0;  ///< asked for but left out by the budget
  };
  Counts counts() const;
  /// The process's CPU time when the run's clock started: training CPU is counted from there.
  void setCpuOrigin(double processCpuS) { m_origin = processCpuS; }
  /// CPU seconds training took so far: the process's since the origin, less measuring.
  double trainingCpuS() const;
  /// True when `step` is one of the points kept whatever the budget (tests, docs); forced
  /// evaluations are kept too.
  bool kept(int kind, int64_t step) const;
  /// True when an evaluation after `step` was asked for by the caller (never to be skipped,
  /// however far behind the analysis thread is).
  bool forced(int64_t step) const { return m_forcedEvals.count(step) > 0; }

 private:
  bool fits(double estimate, double trainingCpuS) const;

  double m_budget;
  double m_origin = 0;
  int64_t m_totalSteps, m_probeInterval, m_evalInterval;
  std::set<int64_t> m_keptProbes, m_keptEvals;
  std::set<int64_t> m_forcedEvals;
  mutable std::mutex m_mutex;
  double m_spent = 0;    ///< charged, plus reservations
  double m_charged = 0;  ///< charged only
  struct Reservation {
    double cost = 0;
    int kinds = 0;
  };
  std::map<int64_t, Reservation> m_reserved;  ///< decided points not charged yet
  double m_probeCost = -1, m_evalCost = -1;   ///< the last measured cost of each; -1: unknown
  Counts m_counts;
};

/// CPU seconds of the calling thread (CLOCK_THREAD_CPUTIME_ID).
double threadCpuSeconds();
/// CPU seconds of the whole process (user + system).
double processCpuSeconds();

}  // namespace stagewise::engine
