#pragma once
// Reference loops written directly against LibTorch, to measure the engine's overhead: the same
// model, data order, optimizer and thread setup, without queues, metrics or the reporter.

#include "data/tensor_data.h"
#include "stagewise/engine/spec.h"

namespace stagewise::bench {

struct PlainResult {
  double samplesPerSec = 0;
  double seconds = 0;
};

/// End-to-end backprop of the spec's MLP for `steps` steps on `threads` intra-op threads.
PlainResult plainBackprop(const engine::ExperimentSpec& spec, const engine::TensorData& data, int64_t steps,
                          int threads);

/// Local parallelism with one thread per stage (the spec's cuts), linear aux heads, bounded
/// queues, 1 intra-op thread each.
PlainResult plainLocal(const engine::ExperimentSpec& spec, const engine::TensorData& data, int64_t steps);

}  // namespace stagewise::bench
