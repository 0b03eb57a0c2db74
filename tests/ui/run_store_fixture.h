#pragma once
// A temporary run store with a few finished runs written through the store's own writer, for
// the Runs workspace tests.

#include <QTemporaryDir>
#include <cmath>
#include <memory>

#include "stagewise/engine/spec.h"
#include "stagewise/storage/run_store.h"
#include "stagewise/storage/run_writer.h"

namespace stagewise::test {

inline engine::ExperimentSpec runSpec(const std::string& name, std::vector<int> cuts) {
  engine::ExperimentSpec spec;
  spec.name = name;
  spec.dataset.kind = "synthetic";
  spec.model.hidden = {32, 32, 32, 32};
  spec.partition.cuts = std::move(cuts);
  spec.train.maxSteps = 200;
  return spec;
}

/// Writes a finished run of `spec` with a decaying last-stage loss and the given accuracy; with
/// `cosines`, also a gradient cosine per stage and per layer every 20 steps (as a probe would).
inline int64_t addRun(storage::RunStore& store, const engine::ExperimentSpec& spec, double accuracy,
                      int steps = 200, const std::string& mode = "local", bool cosines = false,
                      const std::string& summaryJson = {}) {
  storage::NewRun run;
  run.name = spec.name;
  run.mode = mode;
  run.specJson = engine::specToJson(spec);
  run.modelKind = "mlp";
  run.totalSteps = steps;
  run.batchSize = 32;
  const int stages = spec.stageCount();
  for (int k = 0; k < stages; ++k) {
    storage::StageRecord s;
    s.index = k;
    s.device = "cpu";
    s.auxHead = "linear";
    run.stages.push_back(s);
  }
  const int layers = int(spec.model.hidden.size()) + 1;  // MLP: one per width, then the classifier
  for (int l = 0; l < layers; ++l) {
    storage::LayerRecord layer;
    layer.index = l;
    layer.name = l + 1 < layers ? "fc" + std::to_string(l + 1) : "classifier";
    run.layers.push_back(layer);
  }
  const auto stageOf = [&](int layer) {
    int stage = 0;
    for (int cut : spec.partition.cuts) stage += layer >= cut;
    return stage;
  };
  auto& writer = store.writer();
  const int64_t id = writer.createRun(run);
  std::vector<storage::PointInput> points;
  for (int step = 0; step < steps; ++step) {
    points.push_back(
        {"loss", stages - 1, -1, step, step * 0.01, 2.0 * std::exp(-step / 40.0) + (1 - accuracy)});
    if (cosines && step % 20 == 0) {
      for (int k = 0; k < stages; ++k)
        points.push_back({"grad_cosine", k, -1, step, step * 0.01, 0.5 + 0.1 * k});
      for (int l = 0; l < layers; ++l)
        points.push_back({"grad_cosine", stageOf(l), l, step, step * 0.01, 0.3 + 0.1 * l});
    }
    if (step % 50 == 49)
      points.push_back({"test_accuracy", -1, -1, step, step * 0.01, accuracy * step / steps});
  }
  writer.appendPoints(id, std::move(points));
  storage::RunFinish finish;
  finish.status = storage::RunStatus::Completed;
  finish.steps = steps;
  finish.testAccuracy = accuracy;
  finish.samplesPerSec = 1000 + 100 * stages;
  finish.wallSeconds = steps * 0.01;
  finish.summaryJson = summaryJson;
  writer.finishRun(id, finish);
  writer.flush();
  return id;
}

struct TempStore {
  QTemporaryDir dir;
  std::shared_ptr<storage::RunStore> store;
  TempStore() : store(std::make_shared<storage::RunStore>(path())) {}
  std::string path() const { return dir.filePath(QStringLiteral("runs.db")).toStdString(); }
};

}  // namespace stagewise::test
