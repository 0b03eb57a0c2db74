#include "common/services.h"

#include <algorithm>

namespace stagewise::ui {

std::vector<DeviceChoice> deviceChoices(const EngineDescription& engine) {
  std::vector<DeviceChoice> out;
  for (const auto& d : engine.devices) out.push_back({d, true, {}});
  if (std::none_of(out.begin(), out.end(), [](const auto& c) { return c.id == "cpu"; }))
    out.insert(out.begin(), {"cpu", true, {}});
  const bool anyCuda = std::any_of(out.begin(), out.end(),
                                   [](const auto& c) { return c.id.rfind("cuda:", 0) == 0; });
  if (!anyCuda) {
    std::string reason = engine.cudaAvailable
                             ? "CUDA is available but reports no device"
                             : "no CUDA here: this LibTorch build has no CUDA support or no GPU "
                               "was found";
    if (engine.fake) reason = "the fake engine runs on the CPU only";
    out.push_back({"cuda:0", false, reason});
  }
  return out;
}

}  // namespace stagewise::ui
