#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include "model/layer_plan.h"
#include "stagewise/engine/partition.h"
#include "stagewise/engine/pipeline_schedule.h"
#include "stagewise/engine/spec.h"

namespace stagewise::engine {

namespace {

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

void checkStage(const StageSettings& s, const std::string& at,
                const std::vector<std::string>& devices, const std::string& modelKind, Mode mode,
                bool text, std::vector<Problem>& out) {
  if (std::find(devices.begin(), devices.end(), s.device) == devices.end())
    out.push_back({at + ".device",
                   "device '" + s.device + "' does not exist here; available: " + joined(devices)});
  // model.layers: whether a stage's boundary is an image or tokens is the plan's to say
  // (makePartition checks it).
  if (s.auxHead != "linear" && s.auxHead != "mlp" && s.auxHead != "conv" && s.auxHead != "token" &&
      s.auxHead != "lm")
    out.push_back({at + ".aux_head", "unknown aux head '" + s.auxHead +
                                         "'; use linear, mlp, conv (cnn, layers), token (vit, "
                                         "layers) or lm (gpt)"});
  else if (s.auxHead == "lm" && !text)
    out.push_back({at + ".aux_head",
                   "the lm aux head predicts every next token of a gpt model; "
                   "a " +
                       modelKind + " model classifies whole samples: use linear or mlp"});
  else if (s.auxHead != "lm" && text && mode == Mode::Local)
    // The image heads would flatten the [context, dim] tokens into one class per sample.
    out.push_back({at + ".aux_head", "a " + modelKind +
                                         " model's stages predict every next token: the " +
                                         s.auxHead + " aux head is for image models; use lm"});
  else if (s.auxHead == "conv" && modelKind != "cnn" && modelKind != "layers")
    out.push_back({at + ".aux_head", "the conv aux head needs a cnn model; use linear or mlp"});
  else if (s.auxHead == "token" && modelKind != "vit" && modelKind != "layers")
    out.push_back({at + ".aux_head", "the token aux head needs a vit model; use linear or mlp"});
  if (s.auxHidden < 1 || s.auxHidden > 65536)
    out.push_back({at + ".aux_hidden", "must be between 1 and 65536"});
  if (s.threads < 1 || s.threads > 256)
    out.push_back({at + ".threads", "must be between 1 and 256"});
  int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int c : s.cores)
    if (c < 0 || c >= hw)
      out.push_back({at + ".cores", "core " + std::to_string(c) +
                                        " does not exist; this machine has cores 0.." +
                                        std::to_string(hw - 1)});
  if (!(s.lrScale >= 0) || !std::isfinite(s.lrScale))
    out.push_back({at + ".lr_scale", "must be a finite number >= 0"});
  if (s.delayMs < 0 || s.delayMs > 60000)
    out.push_back({at + ".delay_ms", "must be between 0 and 60000"});
  if (s.rank < -1 || s.rank > 4095)
    out.push_back(
        {at + ".rank",
         "must be a process rank between 0 and 4095, or -1 (spread stages over the ranks)"});
}

}  // namespace

