#pragma once
// The paper's findings checked against our own runs (issue 16). Each finding is judged by a
// rule fixed before the data is seen (docs/replication.md; the thresholds are the constants
// below), from the runs the suite made, read back from the store as RunData. Pure functions:
// the tests feed them stored runs made for the test. Torch-free and Qt-free.

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "stagewise/report/plot.h"
#include "stagewise/study/study.h"

namespace stagewise::report {

/// HoldsByConstruction: the rule's outcome follows from how the engine works, not from what the
/// runs measured (the reason says why); never counted as evidence.
enum class Verdict { Reproduced, NotReproduced, Inconclusive, HoldsByConstruction };
/// "reproduced", "not_reproduced", "inconclusive", "holds_by_construction".
std::string toString(Verdict verdict);

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// What a finding needs of one stored run.
struct RunData {
  int64_t id = 0;
  std::string mode;  ///< local | backprop | pipeline
  int stages = 1;    ///< stages the run trained (backprop: 1)
  int batchSize = 0;
  int64_t seed = 1;
  int overlap = 0;     ///< local.overlap
  int numClasses = 0;  ///< the dataset's classes (chance = 1 / classes)
  int64_t steps = 0;   ///< finished by the last stage
  int64_t totalSteps = 0;
  double samplesPerSec = kNaN;
  double wallSeconds = kNaN;
  double testAccuracy = kNaN;
  /// issue 34: a language model on text. Its learning findings read test bits per byte (lower
  /// is better) where an image run's read test accuracy: `evals` and `valEvals` then hold bits
  /// per byte in EvalPoint::accuracy (the test_loss series / ln 2: nats per byte token).
  bool text = false;
  double testBitsPerByte = kNaN;  ///< the stored testLoss / ln 2 (text only)
  double trainFlops = kNaN;
  /// Training FLOPs per sample of the whole run, and of its most expensive stage: a step's
  /// sequential work when every stage has a processor of its own.
  double flopsPerSample = kNaN;
  double slowestStageFlopsPerSample = kNaN;
  struct Stage {
    int index = 0;
    int firstLayer = 0;
    int lastLayer = 0;
    int64_t steps = 0;
    int64_t bytesSent = 0;
    int64_t gradBytesSent = 0;
    int64_t peakMemoryBytes = -1;  ///< the allocator; -1: not counted
    int64_t peakActivationBytes = 0;
    double finalAccuracy = kNaN;  ///< the stage head's training accuracy, last 50 steps
    // issue 37: the stage's idle share, as measured and as its schedule plans it (the summary's
    // bubble_measured, bubble_planned; NaN where the run has none, backprop's)
    double bubbleMeasured = kNaN;
    double bubblePlanned = kNaN;
  };
  std::vector<Stage> stageData;
  std::vector<study::EvalPoint> evals;  ///< test accuracy over training (text: bits per byte)
  /// grad_cosine per layer and per stage: (step, value) in step order.
  std::map<int, std::vector<std::pair<int64_t, double>>> layerCosine;
  std::map<int, std::vector<std::pair<int64_t, double>>> stageCosine;
  /// The model head's training accuracy per step (the last stage's `accuracy` series).
  std::vector<std::pair<int64_t, double>> headAccuracy;
  // issue 32 §6
  int microBatches = 0;     ///< pipeline: M micro-batches per batch (resolved: 0 -> stages)
  int optimizerStates = 0;  ///< tensors of optimizer state per parameter (adam 2, sgd 1 or 0)
  std::vector<int64_t> stageParams;  ///< per stage: parameters it trains (body + aux head)
  /// Validation accuracy over training (empty when dataset.validation is 0).
  std::vector<study::EvalPoint> valEvals;
  // issue 37
  std::string schedule = "gpipe";  ///< pipeline.schedule (gpipe | 1f1b | interleaved | zb-h1)
  int chunks = 1;                  ///< pipeline.chunks (interleaved: model chunks per worker)
  bool recompute = false;          ///< pipeline.recompute
};

/// A table a finding shows beside its plots (report.html, report.json's "tables", the CLI's
/// Markdown): cells already formatted.
struct Table {
  std::string title;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
};

/// One finding as the report states it.
struct Finding {
  std::string id;     ///< one of the fixed ids (kFindingIds)
  std::string title;  ///< a heading
  std::string claim;  ///< the paper's statement
  std::optional<double> paperValue;
  std::string paperSource;  ///< where the paper's number comes from (its hardware)
  std::string oursJson;     ///< our measurement, a JSON object (numbers and their spread)
  std::string oursText;     ///< the same in one line
  std::string rule;         ///< the verdict rule in words, with its thresholds
  Verdict verdict = Verdict::Inconclusive;
  std::string why;  ///< one sentence
  std::vector<int64_t> runs;
  std::vector<Plot> plots;
  std::vector<Table> tables;  ///< issue 37: the throughput's schedules, recomputation's settings
  // issue 32 §5
  /// A learning finding judged at a set of learning rates, by the same rule.
  struct AtRates {
    /// Per method its settings, JSON: {"local": {"train.lr": 0.0003, "val_accuracy": 0.84}}
    /// (tuned: the rate the search chose and the validation metric it was chosen on).
    std::string settingsJson = "{}";
    Verdict verdict = Verdict::Inconclusive;
    std::string reason;  ///< as Finding::reason ("not_converged", ...)
    std::string oursJson, oursText, why;
    std::vector<int64_t> runs;
    int64_t studyId = 0;  ///< the study of these runs in the store
  };
  /// The learning findings (accuracy, gradient similarity, overlap, the front, random labels)
  /// are judged twice: `tuned`, each method at its own chosen rate (what the fields above say),
  /// and `sharedLr`, every method at the base's rate. Empty for the systems findings.
  std::optional<AtRates> tuned, sharedLr;
  // issue 32 §6: which of the paper's findings it tests and how its verdict was reached
  int paperFinding = 0;   ///< 1..6 (kPaperFindings); 0: an extra check, not a claim of the paper
  std::string reason;     ///< "by_construction", "not_converged", "not_applicable" or empty
  std::string carriedBy;  ///< compute_time_front: "flops_model", "wall_time", "both", "neither"
  std::string settings;   ///< the methods' settings the finding compares (pipeline's M), in words
  std::string convergenceJson;  ///< the not-converged check per method (a JSON object), or empty
  int64_t decideSteps = 0;      ///< not converged: a run length (steps) that would decide it
};

/// The paper's six findings (issue 32 §5), numbered as Finding::paperFinding.
inline const std::vector<std::string> kPaperFindings = {
    "up to 10x fewer sequential steps on MLPs and 2x on Transformers",
    "+40 % samples/s over backprop for ResNet-34 on ImageNet, from better hardware use",
    "about half the communication of pipelined backprop: 43.2 MB against 86.4 MB on 4 processors",
    "memory consistently lower or comparable, most of all with many micro-batches and processors",
    "local updates keep features and gradients similar to backprop's",
    "activation recomputation lowers backprop's memory but does not cancel local parallelism's "
    "advantage at scale"};

/// "extra" for a check that is none of the paper's findings, else "paper".
inline std::string kindOf(const Finding& f) {
  return f.paperFinding > 0 ? "paper" : "extra";
}
/// The verdict as a reader reads it: "reproduced", "not reproduced", "inconclusive",
/// "inconclusive: not converged", "holds by construction".
std::string verdictWords(const Finding& f);
/// The same for a finding judged at a set of rates (its tuned or shared-lr result).
std::string verdictWords(const Finding::AtRates& a);

/// The ids, in the report's order.
inline const std::vector<std::string> kFindingIds = {
    "gradient_similarity",  "communication", "memory",  "memory_recompute",
    "throughput_vs_stages", "accuracy",      "overlap", "compute_time_front",
    "random_labels"};

/// The thresholds of the verdict rules (docs/replication.md); fixed before any data was seen.
namespace rules {
inline constexpr double kRankReproduced = 0.7;  ///< gradient_similarity: mean Spearman rho
inline constexpr double kRankNotReproduced = 0.3;
inline constexpr double kLastPart = 1.0 / 3;  ///< cosines averaged over the last third
inline constexpr double kBytesLow = 0.4;      ///< communication: local / pipeline bytes
inline constexpr double kBytesHigh = 0.6;
inline constexpr double kBytesNot = 0.75;
/// memory: local / pipeline peak; memory_recompute: local / the recomputing pipeline's peak
inline constexpr double kMemoryLower = 0.9;
inline constexpr double kMemoryHigher = 1.1;
inline constexpr double kSpeedReproduced = 1.2;  ///< throughput: local / pipeline samples/s
inline constexpr double kSpeedNot = 1.0;
inline constexpr double kAccuracyTolerance = 0.02;  ///< accuracy: local within 2 points
/// Text (issue 34): local within 0.05 bits per byte of backprop; also the not-converged rule's
/// gain on text (bits per byte another run length would still take off).
inline constexpr double kBitsPerByteTolerance = 0.05;
inline constexpr double kNoise = 2.0;            ///< "beyond noise": 2 standard errors
inline constexpr double kFrontReproduced = 0.8;  ///< front: local / backprop sequential time
inline constexpr double kFrontTarget = 0.98;     ///< target = 0.98 x the worst group's best
inline constexpr double kFitReproduced = 0.5;    ///< random labels: backprop's fit
inline constexpr double kFitGap = 0.2;           ///< ... and its lead over local
inline constexpr double kFitGapNot = 0.05;
/// Not converged (every learning finding): per run, the least-squares slope of its metric over
/// the last quarter of its evaluations (at least kRisingPoints of them), times the run's length,
/// is the gain another run length would bring at that rate. A method is still rising when its
/// runs' mean gain exceeds kRisingGain (the accuracy rule's tolerance: another run length could
/// move it by more than the comparison tolerates) and is positive beyond noise (mean - kNoise
/// standard errors over its runs > 0; one run has no noise estimate); the finding is then
/// inconclusive: not converged.
inline constexpr double kRisingPart = 0.25;
inline constexpr int kRisingPoints = 3;
inline constexpr double kRisingGain = 0.02;
/// Communication holds by construction when every boundary's gradient (pipeline) is as large as
/// its activation, and local mode sends what the pipeline sends forward, within this share.
inline constexpr double kSameBytes = 0.01;
}  // namespace rules

/// 1. Cosine falls toward the input: per seed, the Spearman rank correlation between a layer's
/// depth and its mean grad_cosine over the last third of training, over the layers of every
/// stage but the last (whose cosine is 1 by construction); averaged over seeds.
Finding judgeGradientSimilarity(const std::vector<RunData>& localRuns);
/// 2. Bytes per sample across each boundary, local (activations + labels forward) against
/// pipelined backprop (activations forward + gradients back), both measured.
Finding judgeCommunication(const std::vector<RunData>& local, const std::vector<RunData>& pipeline);
/// 3. The largest per-stage allocator peak of local, pipeline and backprop runs.
Finding judgeMemory(const std::vector<RunData>& local, const std::vector<RunData>& pipeline,
                    const std::vector<RunData>& backprop);
/// 3b (issue 37, the paper's finding 6). Local against GPipe with and without pipeline.recompute
/// at a few stage counts and micro-batch counts (`runs`: every run of the three, told apart by
/// mode and RunData::recompute), judged at the largest setting measured (most stages, then most
/// micro-batches); every setting is shown in a table.
Finding judgeMemoryRecompute(const std::vector<RunData>& runs);
/// 4. Samples/s over 1..K stages per method (every round's run), with the machine's cores. The
/// pipeline at each stage count is its best (schedule, M) (issue 37); a table shows each
/// schedule's samples/s and its measured and planned bubble per stage count.
Finding judgeThroughput(const std::vector<RunData>& runs, int cores);
/// 5. Local against backprop at equal epochs (final accuracy) and equal wall time.
Finding judgeAccuracy(const std::vector<RunData>& local, const std::vector<RunData>& backprop);
/// 6. Overlapping against chunked local updates: cosine and accuracy.
Finding judgeOverlap(const std::vector<RunData>& chunked, const std::vector<RunData>& overlapping);
/// 7. Total compute against sequential time (and wall time) to a target accuracy.
Finding judgeFront(const std::vector<RunData>& runs);
/// 8. Fitting random labels: the model head's training accuracy, backprop against local. On
/// text (`text`, or a text run among them) it does not apply: Inconclusive, reason
/// "not_applicable".
Finding judgeRandomLabels(const std::vector<RunData>& local, const std::vector<RunData>& backprop,
                          bool text = false);

}  // namespace stagewise::report
