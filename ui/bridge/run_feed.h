#pragma once
// The hand-over point between engine threads and the UI thread. Observers running on the
// engine's reporter thread append under a short lock; the UI thread takes everything at once.

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "stagewise/engine/metrics.h"

namespace stagewise::ui {

/// What arrived for one phase since the last drain (a run plan "both" has two phases).
struct PhaseBatch {
  int phase = 0;
  std::optional<engine::RunInfo> info;  ///< the phase started
  std::vector<engine::MetricPoint> points;
  std::vector<engine::StepSpan> spans;
  std::vector<engine::RunEvent> events;
  std::optional<engine::RunSummary> summary;  ///< the phase finished
  std::string startError;                     ///< the run could not be created
};

struct FeedDrain {
  std::vector<PhaseBatch> batches;  ///< in arrival order
  bool planDone = false;            ///< the worker has finished every phase
};

class RunFeed {
 public:
  void start(int phase, const engine::RunInfo& info);
  void points(int phase, const std::vector<engine::MetricPoint>& points);
  void spans(int phase, const std::vector<engine::StepSpan>& spans);
  void event(int phase, const engine::RunEvent& event);
  void finish(int phase, const engine::RunSummary& summary);
  void startFailed(int phase, const std::string& message);
  void planDone();

  FeedDrain take();
  void reset();

 private:
  PhaseBatch& batchFor(int phase);  // call with the lock held

  std::mutex m_mutex;
  FeedDrain m_pending;
};

/// Forwards one phase's callbacks into a RunFeed.
class FeedObserver : public engine::RunObserver {
 public:
  FeedObserver(RunFeed* feed, int phase) : m_feed(feed), m_phase(phase) {}
  void onStart(const engine::RunInfo& info) override { m_feed->start(m_phase, info); }
  void onMetrics(const std::vector<engine::MetricPoint>& p) override { m_feed->points(m_phase, p); }
  void onSpans(const std::vector<engine::StepSpan>& s) override { m_feed->spans(m_phase, s); }
  void onEvent(const engine::RunEvent& e) override { m_feed->event(m_phase, e); }
  void onFinish(const engine::RunSummary& s) override { m_feed->finish(m_phase, s); }

 private:
  RunFeed* m_feed;
  int m_phase;
};

/// Sends every callback to several observers in turn (the UI feed and the recorder). A
/// throwing observer does not keep the others from their data.
class FanoutObserver : public engine::RunObserver {
 public:
  explicit FanoutObserver(std::vector<engine::RunObserver*> observers);
  void onStart(const engine::RunInfo& info) override;
  void onMetrics(const std::vector<engine::MetricPoint>& points) override;
  void onSpans(const std::vector<engine::StepSpan>& spans) override;
  void onEvent(const engine::RunEvent& event) override;
  void onFinish(const engine::RunSummary& summary) override;
  /// The first error an observer threw, if any (e.g. the store could not be written).
  std::string firstError() const;

 private:
  template <typename F>
  void each(F&& call);
  std::vector<engine::RunObserver*> m_observers;
  mutable std::mutex m_mutex;
  std::string m_error;
};

}  // namespace stagewise::ui
