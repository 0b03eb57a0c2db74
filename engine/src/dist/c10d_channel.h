#pragma once
#include <torch/torch.h>  // free here: the engine precompiles it
// The channel between two stages in different processes: c10d (Gloo) point-to-point messages.
// One message per batch, of a fixed size known to both ends from the model plan: an int64 header
// (step, end-of-stream, dtype and shape of the activations, the labels) followed by the
// activation bytes. The sender starts a send and returns, so its backward pass overlaps the
// transfer; it waits for that send before the next one. The receiving side keeps a thread that
// always has a receive posted and a bounded queue, so the sender blocks only when the receiver's
// queue is full: the same back-pressure as the in-process queue.

#include <atomic>
#include <functional>
#include <mutex>
#include <thread>

#include "dist/dist_group.h"
#include "runtime/channel.h"

namespace stagewise::engine::dist {

/// Header layout (int64): magic, step, end-of-stream, x dtype, x ndim, 8 dims, label count, y dtype,
/// reserved, then room for `maxLabels` labels; the activations follow.
inline constexpr int64_t kHeaderFields = 16;
inline constexpr int kMaxDims = 8;
/// Bytes of one message for a boundary.
int64_t messageBytes(int maxLabels, int64_t maxPayloadBytes);

class C10dSendChannel final : public Channel {
 public:
  C10dSendChannel(DistGroup& group, int dst, int tag, int maxLabels, int64_t maxPayloadBytes);
  bool send(Batch batch) override;
  std::optional<Batch> recv() override;  ///< not for this end: throws
  void close(bool drop) override;
  size_t depth() const override { return 0; }
  /// Activation and label bytes put on the wire so far (headers and padding excluded).
  int64_t payloadBytes() const { return m_payload.load(); }

 private:
  DistGroup& m_group;
  int m_dst, m_tag, m_maxLabels;
  int64_t m_maxPayload;
  InFlight m_slot;
  std::mutex m_mutex;
  std::shared_ptr<DistGroup::Pending> m_pending;  ///< the send in flight
  std::atomic<bool> m_closed{false};
  std::atomic<int64_t> m_payload{0};
};

class C10dRecvChannel final : public Channel {
 public:
  /// `onError` is called once, from the receiving thread, when the connection fails.
  C10dRecvChannel(DistGroup& group, int src, int tag, int maxLabels, int64_t maxPayloadBytes, size_t capacity,
                  std::function<void(const std::string&)> onError);
  ~C10dRecvChannel() override;
  bool send(Batch batch) override;  ///< not for this end: throws
  std::optional<Batch> recv() override { return m_queue.pop(); }
  void close(bool drop) override;
  size_t depth() const override { return m_queue.size(); }

 private:
  void loop();
  DistGroup& m_group;
  int m_src, m_tag, m_maxLabels;
  int64_t m_maxPayload;
  std::function<void(const std::string&)> m_onError;
  InFlight m_slot;
  BoundedQueue<Batch> m_queue;
  std::thread m_thread;
};

}  // namespace stagewise::engine::dist
