#pragma once
// Cutting a model into stages: validation, balance, and the predicted speed-up.

#include <cstdint>
#include <string>
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

/// Training FLOPs per sample of each stage as its method runs it: 3 x (body + aux head) forward
/// FLOPs (the backward costs twice the forward), plus, with overlapping local updates
/// (`overlap` = L > 0), the backward of the last L layers of every stage but the last that the
/// next stage's loss reaches back over (2 x their forward FLOPs). `stages` are the method's
/// stages (backprop: one with the whole model; pipeline: no aux heads); probe and evaluation
/// work is not training and is not counted.
std::vector<double> trainFlopsPerSample(const std::vector<StagePlan>& stages, const ModelPlan& plan,
                                        int overlap);

/// The stages the spec's mode trains: backprop one stage of every layer with the classifier as
/// its head; pipeline the cut's stages without aux heads; local the cut's stages.
std::vector<StagePlan> methodStages(const ExperimentSpec& spec, const ModelPlan& plan,
                                    const PartitionPlan& partition);
/// Training FLOPs per sample of a run of the spec (trainFlopsPerSample over methodStages,
/// summed): what `train_flops` counts for each sample trained. Throws SpecError on invalid cuts.
double runTrainFlopsPerSample(const ExperimentSpec& spec, const ModelPlan& plan);

/// What makes the spec's cut unrunnable on this model, beyond validateSpec: invalid cuts, and an
/// overlap window wider than a stage (each Problem names the field to change; empty: runnable).
std::vector<Problem> validatePartition(const ExperimentSpec& spec, const ModelPlan& plan);

/// Warnings (not errors) about a runnable cut: an aux head with over 4x the parameters of the
/// whole model's body (issue 36 §3: a 6.4 M mlp head on a 0.7 M model said nothing); it dominates
/// its stage's time and memory. One line each, naming `stages.N.aux_head` and what to do.
std::vector<std::string> partitionWarnings(const PartitionPlan& partition);

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

/// Measured seconds of one batch's work, by method, on this machine (profileMethods in
/// engine.h): the calibration of the estimate per method. Each number is the median of timed
/// repeats on a thread set up like the stage's (intra-op threads, denormals flushed).
struct MethodProfile {
  int batchSize = 0;
  int microBatches = 1;     ///< the pipeline's M
  int backpropThreads = 1;  ///< intra-op threads of the backprop run
  /// Per stage, local mode: body and aux head forward, loss, backward and the update.
  std::vector<double> localStep;
  /// Per stage, pipeline mode: the body's forward and backward of one micro-batch (the last
  /// stage: with the model's loss), without the update; and the forward alone.
  std::vector<double> pipelineMicro;
  std::vector<double> pipelineForward;
  /// Per stage, pipeline mode: the optimizer step over the body's parameters.
  std::vector<double> pipelineUpdate;
  /// Per stage, the extra seconds an operation takes when it starts on a core that another
  /// stage's thread ran on last (that stage's weights and activations have displaced its own
  /// from the caches): local mode's step, and pipeline mode's micro-batch forward and backward.
  /// Timed on one thread with the stages' operations taken in turn, against the same operation
  /// repeated (the fields above). Measured only where every stage has one intra-op thread on
  /// the CPU, the schedules the per-core queues simulate; empty: none charged.
  std::vector<double> localStepCold;
  std::vector<double> pipelineForwardCold;
  std::vector<double> pipelineBackwardCold;
  /// Per stage, pipeline mode: the same for the update, charged where another stage has run on
  /// its core since the stage's step began (its optimizer state was last touched a step ago).
  std::vector<double> pipelineUpdateCold;
  /// Backprop mode: the whole model's forward, loss, backward and update.
  double backpropStep = 0;
  /// Seconds from one thread handing a batch to a queue until the receiving thread, waiting on
  /// another core, runs.
  double handoffSeconds = 0;
  /// CPU seconds one queue operation (a send or a receive: the wake-up or the wait) costs the
  /// thread that makes it, across cores. The simulation charges it to every operation that
  /// receives or sends a batch or a gradient, as the engine's threads pay it.
  double handoffCpuSeconds = 0;
  /// How much slower a stage computes while another computes on a second core (>= 1: they
  /// share the caches and memory): stage 0's local step, two copies at once, over one alone.
  double contention = 1;
  /// The scheduler's time slice when more threads want cores than there are: a woken thread
  /// waits up to this long for a busy core. < 0: Linux's default base slice for the cores
  /// simulated (defaultSchedulerSlice); 0: processor sharing (every runnable thread gets its
  /// share at once).
  double sliceSeconds = -1;
  /// With time slices, where a runnable thread waits for a core. true (Linux): in the queue of
  /// the core it last ran on; a core that goes idle takes from its own queue, then pulls from
  /// the others'; a core already idle does not. false: in one queue that every core takes from.
  /// Stages with more than one intra-op thread always use the one queue.
  bool perCoreQueues = true;
  /// The scheduler's tick, at which a core that is idle pulls a waiting thread from another
  /// core's queue (per-core queues): 1 / CONFIG_HZ, 4 ms on Debian's kernels (HZ=250).
  double tickSeconds = 4e-3;
  /// A waiting thread that ran less than this long ago is "cache hot" and a core pulling from
  /// another core's queue leaves it there (per-core queues): Linux's task_hot() with
  /// sysctl_sched_migration_cost, 0.5 ms by default. 0: any waiting thread may be pulled.
  double migrationCostSeconds = 0.5e-3;
};

