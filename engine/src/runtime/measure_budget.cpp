#include "runtime/measure_budget.h"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <ctime>

namespace stagewise::engine {

namespace {

/// The points of one kind measured whatever the budget: `minPoints` - 1 of its schedule spread
/// evenly over the run (the last point is the measurement at the end), or all of them when the
/// schedule has no more.
std::set<int64_t> keptPoints(int64_t interval, int64_t total, int minPoints) {
  std::set<int64_t> kept;
  if (interval <= 0 || total <= 1) return kept;
  const int64_t count = (total - 1) / interval;  // points j * interval - 1 < total - 1
  const int64_t want = std::max(0, minPoints - 1);
  if (count <= want) {
    for (int64_t j = 1; j <= count; ++j) kept.insert(j * interval - 1);
    return kept;
  }
  for (int64_t i = 1; i <= want; ++i) {
    // The schedule's point nearest to i / minPoints of the run.
    const double at = static_cast<double>(total) * static_cast<double>(i) / minPoints;
    int64_t j = std::llround(at / static_cast<double>(interval));
    j = std::clamp<int64_t>(j, 1, count);
    kept.insert(j * interval - 1);
  }
  return kept;
}

}  // namespace

MeasureBudget::MeasureBudget(double budget, int64_t totalSteps, int64_t probeInterval,
                             int64_t evalInterval, int minPoints,
                             const std::set<int64_t>& forcedEvals)
    : m_budget(budget),
      m_totalSteps(totalSteps),
      m_probeInterval(probeInterval),
      m_evalInterval(evalInterval),
      m_keptProbes(keptPoints(probeInterval, totalSteps, minPoints)),
      m_keptEvals(keptPoints(evalInterval, totalSteps, minPoints)) {
  for (int64_t s : forcedEvals)
    if (s >= 0 && s + 1 < totalSteps) m_forcedEvals.insert(s);
}

int MeasureBudget::candidates(int64_t step) const {
  if (step + 1 >= m_totalSteps) return 0;
  int kinds = 0;
  if (m_probeInterval > 0 && (step + 1) % m_probeInterval == 0) kinds |= kProbe;
  if (m_evalInterval > 0 && (step + 1) % m_evalInterval == 0) kinds |= kEval;
  if (forced(step)) kinds |= kEval;
  return kinds;
}

bool MeasureBudget::kept(int kind, int64_t step) const {
  if (kind == kEval && forced(step)) return true;
  return (kind == kProbe ? m_keptProbes : m_keptEvals).count(step) > 0;
}

bool MeasureBudget::fits(double estimate, double trainingCpuS) const {
  const double spent = m_spent + estimate;
  return spent <= m_budget * (trainingCpuS + spent);
}

int MeasureBudget::decide(int64_t step, double trainingCpuS) {
  const int asked = candidates(step);
  if (asked == 0) return 0;
  std::lock_guard lock(m_mutex);
  int take = 0;
  double reserve = 0;
  for (int kind : {kProbe, kEval}) {
    if (!(asked & kind)) continue;
    const double cost = kind == kProbe ? m_probeCost : m_evalCost;
    // Unknown until the first kept point measured it: only kept points go before that.
    const bool yes =
        m_budget <= 0 || kept(kind, step) || (cost >= 0 && fits(reserve + cost, trainingCpuS));
    if (yes) {
      take |= kind;
      reserve += std::max(0.0, cost);
      ++(kind == kProbe ? m_counts.probes : m_counts.evals);
    } else {
      ++(kind == kProbe ? m_counts.thinnedProbes : m_counts.thinnedEvals);
    }
  }
  if (take) {
    m_spent += reserve;
    m_reserved[step] = {reserve, take};
  }
  return take;
}

void MeasureBudget::charge(int64_t step, double probeS, double evalS) {
  std::lock_guard lock(m_mutex);
  auto it = m_reserved.find(step);
  if (it != m_reserved.end()) {
    m_spent -= it->second.cost;
    m_reserved.erase(it);
  }
  m_spent += std::max(0.0, probeS) + std::max(0.0, evalS);
  m_charged += std::max(0.0, probeS) + std::max(0.0, evalS);
  if (probeS > 0) m_probeCost = probeS;
  if (evalS > 0) m_evalCost = evalS;
}

void MeasureBudget::chargeCopy(double cpuS) {
  std::lock_guard lock(m_mutex);
  m_spent += std::max(0.0, cpuS);
  m_charged += std::max(0.0, cpuS);
}

void MeasureBudget::release(int64_t step) {
  std::lock_guard lock(m_mutex);
  auto it = m_reserved.find(step);
  if (it == m_reserved.end()) return;
  m_spent -= it->second.cost;
  if (it->second.kinds & kProbe) --m_counts.probes;
  if (it->second.kinds & kEval) --m_counts.evals;
  m_reserved.erase(it);
}

double MeasureBudget::spentS() const {
  std::lock_guard lock(m_mutex);
  return m_spent;
}

double MeasureBudget::trainingCpuS() const {
  return std::max(0.0, processCpuSeconds() - m_origin - chargedS());
}

double MeasureBudget::chargedS() const {
  std::lock_guard lock(m_mutex);
  return m_charged;
}

double MeasureBudget::share(double trainingCpuS) const {
  std::lock_guard lock(m_mutex);
  const double total = trainingCpuS + m_spent;
  return total > 0 ? m_spent / total : 0;
}

MeasureBudget::Counts MeasureBudget::counts() const {
  std::lock_guard lock(m_mutex);
  return m_counts;
}

double threadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double processCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

}  // namespace stagewise::engine
