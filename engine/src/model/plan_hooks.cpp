#include "model/plan_hooks.h"

#include <atomic>

namespace stagewise::engine::detail {

namespace {
std::atomic<TorchScriptPlanner> g_torchScript{nullptr};
}

void setTorchScriptPlanner(TorchScriptPlanner planner) { g_torchScript.store(planner); }

void planTorchScript(const ModelSpec& model, ModelPlan& plan) {
  const TorchScriptPlanner planner = g_torchScript.load();
  if (!planner)
    throw SpecError("model.kind",
                    "a torchscript model needs the LibTorch engine to be read, and this program "
                    "has none (use stagewise-cli or the workbench)");
  planner(model, plan);
}

}  // namespace stagewise::engine::detail
