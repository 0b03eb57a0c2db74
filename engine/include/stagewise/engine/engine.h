#pragma once
// Entry points of the LibTorch engine (library stagewise_engine). Torch-free header.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "stagewise/engine/run.h"
#include "stagewise/engine/spec.h"

namespace stagewise::engine {

/// What the engine was built with and can run on.
struct EngineInfo {
  std::string torchVersion;
  std::string blas;                  ///< e.g. "OpenBLAS 0.3.21 (openmp)"
  bool cudaAvailable = false;
  std::vector<std::string> devices;  ///< "cpu", "cuda:0", ...
  int hardwareCores = 1;
};
EngineInfo engineInfo();

struct RunOptions {
  /// A checkpoint folder (".../step-N") to continue from: weights, optimizer state and the data
  /// position are restored, so the losses go on exactly as in an uninterrupted run.
  std::string resumeFrom;
};

/// Creates a run of `spec`. Loads the dataset and builds the model; throws SpecError for bad
/// input (with the field to fix), DatasetError for unreadable data and std::runtime_error for
/// an unusable checkpoint. The observer may be null and must outlive the run.
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

}  // namespace stagewise::engine
