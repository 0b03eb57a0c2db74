#pragma once
// Per-stage bookkeeping of where time goes (compute / waiting for input / blocked on output),
// over a sliding 1 s window and the whole run, plus recent losses for the summary. Owned and
// written by one stage thread; read by others only after that thread has joined.

#include <cstdint>
#include <deque>
#include <vector>

namespace stagewise::engine {

class StageMeter {
 public:
  struct Fractions {
    double compute = 0, wait = 0, blocked = 0;
  };
  /// The whole-run sums a checkpoint records, so a resumed run's figures continue from them.
  struct Totals {
    int64_t steps = 0;
    double computeS = 0, waitS = 0, blockedS = 0;
  };

  /// One finished step: seconds spent in each state and the step's end time (run clock).
  void addStep(double endS, double computeS, double waitS, double blockedS);
  void addLoss(double loss, double accuracy);

  Fractions window() const;  ///< last ~1 s
  Fractions total() const;   ///< whole run
  double windowStepsPerSec() const;
  double meanComputeSeconds() const;
  double recentLoss() const;      ///< mean of the last 50
  double recentAccuracy() const;  ///< mean of the last 50
  int64_t steps() const { return m_steps; }
  Totals totals() const { return {m_steps, m_compute, m_wait, m_blocked}; }
  /// A resumed run: the steps and seconds before its checkpoint count as this run's.
  void continueFrom(const Totals& t);

 private:
  struct Entry {
    double end, compute, wait, blocked;
  };
  std::deque<Entry> m_window;
  double m_compute = 0, m_wait = 0, m_blocked = 0;
  int64_t m_steps = 0;
  std::deque<double> m_losses, m_accuracies;
};

}  // namespace stagewise::engine
