#pragma once
#include <torch/torch.h>  // free here: the engine precompiles it
// One process's membership in a distributed run: the rendezvous (a c10d TCPStore served by rank
// 0), the Gloo process group that carries tensors point to point, and the control plane on the
// store (heartbeats, stop and abort flags, report batches). Builds against LibTorch 1.13, where
// ProcessGroupGloo is a ProcessGroup, and 2.x, where it is a Backend: only the concrete class is
// used, never the base.

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "stagewise/engine/engine.h"

namespace stagewise::engine::dist {

/// A blocking send or recv in flight that another thread may abort (stop, failure).
class InFlight {
 public:
  /// Aborts the operation in flight, if any, and every later one.
  void abort();
  bool aborted() const { return m_aborted.load(); }

 private:
  friend class DistGroup;
  std::mutex m_mutex;
  std::function<void()> m_abort;  ///< aborts the current work
  std::atomic<bool> m_aborted{false};
};

class DistGroup {
 public:
  /// Joins the run: connects to (rank 0: serves) the store at master:port, checks that every rank
  /// runs the same spec with the same world size (and, for a torchscript model, the same model
  /// file: `modelFile` is "PATH sha256", empty for other models), and connects the Gloo process
  /// group. Throws std::runtime_error with what to fix (unreachable master, missing ranks,
  /// mismatch).
  DistGroup(const DistOptions& options, double timeoutS, const std::string& specDigest,
            const std::string& modelFile = {});
  ~DistGroup();
  DistGroup(const DistGroup&) = delete;
  DistGroup& operator=(const DistGroup&) = delete;

  int rank() const { return m_rank; }
  int world() const { return m_world; }
  double timeoutS() const { return m_timeoutS; }
  std::string where() const { return m_addr + ":" + std::to_string(m_port); }

  // Tensors, point to point (Gloo). Block until done; false when aborted through `slot`; throw
  // std::runtime_error naming the peer rank when the connection fails.
  bool send(const torch::Tensor& t, int dst, int tag, InFlight& slot);
  bool recv(torch::Tensor& t, int src, int tag, InFlight& slot);
  /// A send that completes later (the tensor is kept alive until then), so compute can overlap it.
  struct Pending;
  std::shared_ptr<Pending> startSend(const torch::Tensor& t, int dst, int tag);
  /// Waits for a started send; same results as send().
  bool finish(const std::shared_ptr<Pending>& pending, InFlight& slot);
  /// Aborts a started send nobody will wait for (stop, failure).
  void abandon(const std::shared_ptr<Pending>& pending);

  // Control plane (the store). Thread-safe.
  void set(const std::string& key, const std::string& value);
  std::optional<std::string> tryGet(const std::string& key);  ///< empty if the key is not there
  bool has(const std::string& key);
  void erase(const std::string& key);
  int64_t add(const std::string& key, int64_t delta);
  /// Waits until `add(key, 0)` reaches `count`, polling; false after `timeoutS`.
  bool waitCount(const std::string& key, int64_t count, double timeoutS,
                 const std::atomic<bool>* cancel = nullptr);

 private:
  int m_rank = 0, m_world = 1;
  double m_timeoutS = 60;
  std::string m_addr;
  int m_port = 0;
  struct Impl;  ///< the c10d objects (dist_group.cpp; a stub when built without c10d)
  std::unique_ptr<Impl> m_impl;
};

/// Watches the other ranks while a run trains: beats this rank's heartbeat, and calls `onFault`
/// once with a message naming the rank (and the failed stage, or -1) when a rank aborts (its
/// failure), goes silent for the timeout, or the store (rank 0) becomes unreachable; calls
/// `onStop` when any rank asks to stop.
class Monitor {
 public:
  using FaultHandler = std::function<void(int rank, int stage, const std::string& message)>;
  Monitor(DistGroup& group, FaultHandler onFault, std::function<void()> onStop);
  ~Monitor();
  /// This rank is done with its part: the others stop expecting its heartbeat.
  void markDone();
  void stop();

 private:
  void loop();
  DistGroup& m_group;
  FaultHandler m_onFault;
  std::function<void()> m_onStop;
  std::atomic<bool> m_quit{false};
  std::thread m_thread;
};

using Clock = std::chrono::steady_clock;
/// Seconds since `t0`.
double since(Clock::time_point t0);
/// Gloo messages start with "[/path/to/file.cc:123] "; users need the rest (first line only).
std::string shortError(const std::string& what);

/// Publishes this rank's failure for the others (the first failure of the run wins).
void publishAbort(DistGroup& group, int stage, const std::string& message);

/// Keys of the control plane.
namespace keys {
inline std::string heartbeat(int rank) {
  return "hb/" + std::to_string(rank);
}
inline std::string done(int rank) {
  return "done/" + std::to_string(rank);
}
inline const char* kAbort = "abort";  ///< value: "<rank> <stage>\n<message>"
inline const char* kStop = "stop";
inline const char* kEnd = "end";  ///< rank 0 has the whole run
inline std::string feed(int rank, int64_t seq) {
  return "feed/" + std::to_string(rank) + "/" + std::to_string(seq);
}
inline std::string summary(int rank) {
  return "summary/" + std::to_string(rank);
}
}  // namespace keys

/// Tags of point-to-point messages: boundary k's activations, and state transfers of stage k.
inline int boundaryTag(int stage) {
  return stage;
}
inline int stateTag(int stage) {
  return 100000 + stage;
}
inline int snapshotTag(int stage) {
  return 200000 + stage;
}
/// Pipeline mode: the gradient of boundary k's activations, from stage k back to stage k - 1.
inline int gradientTag(int stage) {
  return 300000 + stage;
}

}  // namespace stagewise::engine::dist
