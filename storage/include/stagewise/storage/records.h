#pragma once
// Plain records the run store reads and writes. No engine types: the recorder maps
// engine::RunInfo / MetricPoint / RunSummary onto these, so the store builds on its own.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stagewise::storage {

/// Unix time in milliseconds.
using TimestampMs = int64_t;
TimestampMs nowMs();

/// Life cycle of a run record. `Interrupted`: its writer died (crash, kill, power loss) before
/// it wrote a final status. `Pruned`: a search's trial stopped at a rung because it fell behind
/// (RunStore::markRunPruned); it ended, like a completed run, and is never run again.
enum class RunStatus { Running, Completed, Stopped, Failed, Interrupted, Pruned };
std::string toString(RunStatus status);
std::optional<RunStatus> runStatusFromString(std::string_view text);

/// One stage as set up, plus its final numbers once the run has finished.
struct StageRecord {
  int index = 0;
  int firstLayer = 0;
  int lastLayer = 0;
  std::string device;
  std::string auxHead;
  int threads = 1;
  int64_t params = 0;
  int64_t auxParams = 0;
  // Written by RunWriter::finishRun; empty while running.
  std::optional<int64_t> steps;
  std::optional<double> finalLoss;
  std::optional<double> finalAccuracy;
  std::optional<double> computeFraction;
  std::optional<double> gradCosine;
};

struct LayerRecord {
  int index = 0;
  std::string name;
  std::string description;
  std::vector<int64_t> outShape;
  int64_t params = 0;
  int64_t flops = 0;
  int64_t activationBytes = 0;
};

/// Everything a run starts with (RunWriter::createRun).
struct NewRun {
  std::string name;
  std::string mode;       ///< "local" | "backprop"
  std::string specJson;   ///< the resolved spec, canonical JSON
  std::string modelKind;  ///< "mlp", ...
  int64_t totalSteps = 0;
  int batchSize = 0;
  std::string blas;
  std::string torchVersion;
  std::vector<StageRecord> stages;
  std::vector<LayerRecord> layers;
  std::vector<std::string> tags;
  std::string notes;
};

/// The end of a run (RunWriter::finishRun): final status, key numbers as sortable columns, the
/// whole summary as JSON, and each stage's final numbers (matched by StageRecord::index).
struct RunFinish {
  RunStatus status = RunStatus::Completed;
  std::string summaryJson;
  std::optional<int64_t> steps;
  std::optional<double> testAccuracy;
  std::optional<double> testLoss;
  std::optional<double> samplesPerSec;
  std::optional<double> wallSeconds;
  std::optional<double> cpuUtilization;
  std::optional<double> pipelineEfficiency;
  std::string error;
  std::optional<int> failedStage;
  std::vector<StageRecord> stages;
  /// The stages ended in another partition than they started in (a live re-partition): `stages`
  /// are whole records of the end's partition and replace the start's.
  bool replaceStages = false;
};

/// Who is (or was) writing a run: used to tell a live run from an abandoned one.
struct WriterInfo {
  int64_t pid = 0;
  std::string host;
  TimestampMs startedAtMs = 0;
  TimestampMs heartbeatAtMs = 0;
};

/// A run as listed and shown. `specJson` and `summaryJson` are filled by RunReader::run() only;
/// listRuns() leaves them empty to keep paging fast.
struct RunRecord {
  int64_t id = 0;
  std::string name;
  TimestampMs createdAtMs = 0;
  std::optional<TimestampMs> finishedAtMs;
  RunStatus status = RunStatus::Running;
  std::string mode;
  std::string modelKind;
  int stageCount = 0;
  std::vector<std::string> devices;  ///< distinct, in stage order
  int64_t totalSteps = 0;
  int batchSize = 0;
  std::string blas;
  std::string torchVersion;
  std::optional<int64_t> steps;
  std::optional<double> testAccuracy;
  std::optional<double> testLoss;
  std::optional<double> samplesPerSec;
  std::optional<double> wallSeconds;
  std::optional<double> cpuUtilization;
  std::optional<double> pipelineEfficiency;
  std::string error;
  std::optional<int> failedStage;
  std::string notes;
  std::vector<std::string> tags;  ///< sorted
  WriterInfo writer;
  std::string specJson;
  std::string summaryJson;
};

/// Life cycle of a study (a sweep of runs): `Interrupted`, its process died before it wrote a
/// final status; `Stopped`, the user stopped it; both can be resumed.
enum class StudyStatus { Running, Stopped, Interrupted, Completed };
std::string toString(StudyStatus status);
std::optional<StudyStatus> studyStatusFromString(std::string_view text);

/// One varied key of a study and its values, a JSON array (`[0.001,0.0003]`).
struct StudyKeyRecord {
  std::string key;
  std::string valuesJson;
};

/// Everything a study starts with (RunStore::createStudy).
struct NewStudy {
  std::string name;
  std::string baseSpecJson;  ///< the base experiment with the study's --set applied
  std::vector<StudyKeyRecord> keys;
  int seeds = 1;
  int sample = 0;  ///< > 0: that many grid points drawn at random
  int64_t sampleSeed = 1;
  std::optional<double> target;  ///< the accuracy for time-to-target; empty: the default
  int runsTotal = 0;             ///< grid points x seeds (or sample x seeds)
  /// A search: the study object's search, trials, sampler, prune and tune (JSON); empty: a grid.
  std::string searchJson;
};