std::vector<Problem> validateSpec(const ExperimentSpec& spec, int numLayers,
                                  const std::vector<std::string>& devices) {
  std::vector<Problem> out;
  const auto& d = spec.dataset;
  if (d.kind != "fashion-mnist" && d.kind != "idx" && d.kind != "cifar10" &&
      d.kind != "synthetic" && d.kind != "image_folder" && d.kind != "text")
    out.push_back({"dataset.kind", "unknown dataset '" + d.kind +
                                       "'; use fashion-mnist, idx, cifar10, image_folder, "
                                       "synthetic or text"});
  if (d.context < 1 || d.context > 4096)
    out.push_back({"dataset.context", "must be between 1 and 4096 tokens (bytes) per sample"});
  if (!(d.testFraction > 0 && d.testFraction < 1))
    out.push_back({"dataset.test_fraction",
                   "must be the share of the text held out for testing, between 0 and 1 "
                   "(0.1: the last 10 %)"});
  if (d.kind == "text" && (d.augment || d.randomLabels || d.validation > 0))
    out.push_back({d.augment        ? "dataset.augment"
                   : d.randomLabels ? "dataset.random_labels"
                                    : "dataset.validation",
                   "is not available for text (its test text is the last dataset.test_fraction): "
                   "remove it"});
  // The gpt reads token ids, the other models pixels or features.
  if (d.kind == "text" && spec.model.kind != "gpt" && spec.model.kind != "layers")
    out.push_back({"model.kind",
                   "a text dataset needs a gpt model (byte tokens, every next "
                   "byte predicted); the " +
                       spec.model.kind + " classifies images or features"});
  if (spec.model.kind == "gpt" && d.kind != "text")
    out.push_back({"dataset.kind",
                   "a gpt model reads text: set dataset.kind to text (the "
                   "fortunes corpus by default)"});
  if ((d.kind == "idx" || d.kind == "cifar10" || d.kind == "image_folder") && d.path.empty())
    out.push_back({"dataset.path", "a " + d.kind + " dataset needs the folder holding its files"});
  if (d.limitTrain < 0) out.push_back({"dataset.limit_train", "must be >= 0 (0: all)"});
  if (d.limitTest < 0) out.push_back({"dataset.limit_test", "must be >= 0 (0: all)"});
  if (d.augment && d.kind == "synthetic")
    out.push_back({"dataset.augment",
                   "crops and flips are for image datasets; the synthetic one has "
                   "feature vectors: set it to false"});
  if (!(d.validation >= 0 && d.validation <= 0.5))
    out.push_back({"dataset.validation",
                   "must be the share of the training samples held out for validation, between "
                   "0 and 0.5 (0.1: 10 %; 0: none)"});
  if (!d.size.empty() && (d.size.size() != 2 || d.size[0] < 1 || d.size[1] < 1 ||
                          d.size[0] > 4096 || d.size[1] > 4096))
    out.push_back({"dataset.size",
                   "must be [height, width] in pixels (1 to 4096 each), or [] "
                   "for the first training image's size"});
  if (d.channels != 1 && d.channels != 3)
    out.push_back({"dataset.channels", "must be 1 (grey) or 3 (RGB)"});
  if (d.kind == "synthetic") {
    if (d.syntheticTrain < 1) out.push_back({"dataset.synthetic_train", "must be >= 1"});
    if (d.syntheticTest < 1) out.push_back({"dataset.synthetic_test", "must be >= 1"});
    if (d.syntheticFeatures < 1 || d.syntheticFeatures > 100000)
      out.push_back({"dataset.synthetic_features", "must be between 1 and 100000"});
    if (d.syntheticClasses < 2 || d.syntheticClasses > 1000)
      out.push_back({"dataset.synthetic_classes", "must be between 2 and 1000"});
  }

  const auto& m = spec.model;
  if (m.kind != "mlp" && m.kind != "cnn" && m.kind != "vit" && m.kind != "layers" &&
      m.kind != "torchscript" && m.kind != "gpt")
    out.push_back({"model.kind", "unknown model '" + m.kind +
                                     "'; use mlp, cnn, vit, gpt, layers or torchscript"});
  if (m.kind == "layers" && m.layers.empty())
    out.push_back({"model.layers",
                   "a layers model needs its layers, e.g. [{\"type\": "
                   "\"flatten\"}, {\"type\": \"linear\", \"out\": 10}]"});
  if (m.kind == "torchscript") {  // the file itself is read (and qualified) by the plan
    if (m.path.empty())
      out.push_back({"model.path",
                     "a torchscript model needs the file: set model.path to a "
                     "file saved with torch.jit.script(model).save(path)"});
    else if (std::error_code ec; !std::filesystem::is_regular_file(m.path, ec) ||
                                 !std::ifstream(m.path, std::ios::binary))
      out.push_back({"model.path", "cannot read the TorchScript file " + m.path +
                                       ": check the path and its permissions"});
  }
  if (m.kind == "mlp") {
    if (m.hidden.empty()) out.push_back({"model.hidden", "needs at least one hidden width"});
    for (size_t i = 0; i < m.hidden.size(); ++i)
      if (m.hidden[i] < 1 || m.hidden[i] > 65536)
        out.push_back(
            {"model.hidden[" + std::to_string(i) + "]", "width must be between 1 and 65536"});
    if (m.activation != "relu" && m.activation != "gelu" && m.activation != "tanh")
      out.push_back({"model.activation",
                     "unknown activation '" + m.activation + "'; use relu, gelu or tanh"});
  }
  if (m.init != "default" && m.init != "kaiming" && m.init != "xavier")
    out.push_back(
        {"model.init", "unknown initialisation '" + m.init + "'; use default, kaiming or xavier"});
  if (m.norm != "none" && m.norm != "layernorm" && m.norm != "batchnorm")
    out.push_back(
        {"model.norm", "unknown normalisation '" + m.norm + "'; use none, layernorm or batchnorm"});
  else if (m.norm != "none" && m.kind != "mlp")
    out.push_back({"model.norm", "normalisation layers are an mlp setting (the " + m.kind +
                                     " has its own " +
                                     (m.kind == "cnn" ? "batch norm" : "layer norm") +
                                     " built in): set it to none"});

  const auto& p = spec.partition;
  if (p.balance != "manual" && p.balance != "flops")
    out.push_back(
        {"partition.balance", "unknown balance '" + p.balance + "'; use manual or flops"});
  if (p.balance == "flops" && (p.numStages < 1 || (numLayers > 0 && p.numStages > numLayers)))
    out.push_back({"partition.stages", "balance=flops needs a stage count between 1 and " +
                                           std::to_string(numLayers) + " (the number of layers)"});
  if (p.balance == "manual" && numLayers > 0)
    for (auto& problem : validateCuts(p.cuts, numLayers)) out.push_back(problem);

  const int stages = spec.stageCount();
  if (!spec.stages.empty() && static_cast<int>(spec.stages.size()) != stages)
    out.push_back({"stages", "lists " + std::to_string(spec.stages.size()) +
                                 " stage entries but the partition makes " +
                                 std::to_string(stages) +
                                 " stages: give one entry per stage, or none"});
  // A language model: a gpt, or its layers (the Design's "Edit as layers") on text.
  const bool text = m.kind == "gpt" || (m.kind == "layers" && d.kind == "text");
  checkStage(spec.stageDefaults, "stage_defaults", devices, m.kind, spec.mode, text, out);
  for (size_t i = 0; i < spec.stages.size(); ++i)
    checkStage(spec.stageSettings(static_cast<int>(i)), "stages[" + std::to_string(i) + "]",
               devices, m.kind, spec.mode, text, out);

  const auto& t = spec.train;
  if (t.batchSize < 1 || t.batchSize > 65536)
    out.push_back({"train.batch_size", "must be between 1 and 65536"});
  if (t.maxSteps < 0) out.push_back({"train.max_steps", "must be >= 0 (0: run train.epochs)"});
  if (t.maxSteps == 0 && t.epochs < 1)
    out.push_back({"train.epochs", "must be >= 1 when train.max_steps is 0"});
  if (t.optimizer != "adam" && t.optimizer != "sgd")
    out.push_back({"train.optimizer", "unknown optimizer '" + t.optimizer + "'; use adam or sgd"});
  if (!(t.lr > 0) || !std::isfinite(t.lr))
    out.push_back({"train.lr", "must be a finite number > 0"});
  if (!(t.weightDecay >= 0) || !std::isfinite(t.weightDecay))
    out.push_back({"train.weight_decay", "must be a finite number >= 0"});
  if (!(t.momentum >= 0 && t.momentum < 1)) out.push_back({"train.momentum", "must be in [0, 1)"});
  if (t.queueCapacity < 1 || t.queueCapacity > 1024)
    out.push_back({"train.queue_capacity", "must be between 1 and 1024"});
  if (t.backpropThreads < 0 || t.backpropThreads > 256)
    out.push_back({"train.backprop_threads", "must be between 0 (one per core) and 256"});
  if (t.lrSchedule != "constant" && t.lrSchedule != "cosine" && t.lrSchedule != "linear")
    out.push_back({"train.lr_schedule",
                   "unknown schedule '" + t.lrSchedule + "'; use constant, cosine or linear"});
  if (t.warmupSteps < 0) out.push_back({"train.warmup_steps", "must be >= 0 (0: no warm-up)"});
  if (!(t.clipNorm >= 0) || !std::isfinite(t.clipNorm))
    out.push_back({"train.clip_norm", "must be a finite number >= 0 (0: no clipping)"});
  if (spec.local.overlap < 0 || spec.local.overlap > 1024)
    out.push_back({"local.overlap", "must be between 0 (chunked local updates) and 1024 layers"});
  const auto& pl = spec.pipeline;
  if (pl.microBatches < 0 || pl.microBatches > t.batchSize)
    out.push_back({"pipeline.micro_batches", "must be between 1 and train.batch_size (" +
                                                 std::to_string(t.batchSize) +
                                                 "), or 0 for one per stage"});
  // model.layers: batchnorm1d has the MLP's batch norm's needs (batchnorm2d normalises over the
  // image too, so one row is enough).
  const bool batchNorm1d = (m.kind == "mlp" && m.norm == "batchnorm") ||
                           (m.kind == "layers" && detail::containsLayer(m.layers, "batchnorm1d"));
  if (batchNorm1d) {
    const std::string bn = m.kind == "mlp" ? "batch norm (model.norm)" : "batchnorm1d";
    // Batch statistics of a single row are undefined: LibTorch refuses to train on them.
    if (t.batchSize < 2) out.push_back({"train.batch_size", bn + " needs batches of 2 or more"});
    const int micro = pl.microBatches > 0 ? pl.microBatches : stages;
    if (spec.mode == Mode::Pipeline && t.batchSize >= 2 && t.batchSize < 2 * micro)
      out.push_back(
          {"pipeline.micro_batches", bn + " needs micro-batches of 2 rows or more: at most " +
                                         std::to_string(t.batchSize / 2) + " for batch size " +
                                         std::to_string(t.batchSize)});
    if (spec.probe.batchSize < 2 && spec.mode == Mode::Local && spec.probe.interval >= 0)
      out.push_back({"probe.batch_size", bn + " needs a probe batch of 2 or more"});
  }
  if (pl.schedule != "gpipe" && pl.schedule != "1f1b" && pl.schedule != "zb-h1" &&
      pl.schedule != "interleaved")
    out.push_back({"pipeline.schedule", "unknown schedule '" + pl.schedule +
                                            "'; use gpipe, 1f1b, interleaved or zb-h1"});
  else if (pl.chunks < 1 || pl.chunks > 16)
    out.push_back({"pipeline.chunks", "must be between 1 and 16 model chunks per worker"});
  else if (stages >= 1 && spec.mode == Mode::Pipeline) {
    // What the schedule cannot order (chunks without interleaved, stages or micro-batches that
    // do not split among the workers), in its own words.
    try {
      const int micro = pl.microBatches > 0 ? pl.microBatches : stages;
      schedule::workerOrders(pl.schedule, stages, std::max(1, micro), pl.chunks);
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      const size_t colon = what.find(": ");
      if (what.rfind("pipeline.", 0) == 0 && colon != std::string::npos)
        out.push_back({what.substr(0, colon), what.substr(colon + 2)});
      else
        out.push_back({"pipeline.schedule", what});
    }
  }
  if (spec.timeline.maxSpans < 0)
    out.push_back({"timeline.max_spans",
                   "must be >= 0 (0: enough for the last 200 steps and a sample across the run)"});

  if (spec.eval.interval < 0) out.push_back({"eval.interval", "must be >= 0 (0: only at the end)"});
  if (spec.eval.maxSamples < 0) out.push_back({"eval.max_samples", "must be >= 0 (0: all)"});
  if (spec.probe.interval < -1)
    out.push_back({"probe.interval", "must be >= 0 (0: only at the end) or -1 (never)"});
  if (spec.probe.batchSize < 1 || spec.probe.batchSize > 65536)
    out.push_back({"probe.batch_size", "must be between 1 and 65536"});
  if (!(spec.measure.budget >= 0 && spec.measure.budget < 1))
    out.push_back({"measure.budget",
                   "must be a share of training between 0 and 1 (0.05: 5 %; 0: no budget)"});
  if (!(spec.distributed.timeoutS >= 1 && spec.distributed.timeoutS <= 86400))
    out.push_back({"distributed.timeout_s", "must be between 1 and 86400 seconds"});
  if (spec.distributed.backend != "auto" && spec.distributed.backend != "gloo" &&
      spec.distributed.backend != "nccl")
    out.push_back({"distributed.backend",
                   "unknown backend '" + spec.distributed.backend + "'; use auto, gloo or nccl"});
  if (spec.checkpoint.interval < 0)
    out.push_back({"checkpoint.interval", "must be >= 0 (0: no periodic checkpoints)"});
  if (spec.debug.stage < 0 || spec.debug.stage >= stages)
    out.push_back({"debug.stage", "must name a stage between 0 and " + std::to_string(stages - 1)});
  return out;
}

}  // namespace stagewise::engine
