#pragma once
// What test_methods shares between its cases: the small models it trains in every method, one
// run to its summary, and the gradients and weights read back from the run's checkpoints.

#include <QTemporaryDir>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "data/tensor_data.h"
#include "model/torch_model.h"
#include "recording_observer.h"
#include "runtime/method.h"
#include "stagewise/engine/engine.h"
#include "stagewise/engine/pipeline_schedule.h"

namespace methods_fixture {

using namespace stagewise::engine;

inline QTemporaryDir* g_dir = nullptr;

inline ExperimentSpec family(const std::string& kind, const std::vector<std::string>& extra = {}) {
  // "drop": an MLP with batch norm and dropout, whose recomputed forward must draw the same masks
  // and must not update the batch-norm statistics twice.
  const std::string model =
      kind.starts_with("vit") ? R"({"kind":"vit","patch":4,"dim":16,"depth":2,"heads":2})"
      : kind == "drop"        ? R"({"kind":"layers","layers":[{"type":"linear","out":32},
          {"type":"batchnorm1d"},{"type":"relu"},{"type":"dropout","p":0.25},
          {"type":"linear","out":32},{"type":"relu"},{"type":"dropout","p":0.25},
          {"type":"linear","out":4}]})"
                              : R"({"kind":"mlp","hidden":[32,32,32]})";
  const std::string data = kind.starts_with("vit")
                               ? R"({"kind":"idx","path":")" + g_dir->path().toStdString() + R"("})"
                               : R"({"kind":"synthetic","synthetic_train":1024,"synthetic_test":256,
                        "synthetic_features":16,"synthetic_classes":4})";
  // "mlp4", "vit4": four stages of one layer each (interleaved: two workers of two chunks).
  const std::string cuts = kind == "drop" ? "[2,5]" : kind.ends_with('4') ? "[1,2,3]" : "[1,2]";
  // One intra-op thread everywhere, so reductions run in the same order in every mode.
  std::string json =
      R"({"dataset":)" + data + R"(,"model":)" + model + R"(,"partition":{"cuts":)" + cuts + R"(},
     "train":{"batch_size":16,"max_steps":100,"seed":3,"queue_capacity":2,"backprop_threads":1},
     "stage_defaults":{"threads":1},"eval":{"interval":0},"probe":{"interval":-1}})";
  return parseSpec(applyOverrides(json, extra));
}

inline RunSummary train(const ExperimentSpec& spec, RecordingObserver& obs) {
  auto run = createRun(spec, &obs);
  run->start();
  return run->wait();
}

/// Body parameters of stage `k` in the checkpoint at `folder`.
inline std::vector<torch::Tensor> stageBody(const std::string& folder, size_t k) {
  std::vector<torch::Tensor> out;
  torch::serialize::InputArchive archive;
  archive.load_from(folder + "/stage-" + std::to_string(k) + ".pt");
  for (int i = 0;; ++i) {
    torch::Tensor t;
    if (!archive.try_read("body." + std::to_string(i), t)) break;
    out.push_back(t);
  }
  return out;
}

/// Body parameters of every stage of the checkpoint at `folder`, in model order.
inline std::vector<torch::Tensor> checkpointBody(const std::string& folder, size_t stages) {
  std::vector<torch::Tensor> out;
  for (size_t k = 0; k < stages; ++k)
    for (auto& t : stageBody(folder, k)) out.push_back(t);
  return out;
}

/// The step-0 gradient of every parameter tensor: one SGD step with a large learning rate from
/// the seeded initial weights, g = (w0 - w1) / lr (the large rate keeps the rounding of the
/// subtraction far below the tolerance).
inline std::vector<torch::Tensor> stepZeroGradients(ExperimentSpec spec, Mode mode,
                                                    const std::string& dir) {
  constexpr double kLr = 1e4;
  spec.mode = mode;
  spec.train.optimizer = "sgd";
  spec.train.momentum = 0;
  spec.train.lr = kLr;
  spec.train.maxSteps = 2;
  spec.checkpoint.interval = 1;
  spec.checkpoint.dir = dir;
  RecordingObserver obs;
  const RunSummary s = train(spec, obs);
  if (s.status != RunStatus::Completed) throw std::runtime_error(s.error);
  at::set_num_threads(1);
  const TensorData data = loadTensorData(spec.dataset, spec.train.seed);
  const ModelPlan plan = planModel(spec.model, data.shape);
  const auto w0 = parametersOf(buildLayers(spec.model, plan, spec.train.seed));
  const auto w1 = checkpointBody(dir + "/step-1", s.stages.size());
  if (w0.size() != w1.size()) throw std::runtime_error("parameter count differs");
  std::vector<torch::Tensor> g;
  for (size_t i = 0; i < w0.size(); ++i)
    g.push_back((w0[i].detach().to(torch::kFloat64) - w1[i].to(torch::kFloat64)) / kLr);
  return g;
}

/// Every stage's weights and buffers after one SGD step (the step-0 update), from its checkpoint.
inline std::vector<torch::Tensor> stateAfterOneStep(ExperimentSpec spec, const std::string& dir) {
  spec.train.optimizer = "sgd";
  spec.train.momentum = 0;
  spec.train.lr = 0.5;
  spec.train.maxSteps = 2;
  spec.checkpoint.interval = 1;
  spec.checkpoint.dir = dir;
  RecordingObserver obs;
  const RunSummary s = train(spec, obs);
  if (s.status != RunStatus::Completed) throw std::runtime_error(s.error);
  return checkpointBody(dir + "/step-1", s.stages.size());
}

/// The span kinds stage `k` records for one step when it runs `order`, without the update.
inline std::vector<std::pair<SpanKind, int>> expectedSpans(
    const std::vector<schedule::Action>& order, bool recompute) {
  std::vector<std::pair<SpanKind, int>> out;
  for (const auto& a : order) {
    if (recompute && (a.op == schedule::Op::B || a.op == schedule::Op::BW))
      out.push_back({SpanKind::Recompute, a.micro});
    out.push_back({a.op == schedule::Op::F   ? SpanKind::Forward
                   : a.op == schedule::Op::W ? SpanKind::Weight
                                             : SpanKind::Backward,
                   a.micro});
  }
  return out;
}

inline double relativeDifference(double a, double b) {
  return std::abs(a - b) / std::max(1e-12, std::abs(b));
}

/// A wait for an input or a gradient, or a blocked send: not a pass of the schedule.
inline bool isWait(const StepSpan& x) {
  return x.kind == SpanKind::Wait || x.kind == SpanKind::Blocked;
}

}  // namespace methods_fixture
