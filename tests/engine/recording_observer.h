#pragma once
// Test helper: keeps everything a run reports.
#include <map>
#include <mutex>

#include "stagewise/engine/metrics.h"

struct RecordingObserver : stagewise::engine::RunObserver {
  std::mutex mutex;
  stagewise::engine::RunInfo info;
  std::vector<stagewise::engine::MetricPoint> points;
  std::vector<stagewise::engine::RunEvent> events;
  size_t spans = 0;
  std::vector<stagewise::engine::StepSpan> spanList;
  bool finished = false;

  void onStart(const stagewise::engine::RunInfo& i) override { info = i; }
  void onMetrics(const std::vector<stagewise::engine::MetricPoint>& p) override {
    std::lock_guard lock(mutex);
    points.insert(points.end(), p.begin(), p.end());
  }
  void onSpans(const std::vector<stagewise::engine::StepSpan>& s) override {
    std::lock_guard lock(mutex);
    spans += s.size();
    spanList.insert(spanList.end(), s.begin(), s.end());
  }
  void onEvent(const stagewise::engine::RunEvent& e) override {
    std::lock_guard lock(mutex);
    events.push_back(e);
  }
  void onFinish(const stagewise::engine::RunSummary&) override { finished = true; }

  /// Values of one series, ordered by step: series(name, stage)[step].
  std::vector<double> series(const std::string& name, int stage, int layer = -1) {
    std::lock_guard lock(mutex);
    std::map<int64_t, double> byStep;
    for (const auto& p : points)
      if (p.name == name && p.stage == stage && p.layer == layer) byStep[p.step] = p.value;
    std::vector<double> out;
    for (auto& [step, v] : byStep) out.push_back(v);
    return out;
  }
};
