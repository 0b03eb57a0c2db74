#pragma once
// A bounded FIFO between two stages. Capacity is the allowed staleness. Every blocking call wakes
// on close(), so stop and failure never leave a thread waiting. Torch-free (TSan-tested).

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>

namespace stagewise::engine {

template <typename T>
class BoundedQueue {
 public:
  explicit BoundedQueue(size_t capacity) : m_capacity(capacity < 1 ? 1 : capacity) {}

  /// Blocks while full. False if the queue was closed (the item is dropped).
  bool push(T item) {
    std::unique_lock lock(m_mutex);
    m_notFull.wait(lock, [&] { return m_closed || m_items.size() < m_capacity; });
    if (m_closed) return false;
    m_items.push_back(std::move(item));
    lock.unlock();
    m_notEmpty.notify_one();
    return true;
  }

  /// Blocks while empty. Empty optional once closed and drained (or closed with `drop`).
  std::optional<T> pop() {
    std::unique_lock lock(m_mutex);
    m_notEmpty.wait(lock, [&] { return m_closed || !m_items.empty(); });
    if (m_items.empty() || m_dropOnClose) return std::nullopt;
    T item = std::move(m_items.front());
    m_items.pop_front();
    lock.unlock();
    m_notFull.notify_one();
    return item;
  }

  /// Wakes every waiter. `drop`: pending items are discarded (stop); else consumers drain them.
  void close(bool drop = true) {
    {
      std::lock_guard lock(m_mutex);
      m_closed = true;
      m_dropOnClose = m_dropOnClose || drop;
      if (drop) m_items.clear();
    }
    m_notEmpty.notify_all();
    m_notFull.notify_all();
  }

  size_t size() const {
    std::lock_guard lock(m_mutex);
    return m_items.size();
  }
  size_t capacity() const { return m_capacity; }

 private:
  mutable std::mutex m_mutex;
  std::condition_variable m_notEmpty;
  std::condition_variable m_notFull;
  std::deque<T> m_items;
  size_t m_capacity;
  bool m_closed = false;
  bool m_dropOnClose = false;
};

}  // namespace stagewise::engine
