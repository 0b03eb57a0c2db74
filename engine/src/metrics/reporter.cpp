#include "metrics/reporter.h"

#include <pthread.h>

namespace stagewise::engine {

Reporter::Reporter(RunObserver* observer, std::chrono::milliseconds interval)
    : m_observer(observer), m_interval(interval) {}

Reporter::~Reporter() {
  {
    std::lock_guard lock(m_mutex);
    m_done = true;
  }
  m_cv.notify_all();
  if (m_thread.joinable()) m_thread.join();
}

void Reporter::start(const RunInfo& info) {
  if (m_observer) m_observer->onStart(info);
  m_thread = std::thread([this] {
    pthread_setname_np(pthread_self(), "sw-reporter");  // as top -H and perf show it
    loop();
  });
}

void Reporter::add(MetricPoint point) {
  std::lock_guard lock(m_mutex);
  m_points.push_back(std::move(point));
}

void Reporter::add(std::vector<MetricPoint>& points) {
  std::lock_guard lock(m_mutex);
  if (m_points.empty()) {
    m_points.swap(points);
  } else {
    m_points.insert(m_points.end(), std::make_move_iterator(points.begin()),
                    std::make_move_iterator(points.end()));
  }
  points.clear();
}

void Reporter::addSpan(const StepSpan& span) {
  std::lock_guard lock(m_mutex);
  m_spans.push_back(span);
}

void Reporter::event(RunEvent event) {
  {
    std::lock_guard lock(m_mutex);
    m_events.push_back(std::move(event));
  }
  m_cv.notify_all();  // events go out promptly
}

void Reporter::flush() {
  std::vector<MetricPoint> points;
  std::vector<StepSpan> spans;
  std::vector<RunEvent> events;
  {
    std::lock_guard lock(m_mutex);
    points.swap(m_points);
    spans.swap(m_spans);
    events.swap(m_events);
  }
  if (!m_observer) return;
  std::lock_guard deliver(m_deliverMutex);
  if (!points.empty()) m_observer->onMetrics(points);
  if (!spans.empty()) m_observer->onSpans(spans);
  for (const auto& e : events) m_observer->onEvent(e);
}

void Reporter::loop() {
  std::unique_lock lock(m_mutex);
  while (!m_done) {
    m_cv.wait_for(lock, m_interval, [&] { return m_done || !m_events.empty(); });
    if (m_done) break;
    lock.unlock();
    flush();
    lock.lock();
  }
}

void Reporter::finish(const RunSummary& summary) {
  {
    std::lock_guard lock(m_mutex);
    m_done = true;
  }
  m_cv.notify_all();
  if (m_thread.joinable()) m_thread.join();
  flush();
  if (m_observer) m_observer->onFinish(summary);
}

}  // namespace stagewise::engine
