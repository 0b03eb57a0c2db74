#pragma once
// Cutting a model into stages: validation, balance, and the predicted speed-up.

#include <cstdint>
#include <vector>

#include "stagewise/engine/model_plan.h"
#include "stagewise/engine/spec.h"

namespace stagewise::engine {

/// One stage of a cut model, with its costs per sample.
struct StagePlan {
  int index = 0;
  int firstLayer = 0;
  int lastLayer = 0;  ///< inclusive
  bool isLast = false;
  StageSettings settings;
  int64_t params = 0;     ///< body parameters
  int64_t flops = 0;      ///< body forward FLOPs per sample
  int64_t auxParams = 0;  ///< 0 for the last stage (its head is the classifier)
  int64_t auxFlops = 0;
  int64_t outBytes = 0;  ///< bytes per sample of the output tensor sent downstream (0 for last)
  int64_t activationBytes = 0;  ///< activations kept for backward per sample
};

struct PartitionPlan {
  std::vector<StagePlan> stages;
};

/// Problems with a cut list for a model of `numLayers` layers (empty: valid).
std::vector<Problem> validateCuts(const std::vector<int>& cuts, int numLayers);

/// Cuts that minimise the most expensive stage, for `stages` contiguous stages.
std::vector<int> balanceCuts(const std::vector<double>& layerCost, int stages);

/// Cost of each layer for balancing by FLOPs (forward + backward).
std::vector<double> flopCosts(const ModelPlan& plan);

/// The cuts the spec asks for (resolving balance=flops). Throws SpecError if they are invalid.
std::vector<int> resolveCuts(const ExperimentSpec& spec, const ModelPlan& plan);

/// Stages for the spec's cuts with their settings and costs. Throws SpecError on invalid cuts.
PartitionPlan makePartition(const ExperimentSpec& spec, const ModelPlan& plan);
/// Same, for explicit cuts.
PartitionPlan makePartition(const ExperimentSpec& spec, const ModelPlan& plan,
                            const std::vector<int>& cuts);

/// How intra-op threads speed one stage up: speed(t) = 1 + efficiency * (t - 1).
struct ScalingModel {
  double threadEfficiency = 0.65;  ///< measured here: backprop on 2 threads ~1.65x of 1
};

/// Predicted step times in FLOP-equivalent units and the resulting speed-up.
struct SpeedEstimate {
  std::vector<double> stageShare;              ///< each stage's share of the local step's work
  std::vector<double> stageTime;               ///< predicted time per step (relative units)
  std::vector<int64_t> boundaryBytes;          ///< per batch, local: activations + labels forward
  std::vector<int64_t> backpropBoundaryBytes;  ///< pipelined backprop: activations + gradients
  double backpropTime = 0;                     ///< per step at its best thread count
  int backpropThreads = 1;
  double localTime = 0;           ///< per step (slowest stage, or cores shared)
  double speedup = 1;             ///< backpropTime / localTime
  double pipelineEfficiency = 1;  ///< mean stage time / slowest stage time
  bool coresShared = false;       ///< stages need more threads than there are cores
};

SpeedEstimate estimateSpeed(const PartitionPlan& partition, const ModelPlan& plan, int batchSize,
                            int cores, const ScalingModel& scaling = {});

}  // namespace stagewise::engine
