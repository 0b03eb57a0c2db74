#pragma once
// Runs store queries and edits on one background thread (with that thread's own RunReader),
// and hands results back to the UI thread: the GUI never waits for SQLite.

#include <QObject>
#include <QPointer>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"

namespace stagewise::ui {

class StoreExecutor {
 public:
  explicit StoreExecutor(std::shared_ptr<storage::RunStore> store);
  ~StoreExecutor();
  StoreExecutor(const StoreExecutor&) = delete;
  StoreExecutor& operator=(const StoreExecutor&) = delete;

  storage::RunStore& store() { return *m_store; }
  QString path() const { return QString::fromStdString(m_store->path()); }

  /// Runs `job` on the store thread; then `done(result)` on `context`'s thread, unless the
  /// context is gone by then. A job that throws calls `failed(message)` instead.
  template <typename R>
  void post(QObject* context, std::function<R(storage::RunReader&, storage::RunStore&)> job,
            std::function<void(R)> done, std::function<void(const QString&)> failed = nullptr) {
    QPointer<QObject> guard(context);
    enqueue([this, guard, job = std::move(job), done = std::move(done),
             failed = std::move(failed)](storage::RunReader& reader) {
      try {
        auto result = std::make_shared<R>(job(reader, *m_store));
        if (guard)
          QMetaObject::invokeMethod(
              guard.data(),
              [guard, done, result] {
                if (guard && done) done(std::move(*result));
              },
              Qt::QueuedConnection);
      } catch (const std::exception& e) {
        const QString message = QString::fromStdString(e.what());
        if (guard && failed)
          QMetaObject::invokeMethod(
              guard.data(),
              [guard, failed, message] {
                if (guard) failed(message);
              },
              Qt::QueuedConnection);
      }
    });
  }

  /// Waits until every job posted so far has run (tests).
  void waitIdle();

 private:
  void enqueue(std::function<void(storage::RunReader&)> job);
  void loop();

  std::shared_ptr<storage::RunStore> m_store;
  std::mutex m_mutex;
  std::condition_variable m_cv;
  std::condition_variable m_idleCv;
  std::deque<std::function<void(storage::RunReader&)>> m_jobs;
  bool m_busy = false;
  bool m_quit = false;
  std::thread m_thread;
};

}  // namespace stagewise::ui
