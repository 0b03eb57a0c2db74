#pragma once
// Runs written straight into a store for the report's tests: a spec of the suite's shape on
// synthetic data (so the FLOPs per stage can be worked out without files), a summary with the
// numbers a finding reads, and the series it reads (cosines, evaluations, the head's accuracy).

#include <QtTest>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "stagewise/engine/spec.h"
#include "stagewise/storage/run_store.h"
#include "stagewise/storage/run_writer.h"

namespace report_fixture {

struct FakeRun {
  std::string mode = "local";
  std::vector<int> cuts = {2, 4, 6};  // 9 layers: stages 0-1, 2-3, 4-5, 6-8
  int batch = 32;
  int64_t seed = 1;
  int overlap = 0;
  bool randomLabels = false;
  int64_t steps = 300;
  double samplesPerSec = 1000;
  double wall = 10;
  double testAccuracy = 0.8;
  std::vector<int64_t> bytesSent, gradBytesSent, peakMemory;  // per stage (empty: 0 / -1)
  std::vector<double> finalAccuracy;                          // per stage
  struct Cosine {
    int stage, layer;
    int64_t step;
    double value;
  };
  std::vector<Cosine> cosines;  // layer -1: the stage's value
  struct Eval {
    double time;
    int64_t step;
    double accuracy;
  };
  std::vector<Eval> evals;
  std::vector<std::pair<int64_t, double>> headAccuracy;  // the last stage's accuracy per step
  std::vector<int64_t> peakActivation;                   // per stage (empty: 1000)
  int microBatches = 0;                                  // pipeline.micro_batches
  std::vector<Eval> valEvals;                            // val_accuracy
  // issue 34: a gpt on text. Its evals' `accuracy` is then the test loss in nats per byte token
  // (stored as the test_loss series), and testLoss the final one.
  bool text = false;
  double testLoss = 2.0;
  // issue 37
  std::string schedule = "gpipe";                     // pipeline.schedule
  int chunks = 1;                                     // pipeline.chunks
  bool recompute = false;                             // pipeline.recompute
  std::vector<double> bubbleMeasured, bubblePlanned;  // per stage (empty: null)
};

inline std::string specJsonOf(const FakeRun& r) {
  using stagewise::engine::ExperimentSpec;
  ExperimentSpec s = stagewise::engine::parseSpec(
      r.text ? R"({"dataset":{"kind":"text","context":16},
                  "model":{"kind":"gpt","dim":16,"depth":8,"heads":2,"mlp_ratio":2},
                  "stage_defaults":{"aux_head":"lm"}})"
             : R"({"dataset":{"kind":"synthetic","synthetic_features":32,"synthetic_classes":4},
          "model":{"hidden":[64,64,64,64,64,64,64,64]}})");
  s.mode = *stagewise::engine::modeFromString(r.mode);
  s.partition.cuts = r.mode == "backprop" ? std::vector<int>{} : r.cuts;
  s.train.batchSize = r.batch;
  s.train.seed = static_cast<uint64_t>(r.seed);
  s.train.maxSteps = r.steps;
  s.local.overlap = r.overlap;
  s.pipeline.microBatches = r.microBatches;
  s.pipeline.schedule = r.schedule;
  s.pipeline.chunks = r.chunks;
  s.pipeline.recompute = r.recompute;
  s.dataset.randomLabels = r.randomLabels;
  return stagewise::engine::specToJson(s);
}

/// Stores `r` as a completed run; returns its id.
inline int64_t storeRun(stagewise::storage::RunStore& store, const FakeRun& r) {
  using namespace stagewise::storage;
  NewRun run;
  run.name = "fixture " + r.mode;
  run.mode = r.mode;
  run.specJson = specJsonOf(r);
  run.modelKind = r.text ? "gpt" : "mlp";
  run.totalSteps = r.steps;
  run.batchSize = r.batch;
  const std::vector<int> cuts = r.mode == "backprop" ? std::vector<int>{} : r.cuts;
  int first = 0;
  for (size_t k = 0; k <= cuts.size(); ++k) {
    const int last = k < cuts.size() ? cuts[k] - 1 : 8;
    StageRecord st;
    st.index = static_cast<int>(k);
    st.firstLayer = first;
    st.lastLayer = last;
    run.stages.push_back(st);
    first = last + 1;
  }
  RunWriter& w = store.writer();
  const int64_t id = w.createRun(run);
  std::vector<PointInput> points;
  for (const auto& c : r.cosines)
    points.push_back({"grad_cosine", c.stage, c.layer, c.step, double(c.step), c.value});
  for (const auto& e : r.evals)
    points.push_back({r.text ? "test_loss" : "test_accuracy", -1, -1, e.step, e.time, e.accuracy});
  for (const auto& e : r.valEvals)
    points.push_back({"val_accuracy", -1, -1, e.step, e.time, e.accuracy});
  for (const auto& [step, a] : r.headAccuracy)
    points.push_back(
        {"accuracy", static_cast<int>(run.stages.size()) - 1, -1, step, double(step), a});
  w.appendPoints(id, points);
  nlohmann::json stages = nlohmann::json::array();
  for (size_t k = 0; k < run.stages.size(); ++k) {
    auto at = [&](const auto& v, auto fallback) { return k < v.size() ? v[k] : fallback; };
    stages.push_back({{"index", k},
                      {"layers", {run.stages[k].firstLayer, run.stages[k].lastLayer}},
                      {"steps", r.steps},
                      {"bytes_sent", at(r.bytesSent, int64_t{0})},
                      {"grad_bytes_sent", at(r.gradBytesSent, int64_t{0})},
                      {"peak_memory_bytes", at(r.peakMemory, int64_t{-1})},
                      {"peak_activation_bytes", at(r.peakActivation, int64_t{1000})},
                      {"final_accuracy", at(r.finalAccuracy, 0.5)}});
    if (k < r.bubbleMeasured.size()) stages.back()["bubble_measured"] = r.bubbleMeasured[k];
    if (k < r.bubblePlanned.size()) stages.back()["bubble_planned"] = r.bubblePlanned[k];
  }
  RunFinish f;
  f.status = RunStatus::Completed;
  f.steps = r.steps;
  f.testAccuracy = r.testAccuracy;
  if (r.text) f.testLoss = r.testLoss;
  f.samplesPerSec = r.samplesPerSec;
  f.wallSeconds = r.wall;
  nlohmann::json summary = {{"train_flops", 1e9}, {"stages", stages}};
  if (r.text) summary["test_bits_per_byte"] = r.testLoss / std::log(2.0);
  f.summaryJson = summary.dump();
  w.finishRun(id, f);
  w.flush();
  return id;
}

}  // namespace report_fixture
