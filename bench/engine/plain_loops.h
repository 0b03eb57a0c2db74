#pragma once
// Reference loops written directly against LibTorch, to measure the engine's overhead: the same
// model, data order, optimizer and thread setup, without queues, metrics or the reporter.

#include "data/tensor_data.h"
#include "stagewise/engine/spec.h"

namespace stagewise::bench {

/// The engine's fused Adam (the same work as the engine) or LibTorch's own, for the before/after row.
enum class AdamImpl { Fused, Torch };

struct PlainResult {
  double samplesPerSec = 0;
  double seconds = 0;
};

/// End-to-end backprop of the spec's MLP for `steps` steps on `threads` intra-op threads.
PlainResult plainBackprop(const engine::ExperimentSpec& spec, const engine::TensorData& data, int64_t steps,
                          int threads, AdamImpl adam = AdamImpl::Fused);

/// Local parallelism with one thread per stage (the spec's cuts), linear aux heads, bounded
/// queues, 1 intra-op thread each.
PlainResult plainLocal(const engine::ExperimentSpec& spec, const engine::TensorData& data, int64_t steps,
                       AdamImpl adam = AdamImpl::Fused);

}  // namespace stagewise::bench
