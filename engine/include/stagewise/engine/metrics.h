#pragma once
// What a run reports while it trains: metric points, step spans, events and the final summary.
// Every series name is listed with its unit and meaning in docs/metrics.md.

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "stagewise/engine/model_plan.h"
#include "stagewise/engine/spec.h"

namespace stagewise::engine {

/// Series names (docs/metrics.md). Per-stage series carry the stage index, run series stage -1.
namespace series {
// per stage, every step
inline constexpr const char* kLoss = "loss";               // local (aux) loss
inline constexpr const char* kAccuracy = "accuracy";       // local (aux) accuracy, 0..1
inline constexpr const char* kQueueDepth = "queue_depth";  // items waiting at the input
inline constexpr const char* kStaleness = "staleness";     // upstream steps ahead of this one
// per stage, every report interval (~250 ms)
inline constexpr const char* kComputeFraction = "compute_fraction";  // sliding 1 s window
inline constexpr const char* kWaitFraction = "wait_fraction";
inline constexpr const char* kBlockedFraction = "blocked_fraction";
inline constexpr const char* kStepsPerSec = "steps_per_sec";
inline constexpr const char* kBytesSent = "bytes_sent";              // cumulative
inline constexpr const char* kBackpropBytes = "backprop_bytes";      // cumulative, would-be
inline constexpr const char* kGradBytesSent = "grad_bytes_sent";     // cumulative, upstream
inline constexpr const char* kActivationBytes = "activation_bytes";  // peak so far, tensor sizes
inline constexpr const char* kMemoryBytes =
    "memory_bytes";  // peak so far, counted by the allocator
// per stage (layer >= 0 for the per-layer value), every probe
inline constexpr const char* kGradCosine = "grad_cosine";
// per run
inline constexpr const char* kSamplesPerSec = "samples_per_sec";
inline constexpr const char* kTestAccuracy = "test_accuracy";
inline constexpr const char* kTestLoss = "test_loss";
// per run, with dataset.validation > 0: the held-out training samples, at every evaluation
inline constexpr const char* kValAccuracy = "val_accuracy";
inline constexpr const char* kValLoss = "val_loss";
inline constexpr const char* kCpuUtilization = "cpu_utilization";  // process CPU / cores, 0..1
inline constexpr const char* kProgress = "progress";               // 0..1
inline constexpr const char* kMeasureShare = "measure_share";      // measuring CPU / all, 0..1
}  // namespace series

/// One value of one series. `step` is the stage's step (run series: the last stage's).
struct MetricPoint {
  std::string name;
  int stage = -1;  ///< -1: run-level series
  int layer = -1;  ///< >= 0 only for per-layer series
  int64_t step = 0;
  double timeS = 0;  ///< seconds since the run started
  double value = 0;
};

/// What a span of the timeline computed: a whole step (local and backprop modes), or one
/// micro-batch's forward or backward pass (pipeline mode, so the bubble shows between them).
/// Step: a local step or the update; Forward/Backward: a micro-batch's pass (Backward is B alone
/// under zb-h1); Weight: zb-h1's deferred weight gradient (W); Recompute: the forward run again
/// before the backward (pipeline.recompute); Wait: waiting for an input or a gradient; Blocked: a
/// send waiting for room downstream; Aux: a local stage's auxiliary head.
enum class SpanKind {
  Step = 0,
  Forward = 1,
  Backward = 2,
  Weight = 3,
  Recompute = 4,
  Wait = 5,
  Blocked = 6,
  Aux = 7
};

/// One step of one stage (or one micro-batch's pass), for the utilization timeline.
struct StepSpan {
  int stage = 0;
  int64_t step = 0;
  double startS = 0;  ///< compute start, seconds since run start
  double endS = 0;    ///< compute end
  SpanKind kind = SpanKind::Step;
  int micro = -1;  ///< a Forward or Backward span's micro-batch; -1 for a step or the update
};

enum class EventKind {
  Started,
  Paused,
  Resumed,
  StopRequested,
  Completed,
  Stopped,
  Failed,
  Checkpoint,
  Info,
  Warning
};
std::string toString(EventKind kind);

struct RunEvent {
  EventKind kind = EventKind::Info;
  double timeS = 0;
  int stage = -1;
  std::string message;
};

enum class RunStatus { Running, Completed, Stopped, Failed, Interrupted };
std::string toString(RunStatus status);

/// A stage as the run was set up.
struct StageInfo {
  int index = 0;
  int firstLayer = 0;
  int lastLayer = 0;
  std::string device;
  std::string auxHead;  ///< "classifier" for the last stage
  int threads = 1;
  int64_t params = 0;
  int64_t auxParams = 0;
};

/// Sent once before the first metric.
struct RunInfo {
  std::string name;
  std::string specJson;  ///< the resolved spec, canonical JSON
  Mode mode = Mode::Local;
  std::vector<StageInfo> stages;
  std::vector<LayerInfo> layers;
  int64_t totalSteps = 0;
  int batchSize = 0;
  std::string blas;
  std::string torchVersion;
};

inline constexpr double kNoValue = std::numeric_limits<double>::quiet_NaN();

struct StageSummary {
  int index = 0;
  std::string device;
  int firstLayer = 0;
  int lastLayer = 0;
  int threads = 1;
  /// The stage's body and aux-head parameters and its head ("classifier" for the last stage,
  /// "none" without one), as it ends: after a live re-partition they are not the start's.
  int64_t params = 0;
  int64_t auxParams = 0;
  std::string auxHead;
  int64_t steps = 0;
  double finalLoss = kNoValue;      ///< mean over the last 50 steps
  double finalAccuracy = kNoValue;  ///< mean over the last 50 steps
  double computeFraction = 0;       ///< whole run
  double waitFraction = 0;
  double blockedFraction = 0;
  int64_t bytesSent = 0;            ///< measured, downstream: activations and labels
  int64_t gradBytesSent = 0;        ///< measured, upstream: boundary gradients (pipeline, overlap)
  int64_t backpropBytes = 0;        ///< local mode: what pipelined backprop would send (predicted)
  double gradCosine = kNoValue;     ///< last probe (local mode)
  int64_t peakActivationBytes = 0;  ///< tensor sizes the stage kept for its backward pass
  int64_t peakMemoryBytes = -1;  ///< most bytes the allocator held for the stage (-1: not counted)
  double paramChecksum = 0;      ///< sum of body parameters at the end (tests, comparisons)
  double meanStepSeconds = 0;    ///< mean compute time per step
  /// The idle share of the stage's step between its first and last operation, as measured and
  /// as the schedule's plan from the run's own F, B and W times has it (docs/metrics.md,
  /// "Bubble"); NaN where not measured.
  double bubbleMeasured = kNoValue;
  double bubblePlanned = kNoValue;
};

/// How busy the machine was (docs/metrics.md, "Machine load"): the 1-minute load average and the
/// share of CPU time stolen by a hypervisor over the last interval; NaN where unknown.
struct MachineLoad {
  double loadAverage = kNoValue;
  double stealShare = kNoValue;
  int cores = 0;  ///< online CPUs, to read the load against
};

struct RunSummary {
  RunStatus status = RunStatus::Completed;
  Mode mode = Mode::Local;
  int64_t steps = 0;  ///< steps finished by the last stage
  int64_t samples = 0;
  double samplesPerSec = 0;  ///< after a 20-step warm-up
  double testAccuracy = kNoValue;
  double testLoss = kNoValue;
  /// The validation split (dataset.validation) at the end; NaN (null) when there is none.
  double valAccuracy = kNoValue;
  double valLoss = kNoValue;
  /// Language models (dataset.kind text): perplexity (exp of test_loss in nats per token) and
  /// bits per byte on the test text; NaN (null) otherwise.
  double testPerplexity = kNoValue;
  double testBitsPerByte = kNoValue;
  MachineLoad loadStart;     ///< at the start of the run
  MachineLoad loadEnd;       ///< at its end
  double wallSeconds = 0;    ///< training time: time spent paused is not in it
  double pausedSeconds = 0;  ///< time the run spent paused (not in wallSeconds)
  double cpuUtilization = 0;
  double pipelineEfficiency = kNoValue;  ///< achieved / (1 / slowest stage's step time)
  int overlapLayers = 0;                 ///< local.overlap in local mode (0: chunked local updates)
  int overlapDelay = 0;  ///< steps after which a downstream gradient is applied (overlap only)
  /// Training compute: FLOPs of the steps the stages trained, forward + backward (backward = 2x
  /// forward), aux heads and overlap windows included, by the plan (trainFlops in partition.h).
  double trainFlops = 0;
  /// Probing and evaluating (docs/metrics.md, "The measurement budget"): the share of the run's
  /// CPU time they took (NaN: nothing was measured during training), the budget they had, and
  /// the points measured and left out.
  double measureShare = kNoValue;
  double measureBudget = kNoValue;
  int64_t probePoints = 0;
  int64_t evalPoints = 0;
  int64_t thinnedPoints = 0;
  int64_t skippedPoints = 0;  ///< snapshots skipped while the analysis thread was behind
  std::string blas;
  int threads = 0;  ///< total intra-op threads over all stages
  bool flushDenormal = true;
  std::string error;  ///< failed: what went wrong, naming the stage
  int failedStage = -1;
  std::vector<StageSummary> stages;
};

/// The summary as one JSON object (keys as in docs/metrics.md; unmeasured values are null). The
/// CLI's `--json` line and the run store's summary both use it.
std::string summaryToJson(const RunSummary& summary);

/// Receives a run's reports. All callbacks come from one engine thread, in order, never from
/// a compute thread; an observer may take its time without slowing training down.
class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual void onStart(const RunInfo& /*info*/) {}
  virtual void onMetrics(const std::vector<MetricPoint>& /*points*/) {}
  virtual void onSpans(const std::vector<StepSpan>& /*spans*/) {}
  virtual void onEvent(const RunEvent& /*event*/) {}
  virtual void onFinish(const RunSummary& /*summary*/) {}
};

}  // namespace stagewise::engine
