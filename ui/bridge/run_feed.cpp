#include "bridge/run_feed.h"

#include <algorithm>

namespace stagewise::ui {

PhaseBatch& RunFeed::batchFor(int phase) {
  auto& batches = m_pending.batches;
  if (batches.empty() || batches.back().phase != phase) {
    batches.emplace_back();
    batches.back().phase = phase;
  }
  return batches.back();
}

void RunFeed::start(int phase, const engine::RunInfo& info) {
  std::lock_guard lock(m_mutex);
  batchFor(phase).info = info;
}

void RunFeed::points(int phase, const std::vector<engine::MetricPoint>& points) {
  std::lock_guard lock(m_mutex);
  auto& out = batchFor(phase).points;
  out.insert(out.end(), points.begin(), points.end());
}

void RunFeed::spans(int phase, const std::vector<engine::StepSpan>& spans) {
  std::lock_guard lock(m_mutex);
  auto& out = batchFor(phase).spans;
  out.insert(out.end(), spans.begin(), spans.end());
}

void RunFeed::event(int phase, const engine::RunEvent& event) {
  std::lock_guard lock(m_mutex);
  batchFor(phase).events.push_back(event);
}

void RunFeed::finish(int phase, const engine::RunSummary& summary) {
  std::lock_guard lock(m_mutex);
  batchFor(phase).summary = summary;
}

void RunFeed::startFailed(int phase, const std::string& message) {
  std::lock_guard lock(m_mutex);
  batchFor(phase).startError = message;
}

void RunFeed::planDone() {
  std::lock_guard lock(m_mutex);
  m_pending.planDone = true;
}

FeedDrain RunFeed::take() {
  FeedDrain out;
  std::lock_guard lock(m_mutex);
  std::swap(out, m_pending);
  return out;
}

void RunFeed::reset() {
  std::lock_guard lock(m_mutex);
  m_pending = {};
}

FanoutObserver::FanoutObserver(std::vector<engine::RunObserver*> observers) {
  for (auto* o : observers)
    if (o) m_observers.push_back(o);
}

template <typename F>
void FanoutObserver::each(F&& call) {
  for (auto* o : m_observers) {
    try {
      call(o);
    } catch (const std::exception& e) {
      std::lock_guard lock(m_mutex);
      if (m_error.empty()) m_error = e.what();
    } catch (...) {
      std::lock_guard lock(m_mutex);
      if (m_error.empty()) m_error = "unknown error in a run observer";
    }
  }
}

void FanoutObserver::onStart(const engine::RunInfo& info) {
  each([&](auto* o) { o->onStart(info); });
}
void FanoutObserver::onMetrics(const std::vector<engine::MetricPoint>& points) {
  each([&](auto* o) { o->onMetrics(points); });
}
void FanoutObserver::onSpans(const std::vector<engine::StepSpan>& spans) {
  each([&](auto* o) { o->onSpans(spans); });
}
void FanoutObserver::onEvent(const engine::RunEvent& event) {
  each([&](auto* o) { o->onEvent(event); });
}
void FanoutObserver::onFinish(const engine::RunSummary& summary) {
  each([&](auto* o) { o->onFinish(summary); });
}

std::string FanoutObserver::firstError() const {
  std::lock_guard lock(m_mutex);
  return m_error;
}

}  // namespace stagewise::ui
