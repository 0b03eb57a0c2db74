// TorchRun's setup (torch_run.h): the stages built from the partition, the checks made before a
// run starts (memory, batch-norm rows), what it reports of itself, and its checkpoints.

#include <random>

#include "model/layer_plan.h"
#include "model/torch_model.h"
#include "optim/fused_adam.h"
#include "runtime/checkpoint_io.h"
#include "runtime/stage_worker.h"
#include "runtime/torch_run.h"
#include "stagewise/engine/checkpoint.h"
#include "stagewise/engine/memory_need.h"
#include "stagewise/engine/torchscript.h"

namespace stagewise::engine {

void TorchRun::checkMemory() const {
  if (const char* v = std::getenv("STAGEWISE_MEMORY_CHECK"); v && std::string(v) == "0") return;
  // Host memory only: a stage on a GPU keeps its weights and activations there.
  for (const auto& st : m_partition.stages)
    if (st.settings.device != "cpu") return;
  const std::string problem =
      memoryProblem(estimateMemoryNeed(m_spec, m_plan), availableMemory(), m_spec.model.kind);
  if (!problem.empty()) throw std::runtime_error(problem);
}

void TorchRun::buildStages() {
  const uint64_t seed = m_spec.train.seed;
  auto layers = buildLayers(m_spec.model, m_plan, seed);
  auto shadowLayers = buildLayers(m_spec.model, m_plan, seed);
  const std::vector<StagePlan> plans =
      m_method->stages(m_partition.stages, m_plan, m_info.hardwareCores);
  for (const auto& p : plans) {
    auto s = std::make_unique<StageRuntime>();
    s->plan = p;
    s->isLast = p.isLast;
    s->device = torch::Device(p.settings.device);
    StageModules shadow;
    for (int i = p.firstLayer; i <= p.lastLayer; ++i) {
      s->layerInfo.push_back(m_plan.layers[static_cast<size_t>(i)]);
      s->modules.layers.push_back(layers[static_cast<size_t>(i)]);
      shadow.layers.push_back(shadowLayers[static_cast<size_t>(i)]);
    }
    if (m_method->auxHead(p)) {
      const auto& outShape = m_plan.layers[static_cast<size_t>(p.lastLayer)].outShape;
      const uint64_t auxSeed = seed + 7919ull * static_cast<uint64_t>(p.index + 1);
      s->modules.aux =
          buildAuxHead(p.settings, outShape, m_data.shape.numClasses, auxSeed, m_spec.model.init);
      shadow.aux =
          buildAuxHead(p.settings, outShape, m_data.shape.numClasses, auxSeed, m_spec.model.init);
    }
    for (auto& l : s->modules.layers) l->to(s->device);
    if (s->modules.aux) s->modules.aux->to(s->device);
    auto params = s->modules.bodyParams();
    auto aux = s->modules.auxParams();
    params.insert(params.end(), aux.begin(), aux.end());
    s->optimizer = makeOptimizer(m_spec.train, p.settings.lrScale, params);
    m_shadow->stages.push_back(std::move(shadow));
    m_shadow->isLast.push_back(p.isLast);
    m_shadow->firstLayer.push_back(p.firstLayer);
    m_stages.push_back(std::move(s));
  }
  m_ctx.totalSteps = totalStepsFor(m_spec, m_data.trainCount());
  m_ctx.batchSize = m_spec.train.batchSize;
  const size_t k = m_stages.size();
  for (size_t i = 0; i < k; ++i)
    m_ctx.channels.push_back(std::make_unique<QueueChannel>(activationCapacity(m_spec, i)));
  if (m_method->sendsGradients()) {
    // Every gradient of a step may wait at once (GPipe sends them all before the stage above
    // takes one: at most one per micro-batch); with overlap, the D steps' worth in flight.
    for (size_t i = 0; i + 1 < k; ++i)
      m_ctx.gradChannels.push_back(std::make_unique<QueueChannel>(gradientCapacity(m_spec)));
    if (m_spec.train.clipNorm > 0)
      m_ctx.normBarrier = std::make_unique<SumBarrier>(static_cast<int>(k));
  }
  m_ctx.bubbles = makeBubbleBoard(m_spec, static_cast<int>(k));
  m_ctx.produced = std::make_unique<std::atomic<int64_t>[]>(k + 1);
  for (size_t i = 0; i <= k; ++i) m_ctx.produced[i].store(0);
  m_ctx.startStep = 0;
  const bool probe = m_method->probes() && m_spec.probe.interval >= 0;
  m_budget = std::make_unique<MeasureBudget>(
      m_spec.measure.budget, m_ctx.totalSteps, probe ? m_spec.probe.interval : 0,
      m_spec.eval.interval, MeasureSpec::kMinPoints, m_forcedEvals);
  m_snapshots = std::make_unique<SnapshotCoordinator>(static_cast<int>(k), *m_budget);
  if (probe || m_spec.eval.interval > 0 || !m_forcedEvals.empty())
    m_ctx.snapshots = m_snapshots.get();
  // a fixed, seeded probe batch from the training set
  std::mt19937_64 rng(seed ^ 0x9B0BEull);
  const int64_t n = m_data.trainCount();
  std::vector<int64_t> idx(static_cast<size_t>(std::min<int64_t>(m_spec.probe.batchSize, n)));
  for (auto& i : idx) i = static_cast<int64_t>(rng() % static_cast<uint64_t>(n));
  if (m_data.trainText.defined()) {  // windows of their own seed
    std::tie(m_probeX, m_probeY) = textWindows(m_data, m_spec.dataset.context, seed ^ 0x9B0BEull, 0,
                                               static_cast<int64_t>(idx.size()));
  } else {
    auto index =
        torch::from_blob(idx.data(), {static_cast<int64_t>(idx.size())}, torch::kInt64).clone();
    m_probeX = m_data.trainX.index_select(0, index);
    m_probeY = m_data.trainY.index_select(0, index);
  }
  // Periodic evaluations on the first eval.max_samples; the final one on the whole set.
  m_testX = m_data.testX;
  m_testY = m_data.testY;
  if (m_spec.eval.maxSamples > 0 && m_spec.eval.maxSamples < m_testX.size(0)) {
    m_testX = m_testX.slice(0, 0, m_spec.eval.maxSamples);
    m_testY = m_testY.slice(0, 0, m_spec.eval.maxSamples);
  }
  // The validation set likewise: its first eval.max_samples periodically, all at the end.
  m_valX = m_data.valX;
  m_valY = m_data.valY;
  if (m_valX.defined() && m_spec.eval.maxSamples > 0 && m_spec.eval.maxSamples < m_valX.size(0)) {
    m_valX = m_valX.slice(0, 0, m_spec.eval.maxSamples);
    m_valY = m_valY.slice(0, 0, m_spec.eval.maxSamples);
  }
}

void TorchRun::checkBatchNormRows() const {
  const bool layersNorm =
      m_spec.model.kind == "layers" && detail::containsLayer(m_spec.model.layers, "batchnorm1d");
  if (!layersNorm && (m_spec.model.kind != "mlp" || m_spec.model.norm != "batchnorm")) return;
  const int64_t n = m_data.trainCount(), batch = m_spec.train.batchSize;
  const int64_t perEpoch = (n + batch - 1) / batch, rest = n % batch;
  if (rest == 0 || m_ctx.totalSteps < perEpoch) return;  // no short batch is ever trained
  const int64_t micro = m_spec.mode != Mode::Pipeline      ? 1
                        : m_spec.pipeline.microBatches > 0 ? m_spec.pipeline.microBatches
                                                           : static_cast<int64_t>(m_stages.size());
  if (rest < 2 * micro)
    throw SpecError("train.batch_size",
                    std::string(layersNorm ? "batchnorm1d" : "batch norm (model.norm)") +
                        " needs 2 rows or more per " +
                        std::string(micro > 1 ? "micro-batch" : "batch") + ", but the last " +
                        "batch of an epoch holds " + std::to_string(rest) + " of the " +
                        std::to_string(n) + " training samples; choose another batch size");
}

RunInfo TorchRun::runInfo() const {
  RunInfo info;
  info.name = m_spec.name;
  info.specJson = specToJson(m_spec);
  info.mode = m_spec.mode;
  info.layers = m_plan.layers;
  info.totalSteps = m_ctx.totalSteps;
  info.batchSize = m_spec.train.batchSize;
  info.blas = m_info.blas;
  info.torchVersion = m_info.torchVersion;
  for (const auto& s : m_stages) {
    StageInfo si;
    si.index = s->plan.index;
    si.firstLayer = s->plan.firstLayer;
    si.lastLayer = s->plan.lastLayer;
    si.device = s->plan.settings.device;
    si.auxHead = s->isLast                    ? "classifier"
                 : m_method->auxHead(s->plan) ? s->plan.settings.auxHead
                                              : "none";
    si.threads = s->plan.settings.threads;
    si.params = s->plan.params;
    si.auxParams = s->plan.auxParams;
    info.stages.push_back(si);
  }
  return info;
}

void TorchRun::resumeFrom(const std::string& path) {
  if (m_spec.mode == Mode::Local && m_spec.local.overlap > 0)
    throw SpecError("local.overlap",
                    "a run with overlapping local updates cannot resume from a checkpoint yet: the "
                    "gradients in flight between the stages are not saved; set it to 0 to resume");
  // A checkpoint taken after a re-partition holds its cuts: rebuild them before loading.
  if (m_spec.mode == Mode::Local && !m_distributed) {
    const CheckpointInfo info = readCheckpointInfo(path);
    std::vector<int> cuts;
    try {
      cuts = resolveCuts(info.spec, m_plan);
    } catch (const SpecError&) {
      cuts = m_cuts;  // another model: loadCheckpoint says what does not fit
    }
    if (cuts != m_cuts && cannotRepartition().empty()) {
      std::vector<int> fresh, kept;
      rebuild(cuts, 0, &info.spec, fresh, kept);
    }
  }
  RunTotals totals;
  const int64_t step = loadCheckpoint(path, m_stages, &totals);
  if (step >= m_ctx.totalSteps)
    throw SpecError("train.max_steps", "the checkpoint is at step " + std::to_string(step) +
                                           " of " + std::to_string(m_ctx.totalSteps) +
                                           ": nothing left to train; raise it");
  m_ctx.startStep = step;
  m_ctx.clockOffsetS = totals.elapsedS;
  m_ctx.priorMeasuredSamples = totals.measuredSamples;
  m_ctx.priorMeasuredS = totals.measuredS;
  m_resumedPartly = !totals.complete;
  for (size_t i = 0; i <= m_stages.size(); ++i) m_ctx.produced[i].store(step);
  m_ctx.lastStageSteps.store(step);
  m_resumedFrom = path;
}

RunTotals TorchRun::runTotals() const {
  RunTotals t;
  t.elapsedS = m_ctx.now();
  // samples/s's measurement so far: before the resume, then this run's after its warm-up (up
  // to the last stage's latest step: every stage stands at the checkpoint's step).
  t.measuredSamples = m_ctx.priorMeasuredSamples;
  t.measuredS = m_ctx.priorMeasuredS;
  const double warm = m_ctx.warmupEndS.load();
  const double last = m_ctx.lastStepEndS.load();
  if (warm >= 0 && last > warm) {
    t.measuredSamples += m_ctx.samplesAfterWarmup.load();
    t.measuredS += last - warm;
  }
  return t;
}

void TorchRun::saveAt(int64_t step) {
  try {
    const std::string path =
        saveCheckpoint(m_checkpointDir, step, m_ctx.totalSteps,
                       specToJson(changed() ? currentSpec() : m_spec), m_stages,
                       /*injectFailure=*/m_spec.debug.failCheckpoint == step, runTotals());
    m_reporter.event({EventKind::Checkpoint, m_ctx.now(), -1, path});
    m_lastCheckpoint = step;
  } catch (const std::exception& e) {
    // A full disk must not cost the run: say so and train on.
    m_reporter.event(
        {EventKind::Warning, m_ctx.now(), -1,
         std::string("checkpoint at step ") + std::to_string(step) + " failed: " + e.what()});
  }
}

std::string TorchRun::modelFileText() const {
  if (m_spec.model.kind != "torchscript") return "";
  return ", model file " + m_spec.model.path + " sha256 " + torchScriptSha256(m_spec.model.path);
}

void TorchRun::saveFinalWeights(int64_t step) {
  if (m_distributed || step <= 0 || step == m_lastCheckpoint) return;
  for (size_t k = 1; k <= m_stages.size(); ++k)
    if (m_ctx.produced[k].load() != step) return;  // stopped mid-step: no consistent state
  if (m_checkpointDir.empty()) m_checkpointDir = defaultCheckpointDir(m_spec.name);
  saveAt(step);
}

}  // namespace stagewise::engine
