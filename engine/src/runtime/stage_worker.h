#pragma once
// The two kinds of pipeline threads: the data loader and a stage worker.

#include "data/tensor_data.h"
#include "runtime/method.h"
#include "runtime/run_context.h"

namespace stagewise::engine {

/// dataset.augment: a random crop of each image (zero padded by H/8 first) and a left-right
/// flip, drawn from (seed, step). `x` is [B, C, H, W].
torch::Tensor augmentBatch(const torch::Tensor& x, uint64_t seed, int64_t step);

/// Feeds channel 0 with the training batches of every step, in a seeded order.
void runLoader(RunContext& ctx, const TensorData& data);

/// Trains one stage by `method` until its input ends or the run stops: the shared loop around
/// the method's step (pause, snapshots, meters, reports). Catches everything and reports it
/// through ctx.fail() with the stage's index.
void runStage(RunContext& ctx, StageRuntime& stage, const Method& method);

/// Number of steps the spec trains for on a training set of `trainSize` samples.
int64_t totalStepsFor(const ExperimentSpec& spec, int64_t trainSize);

}  // namespace stagewise::engine
