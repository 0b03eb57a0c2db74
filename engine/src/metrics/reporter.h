#pragma once
// Hands metric points, spans and events from compute threads to the observer. Producers hold a
// lock only for a push_back; one delivery thread calls the observer every `interval`, so a slow
// observer never stalls training. Torch-free (TSan-tested).

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "stagewise/engine/metrics.h"

namespace stagewise::engine {

class Reporter {
 public:
  explicit Reporter(RunObserver* observer,
                    std::chrono::milliseconds interval = std::chrono::milliseconds(100));
  ~Reporter();
  Reporter(const Reporter&) = delete;
  Reporter& operator=(const Reporter&) = delete;

  /// Delivers onStart, then starts the delivery thread.
  void start(const RunInfo& info);
  void add(MetricPoint point);
  void add(std::vector<MetricPoint>& points);  ///< moves the points out
  void addSpan(const StepSpan& span);
  void event(RunEvent event);
  /// Flushes everything, delivers onFinish and joins the delivery thread.
  void finish(const RunSummary& summary);

 private:
  void loop();
  void flush();

  RunObserver* m_observer;
  std::chrono::milliseconds m_interval;
  std::mutex m_mutex;
  std::condition_variable m_cv;
  std::vector<MetricPoint> m_points;
  std::vector<StepSpan> m_spans;
  std::vector<RunEvent> m_events;
  bool m_done = false;
  std::mutex m_deliverMutex;  // serialises observer calls between the loop and finish()
  std::thread m_thread;
};

}  // namespace stagewise::engine
