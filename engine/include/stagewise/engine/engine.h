#pragma once
// Entry points of the LibTorch engine (library stagewise_engine). Torch-free header.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "stagewise/engine/partition.h"
#include "stagewise/engine/run.h"
#include "stagewise/engine/spec.h"

namespace stagewise::engine {

/// What the engine was built with and can run on.
struct EngineInfo {
  std::string torchVersion;
  std::string blas;        ///< e.g. "OpenBLAS 0.3.21 (openmp)"
  std::string openmpWait;  ///< how idle intra-op workers wait; see omp_wait.h
  std::string malloc;      ///< glibc malloc's thresholds; see malloc_tuning.h
  bool cudaAvailable = false;
  std::vector<std::string> devices;  ///< "cpu", "cuda:0", ...
  int hardwareCores = 1;
};
EngineInfo engineInfo();

/// This process's place in a run spread over several processes (torchrun conventions). A run
/// is distributed when `rank >= 0`: the stages the spec maps to this rank run here, activations
/// cross to other ranks over c10d (Gloo), and rank 0 reports the whole run: it receives every
/// rank's metrics, events, stage summaries and final weights.
struct DistOptions {
  int rank = -1;  ///< -1: not distributed
  int worldSize = 0;
  std::string masterAddr = "127.0.0.1";
  int masterPort = 29500;
  double timeoutS = 0;  ///< 0: the spec's distributed.timeout_s
  bool enabled() const { return rank >= 0; }
  /// RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT from the environment (rank -1 when RANK is unset).
  /// Throws std::invalid_argument naming a malformed variable.
  static DistOptions fromEnvironment();
};

struct RunOptions {
  /// Distributed run: which rank this process is and where rank 0 listens.
  DistOptions dist;
  /// A checkpoint folder (".../step-N") to continue from: weights, optimizer state and the data
  /// position are restored, so the losses go on exactly as in an uninterrupted run.
  std::string resumeFrom;
  /// Numbers N of finished steps after which the run always evaluates (validation and test),
  /// whatever measure.budget decides and whatever eval.interval is: the points carry step
  /// N - 1, as every evaluation after step s does. N < 1 and N >= the run's total steps are
  /// ignored (the final evaluation covers the end). These points are never skipped while the
  /// analysis thread is behind. Not part of the spec; nothing feeds back into training. A
  /// distributed run needs the same list on every rank.
  std::vector<int64_t> evalAtSteps;
  /// Changes to make at given steps (`stagewise-cli train --change`, `--replay`): the same
  /// mechanism as the live requests of Run, so a run with the same seed and history trains the
  /// same. Re-partitions are checked when the run is created (SpecError, field "change");
  /// a stage that does not exist at the change's step is refused then, with an event.
  std::vector<RunChange> changes;
  /// Language models: text generated from this prompt at every evaluation (periodic and final),
  /// reported as an Info event "sample at step S: TEXT" (sampleFromEvent reads it back); an
  /// empty prompt generates none. Not part of the spec; nothing feeds back into training.
  SampleRequest sampleAtEvaluations;
};

/// Creates a run of `spec`. Loads the dataset and builds the model; throws SpecError for bad
/// input (with the field to fix), DatasetError for unreadable data and std::runtime_error for
/// an unusable checkpoint. The observer may be null and must outlive the run.
///
/// Distributed (options.dist.enabled()): blocks until every rank has joined (or throws
/// std::runtime_error naming the missing ranks or the unreachable master after the timeout).
/// Only rank 0's observer sees the whole run; other ranks' observers see their own stages.
std::unique_ptr<Run> createRun(const ExperimentSpec& spec, RunObserver* observer,
                               const RunOptions& options = {});

/// Measured cost of each layer: forward + backward of one batch at the spec's batch size, on the
/// device of the stage that holds the layer under the spec's cuts, one intra-op thread per stage
/// as configured. `progress(done, total)` may return false to cancel (then throws
/// std::runtime_error("profiling cancelled")).
struct LayerProfile {
  std::vector<double> seconds;       ///< per layer, median of the timed repeats
  std::vector<std::string> devices;  ///< where each layer was timed
};
LayerProfile profileLayers(const ExperimentSpec& spec, int repeats = 8,
                           const std::function<bool(int, int)>& progress = {});

/// Measures one batch's work per method (see MethodProfile in partition.h) for the spec's
/// stages, model and batch size, on random data: the calibration of estimateMethods. The
/// pipeline's M is `pipeline.micro_batches` (0: one per stage); backprop runs on
/// `train.backprop_threads` (0: every core). `progress(done, total)` as for profileLayers.
MethodProfile profileMethods(const ExperimentSpec& spec, int repeats = 8,
                             const std::function<bool(int, int)>& progress = {});

}  // namespace stagewise::engine
