#pragma once
// What a run needs in memory before it builds anything (weights, gradients, optimizer state,
// activations), and what this process may use (cgroup limit, `ulimit -v`, MemAvailable): a
// model too large is refused with one line instead of failing inside LibTorch.

#include <cstdint>
#include <string>

#include "stagewise/engine/model_plan.h"
#include "stagewise/engine/spec.h"

namespace stagewise::engine {

/// Bytes a run of the spec holds at least while it trains (float32 everywhere).
struct MemoryNeed {
  int64_t weightBytes = 0;      ///< every stage's parameters, aux heads included
  int64_t gradientBytes = 0;    ///< one gradient per parameter
  int64_t optimizerBytes = 0;   ///< Adam: two moments per parameter; SGD with momentum: one
  int64_t copyBytes = 0;        ///< the analysis thread's copy of the weights (probe, evaluation)
  int64_t activationBytes = 0;  ///< one batch's activations kept for backward, and queued batches
  int64_t total() const {
    return weightBytes + gradientBytes + optimizerBytes + copyBytes + activationBytes;
  }
};

/// The need of a run of `spec` on `plan` (throws SpecError on an invalid cut, as makePartition).
MemoryNeed estimateMemoryNeed(const ExperimentSpec& spec, const ModelPlan& plan);

/// What this process may still allocate, the least of the limits that apply; bytes < 0: none
/// could be read.
struct MemoryLimit {
  int64_t bytes = -1;
  std::string source;  ///< which limit: "the cgroup limit", "ulimit -v", "MemAvailable"
};
MemoryLimit availableMemory();
/// The same from given texts (tests): cgroup memory.max and memory.current ("max" or empty:
/// none), RLIMIT_AS (< 0: unlimited) and the process's current address space, /proc/meminfo.
MemoryLimit availableMemory(const std::string& cgroupMax, const std::string& cgroupCurrent,
                            int64_t addressLimit, int64_t addressUsed, const std::string& meminfo);

/// Empty when `need` fits `limit` (or the limit is unknown); else one line saying how much is
/// needed, how much there is, and what to reduce (the model's size keys for `modelKind`, or the
/// batch when activations dominate).
std::string memoryProblem(const MemoryNeed& need, const MemoryLimit& limit,
                          const std::string& modelKind);

/// 1536 -> "1.5 KiB", 17179869184 -> "16.0 GiB" (IEC units).
std::string formatBytesIec(double bytes);

}  // namespace stagewise::engine
