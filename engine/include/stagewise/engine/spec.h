#pragma once
// Experiment specification: what to train, how to cut it, how to run it.
// Plain structs, no LibTorch. JSON format documented in docs/experiment-format.md.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace stagewise::engine {

/// Training method: independent local updates per stage; the end-to-end baseline in one
/// process; or pipelined backprop (the same stages and channels as local mode, trained end to end
/// in micro-batches, with the boundary gradients travelling back).
enum class Mode { Local, Backprop, Pipeline };

std::string toString(Mode mode);
std::optional<Mode> modeFromString(std::string_view text);

/// Per-stage execution settings (resolved: defaults with the stage's overrides applied).
struct StageSettings {
  std::string device = "cpu";  ///< "cpu" or "cuda:N"
  std::string auxHead =
      "linear";            ///< linear | mlp | conv (cnn) | token (vit); unused by the last stage
  int auxHidden = 256;     ///< hidden width of an "mlp" aux head
  int threads = 1;         ///< intra-op threads of the stage's compute thread
  std::vector<int> cores;  ///< CPU cores to pin the stage to; empty: no pinning
  double lrScale = 1.0;    ///< multiplies train.lr for this stage
  int delayMs = 0;         ///< straggler injection: sleep per step
  int rank = -1;           ///< distributed runs: the process (rank) that runs the stage; -1: auto
};

/// Optional per-stage overrides of StageSettings, as written in the spec's `stages` list.
struct StageOverride {
  std::optional<std::string> device;
  std::optional<std::string> auxHead;
  std::optional<int> auxHidden;
  std::optional<int> threads;
  std::optional<std::vector<int>> cores;
  std::optional<double> lrScale;
  std::optional<int> delayMs;
  std::optional<int> rank;
};

struct DatasetSpec {
  /// fashion-mnist | idx | cifar10 | synthetic | image_folder | text
  std::string kind = "fashion-mnist";
  /// idx / cifar10 / image_folder: a folder (fashion-mnist: optional); text: a UTF-8 file or a
  /// folder of text files (empty: the fortunes corpus)
  std::string path;
  int64_t limitTrain = 0;  ///< use only the first N training samples (0: all)
  int64_t limitTest = 0;   ///< use only the first N test samples (0: all)
  // synthetic: Gaussian clusters, deterministic for a seed
  int64_t syntheticTrain = 4096;
  int64_t syntheticTest = 1024;
  int syntheticFeatures = 32;
  int syntheticClasses = 4;
  /// Image datasets: each training batch randomly cropped (after zero padding by H/8) and
  /// flipped left-right, seeded by (train.seed, step), so the same for every run of a seed.
  bool augment = false;
  /// Every training label replaced by one drawn uniformly from the classes, seeded by
  /// train.seed (the test set keeps its labels): can a method memorise what it cannot learn?
  bool randomLabels = false;
  /// The share of the training samples held out for validation (0: none; at most 0.5). Which
  /// ones depends on the training-set size alone (not the seed): every method and seed of a
  /// dataset sees the same split. Training uses the rest; validation keeps the true labels.
  double validation = 0.0;
  /// image_folder: every image resized to [H, W] (empty: the first training image's size).
  std::vector<int> size;
  /// image_folder: 1 (grey) or 3 (RGB) channels per sample.
  int channels = 3;
  /// text: tokens (bytes) per sample; a sample predicts each next byte of its window.
  int context = 128;
  /// text: the last share of the text (by position) is the test text.
  double testFraction = 0.1;
};

/// One entry of `model.layers` (model.kind "layers"). Every entry of the top list is a cuttable
/// layer; `sequential` and `residual` hold inner layers (`layers`) that form one entry. Fields
/// a type does not use keep their defaults and are not written to JSON.
struct LayerSpec {
  /// linear | conv2d | batchnorm1d | batchnorm2d | layernorm | relu | gelu | silu | tanh |
  /// maxpool2d | avgpool2d | adaptive_avgpool2d | flatten | dropout | residual | sequential |
  /// patch_embed | transformer_block | token_mean
  std::string type;
  std::string name;                          ///< optional display name ("fc3", "classifier")
  int64_t out = 0;                           ///< linear: output features; conv2d: output channels
  int kernel = 0;                            ///< conv2d, maxpool2d, avgpool2d
  int stride = 0;                            ///< conv2d: 1 when 0; pools: the kernel when 0
  int padding = 0;                           ///< conv2d, pools
  int groups = 1;                            ///< conv2d
  bool bias = true;                          ///< linear, conv2d
  double p = 0.5;                            ///< dropout: the share of features zeroed in training
  std::vector<int64_t> outputSize = {1, 1};  ///< adaptive_avgpool2d: [H, W]
  int patch = 0;                             ///< patch_embed: patch side (divides H and W)
  int dim = 0;                    ///< patch_embed, transformer_block: token width (0: the input's)
  int heads = 0;                  ///< transformer_block: attention heads (divide dim)
  int mlpRatio = 2;               ///< transformer_block: MLP hidden width = dim * mlp_ratio
  std::vector<LayerSpec> layers;  ///< residual, sequential: the inner layers, in order
};

