#pragma once
// model.kind "torchscript": a PyTorch model brought in as a TorchScript file (torch.jit.script
// or torch.jit.trace, then .save(path)). Its top-level children, in order, are the layers.
// Torch-free interface; the implementation is in the engine (engine/src/model/torchscript_model.*).
//
// Trust: a TorchScript file holds code that LibTorch runs. Load only files you would run as a
// program, as with torch.load (docs/experiment-format.md).

#include <string>

#include "stagewise/engine/model_plan.h"

namespace stagewise::engine {

/// The SHA-256 of the file's bytes, lower-case hex. Cached by (path, modification time, size).
/// Throws SpecError (model.path) when the file cannot be read.
std::string torchScriptSha256(const std::string& path);

/// Reads a TorchScript file from memory and plans it for `input` as model.path would be (the
/// fuzz target). Throws SpecError with one line for anything that is not a usable model.
ModelPlan planTorchScriptBytes(const std::string& bytes, const InputShape& input);

/// Writes the trained network of a torchscript run back as TorchScript: the run's model file
/// (model.path in the checkpoint's spec) with the weights of the checkpoint folder `checkpoint`
/// (a step-N folder, or a checkpoint dir: its newest). Throws std::runtime_error or SpecError
/// with what to fix.
void exportTorchScript(const std::string& checkpoint, const std::string& outPath);

}  // namespace stagewise::engine

namespace stagewise::engine {

/// An experiment for a TorchScript file (`stagewise-cli import`, the workbench's Import model):
/// `spec` with its model made the file at `modelPath` (made absolute), its per-stage overrides
/// dropped and, unless it gives partition.cuts or balance "flops", cut into min(4, layers)
/// stages balanced by FLOPs; named after the file when it has no name. Plans the model on
/// `spec.dataset`: throws SpecError when the file cannot be planned (stays torch-free: needs the
/// engine linked, as planModel does for torchscript).
ExperimentSpec importTorchScript(ExperimentSpec spec, const std::string& modelPath);

}  // namespace stagewise::engine
