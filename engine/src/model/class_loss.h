#pragma once
#include <torch/torch.h>  // free here: the engine precompiles it
// The loss and accuracy of a model's output, for classifiers (logits [B, C], labels [B]) and
// language models alike (logits [B, T, V], labels [B, T]: every position is a prediction).
// Every stage worker, the probe, the evaluator and the profiler go through these, so a
// sequence's predictions count the same everywhere.

#include "stagewise/engine/model_plan.h"

namespace stagewise::engine {

/// Logits as rows of predictions [N, C] and labels [N]: a sequence's positions become rows.
inline std::pair<torch::Tensor, torch::Tensor> predictionRows(const torch::Tensor& logits,
                                                              const torch::Tensor& labels) {
  if (logits.dim() <= 2) return {logits, labels};
  return {logits.reshape({-1, logits.size(-1)}), labels.reshape({-1})};
}

/// Cross-entropy per prediction (per sample, or per token for a sequence), averaged.
inline torch::Tensor classLoss(const torch::Tensor& logits, const torch::Tensor& labels) {
  auto [x, y] = predictionRows(logits, labels);
  return torch::nn::functional::cross_entropy(x, y);
}

/// Cross-entropy summed over every prediction (an evaluation's running total).
inline torch::Tensor classLossSum(const torch::Tensor& logits, const torch::Tensor& labels) {
  auto [x, y] = predictionRows(logits, labels);
  return torch::nn::functional::cross_entropy(
      x, y, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum));
}

/// Predictions whose highest logit is the label (a sequence: next-token hits).
inline int64_t correctCount(const torch::Tensor& logits, const torch::Tensor& labels) {
  return logits.detach().argmax(-1).eq(labels).sum().item<int64_t>();
}

/// A batch of `batch` random inputs of `shape` (token ids for text) for timing runs.
inline torch::Tensor randomInputs(const InputShape& shape, int64_t batch) {
  std::vector<int64_t> dims = {batch};
  dims.insert(dims.end(), shape.dims.begin(), shape.dims.end());
  return shape.sequence ? torch::randint(shape.numClasses, dims, torch::kInt64)
                        : torch::randn(dims);
}

/// Random labels for `batch` samples of `shape`: [batch], or [batch, T] for text.
inline torch::Tensor randomLabels(const InputShape& shape, int64_t batch) {
  std::vector<int64_t> dims = {batch};
  if (shape.sequence) dims.push_back(shape.dims.at(0));
  return torch::randint(shape.numClasses, dims, torch::kInt64);
}

}  // namespace stagewise::engine
