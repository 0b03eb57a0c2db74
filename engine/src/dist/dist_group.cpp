#include "dist/dist_group.h"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <sstream>

namespace stagewise::engine::dist {

namespace {

std::vector<uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }
std::string text(const std::vector<uint8_t>& b) { return {b.begin(), b.end()}; }

bool isLoopback(const std::string& addr) {
  return addr.rfind("127.", 0) == 0 || addr == "localhost" || addr == "::1";
}

// Data-plane waits are bounded by the monitor (heartbeats + aborts), not by Gloo's own timeout:
// a stage may legitimately wait longer than any fixed timeout (a paused or slow neighbour).
constexpr auto kDataPlaneTimeout = std::chrono::hours(24 * 30);

}  // namespace

struct DistGroup::Impl {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> pg;
  std::mutex graveMutex;
  std::vector<std::shared_ptr<void>> graveyard;  ///< aborted works: kept until the group is gone
};


DistGroup::DistGroup(const DistOptions& o, double timeoutS, const std::string& specDigest,
                     const std::string& modelFile)
    : m_rank(o.rank),
      m_world(o.worldSize),
      m_timeoutS(timeoutS),
      m_addr(o.masterAddr),
      m_port(o.masterPort),
      m_impl(std::make_unique<Impl>()) {
  if (m_world < 1) throw std::runtime_error("the world size must be at least 1 (--world-size or WORLD_SIZE)");
  if (m_rank < 0 || m_rank >= m_world)
    throw std::runtime_error("rank " + std::to_string(m_rank) + " is outside a run of " + std::to_string(m_world) +
                             " processes (ranks 0.." + std::to_string(m_world - 1) + ")");
  if (m_port < 1 || m_port > 65535)
    throw std::runtime_error("master port " + std::to_string(m_port) + " is not a TCP port (1..65535)");
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(timeoutS * 1000));

  c10d::TCPStoreOptions so;
  so.port = static_cast<uint16_t>(m_port);
  so.isServer = m_rank == 0;
  so.numWorkers = static_cast<size_t>(m_world);
  so.waitWorkers = false;  // we wait below, naming the ranks that are missing
  so.timeout = timeout;
  try {
    m_impl->store = c10::make_intrusive<c10d::TCPStore>(m_addr, so);
  } catch (const std::exception& e) {
    if (m_rank == 0)
      throw std::runtime_error("rank 0 cannot serve the rendezvous on " + where() +
                               " (is the port in use? choose another with --master HOST:PORT or MASTER_PORT): " +
                               shortError(e.what()));
    throw std::runtime_error("cannot reach rank 0 at " + where() + " within " + std::to_string(int(timeoutS)) +
                             " s: start rank 0 there, or fix --master / MASTER_ADDR and MASTER_PORT (" +
                             shortError(e.what()) + ")");
  }

  // Every rank says who it is; then each checks the others against itself.
  set("join/" + std::to_string(m_rank),
      std::to_string(m_world) + "\n" + specDigest + "\n" + modelFile);
  add("joined", 1);
  if (!waitCount("joined", m_world, timeoutS)) {
    std::string missing;
    for (int r = 0; r < m_world; ++r)
      if (!has("join/" + std::to_string(r))) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
    throw std::runtime_error("rank(s) " + (missing.empty() ? std::string("?") : missing) + " did not join within " +
                             std::to_string(int(timeoutS)) + " s at " + where() + ": start all " +
                             std::to_string(m_world) + " processes with the same --world-size (launch does)");
  }
  for (int r = 0; r < m_world; ++r) {
    auto v = tryGet("join/" + std::to_string(r));
    if (!v)
      throw std::runtime_error(std::to_string(m_world) + " processes joined but rank " + std::to_string(r) +
                               " is missing: two processes were given the same rank");
    const auto nl = v->find('\n');
    const std::string world = v->substr(0, nl);
    std::string digest = nl == std::string::npos ? "" : v->substr(nl + 1), model;
    if (const auto nl2 = digest.find('\n'); nl2 != std::string::npos)
      model = digest.substr(nl2 + 1), digest.resize(nl2);
    if (world != std::to_string(m_world))
      throw std::runtime_error("rank " + std::to_string(r) + " was started with world size " + world + ", rank " +
                               std::to_string(m_rank) + " with " + std::to_string(m_world) +
                               ": give every process the same --world-size");
    if (digest != specDigest)
      throw std::runtime_error("rank " + std::to_string(r) + " runs a different experiment than rank " +
                               std::to_string(m_rank) + ": start every rank with the same --config and --set");
    if (model != modelFile)  // "PATH sha256": the same spec, another file behind model.path
      throw std::runtime_error("rank " + std::to_string(r) + " loads another model file than rank " +
                               std::to_string(m_rank) + " (" + model.substr(0, model.rfind(' ')) +
                               ": sha256 " + model.substr(model.rfind(' ') + 1) + " there, " +
                               modelFile.substr(modelFile.rfind(' ') + 1) +
                               " here): give every rank the same file at model.path");
  }

  auto options = c10d::ProcessGroupGloo::Options::create(std::chrono::duration_cast<std::chrono::milliseconds>(kDataPlaneTimeout));
  try {
    if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname)
      options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
    else if (isLoopback(m_addr))
      options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
    else
      options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
    auto prefixed = c10::make_intrusive<c10d::PrefixStore>("gloo", m_impl->store);
    m_impl->pg = c10::make_intrusive<c10d::ProcessGroupGloo>(prefixed, m_rank, m_world, options);
  } catch (const std::exception& e) {
    throw std::runtime_error("rank " + std::to_string(m_rank) + " could not connect to the other ranks over Gloo: " +
                             shortError(e.what()) + " (set GLOO_SOCKET_IFNAME to the interface to use)");
  }
  // Start together, so the ranks' clocks ("seconds since the run started") agree.
  add("ready", 1);
  if (!waitCount("ready", m_world, timeoutS))
    throw std::runtime_error("not every rank got ready within " + std::to_string(int(timeoutS)) + " s");
}

