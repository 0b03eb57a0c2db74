#include "runs/store_executor.h"

namespace stagewise::ui {

StoreExecutor::StoreExecutor(std::shared_ptr<storage::RunStore> store)
    : m_store(std::move(store)), m_thread([this] { loop(); }) {}

StoreExecutor::~StoreExecutor() {
  {
    std::lock_guard lock(m_mutex);
    m_quit = true;
    m_jobs.clear();
  }
  m_cv.notify_all();
  if (m_thread.joinable()) m_thread.join();
}

void StoreExecutor::enqueue(std::function<void(storage::RunReader&)> job) {
  {
    std::lock_guard lock(m_mutex);
    m_jobs.push_back(std::move(job));
  }
  m_cv.notify_one();
}

void StoreExecutor::waitIdle() {
  std::unique_lock lock(m_mutex);
  m_idleCv.wait(lock, [&] { return m_jobs.empty() && !m_busy; });
}

void StoreExecutor::loop() {
  std::unique_ptr<storage::RunReader> reader;
  for (;;) {
    std::function<void(storage::RunReader&)> job;
    {
      std::unique_lock lock(m_mutex);
      m_cv.wait(lock, [&] { return m_quit || !m_jobs.empty(); });
      if (m_quit) return;
      job = std::move(m_jobs.front());
      m_jobs.pop_front();
      m_busy = true;
    }
    try {
      if (!reader) reader = std::make_unique<storage::RunReader>(*m_store);
      job(*reader);
    } catch (...) {
      // Jobs report their own errors; a reader that cannot open is retried with the next job.
    }
    {
      std::lock_guard lock(m_mutex);
      m_busy = false;
    }
    m_idleCv.notify_all();
  }
}

}  // namespace stagewise::ui