struct ModelSpec {
  /// mlp | cnn | vit (families) | layers (model.layers) | torchscript (model.path) | gpt
  std::string kind = "mlp";
  std::vector<int> hidden = std::vector<int>(8, 512);  ///< mlp: hidden widths, one layer each
  std::string activation = "relu";                     ///< mlp: relu | gelu | tanh
  std::vector<int> channels = {32, 64, 128};  ///< cnn: width of each group of residual blocks
  std::vector<int> blocks = {2, 2,
                             2};  ///< cnn: blocks per group (groups after the first halve H, W)
  int patch = 7;                  ///< vit: patch size (must divide H and W)
  int dim = 64;                   ///< vit: token width
  int depth = 4;                  ///< vit: encoder blocks
  int heads = 4;                  ///< vit: attention heads (must divide dim)
  int mlpRatio = 2;               ///< vit: MLP hidden width = dim * mlp_ratio
  /// Initial weights of every Linear and convolution (the layers and the aux heads): default
  /// (LibTorch's own) | kaiming (He: normal, fan-in) | xavier (Glorot: uniform); biases 0 with
  /// kaiming and xavier. Drawn from the seed like the default.
  std::string init = "default";
  /// mlp: a normalisation in every hidden layer, Linear -> norm -> activation: none |
  /// layernorm | batchnorm. The classifier has none.
  std::string norm = "none";
  /// layers: the network, one cuttable entry each (the families expand to such a list).
  std::vector<LayerSpec> layers;
  /// torchscript: the TorchScript file (torch.jit.script(model).save(path)); its top-level
  /// children, in order, are the layers.
  std::string path;
  /// torchscript: draw new starting weights from the seed instead of the file's.
  bool reinit = false;
};

struct PartitionSpec {
  std::vector<int> cuts;           ///< layer indices where stages 2..K begin
  std::string balance = "manual";  ///< manual | flops (then `stages` gives the stage count)
  int numStages = 0;               ///< used by balance=flops
};

struct TrainSpec {
  int batchSize = 32;
  int epochs = 1;
  int64_t maxSteps = 0;            ///< 0: run `epochs` full epochs
  std::string optimizer = "adam";  ///< adam | sgd
  double lr = 1e-3;
  double weightDecay = 0.0;
  double momentum = 0.9;  ///< sgd only
  uint64_t seed = 1;
  int queueCapacity = 4;    ///< bounded queue between stages (allowed staleness)
  int backpropThreads = 0;  ///< intra-op threads in backprop mode; 0: one per core
  /// Learning rate over the run: constant | cosine | linear (decay to 0 at the last step),
  /// after a linear warm-up from 0 over `warmupSteps` steps.
  std::string lrSchedule = "constant";
  int64_t warmupSteps = 0;
  /// Gradient clipping by global norm (0: off): per stage in local mode, over the whole model in
  /// backprop and pipeline modes.
  double clipNorm = 0.0;
};

/// Local updates (mode "local").
struct LocalSpec {
  /// Overlapping local updates: stage s+1's loss also trains the last `overlap` layers of stage
  /// s, applied `train.queue_capacity` + 1 steps later (0: chunked, every stage on its own).
  int overlap = 0;
};

/// Pipelined backprop (mode "pipeline").
struct PipelineSpec {
  int microBatches = 0;  ///< M micro-batches per batch; 0: one per stage
  /// gpipe (fill-drain) | 1f1b (PipeDream-flush order) | interleaved (Megatron's interleaved
  /// 1F1B: each worker runs `chunks` non-adjacent stages) | zb-h1 (zero-bubble H1: each
  /// micro-batch's backward split into B, the input's gradient, sent upstream at once, and W, the
  /// weights' gradient, deferred into idle time).
  std::string schedule = "gpipe";
  /// interleaved: v, the model chunks each worker (thread or rank) runs. The partition's stages
  /// are the chunks: K stages run on K / v workers, stage k on worker k mod (K / v). 1 otherwise.
  int chunks = 1;
  /// Activation recomputation: each stage keeps only its input per micro-batch and runs its
  /// forward pass again before the backward (as GPipe does).
  bool recompute = false;
};

/// What the store keeps of a run's timeline (its spans), for the Timeline and `runs trace`.
struct TimelineSpec {
  /// The most spans recorded; 0: enough for the last 200 steps and a sample across the run.
  int64_t maxSpans = 0;
};

struct EvalSpec {
  int64_t interval = 1000;  ///< steps between test evaluations (0: only at the end)
  /// Periodic evaluations use the first N test samples (0: all); the final one, after training,
  /// always uses the whole test set.
  int64_t maxSamples = 0;
};