/// Linux's default scheduler base slice on `cores` cores: 0.75 ms x (1 + log2 min(cores, 8)),
/// so 1.5 ms on 2 cores and 3 ms on 8 or more (kernel/sched/fair.c, sysctl_sched_base_slice
/// scaled as sched_update_scaling does by default).
double defaultSchedulerSlice(int cores);

/// Samples/s per method, predicted from a measured MethodProfile: each method's schedule is
/// simulated on `cores` cores. Every stage is a thread that runs its operations in its method's
/// order (local: one step per batch; pipeline: each micro-batch's forward and backward in the
/// GPipe or 1F1B order, then the update); an operation starts once its input is there (the
/// upstream stage's output, or the downstream stage's gradient, plus the handoff) and, in local
/// mode, once the output queue has room. Runnable threads take the cores in time slices (a
/// woken thread waits in the run queue while the cores are busy, up to the profile's slice;
/// slice 0: processor sharing, weighted by intra-op threads), and run `contention` times slower
/// while more than one computes. The steady-state step time of the simulated schedule gives
/// samples/s. Backprop is its measured step. See docs/metrics.md, "The estimate per method".
/// Per stage thread and step, in a simulated schedule's steady state (per-core queues only): what
/// the kernel counts for a real run's threads, to set beside them (bench_estimate --verbose 1).
struct SimThreadStats {
  std::vector<double> running;    ///< seconds on a core
  std::vector<double> queued;     ///< seconds runnable, waiting for a core
  std::vector<double> switchIns;  ///< times given a core
  double idleCoreSeconds = 0;     ///< summed over the cores
};

struct MethodEstimate {
  double localSamplesPerSec = 0;
  double pipelineSamplesPerSec = 0;
  double backpropSamplesPerSec = 0;
  double localSpeedup = 1;     ///< local / backprop samples/s
  double pipelineSpeedup = 1;  ///< pipeline / backprop samples/s
  double bubbleFraction = 0;   ///< the pipeline step's mean idle share per stage
  bool coresShared = false;
  /// With `threadStats` and a queue per core: the local and pipeline schedules' per-thread counts.
  SimThreadStats localThreads, pipelineThreads;
};
MethodEstimate estimateMethods(const MethodProfile& profile, const PartitionPlan& partition,
                               int cores, bool oneFOneB = false, int queueCapacity = 4,
                               bool threadStats = false);

}  // namespace stagewise::engine
