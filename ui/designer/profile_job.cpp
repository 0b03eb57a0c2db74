#include "designer/profile_job.h"

namespace stagewise::ui {

ProfileJob::ProfileJob(Work work, QObject* parent) : QObject(parent), m_work(std::move(work)) {}

ProfileJob::~ProfileJob() {
  m_cancel = true;
  if (m_thread.joinable()) m_thread.join();
}

void ProfileJob::start() {
  if (m_thread.joinable()) return;
  m_thread = std::thread([this] {
    // Signals are handed to this object's (the UI) thread; the destructor joins first, so
    // `this` outlives every queued call it could still receive.
    try {
      m_work([this](int done, int total) {
        QMetaObject::invokeMethod(
            this, [this, done, total] { Q_EMIT progress(done, total); }, Qt::QueuedConnection);
        return !m_cancel.load();
      });
      QMetaObject::invokeMethod(
          this, [this] { Q_EMIT finished(); }, Qt::QueuedConnection);
    } catch (const std::exception& e) {
      const QString message = QString::fromStdString(e.what());
      QMetaObject::invokeMethod(
          this, [this, message] { Q_EMIT failed(message); }, Qt::QueuedConnection);
    }
  });
}

}  // namespace stagewise::ui
