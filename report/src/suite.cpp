#include "stagewise/report/suite.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "stagewise/engine/dataset.h"
#include "stagewise/engine/partition.h"
#include "stagewise/engine/pipeline_schedule.h"
#include "stagewise/study/results.h"
#include "stagewise/study/search.h"

namespace stagewise::report {

using nlohmann::json;

namespace {

// The default preset's work per sample (forward FLOPs of the 8 x 512 MLP on Fashion-MNIST):
// the quick suite's run lengths below are sized for it and scaled by a model's own FLOPs.
constexpr double kReferenceFlops = 4.47e6;
constexpr double kQuickSamples = 19200;          // a quick learning run: 600 steps of 32
constexpr double kQuickSpeedSamples = 9600;      // a quick throughput run
constexpr double kFullSpeedSamples = 25600;      // a full throughput run
constexpr int kEvaluations = 12;                 // evaluations and probes asked per learning run
constexpr int64_t kQuickEvalSamples = 2000;      // quick: evaluate on the first 2000 test samples
constexpr int kRandomLabelEpochs[2] = {60, 30};  // full, quick
constexpr int64_t kRandomLabelSamples[2] = {2048, 1024};
// issue 32 §5: the learning-rate search before the learning findings.
constexpr int kSearchTrials[2] = {16, 6};                    // full, quick: trials per method
constexpr double kSearchLrLow = 1e-5, kSearchLrHigh = 1e-2;  // log_uniform
constexpr double kSearchValidation = 0.1;                    // the split when the base has none
constexpr int kSearchFirstRung = 6;  // the first rung at 1/6 of a run, then x3

std::string cutsJson(const std::vector<int>& cuts) {
  return json(cuts).dump();
}

std::string setKey(const std::string& base, const std::vector<std::string>& sets) {
  return engine::applyOverrides(base, sets);
}

std::string fmtInt(double v) {
  return std::to_string(static_cast<long long>(std::llround(v)));
}

}  // namespace

std::string reuseIdentity(const std::string& canonicalSpecJson) {
  json doc = json::parse(study::specIdentity(canonicalSpecJson), nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return canonicalSpecJson;
  doc.erase("debug");
  return doc.dump();
}

Suite planSuite(const std::string& baseSpecJson, const SuiteOptions& options,
                study::ShapeCache& shapes) {
  Suite suite;
  suite.baseSpecJson = baseSpecJson;
  engine::ExperimentSpec base;
  engine::ModelPlan model;
  std::vector<int> baseCuts;
  try {
    base = engine::parseSpec(baseSpecJson);
    const std::string key = base.dataset.kind + "\n" + base.dataset.path;
    auto it = shapes.find(key);
    if (it == shapes.end()) it = shapes.emplace(key, engine::probeInputShape(base.dataset)).first;
    model = engine::planModel(base.model, it->second);
    baseCuts = engine::resolveCuts(base, model);
  } catch (const engine::SpecError& e) {
    throw study::StudyError(std::string("the base experiment: ") + e.what());
  } catch (const engine::DatasetError& e) {
    throw study::StudyError(std::string("the base experiment's dataset: ") + e.what());
  }
  // issue 34: a language model on text. Its findings read test bits per byte; text has no
  // validation split and no random labels (the engine refuses both), so the suite runs no
  // learning-rate search and no random-labels study, and trains the front by whole epochs
  // (dataset.limit_train does not cut a text).
  const bool text = base.dataset.kind == "text";
  if (text)
    suite.adaptations.push_back(
        "text (a language model): the learning findings read test bits per byte (lower is "
        "better) where image runs read test accuracy; no learning-rate search (text has no "
        "validation split: every method trains at the base's rate) and no random-labels study "
        "(labels are the next bytes)");
  const int layers = static_cast<int>(model.layers.size());
  if (layers < 2) throw study::StudyError("the base model has one layer: a cut needs at least two");
  const auto costs = engine::flopCosts(model);
  if (baseCuts.empty()) {
    baseCuts = engine::balanceCuts(costs, 2);
    suite.adaptations.push_back(
        "the base has one stage: the suite cuts it into 2 stages "
        "balanced by FLOPs (partition.cuts=" +
        cutsJson(baseCuts) + ")");
  }
  const int stages = static_cast<int>(baseCuts.size()) + 1;
  suite.baseStages = stages;
  const int q = options.quick ? 1 : 0;
  suite.seeds = options.quick ? 2 : 3;
  suite.rounds = options.quick ? 2 : 3;

  // Training lengths: the quick suite scales its runs by the model's FLOPs per sample.
  const double flops = std::max(1.0, static_cast<double>(model.totalFlops()));
  const int batch = base.train.batchSize;
  int64_t trainSamples = 0;
  try {
    trainSamples = engine::probeTrainSamples(base.dataset);
  } catch (const engine::DatasetError& e) {
    throw study::StudyError(std::string("the base experiment's dataset: ") + e.what());
  }
  const int64_t baseSteps = base.train.maxSteps > 0
                                ? base.train.maxSteps
                                : (trainSamples + batch - 1) / batch * base.train.epochs;
  auto stepsFor = [&](double referenceSamples) {
    const double samples = referenceSamples * kReferenceFlops / flops;
    return std::clamp<int64_t>(static_cast<int64_t>(samples / batch), 60,
                               std::max<int64_t>(60, baseSteps));
  };
  const int64_t learnSteps = options.quick ? stepsFor(kQuickSamples) : baseSteps;
  const int64_t speedSteps = stepsFor(options.quick ? kQuickSpeedSamples : kFullSpeedSamples);
  const int64_t every = std::max<int64_t>(1, learnSteps / kEvaluations);
  suite.baseSteps = baseSteps;
  suite.learnSteps = learnSteps;
  suite.speedSteps = speedSteps;

  // What every run of the suite shares: the base's cut as explicit cuts, no checkpoints.
  std::vector<std::string> common = {
      "partition.balance=\"manual\"", "partition.cuts=" + cutsJson(baseCuts),
      "checkpoint.interval=0", "checkpoint.dir=\"\"", "mode=\"local\""};
  if (base.checkpoint.enabled())
    suite.adaptations.push_back("checkpoints off: a report's runs are reused whole, not resumed");
  std::vector<std::string> learn = common;
  learn.push_back("train.max_steps=" + std::to_string(learnSteps));
  learn.push_back("eval.interval=" + std::to_string(every));
  learn.push_back("probe.interval=" + std::to_string(every));
  if (options.quick) {
    if (learnSteps < baseSteps)
      suite.adaptations.push_back("quick: learning runs train " + std::to_string(learnSteps) +
                                  " steps instead of " + std::to_string(baseSteps));
    if (base.eval.maxSamples == 0 || base.eval.maxSamples > kQuickEvalSamples) {
      learn.push_back("eval.max_samples=" + std::to_string(kQuickEvalSamples));
      suite.adaptations.push_back("quick: evaluations on the first " +
                                  std::to_string(kQuickEvalSamples) + " test samples");
    }
  }
  std::vector<std::string> speed = common;
  speed.push_back("train.max_steps=" + std::to_string(speedSteps));
  speed.push_back("eval.interval=0");
  speed.push_back("probe.interval=-1");
  // The pipeline at its best settings (issue 32 §6): its micro-batch count M is swept, 1, one per
  // stage of the base and two per stage; the findings take the fastest. Communication reads the
  // runs at M = K (the bytes per sample do not depend on M).
  speed.push_back("pipeline.micro_batches=" + std::to_string(stages));
  // issue 37: GPipe without recomputation unless a study says otherwise (the base's own schedule
  // would leak into every pipeline run).
  speed.push_back("pipeline.schedule=\"gpipe\"");
  speed.push_back("pipeline.chunks=1");
  speed.push_back("pipeline.recompute=false");
  auto microOk = [&](int m) {
    const bool rowsOk = base.model.norm != "batchnorm" || batch >= 2 * m;
    return m <= batch && rowsOk;
  };
  auto microList = [&](std::initializer_list<int> ms) {
    std::vector<std::string> out;
    for (int m : ms)
      if (microOk(m) && std::find(out.begin(), out.end(), std::to_string(m)) == out.end())
        out.push_back(std::to_string(m));
    return out;
  };
  auto words = [](const std::vector<std::string>& v) {
    std::string out;
    for (const auto& x : v) out += (out.empty() ? "" : ", ") + x;
    return out;
  };
  const std::vector<std::string> microBatches = microList({1, stages, 2 * stages});
  // issue 37: the newer schedules at the Ms where they differ from GPipe (at M = 1 there is one
  // micro-batch to order: 1f1b runs GPipe's passes); quick mode at M = K alone.
  const std::vector<std::string> scheduleMicro =
      options.quick ? microList({stages}) : microList({stages, 2 * stages});
  suite.adaptations.push_back(
      "pipelined backprop: gpipe at M = " + words(microBatches) + " micro-batches per batch, " +
      (scheduleMicro.empty()
           ? std::string("no other schedule (M = K does not fit batch ") + std::to_string(batch) +
                 ")"
           : "1f1b and zb-h1 at M = " + words(scheduleMicro) +
                 (options.quick ? " (quick: one micro-batch per stage only)" : "")) +
      "; throughput compares local with the fastest schedule and M at each stage count, memory "
      "with GPipe at its fastest M");
  if (base.model.kind == "cnn")
    suite.adaptations.push_back(
        "the CNN has batch norm: pipelined backprop normalises each "
        "micro-batch on its own, so its gradients differ from backprop's "
        "by design (docs/architecture.md)");

  auto add = [&](const std::string& finding, const std::vector<std::string>& sets,
                 std::vector<study::VariedKey> keys, int seeds, bool fresh,
                 const std::string& part = {}) {
    SuiteStudy s;
    s.finding = finding;
    s.part = part;
    const std::string name = part.empty() ? finding : finding + " (" + part + ")";
    try {
      s.baseSpecJson = setKey(baseSpecJson, sets);
    } catch (const engine::SpecError& e) {
      throw study::StudyError(name + ": " + e.what());
    }
    s.plan.keys = std::move(keys);
    s.plan.seeds = seeds;
    s.fresh = fresh;
    suite.studies.push_back(std::move(s));
  };
  const std::string local = "\"local\"", backprop = "\"backprop\"", pipeline = "\"pipeline\"";
  auto cutsAt = [&](int k) {
    return cutsJson(k == stages ? baseCuts : engine::balanceCuts(costs, k));
  };

  // Throughput over 1..K stages, and the runs at K that communication and memory read.
  std::vector<std::string> cutLists;
  for (int k = 1; k <= stages; ++k) cutLists.push_back(cutsAt(k));
  add("throughput_vs_stages", speed,
      {{"mode", {local, pipeline, backprop}},
       {"partition.cuts", cutLists},
       {"pipeline.micro_batches", microBatches}},
      suite.rounds, true);
  // issue 37: the other schedules at 2..K stages (one stage has nothing to schedule), in the
  // same rounds; interleaved (v = 2 chunks per worker) where the stage count splits into 2
  // chunks on at least 2 workers (one worker would run the model alone) and each M into rounds.
  if (!scheduleMicro.empty()) {
    const std::vector<std::string> piped(cutLists.begin() + 1, cutLists.end());
    add("throughput_vs_stages", speed,
        {{"mode", {pipeline}},
         {"partition.cuts", piped},
         {"pipeline.schedule", {"\"1f1b\"", "\"zb-h1\""}},
         {"pipeline.micro_batches", scheduleMicro}},
        suite.rounds, true, "schedules");
    constexpr int kChunks = 2;
    std::vector<std::string> interleavedCuts;
    std::vector<int> at, skipped;
    for (int k = 2; k <= stages; ++k) {
      bool ok = k % kChunks == 0 && k / kChunks >= 2;
      for (const auto& m : scheduleMicro) {
        if (!ok) break;
        try {
          engine::schedule::workerOrders("interleaved", k, std::stoi(m), kChunks);
        } catch (const std::invalid_argument&) {
          ok = false;
        }
      }
      (ok ? at : skipped).push_back(k);
      if (ok) interleavedCuts.push_back(cutsAt(k));
    }
    std::vector<std::string> atWords, skippedWords;
    for (int k : at) atWords.push_back(std::to_string(k));
    for (int k : skipped) skippedWords.push_back(std::to_string(k));
    if (!interleavedCuts.empty()) {
      std::vector<std::string> sets = speed;
      sets.push_back("pipeline.schedule=\"interleaved\"");
      sets.push_back("pipeline.chunks=" + std::to_string(kChunks));
      add("throughput_vs_stages", sets,
          {{"mode", {pipeline}},
           {"partition.cuts", interleavedCuts},
           {"pipeline.micro_batches", scheduleMicro}},
          suite.rounds, true, "interleaved");
    }
    suite.adaptations.push_back(
        "interleaved (2 model chunks per worker) " +
        (at.empty() ? std::string("not measured") : "at " + words(atWords) + " stages") +
        (skipped.empty()
             ? std::string()
             : "; skipped at " + words(skippedWords) +
                   " stages (they do not split into 2 chunks on 2 or more workers, or M = " +
                   words(scheduleMicro) + " not into its rounds)"));
  }
  add("communication", speed, {{"mode", {local, pipeline}}}, suite.rounds, true);
  // Memory where the paper says the gap lies: many micro-batches (M > K) and more stages (twice
  // the base's, as far as the model has layers).
  std::vector<std::string> memoryCuts = {cutsJson(baseCuts)};
  const int moreStages = std::min(2 * stages, layers);
  if (moreStages > stages) memoryCuts.push_back(cutsJson(engine::balanceCuts(costs, moreStages)));
  add("memory", speed,
      {{"mode", {local, pipeline, backprop}},
       {"partition.cuts", memoryCuts},
       {"pipeline.micro_batches", microBatches}},
      suite.rounds, true);
  // issue 37: activation recomputation (the paper's finding 6, a study of its own), local against
  // GPipe with and without it, at 2 and 4 stages (as far as the model has layers) and M = 4 and
  // 8. A peak varies little between rounds: quick mode measures one.
  {
    std::vector<std::string> cuts, ks;
    for (int k : {2, 4})
      if (k <= layers) cuts.push_back(cutsAt(k)), ks.push_back(std::to_string(k));
    const std::vector<std::string> ms = microList({4, 8});
    if (!cuts.empty() && !ms.empty()) {
      add("memory_recompute", speed,
          {{"mode", {local, pipeline}},
           {"partition.cuts", cuts},
           {"pipeline.micro_batches", ms},
           {"pipeline.recompute", {"false", "true"}}},
          options.quick ? 1 : suite.rounds, true);
      suite.adaptations.push_back(
          "activation recomputation (memory_recompute): local against GPipe "
          "with and without pipeline.recompute at " +
          words(ks) + " stages and M = " + words(ms) +
          (options.quick ? " (quick: one round)" : ""));
    } else {
      suite.adaptations.push_back(
          "activation recomputation (memory_recompute) not measured: M = 4 and 8 do not fit "
          "batch " +
          std::to_string(batch));
    }
  }

  // Learning: local against backprop without probes (backprop has none, so both pay the same
  // for measuring and their wall times compare); the cosines of local runs, and overlap.
  std::vector<std::string> unprobed = learn;
  unprobed.push_back("probe.interval=-1");
  int64_t searchEvery = 0;
  // issue 32 §5: first each method's learning rate, searched on a validation split.
  if (!text) {
    // Evaluations at every sixth of the run: the rungs among them (the CLI also forces the
    // rungs, runOptions), and the workbench, which does not prune, sees validation curves too.
    const int64_t rung = std::max<int64_t>(1, learnSteps / kSearchFirstRung);
    searchEvery = rung;
    std::vector<std::string> sets = learn;
    sets.push_back("eval.interval=" + std::to_string(rung));
    sets.push_back("probe.interval=-1");
    if (base.dataset.validation <= 0) {
      sets.push_back("dataset.validation=" + json(kSearchValidation).dump());
      suite.adaptations.push_back(
          "the learning-rate search holds out " + fmtInt(100 * kSearchValidation) +
          " % of the training samples for validation (dataset.validation=" +
          json(kSearchValidation).dump() +
          "), which chooses each method's rate; the findings' runs train on the whole set");
    }
    add(kSearchStudy, sets, {{"mode", {local, backprop}}}, 1, false);
    study::SearchSpec& search = suite.studies.back().plan.search;
    study::Distribution lr;
    lr.kind = study::Distribution::Kind::LogUniform;
    lr.low = kSearchLrLow;
    lr.high = kSearchLrHigh;
    search.keys = {{"train.lr", lr}};
    search.trials = kSearchTrials[q];
    search.sampler = "sobol";
    study::PruneSpec prune;
    prune.metric = "val_accuracy";
    prune.minSteps = rung;
    prune.reduction = 3;
    search.prune = prune;
    study::checkSearch(suite.studies.back().plan);
  }
  suite.baseLr = base.train.lr;
  add("accuracy", unprobed, {{"mode", {local, backprop}}}, suite.seeds, false);
  add("gradient_similarity", learn, {{"mode", {local}}}, suite.seeds, false);
  add("overlap", learn, {{"local.overlap", {"0", "1"}}}, suite.seeds, false);

  // The front: equal samples over two batch sizes, two stage counts and backprop.
  std::vector<std::string> front = common;
  const double frontSamples = options.quick ? static_cast<double>(learnSteps * batch)
                                            : static_cast<double>(baseSteps * batch);
  const int64_t epochSamples = trainSamples;
  std::string frontLength;
  if (!text && frontSamples < static_cast<double>(epochSamples)) {
    front.push_back("dataset.limit_train=" + fmtInt(frontSamples));
    front.push_back("train.epochs=1");
    frontLength = "1 epoch of the first " + fmtInt(frontSamples) + " samples";
  } else {
    const std::string epochs =
        fmtInt(std::max(1.0, frontSamples / static_cast<double>(epochSamples)));
    front.push_back("train.epochs=" + epochs);
    frontLength = epochs + " epoch(s) of " + std::to_string(epochSamples) + " samples";
  }
  front.push_back("train.max_steps=0");
  // Evaluations spaced for the larger batch (the measurement budget thins the smaller one's).
  const int64_t bigSteps = static_cast<int64_t>(frontSamples) / (4 * batch);
  front.push_back("eval.interval=" + std::to_string(std::max<int64_t>(1, bigSteps / kEvaluations)));
  front.push_back("probe.interval=-1");
  if (options.quick && (base.eval.maxSamples == 0 || base.eval.maxSamples > kQuickEvalSamples))
    front.push_back("eval.max_samples=" + std::to_string(kQuickEvalSamples));
  std::vector<std::string> frontCuts = {cutsJson(baseCuts)};
  if (stages > 2) frontCuts.insert(frontCuts.begin(), cutsJson(engine::balanceCuts(costs, 2)));
  add("compute_time_front", front,
      {{"train.batch_size", {std::to_string(batch), std::to_string(4 * batch)}},
       {"mode", {local, backprop}},
       {"partition.cuts", frontCuts}},
      options.quick ? 1 : suite.seeds, false);

  // Random labels: a small training set, many epochs.
  const int64_t rlSamples = std::min<int64_t>(kRandomLabelSamples[q], trainSamples);
  if (!text) {
    add(
        "random_labels",
        [&] {
          auto sets = common;
          sets.push_back("dataset.random_labels=true");
          sets.push_back("dataset.limit_train=" + std::to_string(rlSamples));
          sets.push_back("dataset.augment=false");
          sets.push_back("train.max_steps=0");
          sets.push_back("train.epochs=" + std::to_string(kRandomLabelEpochs[q]));
          sets.push_back("eval.interval=0");
          sets.push_back("probe.interval=-1");
          return sets;
        }(),
        {{"mode", {local, backprop}}}, suite.seeds, false);
    suite.adaptations.push_back("random labels: the first " + std::to_string(rlSamples) +
                                " training samples with labels drawn at random, " +
                                std::to_string(kRandomLabelEpochs[q]) + " epochs");
  }
  // issue 36 §1.7: every length the report uses, and where it comes from, so two reports made
  // from different bases (a design's unsaved edits, say) say why they differ.
  {
    const std::string source =
        base.train.maxSteps > 0
            ? "the base's train.max_steps=" + std::to_string(base.train.maxSteps)
            : "the base's " + std::to_string(base.train.epochs) + " epoch(s) of " +
                  std::to_string(trainSamples) + " samples";
    suite.adaptations.push_back(
        "lengths: learning runs " + std::to_string(learnSteps) + " steps (evaluated every " +
        std::to_string(every) + ")" +
        (text ? std::string()
              : ", the learning-rate search's trials " + std::to_string(learnSteps) +
                    " steps (evaluated every " + std::to_string(searchEvery) + ")") +
        ", throughput and memory runs " + std::to_string(speedSteps) + " steps, the front's runs " +
        frontLength + " (at batch " + std::to_string(batch) + " and " + std::to_string(4 * batch) +
        ")" +
        (text ? std::string()
              : ", random labels " + std::to_string(kRandomLabelEpochs[q]) + " epochs of " +
                    std::to_string(rlSamples) + " samples") +
        "; batch " + std::to_string(batch) + "; from " + source +
        (options.quick ? " (quick: scaled by the model's FLOPs per sample)" : ""));
  }
  // issue 32 §5: every learning finding twice, at each method's chosen rate and at the base's.
  // Text has no search: its learning findings are judged once, at the base's rate.
  const size_t studies = text ? 0 : suite.studies.size();
  for (size_t i = 0; i < studies; ++i) {
    if (suite.studies[i].fresh || suite.studies[i].plan.isSearch()) continue;
    SuiteStudy tuned = suite.studies[i];
    tuned.tuned = true;
    suite.studies.push_back(std::move(tuned));
  }
  return suite;
}

namespace {

/// The search's trials in its order (trial t of every method before trial t + 1); the draws
/// depend only on the seed and the trial, so every method is searched over the same rates.
std::vector<study::GridPoint> trialPoints(const study::StudyPlan& plan) {
  std::vector<study::GridPoint> out;
  const int methods = static_cast<int>(study::varyGrid(plan).size());
  for (int t = 0; t < plan.search.trials; ++t)
    for (int p = 0; p < methods; ++p)
      out.push_back(
          study::trialPoint(plan, p, t, study::drawTrial(plan.search, plan.sampleSeed, t)));
  return out;
}

/// A tuned study's point's mode (its varied mode, else the base's).
std::string modeOf(const engine::ExperimentSpec& spec) {
  return engine::toString(spec.mode);
}

}  // namespace

std::vector<SuiteJob> planTunedJobs(const Suite& suite, const std::map<std::string, double>& lrOf,
                                    const std::vector<std::string>& devices,
                                    study::ShapeCache& shapes) {
  std::vector<SuiteJob> jobs;
  std::map<std::string, size_t> at;
  for (size_t si = 0; si < suite.studies.size(); ++si) {
    const SuiteStudy& s = suite.studies[si];
    if (!s.tuned) continue;
    for (const auto& point : study::expandGrid(s.plan)) {
      study::ResolvedPoint r = study::resolvePoint(s.baseSpecJson, s.plan, point, devices, shapes);
      if (auto lr = lrOf.find(modeOf(r.spec)); lr != lrOf.end()) r.spec.train.lr = lr->second;
      const std::string identity = reuseIdentity(engine::specToJson(r.spec));
      auto it = at.find(identity);
      if (it == at.end()) {
        SuiteJob job;
        job.spec = std::move(r.spec);
        job.identity = identity;
        job.round = static_cast<int>(point.seed);
        char lr[32];
        std::snprintf(lr, sizeof lr, "%.3g", job.spec.train.lr);
        job.label = s.finding + " (tuned lr " + lr + "): " + study::describePoint(s.plan, point);
        it = at.emplace(identity, jobs.size()).first;
        jobs.push_back(std::move(job));
      }
      jobs[it->second].links.push_back({si, point});
    }
  }
  return jobs;
}

std::vector<SuiteJob> planJobs(const Suite& suite, const std::vector<std::string>& devices,
                               study::ShapeCache& shapes) {
  std::vector<SuiteJob> fresh, learning;
  std::map<std::string, size_t> freshAt, learningAt;
  for (size_t si = 0; si < suite.studies.size(); ++si) {
    const SuiteStudy& s = suite.studies[si];
    if (s.tuned) continue;  // issue 32 §5: at the rates the search chooses (planTunedJobs)
    const bool search = s.plan.isSearch();
    for (const auto& point : search ? trialPoints(s.plan) : study::expandGrid(s.plan)) {
      study::ResolvedPoint r = study::resolvePoint(s.baseSpecJson, s.plan, point, devices, shapes);
      const std::string identity = reuseIdentity(engine::specToJson(r.spec));
      auto& jobs = s.fresh ? fresh : learning;
      auto& at = s.fresh ? freshAt : learningAt;
      auto it = at.find(identity);
      if (it == at.end()) {
        SuiteJob job;
        job.spec = std::move(r.spec);
        job.identity = identity;
        job.fresh = s.fresh;
        job.round = static_cast<int>(point.seed);
        job.label = s.finding + (s.part.empty() ? "" : " (" + s.part + ")") + ": " +
                    study::describePoint(s.plan, point);
        if (search) job.label += ", trial " + std::to_string(point.trial + 1);
        job.trial = search;
        it = at.emplace(identity, jobs.size()).first;
        jobs.push_back(std::move(job));
      }
      jobs[it->second].links.push_back({si, point});
    }
  }
  // Interleaved rounds: every configuration once per round, round after round.
  std::stable_sort(fresh.begin(), fresh.end(),
                   [](const SuiteJob& a, const SuiteJob& b) { return a.round < b.round; });
  fresh.insert(fresh.end(), std::make_move_iterator(learning.begin()),
               std::make_move_iterator(learning.end()));
  return fresh;
}

}  // namespace stagewise::report