struct ProbeSpec {
  int64_t interval = 100;  ///< steps between gradient-cosine probes (0: only at the end, -1: never)
  int batchSize = 256;
};

/// How much probing and evaluating may cost (docs/metrics.md, "The measurement budget").
struct MeasureSpec {
  /// The most the probe and the periodic evaluations may take of the CPU time training takes,
  /// as a share (0.05: 5 %); a point of their schedules is measured only while the share stays
  /// within it, but never fewer than kMinPoints of each per run. 0: no budget, every point.
  double budget = 0.05;
  static constexpr int kMinPoints = 10;  ///< probes and evaluations kept whatever the budget
};

/// Consistent checkpoints: at every `interval` steps the loader pauses, the pipeline drains and
/// every stage's weights, batch-norm statistics and optimizer state are saved with the step.
struct CheckpointSpec {
  int64_t interval = 0;  ///< steps between checkpoints (0: none, unless at_stop with a dir)
  std::string dir;       ///< folder for step-N/ checkpoints (empty: the default data folder)
  bool atStop = true;    ///< a stop drains the pipeline and saves (when checkpointing is on)
  bool enabled() const { return interval > 0 || !dir.empty(); }
};

/// Runs whose stages live in several processes (stagewise-cli launch / train --dist). Which
/// process runs a stage is `stages[i].rank`; rank, world size and master address are given per
/// process (flags or RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), not in the spec.
struct DistributedSpec {
  double timeoutS = 60;          ///< a rank silent this long (or absent at start) ends the run
  std::string backend = "auto";  ///< auto | gloo | nccl (nccl: both ends of a boundary on CUDA)
};

/// Fault hooks for tests.
struct DebugSpec {
  int64_t failAtStep = -1;  ///< the stage throws at this step
  int64_t nanAtStep = -1;   ///< the stage's input turns NaN at this step
  int stage = 0;            ///< which stage the hooks apply to
  /// The checkpoint at this step fails after its stage files are written, as a full disk
  /// would make it (-1: never). Written to the canonical JSON only when set.
  int64_t failCheckpoint = -1;
};

/// A whole experiment. Field names mirror the JSON keys (snake_case there).
struct ExperimentSpec {
  std::string name;
  DatasetSpec dataset;
  ModelSpec model;
  PartitionSpec partition;
  StageSettings stageDefaults;
  std::vector<StageOverride> stages;  ///< empty, or exactly one entry per stage
  Mode mode = Mode::Local;
  TrainSpec train;
  LocalSpec local;
  PipelineSpec pipeline;
  TimelineSpec timeline;
  EvalSpec eval;
  ProbeSpec probe;
  MeasureSpec measure;
  CheckpointSpec checkpoint;
  DistributedSpec distributed;
  DebugSpec debug;

  /// Number of stages implied by the cuts (or partition.numStages when balancing).
  int stageCount() const;
  /// Defaults with stage `index`'s overrides applied.
  StageSettings stageSettings(int index) const;
};

/// Invalid input: `field` is the dotted JSON key ("train.batch_size"), `what()` says what to fix.
class SpecError : public std::runtime_error {
 public:
  SpecError(std::string field, std::string message, const std::string& source = {});
  const std::string& field() const { return m_field; }
  const std::string& message() const { return m_message; }

 private:
  std::string m_field;
  std::string m_message;
};

/// Parses and type-checks a spec (unknown keys and wrong types are errors). Throws SpecError.
ExperimentSpec parseSpec(std::string_view json);
/// Reads a spec file; errors name the file. Throws SpecError.
ExperimentSpec loadSpec(const std::string& path);
/// Canonical JSON for a spec (round-trips through parseSpec).
std::string specToJson(const ExperimentSpec& spec, int indent = 2);

/// Applies `dotted.key=value` overrides to a JSON document; the value is read as JSON where it
/// parses, else as a string. Throws SpecError for a malformed assignment.
std::string applyOverrides(std::string_view json, const std::vector<std::string>& assignments);

/// One problem found by semantic validation, with the field to change.
struct Problem {
  std::string field;
  std::string message;
};

/// The rank that runs each of `numStages` stages in a run of `worldSize` processes: a stage's
/// `rank` where set, else stages are spread in order over the ranks in contiguous blocks (one
/// stage per rank when the counts match). Throws SpecError naming the field when a rank is out
/// of range, a rank would run no stage, or the spec cannot run distributed (backprop mode,
/// checkpoints).
std::vector<int> assignRanks(const ExperimentSpec& spec, int numStages, int worldSize);

/// Checks value ranges, devices and stage counts that parsing cannot (cuts against the model:
/// see partition.h). `devices` lists the devices that exist ("cpu", "cuda:0", ...).
std::vector<Problem> validateSpec(const ExperimentSpec& spec, int numLayers,
                                  const std::vector<std::string>& devices);

}  // namespace stagewise::engine
