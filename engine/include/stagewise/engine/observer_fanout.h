#pragma once
// Forwards every report of a run to several observers (e.g. the run store and a progress line).

#include <vector>

#include "stagewise/engine/metrics.h"

namespace stagewise::engine {

class ObserverFanout final : public RunObserver {
 public:
  ObserverFanout() = default;
  explicit ObserverFanout(std::vector<RunObserver*> targets) : m_targets(std::move(targets)) {}
  void add(RunObserver* observer) {
    if (observer) m_targets.push_back(observer);
  }
  void onStart(const RunInfo& info) override {
    for (auto* t : m_targets) t->onStart(info);
  }
  void onMetrics(const std::vector<MetricPoint>& points) override {
    for (auto* t : m_targets) t->onMetrics(points);
  }
  void onSpans(const std::vector<StepSpan>& spans) override {
    for (auto* t : m_targets) t->onSpans(spans);
  }
  void onEvent(const RunEvent& event) override {
    for (auto* t : m_targets) t->onEvent(event);
  }
  void onFinish(const RunSummary& summary) override {
    for (auto* t : m_targets) t->onFinish(summary);
  }

 private:
  std::vector<RunObserver*> m_targets;
};

}  // namespace stagewise::engine
