#include "runtime/snapshot.h"

#include <algorithm>

namespace stagewise::engine {

namespace {
constexpr size_t kMaxPending = 3;  // beyond this the analysis thread is behind: skip snapshots

std::vector<torch::Tensor> copyOf(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> out;
  out.reserve(params.size());
  torch::NoGradGuard noGrad;
  for (const auto& p : params)
    out.push_back(p.detach().to(torch::kCPU, /*non_blocking=*/false, /*copy=*/true));
  return out;
}
}  // namespace

SnapshotCoordinator::SnapshotCoordinator(int stages, int64_t probeInterval, int64_t evalInterval,
                                         int64_t totalSteps)
    : m_stages(stages),
      m_probeInterval(probeInterval),
      m_evalInterval(evalInterval),
      m_totalSteps(totalSteps) {}

bool SnapshotCoordinator::wanted(int64_t step) const {
  if (step + 1 >= m_totalSteps) return false;  // the end is measured after the threads join
  const bool probe = m_probeInterval > 0 && (step + 1) % m_probeInterval == 0;
  const bool eval = m_evalInterval > 0 && (step + 1) % m_evalInterval == 0;
  return probe || eval;
}

void SnapshotCoordinator::offer(int stage, int64_t step, const std::vector<torch::Tensor>& body,
                                const std::vector<torch::Tensor>& aux, double timeS) {
  if (m_forward) {
    m_forward(stage, step, body, aux);
    return;
  }
  bool skip = false;
  {
    std::lock_guard lock(m_mutex);
    if (m_closed) return;
    auto it = m_partial.find(step);
    if (it == m_partial.end()) {
      // The first stage to arrive decides for everyone: skip if the analysis thread is behind.
      Pending p;
      p.skip = m_ready.size() >= kMaxPending;
      if (p.skip) ++m_dropped;
      it = m_partial.emplace(step, std::move(p)).first;
    }
    skip = it->second.skip;
  }
  std::vector<torch::Tensor> bodyCopy, auxCopy;
  if (!skip) bodyCopy = copyOf(body), auxCopy = copyOf(aux);
  std::lock_guard lock(m_mutex);
  auto it = m_partial.find(step);
  if (it == m_partial.end()) return;  // closed meanwhile
  Pending& p = it->second;
  if (!skip) {
    Snapshot& snap = p.snapshot;
    if (snap.body.empty()) {
      snap.step = step;
      snap.probe = m_probeInterval > 0 && (step + 1) % m_probeInterval == 0;
      snap.eval = m_evalInterval > 0 && (step + 1) % m_evalInterval == 0;
      snap.body.resize(static_cast<size_t>(m_stages));
      snap.aux.resize(static_cast<size_t>(m_stages));
    }
    snap.body[static_cast<size_t>(stage)] = std::move(bodyCopy);
    snap.aux[static_cast<size_t>(stage)] = std::move(auxCopy);
    snap.timeS = std::max(snap.timeS, timeS);
  }
  if (++p.count == m_stages) {
    if (!p.skip) m_ready.push_back(std::move(p.snapshot));
    m_partial.erase(it);
    m_cv.notify_all();
  }
}

std::optional<Snapshot> SnapshotCoordinator::next() {
  std::unique_lock lock(m_mutex);
  m_cv.wait(lock, [&] { return m_closed || !m_ready.empty(); });
  if (m_ready.empty()) return std::nullopt;
  Snapshot s = std::move(m_ready.front());
  m_ready.pop_front();
  return s;
}

void SnapshotCoordinator::close(bool drop) {
  {
    std::lock_guard lock(m_mutex);
    if (drop) {
      m_discarded += static_cast<int64_t>(m_ready.size());
      m_ready.clear();
    }
    // Snapshots some stage never completed (a stop between two stages' steps) cannot be taken.
    for (const auto& [step, pending] : m_partial)
      if (!pending.skip) ++m_discarded;
    m_partial.clear();
    m_closed = true;
  }
  m_cv.notify_all();
}

int64_t SnapshotCoordinator::dropped() const {
  std::lock_guard lock(m_mutex);
  return m_dropped;
}

int64_t SnapshotCoordinator::discarded() const {
  std::lock_guard lock(m_mutex);
  return m_discarded;
}

}  // namespace stagewise::engine
