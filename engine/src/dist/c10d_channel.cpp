#include "dist/c10d_channel.h"

#include <cstring>

namespace stagewise::engine::dist {

namespace {
constexpr int64_t kMagic = 0x53574233;  // "SWB3": with the micro-batch field
enum Field : int64_t {
  kMagicF = 0,
  kStep,
  kEos,
  kXType,
  kNDim,
  kDims,
  kYLen = kDims + kMaxDims,
  kYType,
  kMicro
};
static_assert(kMicro + 1 == kHeaderFields);
/// The micro-batch field: index in bits 0-19, count in bits 20-39, the step's rows in 40-63.
int64_t microField(const Batch& b) {
  return static_cast<int64_t>(static_cast<uint64_t>(b.micro) |
                              (static_cast<uint64_t>(b.micros) << 20) |
                              (static_cast<uint64_t>(b.rows) << 40));
}

int64_t headerBytes(int maxLabels) {
  return (kHeaderFields + maxLabels) * 8;
}
}  // namespace

int64_t messageBytes(int maxLabels, int64_t maxPayloadBytes) {
  return headerBytes(maxLabels) + (maxPayloadBytes + 7) / 8 * 8;
}

C10dSendChannel::C10dSendChannel(DistGroup& group, int dst, int tag, int maxLabels,
                                 int64_t maxPayloadBytes)
    : m_group(group),
      m_dst(dst),
      m_tag(tag),
      m_maxLabels(maxLabels),
      m_maxPayload(maxPayloadBytes) {}

bool C10dSendChannel::send(Batch batch) {
  if (m_closed.load()) return false;
  torch::Tensor x = batch.x.to(torch::kCPU).contiguous();
  torch::Tensor y =
      batch.y.defined() ? batch.y.to(torch::kCPU).contiguous() : torch::empty({0}, torch::kInt64);
  const int64_t xBytes = x.numel() * static_cast<int64_t>(x.element_size());
  if (x.dim() > kMaxDims)
    throw std::runtime_error("activations with more than 8 dimensions cannot cross processes");
  if (xBytes > m_maxPayload)
    throw std::runtime_error("activations of " + std::to_string(xBytes) + " bytes exceed the " +
                             std::to_string(m_maxPayload) + " bytes the boundary was planned for");
  if (y.numel() > m_maxLabels)
    throw std::runtime_error("a batch of " + std::to_string(y.numel()) +
                             " labels exceeds the batch size");
  auto msg = torch::empty({messageBytes(m_maxLabels, m_maxPayload)}, torch::kUInt8);
  auto* h = reinterpret_cast<int64_t*>(msg.data_ptr<uint8_t>());
  std::memset(h, 0, static_cast<size_t>(headerBytes(m_maxLabels)));
  h[kMagicF] = kMagic;
  h[kStep] = batch.step;
  h[kXType] = static_cast<int64_t>(x.scalar_type());
  h[kNDim] = x.dim();
  for (int64_t d = 0; d < x.dim(); ++d) h[kDims + d] = x.size(d);
  h[kYLen] = y.numel();
  h[kYType] = static_cast<int64_t>(y.scalar_type());
  h[kMicro] = microField(batch);
  auto labels = y.to(torch::kInt64).reshape({-1}).contiguous();
  std::memcpy(h + kHeaderFields, labels.data_ptr<int64_t>(),
              static_cast<size_t>(labels.numel()) * sizeof(int64_t));
  std::memcpy(msg.data_ptr<uint8_t>() + headerBytes(m_maxLabels), x.data_ptr(),
              static_cast<size_t>(xBytes));

  // Back-pressure: the previous batch must have been taken before this one goes.
  std::shared_ptr<DistGroup::Pending> previous;
  {
    std::lock_guard lock(m_mutex);
    previous = std::move(m_pending);
  }
  if (previous && !m_group.finish(previous, m_slot)) return false;
  std::lock_guard lock(m_mutex);
  if (m_closed.load()) return false;
  m_pending = m_group.startSend(msg, m_dst, m_tag);
  m_payload += xBytes + y.numel() * static_cast<int64_t>(y.element_size());
  return true;
}

std::optional<Batch> C10dSendChannel::recv() {
  throw std::logic_error("recv() on the sending end of a c10d channel");
}

void C10dSendChannel::close(bool drop) {
  if (drop) {
    m_closed.store(true);
    m_slot.abort();
    std::lock_guard lock(m_mutex);
    m_group.abandon(m_pending);
    m_pending.reset();
    return;
  }
  if (m_closed.exchange(true)) return;
  // End of stream, after the last batch has gone (called by the sending stage's own thread).
  std::shared_ptr<DistGroup::Pending> previous;
  {
    std::lock_guard lock(m_mutex);
    previous = std::move(m_pending);
  }
  if (previous && !m_group.finish(previous, m_slot)) return;
  auto msg = torch::zeros({messageBytes(m_maxLabels, m_maxPayload)}, torch::kUInt8);
  auto* h = reinterpret_cast<int64_t*>(msg.data_ptr<uint8_t>());
  h[kMagicF] = kMagic;
  h[kEos] = 1;
  m_group.send(msg, m_dst, m_tag, m_slot);
}

C10dRecvChannel::C10dRecvChannel(DistGroup& group, int src, int tag, int maxLabels,
                                 int64_t maxPayloadBytes, size_t capacity,
                                 std::function<void(const std::string&)> onError)
    : m_group(group),
      m_src(src),
      m_tag(tag),
      m_maxLabels(maxLabels),
      m_maxPayload(maxPayloadBytes),
      m_onError(std::move(onError)),
      m_queue(capacity) {
  m_thread = std::thread([this] { loop(); });
}

C10dRecvChannel::~C10dRecvChannel() {
  close(/*drop=*/true);
  if (m_thread.joinable()) m_thread.join();
}

bool C10dRecvChannel::send(Batch) {
  throw std::logic_error("send() on the receiving end of a c10d channel");
}

void C10dRecvChannel::close(bool drop) {
  m_queue.close(drop);
  if (drop) m_slot.abort();
}

void C10dRecvChannel::loop() {
  try {
    while (true) {
      auto msg = torch::empty({messageBytes(m_maxLabels, m_maxPayload)}, torch::kUInt8);
      if (!m_group.recv(msg, m_src, m_tag, m_slot)) break;
      const auto* h = reinterpret_cast<const int64_t*>(msg.data_ptr<uint8_t>());
      if (h[kMagicF] != kMagic)
        throw std::runtime_error("malformed message (not a Stagewise batch)");
      if (h[kEos]) {
        m_queue.close(/*drop=*/false);
        return;
      }
      const int64_t ndim = h[kNDim], ylen = h[kYLen];
      if (ndim < 0 || ndim > kMaxDims || ylen < 0 || ylen > m_maxLabels)
        throw std::runtime_error("malformed batch header (shape or label count out of range)");
      std::vector<int64_t> dims(h + kDims, h + kDims + ndim);
      auto x =
          torch::empty(dims, torch::TensorOptions().dtype(static_cast<c10::ScalarType>(h[kXType])));
      const int64_t xBytes = x.numel() * static_cast<int64_t>(x.element_size());
      if (xBytes > m_maxPayload)
        throw std::runtime_error("malformed batch header (activations larger than planned)");
      std::memcpy(x.data_ptr(), msg.data_ptr<uint8_t>() + headerBytes(m_maxLabels),
                  static_cast<size_t>(xBytes));
      auto y =
          torch::from_blob(const_cast<int64_t*>(h + kHeaderFields), {ylen}, torch::kInt64)
              .to(static_cast<c10::ScalarType>(h[kYType]), /*non_blocking=*/false, /*copy=*/true);
      // Labels travel flat; a sample's row of them (a text window's next bytes, [B, T]) comes
      // back as one row per sample of the activations.
      if (ndim > 0 && dims[0] > 0 && ylen > dims[0] && ylen % dims[0] == 0)
        y = y.view({dims[0], ylen / dims[0]});
      const auto field = static_cast<uint64_t>(h[kMicro]);
      const int micro = static_cast<int>(field & 0xfffff),
                micros = static_cast<int>((field >> 20) & 0xfffff);
      const auto rows = static_cast<int64_t>(field >> 40);
      if (micros < 1 || micro >= micros)
        throw std::runtime_error("malformed batch header (micro-batch out of range)");
      if (!m_queue.push(Batch{h[kStep], std::move(x), std::move(y), micro, micros, rows})) break;
    }
  } catch (const std::exception& e) {
    if (!m_slot.aborted()) m_onError(e.what());
  }
  m_queue.close(/*drop=*/true);
}

}  // namespace stagewise::engine::dist
