#include <dlfcn.h>

#include <filesystem>

#include "runtime/thread_setup.h"
#include "stagewise/engine/engine.h"
#include "stagewise/engine/malloc_tuning.h"
#include "stagewise/engine/omp_wait.h"

namespace stagewise::engine {

static std::string blasDescription() {
  using ConfigFn = char* (*)();
  if (auto fn = reinterpret_cast<ConfigFn>(dlsym(RTLD_DEFAULT, "openblas_get_config"))) {
    std::string config = fn();
    std::string flavour;
    std::error_code ec;
    auto target =
        std::filesystem::canonical("/etc/alternatives/libblas.so.3-x86_64-linux-gnu", ec).string();
    if (target.find("openmp") != std::string::npos)
      flavour = " (openmp)";
    else if (target.find("pthread") != std::string::npos)
      flavour = " (pthread)";
    else if (target.find("serial") != std::string::npos)
      flavour = " (serial)";
    return config + flavour;
  }
  if (dlsym(RTLD_DEFAULT, "mkl_get_version")) return "MKL";
  return "reference BLAS (slow: install libopenblas0-openmp)";
}

EngineInfo engineInfo() {
  EngineInfo info;
  info.torchVersion = TORCH_VERSION;
  info.blas = blasDescription();
  info.openmpWait = openmpWaitDescription();
  info.malloc = mallocDescription();  // sets the thresholds first (once per process)
  info.hardwareCores = availableCores();
  info.devices.push_back("cpu");
  info.cudaAvailable = torch::cuda::is_available();
  if (info.cudaAvailable)
    for (int64_t i = 0; i < static_cast<int64_t>(torch::cuda::device_count()); ++i)
      info.devices.push_back("cuda:" + std::to_string(i));
  return info;
}

}  // namespace stagewise::engine
