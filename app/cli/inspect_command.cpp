#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "commands.h"
#include "stagewise/engine/dataset.h"
#include "stagewise/engine/engine.h"
#include "stagewise/engine/number_text.h"
#include "stagewise/engine/partition.h"
#include "stagewise/engine/pipeline_plan.h"

namespace stagewise::cli {

namespace {

std::string shapeText(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  return s + "]";
}

std::string human(double v) {
  char buf[32];
  if (v >= 1e9)
    std::snprintf(buf, sizeof buf, "%.2fG", v / 1e9);
  else if (v >= 1e6)
    std::snprintf(buf, sizeof buf, "%.2fM", v / 1e6);
  else if (v >= 1e3)
    std::snprintf(buf, sizeof buf, "%.1fk", v / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

// printf pads by bytes; layer descriptions hold multi-byte characters such as "→".
std::string pad(const std::string& s, size_t width) {
  size_t shown = 0;
  for (unsigned char c : s) shown += (c & 0xC0) != 0x80;
  return s + std::string(width > shown ? width - shown : 0, ' ');
}

double slowestStage(const std::vector<double>& cost, const std::vector<int>& cuts) {
  std::vector<int> starts = {0};
  starts.insert(starts.end(), cuts.begin(), cuts.end());
  starts.push_back(static_cast<int>(cost.size()));
  double worst = 0;
  for (size_t k = 0; k + 1 < starts.size(); ++k) {
    double s = 0;
    for (int i = starts[k]; i < starts[k + 1]; ++i) s += cost[static_cast<size_t>(i)];
    worst = std::max(worst, s);
  }
  return worst;
}

std::string cutsText(const std::vector<int>& cuts) {
  std::string s = "[";
  for (size_t i = 0; i < cuts.size(); ++i) s += (i ? ", " : "") + std::to_string(cuts[i]);
  return s + "]";
}

namespace sched = engine::schedule;

/// Every schedule planned for the pipeline with per-stage pass times `times` (one micro-batch):
/// the step's bubble and each stage's peak activations (docs/metrics.md, "Bubble: planned
/// against measured").
std::vector<sched::ScheduleEstimate> planSchedules(const engine::ExperimentSpec& spec,
                                                   const engine::ModelPlan& plan,
                                                   const engine::PartitionPlan& partition,
                                                   const engine::InputShape& shape,
                                                   const std::vector<sched::PassTimes>& times,
                                                   int micro) {
  const int64_t rows = (spec.train.batchSize + micro - 1) / micro;
  int64_t inputBytes = 4;
  for (int64_t d : shape.dims) inputBytes *= d;
  std::vector<int64_t> act = sched::heldActivationBytes(partition, plan), in,
                       grad = sched::heldGradientBytes(partition, plan);
  for (size_t k = 0; k < partition.stages.size(); ++k) {
    act[k] *= rows;
    grad[k] *= rows;
    in.push_back((k == 0 ? inputBytes : partition.stages[k - 1].outBytes) * rows);
  }
  return sched::compareSchedules(times, micro, act, in, spec.pipeline.recompute, grad,
                                 spec.pipeline.chunks);
}

nlohmann::json schedulesJson(const std::vector<sched::ScheduleEstimate>& schedules,
                             const char* timesFrom) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& e : schedules) {
    nlohmann::json one = {{"schedule", e.schedule}, {"chunks", e.chunks}};
    if (e.exampleChunks) one["chunks_example"] = true;
    if (!e.refused.empty()) {
      one["refused"] = e.refused;
    } else {
      one["bubble"] = e.bubble;
      one["peak_activation_bytes"] = e.peakActivationBytes;
    }
    list.push_back(one);
  }
  return {{"pass_times_from", timesFrom}, {"plans", list}};
}

void printSchedules(const std::vector<sched::ScheduleEstimate>& schedules, const char* timesFrom,
                    bool recompute) {
  std::printf("\nschedules planned from %s%s:\n", timesFrom,
              recompute ? ", recomputing activations" : "");
  std::printf(
      "  (planned bubble: the schedule alone, one core per worker, no transfers; peak: what a\n"
      "  stage holds at once, zb-h1's kept gradients included)\n");
  std::printf("  %-42s %7s  %s\n", "schedule", "bubble", "peak activations per stage");
  for (const auto& e : schedules) {
    // Interleaved runs the stages as chunks: K stages on K / v workers, so say how many.
    const size_t stages = e.peakActivationBytes.size();
    std::string name = e.schedule;
    if (e.chunks > 1 && stages > 0) {
      const size_t workers = stages / size_t(e.chunks);
      name += " (" + std::to_string(workers) + (workers == 1 ? " worker x " : " workers x ") +
              std::to_string(e.chunks) + " chunks" + (e.exampleChunks ? ", e.g.)" : ")");
    } else if (e.chunks > 1)
      name += " (chunks " + std::to_string(e.chunks) + ")";
    if (!e.refused.empty()) {
      std::printf("  %-42s %7s  %s\n", name.c_str(), "-", e.refused.c_str());
      continue;
    }
    std::string bytes;
    for (int64_t b : e.peakActivationBytes)
      bytes += (bytes.empty() ? "" : ", ") + engine::bytesText(static_cast<double>(b));
    std::printf("  %-42s %6.1f%%  %s\n", name.c_str(), 100 * e.bubble, bytes.c_str());
  }
  for (const auto& e : schedules)
    if (e.exampleChunks)
      std::printf(
          "  (interleaved with pipeline.chunks = %d, as an example: set pipeline.chunks to "
          "plan yours)\n",
          e.chunks);
}

/// Pass times from the stages' FLOPs: F in proportion, B = W = F (a matrix product's input and
/// weight gradients cost one forward each).
std::vector<sched::PassTimes> flopTimes(const engine::PartitionPlan& partition) {
  std::vector<sched::PassTimes> t;
  for (const auto& s : partition.stages) {
    const double f = static_cast<double>(std::max<int64_t>(1, s.flops));
    t.push_back({f, f, f, 0});
  }
  return t;
}

/// Pass times measured by profileMethods: F its forward, the rest of its micro-batch split
/// evenly into B and W (not timed apart).
std::vector<sched::PassTimes> measuredTimes(const engine::MethodProfile& profile) {
  std::vector<sched::PassTimes> t;
  for (size_t k = 0; k < profile.pipelineMicro.size(); ++k) {
    const double f = k < profile.pipelineForward.size() ? profile.pipelineForward[k] : 0;
    const double back = std::max(0.0, profile.pipelineMicro[k] - f);
    t.push_back({f, back / 2, back / 2, 0});
  }
  return t;
}

int printProfile(const engine::ExperimentSpec& spec, const engine::ModelPlan& plan, bool json) {
  const bool terminal = isatty(STDERR_FILENO) != 0;
  engine::LayerProfile profile = engine::profileLayers(spec, 8, [&](int done, int total) {
    if (terminal) std::fprintf(stderr, "\rprofiling layer %d/%d", done, total);
    return true;
  });
  const engine::MethodProfile methodProfile =
      engine::profileMethods(spec, 8, [&](int done, int total) {
        if (terminal) std::fprintf(stderr, "\rmeasuring the methods %d/%d ", done, total);
        return true;
      });
  if (terminal) std::fprintf(stderr, "\r\033[K");
  const int cores = engine::engineInfo().hardwareCores;
  const engine::MethodEstimate methods =
      engine::estimateMethods(methodProfile, engine::makePartition(spec, plan), cores,
                              spec.pipeline.schedule == "1f1b", spec.train.queueCapacity);
  const engine::PartitionPlan partition = engine::makePartition(spec, plan);
  const std::vector<sched::ScheduleEstimate> schedules =
      spec.mode == engine::Mode::Pipeline
          ? planSchedules(spec, plan, partition, engine::probeInputShape(spec.dataset),
                          measuredTimes(methodProfile), methodProfile.microBatches)
          : std::vector<sched::ScheduleEstimate>{};
  const int stages = spec.stageCount();
  const auto byTime = engine::balanceCuts(profile.seconds, stages);
  const auto byFlops = engine::balanceCuts(engine::flopCosts(plan), stages);
  const auto current = engine::resolveCuts(spec, plan);
  double total = 0;
  for (double s : profile.seconds) total += s;
  if (json) {
    nlohmann::json out = {{"layer_seconds", profile.seconds},
                          {"devices", profile.devices},
                          {"cuts_by_time", byTime},
                          {"cuts_by_flops", byFlops},
                          {"cuts_current", current},
                          {"slowest_stage_seconds",
                           {{"by_time", slowestStage(profile.seconds, byTime)},
                            {"by_flops", slowestStage(profile.seconds, byFlops)},
                            {"current", slowestStage(profile.seconds, current)}}},
                          {"backprop_step_seconds", total},
                          {"methods",
                           {{"cores", cores},
                            {"micro_batches", methodProfile.microBatches},
                            {"local_samples_per_sec", methods.localSamplesPerSec},
                            {"pipeline_samples_per_sec", methods.pipelineSamplesPerSec},
                            {"backprop_samples_per_sec", methods.backpropSamplesPerSec},
                            {"local_speedup", methods.localSpeedup},
                            {"pipeline_speedup", methods.pipelineSpeedup},
                            {"bubble_fraction", methods.bubbleFraction}}}};
    if (spec.mode == engine::Mode::Pipeline)
      out["methods"]["schedules"] = schedulesJson(schedules, "measured");
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  std::printf("%5s  %-11s %s %9s %7s  %s\n", "index", "name", pad("layer", 28).c_str(), "ms/batch",
              "share", "device");
  for (size_t i = 0; i < plan.layers.size(); ++i)
    std::printf("%5zu  %-11s %s %9.3f %6.1f%%  %s\n", i, plan.layers[i].name.c_str(),
                pad(plan.layers[i].description, 28).c_str(), 1e3 * profile.seconds[i],
                100 * profile.seconds[i] / total, profile.devices[i].c_str());
  std::printf("\n%d stages, slowest stage per batch (measured layer times, aux heads excluded):\n",
              stages);
  std::printf("  current cuts     %-16s %8.3f ms\n", cutsText(current).c_str(),
              1e3 * slowestStage(profile.seconds, current));
  std::printf("  balanced by time %-16s %8.3f ms\n", cutsText(byTime).c_str(),
              1e3 * slowestStage(profile.seconds, byTime));
  std::printf("  balanced by FLOPs%-16s %8.3f ms\n", (" " + cutsText(byFlops)).c_str(),
              1e3 * slowestStage(profile.seconds, byFlops));
  std::printf("  whole model (backprop, 1 stage)  %8.3f ms\n", 1e3 * total);
  std::printf(
      "\npredicted samples/s with the current cuts on %d cores (each method's work timed here,\n"
      "its schedule simulated; see docs/metrics.md):\n",
      cores);
  std::printf("  local     %9.0f  (%.2fx backprop)\n", methods.localSamplesPerSec,
              methods.localSpeedup);
  // Not the planned bubble below: this idle share is the throughput model's, its stages' threads
  // sharing these cores, with the queues' cost; it runs 1f1b's order for 1f1b, gpipe's otherwise.
  std::printf(
      "  pipeline  %9.0f  (%.2fx backprop, M = %d, %s, simulated in %s order: idle %.0f%% "
      "on %d cores)\n",
      methods.pipelineSamplesPerSec, methods.pipelineSpeedup, methodProfile.microBatches,
      spec.pipeline.schedule.c_str(), spec.pipeline.schedule == "1f1b" ? "1f1b" : "gpipe",
      100 * methods.bubbleFraction, cores);
  std::printf("  backprop  %9.0f  (%d threads)\n", methods.backpropSamplesPerSec,
              methodProfile.backpropThreads);
  if (spec.mode == engine::Mode::Pipeline)
    printSchedules(schedules, "the measured F and backward (B = W = half)",
                   spec.pipeline.recompute);
  return 0;
}

}  // namespace

int inspectCommand(const std::vector<std::string>& argv) {
  Args args(argv, {"--config"}, {"--set"}, {"--json", "--profile", "--help"});
  if (args.flag("--help")) {
    std::cout
        << "usage: stagewise-cli inspect --config FILE [--set key=value]... [--profile] [--json]\n"
           "  --profile  time each layer (forward + backward of one batch) and compare the cuts\n"
           "             balanced by measured time with those balanced by FLOPs\n";
    return 0;
  }
  engine::ExperimentSpec spec = specFromArgs(args.required("--config"), args.values("--set"));
  const engine::EngineInfo info = engine::engineInfo();
  const engine::InputShape shape = engine::probeInputShape(spec.dataset);
  const engine::ModelPlan plan = engine::planModel(spec.model, shape);
  auto problems = engine::validateSpec(spec, static_cast<int>(plan.layers.size()), info.devices);
  if (!problems.empty()) {
    for (const auto& p : problems) std::cerr << "error: " << p.field << ": " << p.message << "\n";
    return 2;
  }
  const engine::PartitionPlan partition = engine::makePartition(spec, plan);
  const engine::SpeedEstimate est =
      engine::estimateSpeed(partition, plan, spec.train.batchSize, info.hardwareCores);

  if (args.flag("--profile")) return printProfile(spec, plan, args.flag("--json"));

  // Pipelined backprop: what crosses each cut both ways, and the fill-drain bubble (balanced
  // stages idle for K - 1 of every M + K - 1 micro-batch slots, GPipe and 1F1B alike).
  const int stageCount = static_cast<int>(partition.stages.size());
  const int micro = spec.pipeline.microBatches > 0 ? spec.pipeline.microBatches : stageCount;
  const double bubble =
      static_cast<double>(stageCount - 1) / static_cast<double>(micro + stageCount - 1);
  std::vector<int64_t> backBytes;
  for (size_t k = 0; k + 1 < partition.stages.size(); ++k)
    backBytes.push_back(partition.stages[k].outBytes * spec.train.batchSize);

  if (args.flag("--json")) {
    nlohmann::json layers = nlohmann::json::array(), stages = nlohmann::json::array();
    for (const auto& l : plan.layers)
      layers.push_back({{"index", l.index},
                        {"name", l.name},
                        {"description", l.description},
                        {"shape", l.outShape},
                        {"params", l.params},
                        {"flops", l.flops},
                        {"activation_bytes", l.activationBytes}});
    for (size_t k = 0; k < partition.stages.size(); ++k) {
      const auto& s = partition.stages[k];
      stages.push_back(
          {{"index", s.index},
           {"layers", {s.firstLayer, s.lastLayer}},
           {"device", s.settings.device},
           {"threads", s.settings.threads},
           {"aux_head", s.isLast ? "classifier" : s.settings.auxHead},
           {"params", s.params},
           {"aux_params", s.auxParams},
           {"cost_share", est.stageShare[k]},
           {"boundary_bytes_per_batch", k < est.boundaryBytes.size() ? est.boundaryBytes[k] : 0},
           {"backprop_boundary_bytes_per_batch",
            k < est.backpropBoundaryBytes.size() ? est.backpropBoundaryBytes[k] : 0}});
    }
    nlohmann::json out = {{"input", shape.dims},
                          {"classes", shape.numClasses},
                          {"layers", layers},
                          {"stages", stages},
                          {"cores", info.hardwareCores},
                          {"predicted_speedup", est.speedup},
                          {"pipeline_efficiency", est.pipelineEfficiency},
                          {"backprop_best_threads", est.backpropThreads},
                          {"cores_shared", est.coresShared},
                          {"blas", info.blas},
                          {"openmp_wait", info.openmpWait},
                          {"malloc", info.malloc},
                          {"devices", info.devices},
                          {"mode", engine::toString(spec.mode)},
                          {"warnings", engine::partitionWarnings(partition)}};
    if (spec.mode == engine::Mode::Pipeline)
      out["pipeline"] = {{"micro_batches", micro},
                         {"schedule", spec.pipeline.schedule},
                         {"bubble_fraction", bubble},
                         {"forward_bytes_per_batch", est.boundaryBytes},
                         {"backward_bytes_per_batch", backBytes},
                         {"schedules", schedulesJson(planSchedules(spec, plan, partition, shape,
                                                                   flopTimes(partition), micro),
                                                     "flops")}};
    std::cout << out.dump(2) << "\n";
    return 0;
  }

  std::printf("input %s, %d classes, %zu layers, %s parameters\n\n", shapeText(shape.dims).c_str(),
              shape.numClasses, plan.layers.size(),
              human(static_cast<double>(plan.totalParams())).c_str());
  // Layers and stages numbered from 1, as the workbench shows them (the JSON keeps the 0-based
  // `index`); bytes in IEC units (issue 36: one unit system).
  std::printf("%5s  %-11s %-28s %-10s %9s %9s %10s\n", "layer", "name", "kind", "shape", "params",
              "FLOPs", "act bytes");
  for (const auto& l : plan.layers)
    std::printf("%5d  %-11s %s %-10s %9s %9s %10s\n", l.index + 1, l.name.c_str(),
                pad(l.description, 28).c_str(), shapeText(l.outShape).c_str(),
                human(static_cast<double>(l.params)).c_str(),
                human(static_cast<double>(l.flops)).c_str(),
                engine::bytesText(static_cast<double>(l.activationBytes)).c_str());
  std::printf("\n%5s  %-8s %-7s %3s  %-10s %9s %8s %14s %16s\n", "stage", "layers", "device", "thr",
              "aux head", "params", "share", "sent/batch", "bp would send");
  for (size_t k = 0; k < partition.stages.size(); ++k) {
    const auto& s = partition.stages[k];
    std::printf("%5s  %2d..%-4d %-7s %3d  %-10s %9s %7.1f%% %14s %16s\n",
                ("S" + std::to_string(s.index + 1)).c_str(), s.firstLayer + 1, s.lastLayer + 1,
                s.settings.device.c_str(), s.settings.threads,
                s.isLast ? "classifier" : s.settings.auxHead.c_str(),
                human(static_cast<double>(s.params + s.auxParams)).c_str(), 100 * est.stageShare[k],
                k < est.boundaryBytes.size()
                    ? engine::bytesText(static_cast<double>(est.boundaryBytes[k])).c_str()
                    : "-",
                k < est.backpropBoundaryBytes.size()
                    ? engine::bytesText(static_cast<double>(est.backpropBoundaryBytes[k])).c_str()
                    : "-");
  }
  std::printf(
      "\npredicted speed-up over backprop (at its best, %d thread%s): %.2fx on %d core%s%s\n",
      est.backpropThreads, est.backpropThreads > 1 ? "s" : "", est.speedup, info.hardwareCores,
      info.hardwareCores > 1 ? "s" : "", est.coresShared ? " (stages share cores)" : "");
  std::printf("predicted pipeline efficiency: %.0f%%\n", 100 * est.pipelineEfficiency);
  if (spec.mode == engine::Mode::Pipeline) {
    std::printf(
        "\npipelined backprop (%s, M = %d micro-batches): fill-drain bubble %.0f%% if the %d "
        "stages took equal time ((K - 1) / (M + K - 1));\nthe schedules below are planned with "
        "these stages' own times\n",
        spec.pipeline.schedule.c_str(), micro, 100 * bubble, stageCount);
    for (size_t k = 0; k < backBytes.size(); ++k)
      std::printf(
          "  S%zu -> S%zu: %s forward (activations and labels), %s back (gradients) per batch\n",
          k + 1, k + 2, engine::bytesText(static_cast<double>(est.boundaryBytes[k])).c_str(),
          engine::bytesText(static_cast<double>(backBytes[k])).c_str());
    printSchedules(planSchedules(spec, plan, partition, shape, flopTimes(partition), micro),
                   "the stages' FLOPs (B = W = F; --profile measures them)",
                   spec.pipeline.recompute);
  }
  for (const std::string& w : engine::partitionWarnings(partition))
    std::printf("\nwarning: %s\n", w.c_str());
  std::printf("BLAS: %s\n", info.blas.c_str());
  std::printf("OpenMP workers: %s\n", info.openmpWait.c_str());
  std::printf("malloc: %s\n", info.malloc.c_str());
  return 0;
}

}  // namespace stagewise::cli
