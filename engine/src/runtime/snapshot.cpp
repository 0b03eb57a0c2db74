#include "runtime/snapshot.h"

#include <algorithm>

namespace stagewise::engine {

namespace {
constexpr size_t kMaxPending = 3;   // beyond this the analysis thread is behind: skip snapshots
constexpr size_t kMaxWaiting = 64;  // ... even kept ones: a bound on the copies held

std::vector<torch::Tensor> copyOf(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> out;
  out.reserve(params.size());
  torch::NoGradGuard noGrad;
  for (const auto& p : params)
    out.push_back(p.detach().to(torch::kCPU, /*non_blocking=*/false, /*copy=*/true));
  return out;
}
}  // namespace

SnapshotCoordinator::SnapshotCoordinator(int stages, MeasureBudget& budget)
    : m_stages(stages), m_budget(budget) {}

bool SnapshotCoordinator::wanted(int64_t step) const {
  return m_budget.candidates(step) != 0;  // never the last step: measured after the join
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
      // The first stage to arrive decides for everyone: the budget says which points to take,
      // and none is taken while the analysis thread is behind.
      Pending p;
      p.kinds = m_budget.decide(step, m_budget.trainingCpuS());
      // A kept point (with no budget: every point) waits however far behind the analysis
      // thread is (it runs at the lowest priority and catches up once training ends); another
      // is skipped then.
      // An evaluation the caller forced (RunOptions::evalAtSteps: a pruner counts on it) waits
      // however many are queued.
      const bool kept = m_budget.budget() <= 0 || m_budget.kept(MeasureBudget::kProbe, step) ||
                        m_budget.kept(MeasureBudget::kEval, step);
      if (p.kinds != 0 && !m_budget.forced(step) &&
          m_ready.size() >= (kept ? kMaxWaiting : kMaxPending)) {
        m_budget.release(step);
        p.kinds = 0;
        ++m_dropped;
      }
      p.skip = p.kinds == 0;
      it = m_partial.emplace(step, std::move(p)).first;
    }
    skip = it->second.skip;
  }
  std::vector<torch::Tensor> bodyCopy, auxCopy;
  if (!skip) {
    const double cpu0 = threadCpuSeconds();
    bodyCopy = copyOf(body), auxCopy = copyOf(aux);
    m_budget.chargeCopy(threadCpuSeconds() - cpu0);
  }
  std::lock_guard lock(m_mutex);
  auto it = m_partial.find(step);
  if (it == m_partial.end()) return;  // closed meanwhile
  Pending& p = it->second;
  if (!skip) {
    Snapshot& snap = p.snapshot;
    if (snap.body.empty()) {
      snap.step = step;
      snap.probe = (p.kinds & MeasureBudget::kProbe) != 0;
      snap.eval = (p.kinds & MeasureBudget::kEval) != 0;
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
      for (const auto& s : m_ready) m_budget.release(s.step);
      m_ready.clear();
    }
    // Snapshots some stage never completed (a stop between two stages' steps) cannot be taken.
    for (const auto& [step, pending] : m_partial)
      if (!pending.skip) ++m_discarded, m_budget.release(step);
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
