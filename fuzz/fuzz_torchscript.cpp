// libFuzzer: TorchScript files (model.kind "torchscript", model.path). A corrupt or foreign file
// must be one SpecError line; anything else (a crash, another exception) is a bug. Needs the
// engine (LibTorch reads the file): scripts/fuzz.sh builds it with FUZZ_TORCH=1.
#include <cstddef>
#include <cstdint>
#include <string>

#include "stagewise/engine/torchscript.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stagewise::engine;
  try {
    const ModelPlan plan =
        planTorchScriptBytes(std::string(reinterpret_cast<const char*>(data), size), {{16}, 4});
    if (plan.layers.empty()) __builtin_trap();
  } catch (const SpecError& e) {
    if (std::string(e.what()).find('\n') != std::string::npos) __builtin_trap();  // one line
  }
  return 0;
}
