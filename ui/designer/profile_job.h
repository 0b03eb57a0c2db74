#pragma once
// Measuring on the engine in the background: the layer times for "balance by measured time", the
// method profile for the estimate's samples/s. Each takes seconds, so it runs on its own thread,
// reports progress and can be cancelled; the result stays in the work's own capture.

#include <QObject>
#include <atomic>
#include <functional>
#include <thread>

namespace stagewise::ui {

class ProfileJob : public QObject {
  Q_OBJECT
 public:
  /// `work(progress)` measures; `progress(done, total)` returns false once cancelled. It may
  /// throw: failed() carries the message.
  using Work = std::function<void(const std::function<bool(int, int)>& progress)>;
  explicit ProfileJob(Work work, QObject* parent = nullptr);
  ~ProfileJob() override;  // cancels and joins

  void start();
  void cancel() { m_cancel = true; }

 Q_SIGNALS:
  void progress(int done, int total);
  void finished();
  void failed(const QString& message);

 private:
  Work m_work;
  std::atomic<bool> m_cancel{false};
  std::thread m_thread;
};

}  // namespace stagewise::ui
