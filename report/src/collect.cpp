#include "stagewise/report/collect.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "stagewise/engine/dataset.h"
#include "stagewise/engine/partition.h"
#include "stagewise/storage/run_reader.h"

namespace stagewise::report {

using nlohmann::json;

namespace {

double number(const json& doc, const char* key) {
  auto it = doc.find(key);
  return it != doc.end() && it->is_number() ? it->get<double>() : kNaN;
}

int64_t integer(const json& doc, const char* key, int64_t fallback) {
  auto it = doc.find(key);
  return it != doc.end() && it->is_number() ? it->get<int64_t>() : fallback;
}

/// FLOPs per sample of the whole run and of its slowest stage, from its spec (torch-free core).
void flopsFromSpec(const engine::ExperimentSpec& spec, RunData& r, study::ShapeCache& shapes) {
  try {
    const std::string key = spec.dataset.kind + "\n" + spec.dataset.path;
    auto it = shapes.find(key);
    if (it == shapes.end()) it = shapes.emplace(key, engine::probeInputShape(spec.dataset)).first;
    const engine::ModelPlan plan = engine::planModel(spec.model, it->second);
    r.numClasses = it->second.numClasses;
    const auto partition = engine::makePartition(spec, plan);
    const auto stages = engine::methodStages(spec, plan, partition);
    // Parameters each stage trains: its layers' (methodStages keeps the cut's first stage's
    // count for backprop's one stage) and, in local mode, its aux head's.
    r.stageParams.clear();
    for (const auto& st : stages) {
      int64_t n = 0;
      for (int l = st.firstLayer; l <= st.lastLayer && l < static_cast<int>(plan.layers.size());
           ++l)
        n += plan.layers[size_t(l)].params;
      r.stageParams.push_back(n + (spec.mode == engine::Mode::Local ? st.auxParams : 0));
    }
    const auto perStage = engine::trainFlopsPerSample(
        stages, plan, spec.mode == engine::Mode::Local ? spec.local.overlap : 0);
    double total = 0, most = 0;
    for (double f : perStage) total += f, most = std::max(most, f);
    r.flopsPerSample = total;
    r.slowestStageFlopsPerSample = most;
  } catch (const std::exception&) {
    // The dataset moved since: the FLOPs stay unknown (NaN) and the front leaves the run out.
  }
}

}  // namespace

RunData collectRun(storage::RunReader& reader, int64_t runId, study::ShapeCache& shapes) {
  const auto run = reader.run(runId);
  if (!run) throw std::runtime_error("there is no run " + std::to_string(runId) + " in the store");
  RunData r;
  r.id = runId;
  r.mode = run->mode;
  r.batchSize = run->batchSize;
  r.totalSteps = run->totalSteps;
  r.steps = run->steps.value_or(0);
  r.samplesPerSec = run->samplesPerSec.value_or(kNaN);
  r.wallSeconds = run->wallSeconds.value_or(kNaN);
  r.testAccuracy = run->testAccuracy.value_or(kNaN);
  try {
    const engine::ExperimentSpec spec = engine::parseSpec(run->specJson);
    r.text = spec.dataset.kind == "text";
    r.seed = static_cast<int64_t>(spec.train.seed);
    r.overlap = spec.local.overlap;
    r.microBatches = spec.pipeline.microBatches;
    r.schedule = spec.pipeline.schedule;
    r.chunks = spec.pipeline.chunks;
    r.recompute = spec.pipeline.recompute;
    r.optimizerStates = spec.train.optimizer == "adam" ? 2 : spec.train.momentum > 0 ? 1 : 0;
    flopsFromSpec(spec, r, shapes);
  } catch (const engine::SpecError&) {
    // A spec from an older Stagewise that no longer parses: its numbers still count.
  }
  const json summary =
      json::parse(run->summaryJson.empty() ? "{}" : run->summaryJson, nullptr, false);
  if (summary.is_object()) {
    r.trainFlops = number(summary, "train_flops");
    // A spec that no longer parses still says text by its summary's bits per byte.
    r.text = r.text || std::isfinite(number(summary, "test_bits_per_byte"));
    if (auto st = summary.find("stages"); st != summary.end() && st->is_array())
      for (const auto& s : *st) {
        RunData::Stage stage;
        stage.index = static_cast<int>(integer(s, "index", 0));
        if (auto l = s.find("layers"); l != s.end() && l->is_array() && l->size() == 2)
          stage.firstLayer = (*l)[0].get<int>(), stage.lastLayer = (*l)[1].get<int>();
        stage.steps = integer(s, "steps", 0);
        stage.bytesSent = integer(s, "bytes_sent", 0);
        stage.gradBytesSent = integer(s, "grad_bytes_sent", 0);
        stage.peakMemoryBytes = integer(s, "peak_memory_bytes", -1);
        stage.peakActivationBytes = integer(s, "peak_activation_bytes", 0);
        stage.finalAccuracy = number(s, "final_accuracy");
        stage.bubbleMeasured = number(s, "bubble_measured");
        stage.bubblePlanned = number(s, "bubble_planned");
        r.stageData.push_back(stage);
      }
  }
  std::sort(r.stageData.begin(), r.stageData.end(),
            [](const RunData::Stage& a, const RunData::Stage& b) { return a.index < b.index; });
  r.stages = std::max<int>(1, static_cast<int>(r.stageData.size()));
  if (r.mode == "pipeline" && r.microBatches <= 0) r.microBatches = r.stages;

  // Text: the loss in nats per byte token over ln 2 is bits per byte (issue 34).
  const double perBit = r.text ? 1 / std::log(2.0) : 1;
  if (r.text) r.testBitsPerByte = run->testLoss.value_or(kNaN) * perBit;
  auto evalSeries = [&](const char* name, std::vector<study::EvalPoint>& into) {
    for (const auto& p : reader.loadSeries(runId, {name, -1, -1})) {
      // A periodic evaluation's step is the index of the step it follows; the final one's is
      // the step count (as study::loadStudyResults reads them).
      const int64_t done = std::min<int64_t>(p.step + 1, std::max<int64_t>(r.steps, p.step));
      into.push_back({p.timeS, static_cast<double>(done) * r.batchSize, p.value * perBit});
    }
  };
  evalSeries(r.text ? "test_loss" : "test_accuracy", r.evals);
  evalSeries(r.text ? "val_loss" : "val_accuracy", r.valEvals);
  for (const auto& info : reader.listSeries(runId)) {
    if (info.key.name == "grad_cosine") {
      auto& target =
          info.key.layer >= 0 ? r.layerCosine[info.key.layer] : r.stageCosine[info.key.stage];
      for (const auto& p : reader.loadSeries(runId, info.key)) target.push_back({p.step, p.value});
    } else if (info.key.name == "accuracy" && info.key.stage == r.stages - 1) {
      for (const auto& p : reader.loadSeries(runId, info.key))
        r.headAccuracy.push_back({p.step, p.value});
    }
  }
  return r;
}

std::vector<Finding> judgeSuite(storage::RunReader& reader, const Suite& suite,
                                const std::vector<int64_t>& studyIds, int cores,
                                study::ShapeCache& shapes) {
  std::map<int64_t, RunData> cache;
  bool tunedPass = false;  // issue 32 §5: the learning findings' tuned studies, then shared lr
  // The completed runs of a finding's study, with the point's values (JSON texts) of each.
  // Every study of the finding counts, its parts' too (issue 37).
  auto runsOf = [&](const std::string& finding) {
    std::vector<std::pair<std::vector<std::string>, const RunData*>> out;
    for (size_t i = 0; i < suite.studies.size() && i < studyIds.size(); ++i) {
      if (suite.studies[i].finding != finding || suite.studies[i].tuned != tunedPass) continue;
      std::map<int, bool> seen;
      for (const auto& link : reader.studyRuns(studyIds[i])) {
        if (link.replaced || link.runStatus != storage::RunStatus::Completed) continue;
        if (seen[link.point]) continue;
        seen[link.point] = true;
        auto it = cache.find(link.runId);
        if (it == cache.end())
          it = cache.emplace(link.runId, collectRun(reader, link.runId, shapes)).first;
        std::vector<std::string> values;
        const json v = json::parse(link.valuesJson, nullptr, false);
        if (v.is_array())
          for (const auto& x : v) values.push_back(x.dump());
        out.push_back({values, &it->second});
      }
    }
    return out;
  };
  // A finding's runs split by one key's value (the first key unless `key` says otherwise).
  auto split = [&](const std::string& finding, size_t key, const std::string& value) {
    std::vector<RunData> out;
    std::map<int64_t, bool> taken;
    for (const auto& [values, run] : runsOf(finding))
      if (key < values.size() && values[key] == value && !taken[run->id]) {
        taken[run->id] = true;
        out.push_back(*run);
      }
    return out;
  };
  auto all = [&](const std::string& finding) {
    std::vector<RunData> out;
    std::map<int64_t, bool> taken;
    for (const auto& [values, run] : runsOf(finding))
      if (!taken[run->id]) taken[run->id] = true, out.push_back(*run);
    return out;
  };
  const std::string local = "\"local\"", backprop = "\"backprop\"", pipeline = "\"pipeline\"";
  std::vector<Finding> findings;
  findings.push_back(judgeGradientSimilarity(all("gradient_similarity")));
  findings.push_back(
      judgeCommunication(split("communication", 0, local), split("communication", 0, pipeline)));
  findings.push_back(judgeMemory(split("memory", 0, local), split("memory", 0, pipeline),
                                 split("memory", 0, backprop)));
  // issue 37: recomputation, the paper's finding 6, from a study of its own.
  findings.push_back(judgeMemoryRecompute(all("memory_recompute")));
  findings.push_back(judgeThroughput(all("throughput_vs_stages"), cores));
  findings.push_back(judgeAccuracy(split("accuracy", 0, local), split("accuracy", 0, backprop)));
  findings.push_back(judgeOverlap(split("overlap", 0, "0"), split("overlap", 0, "1")));
  findings.push_back(judgeFront(all("compute_time_front")));
  // issue 34: a base on text has no random-labels study (the suite skips it).
  bool text = false;
  try {
    text = engine::parseSpec(suite.baseSpecJson).dataset.kind == "text";
  } catch (const engine::SpecError&) {
  }
  findings.push_back(judgeRandomLabels(split("random_labels", 0, local),
                                       split("random_labels", 0, backprop), text));

  // issue 32 §5: the learning findings judged again on their tuned studies' runs (each method
  // at its own chosen rate); those become the findings' verdicts, the shared rate's stand beside.
  bool hasTuned = false;
  for (const auto& s : suite.studies) hasTuned = hasTuned || s.tuned;
  if (!hasTuned) return findings;
  tunedPass = true;
  auto atRates = [](const Finding& f) {
    Finding::AtRates a;
    a.verdict = f.verdict;
    a.reason = f.reason;
    a.oursJson = f.oursJson;
    a.oursText = f.oursText;
    a.why = f.why;
    a.runs = f.runs;
    return a;
  };
  for (auto& f : findings) {
    Finding tuned;
    if (f.id == "gradient_similarity")
      tuned = judgeGradientSimilarity(all("gradient_similarity"));
    else if (f.id == "accuracy")
      tuned = judgeAccuracy(split("accuracy", 0, local), split("accuracy", 0, backprop));
    else if (f.id == "overlap")
      tuned = judgeOverlap(split("overlap", 0, "0"), split("overlap", 0, "1"));
    else if (f.id == "compute_time_front")
      tuned = judgeFront(all("compute_time_front"));
    else if (f.id == "random_labels")
      tuned = judgeRandomLabels(split("random_labels", 0, local),
                                split("random_labels", 0, backprop), text);
    else
      continue;
    const Finding::AtRates shared = atRates(f);
    f = std::move(tuned);
    f.tuned = atRates(f);
    f.sharedLr = shared;
  }
  return findings;
}

}  // namespace stagewise::report