DistGroup::~DistGroup() {
  // The process group goes first: aborted operations may still be known to its connections.
  m_impl->pg.reset();
  {
    std::lock_guard lock(m_impl->graveMutex);
    m_impl->graveyard.clear();
  }
  m_impl->store.reset();
}

using Work = decltype(std::declval<c10d::ProcessGroupGloo&>().send(std::declval<std::vector<at::Tensor>&>(), 0, 0));

struct DistGroup::Pending {
  Work work;
  int peer = 0;
  bool sending = true;
};

std::shared_ptr<DistGroup::Pending> DistGroup::startSend(const torch::Tensor& t, int dst, int tag) {
  std::vector<at::Tensor> v{t.is_contiguous() ? t : t.contiguous()};
  auto p = std::make_shared<Pending>();
  p->work = m_impl->pg->send(v, dst, tag);
  p->peer = dst;
  return p;
}

bool DistGroup::finish(const std::shared_ptr<Pending>& p, InFlight& slot) {
  Work work = p->work;
  {
    std::lock_guard lock(slot.m_mutex);
    if (slot.aborted()) work->abort();
    slot.m_abort = [work] { work->abort(); };
  }
  bool ok = false;
  try {
    ok = work->wait();
  } catch (const std::exception& e) {
    std::lock_guard lock(slot.m_mutex);
    slot.m_abort = nullptr;
    if (slot.aborted()) return false;
    throw std::runtime_error((p->sending ? "sending to rank " : "receiving from rank ") + std::to_string(p->peer) +
                             " failed: " + shortError(e.what()));
  }
  std::lock_guard lock(slot.m_mutex);
  slot.m_abort = nullptr;
  if (!ok) {
    // Gloo may still refer to an aborted operation's buffer: keep it until the group is gone.
    std::lock_guard grave(m_impl->graveMutex);
    m_impl->graveyard.push_back(std::make_shared<Work>(work));
  }
  return ok && !slot.aborted();
}

void DistGroup::abandon(const std::shared_ptr<Pending>& p) {
  if (!p) return;
  p->work->abort();
  std::lock_guard grave(m_impl->graveMutex);
  m_impl->graveyard.push_back(std::make_shared<Work>(p->work));
}

bool DistGroup::send(const torch::Tensor& t, int dst, int tag, InFlight& slot) {
  return finish(startSend(t, dst, tag), slot);
}

bool DistGroup::recv(torch::Tensor& t, int src, int tag, InFlight& slot) {
  std::vector<at::Tensor> v{t};
  auto p = std::make_shared<Pending>();
  p->work = m_impl->pg->recv(v, src, tag);
  p->peer = src;
  p->sending = false;
  return finish(p, slot);
}

void DistGroup::set(const std::string& key, const std::string& value) { m_impl->store->set(key, bytes(value)); }

std::optional<std::string> DistGroup::tryGet(const std::string& key) {
  if (!m_impl->store->check({key})) return std::nullopt;
  return text(m_impl->store->get(key));
}

bool DistGroup::has(const std::string& key) { return m_impl->store->check({key}); }
void DistGroup::erase(const std::string& key) { m_impl->store->deleteKey(key); }
int64_t DistGroup::add(const std::string& key, int64_t delta) { return m_impl->store->add(key, delta); }

bool DistGroup::waitCount(const std::string& key, int64_t count, double timeoutS, const std::atomic<bool>* cancel) {
  const auto t0 = Clock::now();
  while (add(key, 0) < count) {
    if (since(t0) > timeoutS || (cancel && cancel->load())) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

}  // namespace stagewise::engine::dist
