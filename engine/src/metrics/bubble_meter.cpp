// Measured and planned bubbles: see bubble_meter.h.

#include "metrics/bubble_meter.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace stagewise::engine {

void BubbleMeter::addStep(const std::vector<StepSpan>& spans) {
  std::vector<StepSpan> passes;
  int micro = 0;
  for (const auto& s : spans) {
    if (s.micro < 0) continue;
    passes.push_back(s);
    micro = std::max(micro, s.micro + 1);
    Sums& sum = m_sums[s.stage];
    const double d = std::max(0.0, s.endS - s.startS);
    if (s.kind == SpanKind::Forward) {
      sum.f += d;
      ++sum.nf;
    } else if (s.kind == SpanKind::Backward) {
      sum.b += d;
      ++sum.nb;
    } else if (s.kind == SpanKind::Weight) {
      sum.w += d;
      ++sum.nw;
    } else if (s.kind == SpanKind::Recompute) {
      sum.r += d;
      ++sum.nr;
    }
  }
  const double bubble = schedule::measuredBubble(passes);
  if (std::isnan(bubble)) return;
  m_micro = micro;
  m_bubbleSum += bubble;
  ++m_steps;
  m_recent.push_back(bubble);
  if (m_recent.size() > kRecent) m_recent.pop_front();
}

void WorkerBubble::add(double bubble) {
  if (std::isnan(bubble)) return;
  std::lock_guard lock(m_mutex);
  m_sum += bubble;
  ++m_steps;
  m_recent.push_back(bubble);
  if (m_recent.size() > BubbleMeter::kRecent) m_recent.pop_front();
}

double WorkerBubble::mean() const {
  std::lock_guard lock(m_mutex);
  return m_steps > 0 ? m_sum / static_cast<double>(m_steps) : kNoValue;
}

double WorkerBubble::recent() const {
  std::lock_guard lock(m_mutex);
  if (m_recent.empty()) return kNoValue;
  double sum = 0;
  for (double b : m_recent) sum += b;
  return sum / static_cast<double>(m_recent.size());
}

double BubbleMeter::measured() const {
  if (m_worker) return m_worker->mean();
  return m_steps > 0 ? m_bubbleSum / static_cast<double>(m_steps) : kNoValue;
}

double BubbleMeter::recentMeasured() const {
  if (m_worker) return m_worker->recent();
  if (m_recent.empty()) return kNoValue;
  double sum = 0;
  for (double b : m_recent) sum += b;
  return sum / static_cast<double>(m_recent.size());
}

std::map<int, schedule::PassTimes> BubbleMeter::passTimes() const {
  auto mean = [](double sum, int64_t n) { return n > 0 ? sum / static_cast<double>(n) : 0.0; };
  std::map<int, schedule::PassTimes> out;
  for (const auto& [stage, s] : m_sums)
    out[stage] = {mean(s.f, s.nf), mean(s.b, s.nb), mean(s.w, s.nw), mean(s.r, s.nr)};
  return out;
}

BubbleBoard::BubbleBoard(std::string schedule, int chunks, int stages)
    : m_schedule(std::move(schedule)),
      m_chunks(chunks),
      m_times(static_cast<size_t>(std::max(0, stages))),
      m_stepSeconds(static_cast<size_t>(std::max(0, stages)), 0),
      m_posted(static_cast<size_t>(std::max(0, stages)), false) {}

void BubbleBoard::post(int stage, const schedule::PassTimes& times, int micro) {
  std::lock_guard lock(m_mutex);
  if (stage < 0 || stage >= static_cast<int>(m_times.size())) return;
  m_times[static_cast<size_t>(stage)] = times;
  m_posted[static_cast<size_t>(stage)] = true;
  m_micro = std::max(m_micro, micro);
}

void BubbleBoard::postStepSeconds(int stage, double seconds) {
  std::lock_guard lock(m_mutex);
  if (stage < 0 || stage >= static_cast<int>(m_stepSeconds.size())) return;
  m_stepSeconds[static_cast<size_t>(stage)] = seconds;
  m_posted[static_cast<size_t>(stage)] = true;
}

void BubbleBoard::post(const Entry& e) {
  std::lock_guard lock(m_mutex);
  if (e.stage < 0 || e.stage >= static_cast<int>(m_times.size())) return;
  m_times[static_cast<size_t>(e.stage)] = e.times;
  m_stepSeconds[static_cast<size_t>(e.stage)] = e.stepSeconds;
  m_posted[static_cast<size_t>(e.stage)] = true;
  m_micro = std::max(m_micro, e.micro);
}

std::vector<BubbleBoard::Entry> BubbleBoard::entries() const {
  std::lock_guard lock(m_mutex);
  std::vector<Entry> out;
  for (size_t k = 0; k < m_posted.size(); ++k)
    if (m_posted[k]) out.push_back({static_cast<int>(k), m_times[k], m_stepSeconds[k], m_micro});
  return out;
}

std::vector<double> BubbleBoard::planned() const {
  std::vector<schedule::PassTimes> times;
  std::vector<double> stepSeconds;
  int micro = 0;
  {
    std::lock_guard lock(m_mutex);
    if (std::find(m_posted.begin(), m_posted.end(), false) != m_posted.end())
      return std::vector<double>(m_posted.size(), kNoValue);
    times = m_times;
    stepSeconds = m_stepSeconds;
    micro = m_micro;
  }
  const int stages = static_cast<int>(times.size());
  std::vector<double> out(static_cast<size_t>(stages), kNoValue);
  if (m_schedule.empty()) {
    const double slowest = *std::max_element(stepSeconds.begin(), stepSeconds.end());
    if (slowest > 0)
      for (int k = 0; k < stages; ++k) out[k] = 1 - stepSeconds[k] / slowest;
    return out;
  }
  try {
    const schedule::Plan plan = schedule::planStep(m_schedule, std::max(1, micro), m_chunks, times);
    for (int k = 0; k < stages; ++k)
      out[k] = plan.workerBubble[static_cast<size_t>(schedule::workerOf(k, stages, m_chunks))];
  } catch (const std::invalid_argument&) {
    // A schedule the plan cannot order (refused before the run in practice): no plan.
  }
  return out;
}

std::unique_ptr<BubbleBoard> makeBubbleBoard(const ExperimentSpec& spec, int stages) {
  if (spec.mode == Mode::Backprop) return nullptr;
  return std::make_unique<BubbleBoard>(spec.mode == Mode::Pipeline ? spec.pipeline.schedule : "",
                                       spec.pipeline.chunks, stages);
}

}  // namespace stagewise::engine