/// A study as listed and shown.
struct StudyRecord {
  int64_t id = 0;
  std::string name;
  TimestampMs createdAtMs = 0;
  std::optional<TimestampMs> finishedAtMs;
  StudyStatus status = StudyStatus::Running;
  std::string baseSpecJson;
  std::vector<StudyKeyRecord> keys;
  int seeds = 1;
  int sample = 0;
  int64_t sampleSeed = 1;
  std::optional<double> target;
  int runsTotal = 0;
  int runsCompleted = 0;   ///< points with a completed run that is not replaced
  int runsPruned = 0;      ///< points with a pruned run that is not replaced
  std::string searchJson;  ///< see NewStudy
  WriterInfo writer;
};

/// A run's place in a study: which point of its order it makes (a run shared by points whose
/// resolved specs are equal is linked once per point). `replaced`: a stopped or interrupted run
/// that was run again from the start; it stays in the store, linked, and no longer counts.
struct StudyRunRecord {
  int point = 0;
  int64_t runId = 0;
  int64_t seed = 1;
  std::string valuesJson;  ///< the point's values, a JSON array in key order
  bool replaced = false;
  RunStatus runStatus = RunStatus::Running;
  /// A pruned trial: the rung (steps) at which it was stopped.
  std::optional<int64_t> prunedAt;
};

/// Identifies a series within a run: per-stage series carry the stage, run series stage -1,
/// per-layer series a layer >= 0 (docs/metrics.md).
struct SeriesKey {
  std::string name;
  int stage = -1;
  int layer = -1;
  friend bool operator==(const SeriesKey&, const SeriesKey&) = default;
};

/// A series of one run with its extent.
struct SeriesInfo {
  int64_t id = 0;
  int64_t runId = 0;
  SeriesKey key;
  int64_t pointCount = 0;
  int64_t firstStep = 0;
  int64_t lastStep = 0;
  double firstTimeS = 0;
  double lastTimeS = 0;
};

/// One point handed to the writer.
struct PointInput {
  std::string name;
  int stage = -1;
  int layer = -1;
  int64_t step = 0;
  double timeS = 0;  ///< seconds since the run started
  double value = 0;  ///< NaN is kept (it reads back as NaN)
};

/// One point read back, in write order.
struct SeriesPoint {
  int64_t step = 0;
  double timeS = 0;
  double value = 0;
};

/// One span of a stage's timeline handed to the writer (RunWriter::appendSpans): a step's or a
/// micro-batch's compute, or a wait, as the engine timed it. `kind` is the engine's span kind
/// in lower case: "step", "forward", "backward", "weight", "recompute", "wait", "blocked",
/// "aux". The store keeps a bounded share of them (docs/metrics.md, "Spans kept").
struct SpanInput {
  int stage = 0;
  int64_t step = 0;
  double startS = 0;  ///< seconds since the run started
  double endS = 0;
  std::string kind;
  int micro = -1;  ///< the micro-batch; -1 for a whole step or the update
};

/// A span read back (RunReader::spans), ordered by stage, then start.
using SpanRecord = SpanInput;

struct EventInput {
  std::string kind;  ///< "started", "failed", "checkpoint", "info", ... (engine::toString)
  double timeS = 0;
  int stage = -1;
  std::string message;
};

struct EventRecord {
  int64_t id = 0;
  std::string kind;
  double timeS = 0;
  int stage = -1;
  std::string message;
  TimestampMs wallMs = 0;  ///< when the writer received it
};

struct CheckpointRecord {
  int64_t id = 0;
  std::string path;
  int64_t step = 0;
  TimestampMs createdAtMs = 0;
};

/// The x axis a series is read or aligned on.
enum class XAxis { Step, Time };

/// One pixel column of a decimated series. `min`/`max` cover every point that falls in the
/// column, so a one-point spike is never averaged away; `first`/`last` are the values of the
/// first and last points in write order (for a line through the column).
struct PlotBucket {
  double x = 0;      ///< x of the first point in the column
  double xLast = 0;  ///< x of the last point in the column
  double min = 0;
  double max = 0;
  double first = 0;
  double last = 0;
  int64_t count = 0;
};

/// A series read for plotting.
struct DecimatedSeries {
  std::vector<PlotBucket> buckets;  ///< ordered by x, empty columns left out
  int64_t pointCount = 0;           ///< points in the requested range
  int level = 0;  ///< 0: computed from raw points; else the bucket size of the summary level used
};

/// A series of a run, as named in several-run queries.
struct SeriesRef {
  int64_t runId = 0;
  SeriesKey key;
};

/// Several series (of one or several runs) sampled on one x grid (RunReader::alignSeries).
/// x runs from the start to the end of the range in equal steps. values[i][k] is refs[i]'s last
/// value at or before x[k] (hold-last); NaN before its first point, after the grid point that
/// follows its last point, and for a series that does not exist.
/// points[i] holds refs[i]'s own points (x by the axis, value) when it has no more points than
/// half the grid (evaluations, probes): drawn as they are, not held in steps across the grid.
struct AlignedSeries {
  XAxis axis = XAxis::Step;
  std::vector<double> x;
  std::vector<std::vector<double>> values;
  std::vector<std::vector<std::pair<double, double>>> points;
};

/// A dotted spec key whose value differs between runs; values[i] is the JSON text for the i-th
/// run asked, nullopt where that run's spec lacks the key.
struct SpecDifference {
  std::string key;
  std::vector<std::optional<std::string>> values;
};

}  // namespace stagewise::storage
