#pragma once
// Entry points of the LibTorch engine (library stagewise_engine). Torch-free header.

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

/// Creates a run of `spec`. Loads the dataset and builds the model; throws SpecError for bad
/// input (with the field to fix) and std::runtime_error for unreadable data. The observer may be
/// null and must outlive the run.
std::unique_ptr<Run> createRun(const ExperimentSpec& spec, RunObserver* observer);

}  // namespace stagewise::engine
