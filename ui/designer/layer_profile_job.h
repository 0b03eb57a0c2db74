#pragma once
// Measuring per-layer costs in the background for "balance by measured time": the engine
// times each layer's forward and backward pass, which takes seconds, so it runs on its own
// thread, reports progress and can be cancelled.

#include <QObject>
#include <atomic>
#include <thread>

#include "common/services.h"

namespace stagewise::ui {

class LayerProfileJob : public QObject {
  Q_OBJECT
 public:
  LayerProfileJob(LayerProfiler profiler, engine::ExperimentSpec spec, QObject* parent = nullptr);
  ~LayerProfileJob() override;  // cancels and joins

  void start();
  void cancel() { m_cancel = true; }

 Q_SIGNALS:
  void progress(int done, int total);
  void finished(const std::vector<double>& seconds);
  void failed(const QString& message);

 private:
  LayerProfiler m_profiler;
  engine::ExperimentSpec m_spec;
  std::atomic<bool> m_cancel{false};
  std::thread m_thread;
};

}  // namespace stagewise::ui
