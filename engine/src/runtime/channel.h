#pragma once
#include <torch/torch.h>  // free here: the engine precompiles it
// What travels between stages, and the channel interface it travels through. The stage workers
// do not know which channel they use: an in-process bounded queue, or c10d send/recv.

#include <optional>

#include "runtime/bounded_queue.h"

namespace stagewise::engine {

/// One batch on its way downstream: detached activations (or inputs) and labels. In pipeline
/// mode it is micro-batch `micro` of the step's `micros`, and on the way back `x` is the gradient
/// of the boundary activation (`y` then empty).
struct Batch {
  int64_t step = 0;
  torch::Tensor x;
  torch::Tensor y;
  int micro = 0;
  int micros = 1;
  int64_t rows =
      0;  ///< pipeline mode: samples in the whole step's batch (weights each micro-batch)
};

class Channel {
 public:
  virtual ~Channel() = default;
  /// Blocks while the receiver is full. False once the channel is closed.
  virtual bool send(Batch batch) = 0;
  /// Blocks until a batch arrives. Empty once closed.
  virtual std::optional<Batch> recv() = 0;
  virtual void close(bool drop) = 0;
  virtual size_t depth() const = 0;
};

/// In-process channel: a bounded FIFO whose capacity is the allowed staleness.
class QueueChannel final : public Channel {
 public:
  explicit QueueChannel(size_t capacity) : m_queue(capacity) {}
  bool send(Batch batch) override { return m_queue.push(std::move(batch)); }
  std::optional<Batch> recv() override { return m_queue.pop(); }
  void close(bool drop) override { m_queue.close(drop); }
  size_t depth() const override { return m_queue.size(); }

 private:
  BoundedQueue<Batch> m_queue;
};

}  // namespace stagewise::engine
