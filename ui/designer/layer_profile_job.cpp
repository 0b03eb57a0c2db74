#include "designer/layer_profile_job.h"

namespace stagewise::ui {

LayerProfileJob::LayerProfileJob(LayerProfiler profiler, engine::ExperimentSpec spec,
                                 QObject* parent)
    : QObject(parent), m_profiler(std::move(profiler)), m_spec(std::move(spec)) {}

LayerProfileJob::~LayerProfileJob() {
  m_cancel = true;
  if (m_thread.joinable()) m_thread.join();
}

void LayerProfileJob::start() {
  if (m_thread.joinable()) return;
  m_thread = std::thread([this] {
    // Results are handed to this object's (the UI) thread; the destructor joins first, so
    // `this` outlives every queued call it could still receive.
    try {
      auto seconds = m_profiler(m_spec, [this](int done, int total) {
        QMetaObject::invokeMethod(
            this, [this, done, total] { Q_EMIT progress(done, total); }, Qt::QueuedConnection);
        return !m_cancel.load();
      });
      QMetaObject::invokeMethod(
          this, [this, seconds] { Q_EMIT finished(seconds); }, Qt::QueuedConnection);
    } catch (const std::exception& e) {
      const QString message = QString::fromStdString(e.what());
      QMetaObject::invokeMethod(
          this, [this, message] { Q_EMIT failed(message); }, Qt::QueuedConnection);
    }
  });
}

}  // namespace stagewise::ui
