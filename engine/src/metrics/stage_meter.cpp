#include "metrics/stage_meter.h"

#include <cmath>
#include <limits>
#include <numeric>

namespace stagewise::engine {

namespace {
constexpr double kWindowS = 1.0;
constexpr size_t kRecent = 50;

StageMeter::Fractions normalise(double c, double w, double b) {
  const double sum = c + w + b;
  if (sum <= 0) return {};
  return {c / sum, w / sum, b / sum};
}

double mean(const std::deque<double>& d) {
  if (d.empty()) return std::numeric_limits<double>::quiet_NaN();
  return std::accumulate(d.begin(), d.end(), 0.0) / static_cast<double>(d.size());
}
}  // namespace

void StageMeter::addStep(double endS, double computeS, double waitS, double blockedS) {
  m_window.push_back({endS, computeS, waitS, blockedS});
  while (m_window.size() > 1 && m_window.front().end < endS - kWindowS) m_window.pop_front();
  m_compute += computeS;
  m_wait += waitS;
  m_blocked += blockedS;
  ++m_steps;
}

void StageMeter::continueFrom(const Totals& t) {
  m_steps = t.steps;
  m_compute = t.computeS;
  m_wait = t.waitS;
  m_blocked = t.blockedS;
}

void StageMeter::addLoss(double loss, double accuracy) {
  m_losses.push_back(loss);
  m_accuracies.push_back(accuracy);
  if (m_losses.size() > kRecent) m_losses.pop_front(), m_accuracies.pop_front();
}

StageMeter::Fractions StageMeter::window() const {
  double c = 0, w = 0, b = 0;
  for (const auto& e : m_window) c += e.compute, w += e.wait, b += e.blocked;
  return normalise(c, w, b);
}

StageMeter::Fractions StageMeter::total() const {
  return normalise(m_compute, m_wait, m_blocked);
}

double StageMeter::windowStepsPerSec() const {
  if (m_window.empty()) return 0;
  double span = 0;
  for (const auto& e : m_window) span += e.compute + e.wait + e.blocked;
  return span > 0 ? static_cast<double>(m_window.size()) / span : 0;
}

double StageMeter::meanComputeSeconds() const {
  return m_steps > 0 ? m_compute / static_cast<double>(m_steps) : 0;
}

double StageMeter::recentLoss() const {
  return mean(m_losses);
}
double StageMeter::recentAccuracy() const {
  return mean(m_accuracies);
}

}  // namespace stagewise::engine
