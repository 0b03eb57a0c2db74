#include "stagewise/engine/partition.h"

#include <cstdio>

#include <algorithm>
#include <limits>

namespace stagewise::engine {

std::vector<Problem> validateCuts(const std::vector<int>& cuts, int numLayers) {
  std::vector<Problem> out;
  for (size_t i = 0; i < cuts.size(); ++i) {
    const std::string field = "partition.cuts[" + std::to_string(i) + "]";
    const int c = cuts[i];
    // Users count cuts, stages and layers from 1; a cut's value is the number of layers
    // before it, so cut value 4 lies after layer 4. The field keeps JSON's 0-based index.
    if (c < 1 || c > numLayers - 1) {
      out.push_back(
          {field, "cut " + std::to_string(i + 1) + " would lie after layer " + std::to_string(c) +
                      ", but the model has " + std::to_string(numLayers) +
                      " layers: a cut lies after layer 1 to " + std::to_string(numLayers - 1) +
                      "; move or remove cut " + std::to_string(i + 1)});
    } else if (i > 0 && c <= cuts[i - 1]) {
      out.push_back({field, "stage " + std::to_string(i + 1) + " is empty: cut " +
                                std::to_string(i + 1) + " (after layer " + std::to_string(c) +
                                ") must come after cut " + std::to_string(i) + " (after layer " +
                                std::to_string(cuts[i - 1]) + "); move or remove cut " +
                                std::to_string(i + 1)});
    }
  }
  return out;
}

std::vector<double> flopCosts(const ModelPlan& plan) {
  std::vector<double> costs;
  for (const auto& l : plan.layers) costs.push_back(3.0 * static_cast<double>(l.flops));
  return costs;
}

std::vector<Problem> validatePartition(const ExperimentSpec& spec, const ModelPlan& plan) {
  PartitionPlan partition;
  try {
    partition = makePartition(spec, plan);
  } catch (const SpecError& e) {
    return {{e.field(), e.message()}};
  }
  if (spec.mode == Mode::Local && spec.local.overlap > 0)
    for (const auto& s : partition.stages)
      if (!s.isLast && spec.local.overlap > s.lastLayer - s.firstLayer + 1)
        return {{"local.overlap", "stage " + std::to_string(s.index + 1) + " has " +
                                      std::to_string(s.lastLayer - s.firstLayer + 1) +
                                      " layer(s); the next stage's loss cannot train its last " +
                                      std::to_string(spec.local.overlap) +
                                      ": lower the overlap or move the cut"}};
  return {};
}

std::vector<std::string> partitionWarnings(const PartitionPlan& partition) {
  int64_t body = 0;
  for (const auto& s : partition.stages) body += s.params;
  std::vector<std::string> out;
  for (const auto& s : partition.stages) {
    // Four times the whole model: a linear head on an early conv stage's wide activations can
    // match the body (the CNN preset's do) and is the cheapest head there is.
    if (s.isLast || s.auxParams <= 4 * body) continue;
    const auto millions = [](int64_t n) {
      char text[32];
      std::snprintf(text, sizeof text, "%.2g M", double(n) / 1e6);
      return std::string(text);
    };
    out.push_back("stages." + std::to_string(s.index) + ".aux_head: stage " +
                  std::to_string(s.index + 1) + "'s " + s.settings.auxHead + " head has " +
                  millions(s.auxParams) + " parameters, over 4x the whole model's " +
                  millions(body) + ": it will dominate the stage's time and memory" +
                  (s.settings.auxHead == "mlp" ? " (a linear head, or a smaller aux_hidden, is "
                                                 "cheaper)"
                                               : " (a cut where the activations are smaller "
                                                 "makes it cheaper)"));
  }
  return out;
}

std::vector<double> trainFlopsPerSample(const std::vector<StagePlan>& stages, const ModelPlan& plan,
                                        int overlap) {
  std::vector<double> out;
  for (const auto& st : stages) {
    double forward = 0;
    for (int i = st.firstLayer; i <= st.lastLayer; ++i)
      forward += static_cast<double>(plan.layers.at(static_cast<size_t>(i)).flops);
    double f = 3.0 * (forward + static_cast<double>(st.auxFlops));
    if (overlap > 0 && !st.isLast)
      for (int i = std::max(st.firstLayer, st.lastLayer - overlap + 1); i <= st.lastLayer; ++i)
        f += 2.0 * static_cast<double>(plan.layers.at(static_cast<size_t>(i)).flops);
    out.push_back(f);
  }
  return out;
}

std::vector<StagePlan> methodStages(const ExperimentSpec& spec, const ModelPlan& plan,
                                    const PartitionPlan& partition) {
  std::vector<StagePlan> stages = partition.stages;
  if (spec.mode == Mode::Backprop) {
    stages.resize(1);
    stages[0].firstLayer = 0, stages[0].lastLayer = static_cast<int>(plan.layers.size()) - 1;
    stages[0].isLast = true;
  }
  if (spec.mode != Mode::Local)
    for (auto& st : stages) st.auxFlops = 0;
  return stages;
}

double runTrainFlopsPerSample(const ExperimentSpec& spec, const ModelPlan& plan) {
  double total = 0;
  for (double f : trainFlopsPerSample(methodStages(spec, plan, makePartition(spec, plan)), plan,
                                      spec.mode == Mode::Local ? spec.local.overlap : 0))
    total += f;
  return total;
}

std::vector<int> balanceCuts(const std::vector<double>& cost, int stages) {
  const int n = static_cast<int>(cost.size());
  stages = std::clamp(stages, 1, std::max(1, n));
  std::vector<double> prefix(static_cast<size_t>(n) + 1, 0.0);
  for (int i = 0; i < n; ++i)
    prefix[static_cast<size_t>(i) + 1] =
        prefix[static_cast<size_t>(i)] + cost[static_cast<size_t>(i)];
  auto sum = [&](int a, int b) {
    return prefix[static_cast<size_t>(b)] - prefix[static_cast<size_t>(a)];
  };
  const double inf = std::numeric_limits<double>::infinity();
  // best[k][i]: smallest possible max stage cost splitting layers [0, i) into k stages.
  std::vector<std::vector<double>> best(static_cast<size_t>(stages) + 1,
                                        std::vector<double>(static_cast<size_t>(n) + 1, inf));
  std::vector<std::vector<int>> from(best.size(), std::vector<int>(static_cast<size_t>(n) + 1, 0));
  best[0][0] = 0;
  for (int k = 1; k <= stages; ++k)
    for (int i = k; i <= n; ++i)
      for (int j = k - 1; j < i; ++j) {
        double v = std::max(best[static_cast<size_t>(k) - 1][static_cast<size_t>(j)], sum(j, i));
        if (v < best[static_cast<size_t>(k)][static_cast<size_t>(i)] - 1e-9) {
          best[static_cast<size_t>(k)][static_cast<size_t>(i)] = v;
          from[static_cast<size_t>(k)][static_cast<size_t>(i)] = j;
        }
      }
  std::vector<int> cuts;
  for (int k = stages, i = n; k > 1; --k) {
    i = from[static_cast<size_t>(k)][static_cast<size_t>(i)];
    cuts.push_back(i);
  }
  std::reverse(cuts.begin(), cuts.end());
  return cuts;
}

std::vector<int> resolveCuts(const ExperimentSpec& spec, const ModelPlan& plan) {
  const int n = static_cast<int>(plan.layers.size());
  if (spec.partition.balance == "flops") {
    if (spec.partition.numStages < 1 || spec.partition.numStages > n)
      throw SpecError("partition.stages", "balance=flops needs a stage count between 1 and " +
                                              std::to_string(n) + " (the number of layers)");
    return balanceCuts(flopCosts(plan), spec.partition.numStages);
  }
  auto problems = validateCuts(spec.partition.cuts, n);
  if (!problems.empty()) throw SpecError(problems.front().field, problems.front().message);
  return spec.partition.cuts;
}

PartitionPlan makePartition(const ExperimentSpec& spec, const ModelPlan& plan) {
  return makePartition(spec, plan, resolveCuts(spec, plan));
}

PartitionPlan makePartition(const ExperimentSpec& spec, const ModelPlan& plan,
                            const std::vector<int>& cuts) {
  const int n = static_cast<int>(plan.layers.size());
  auto problems = validateCuts(cuts, n);
  if (!problems.empty()) throw SpecError(problems.front().field, problems.front().message);
  PartitionPlan out;
  std::vector<int> starts = {0};
  starts.insert(starts.end(), cuts.begin(), cuts.end());
  for (size_t k = 0; k < starts.size(); ++k) {
    StagePlan s;
    s.index = static_cast<int>(k);
    s.firstLayer = starts[k];
    s.lastLayer = (k + 1 < starts.size() ? starts[k + 1] : n) - 1;
    s.isLast = k + 1 == starts.size();
    s.settings = spec.stageSettings(s.index);
    for (int i = s.firstLayer; i <= s.lastLayer; ++i) {
      const auto& l = plan.layers[static_cast<size_t>(i)];
      s.params += l.params;
      s.flops += l.flops;
      s.activationBytes += l.activationBytes;
    }
    const auto& lastLayer = plan.layers[static_cast<size_t>(s.lastLayer)];
    if (!s.isLast) {
      // The conv head needs an image at the boundary, the token head tokens (model.layers can
      // cut anywhere; the families' boundaries always fit their heads).
      const bool conv = s.settings.auxHead == "conv",
                 token = s.settings.auxHead == "token" || s.settings.auxHead == "lm";
      if ((conv && lastLayer.outShape.size() != 3) || (token && lastLayer.outShape.size() != 2)) {
        std::string shape;
        for (int64_t d : lastLayer.outShape) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
        throw SpecError(
            (spec.stages.empty() ? std::string("stage_defaults") : "stages[" + std::to_string(k) + "]") +
                ".aux_head",
            "the " + s.settings.auxHead + " aux head needs " +
                (conv ? "an image [C, H, W]" : "tokens [N, D]") + " where stage " +
                std::to_string(k) + " ends, but " + lastLayer.name + " outputs [" + shape +
                "]: use linear or mlp, or move the cut");
      }
      AuxCost aux = auxHeadCost(s.settings.auxHead, s.settings.auxHidden, lastLayer.outShape,
                                plan.input.numClasses);
      s.auxParams = aux.params;
      s.auxFlops = aux.flops;
      // What crosses the cut: the stage's output tensor (float32), not the activations its last
      // layer keeps inside (a residual block's or an encoder block's are several times larger).
      s.outBytes = 4;
      for (int64_t d : lastLayer.outShape) s.outBytes *= d;
      s.activationBytes += s.settings.auxHead == "mlp" ? int64_t{s.settings.auxHidden} * 4 : 0;
      s.activationBytes +=
          int64_t{plan.input.numClasses} * 4 * (plan.input.sequence ? plan.input.dims.at(0) : 1);
    }
    out.stages.push_back(s);
  }
  return out;
}

}  // namespace stagewise::engine
