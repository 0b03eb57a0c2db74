// stagewise-cli import MODEL.pt: an experiment for a TorchScript model; and
// stagewise-cli runs export-model ID: a torchscript run's trained network as TorchScript.

#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli_args.h"
#include "commands.h"
#include "stagewise/engine/dataset.h"
#include "stagewise/engine/partition.h"
#include "stagewise/engine/torchscript.h"
#ifdef STAGEWISE_HAVE_STORE
#include "stagewise/storage/paths.h"
#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"
#endif

namespace stagewise::cli {

int importCommand(const std::vector<std::string>& argv) {
  Args args(argv, {"--out", "--config"}, {"--set"}, {"--help"});
  if (args.flag("--help") || args.positional().size() != 1) {
    std::cout
        << "usage: stagewise-cli import MODEL.pt --out NAME.stagewise.json [--config BASE] "
           "[--set key=value]...\n"
           "  writes an experiment that trains a TorchScript model (torch.jit.script(model)"
           ".save(path)):\n"
           "  its top-level children are the layers, cut into up to 4 stages balanced by "
           "FLOPs\n"
           "  (unless --set partition.cuts=[...] says where). The dataset, training and mode "
           "come\n"
           "  from BASE (default: the default experiment) and --set, e.g.\n"
           "    --set dataset.kind=cifar10 --set dataset.path=DIR --set mode=backprop\n"
           "  A TorchScript file is a program: import only files you trust, as with "
           "torch.load.\n";
    return args.flag("--help") ? 0 : 2;
  }
  const std::string model = args.positional()[0];
  const std::string out = args.required("--out");
  engine::ExperimentSpec base = specFromArgs(args.value("--config").value_or("mlp-fmnist-4stage"), {});
  base.model = engine::ModelSpec{};
  base.model.kind = "torchscript";
  base.model.path = model;
  base.partition = engine::PartitionSpec{};
  base.stages.clear();
  std::string name = std::filesystem::path(out).filename().string();
  for (const std::string suffix : {".stagewise.json", ".json"})
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      name.resize(name.size() - suffix.size());
      break;
    }
  base.name = name;
  std::string json = engine::specToJson(base);
  if (!args.values("--set").empty()) json = engine::applyOverrides(json, args.values("--set"));
  base = engine::parseSpec(json);
  if (base.model.kind != "torchscript")
    throw UsageError("import writes a torchscript experiment: leave model.kind alone");
  const engine::ExperimentSpec spec = engine::importTorchScript(base, model);
  const engine::ModelPlan plan = engine::planModel(spec.model, engine::probeInputShape(spec.dataset));
  const auto problems =
      engine::validateSpec(spec, static_cast<int>(plan.layers.size()), {"cpu"});
  if (!problems.empty()) {
    for (const auto& p : problems) std::cerr << "error: " << p.field << ": " << p.message << "\n";
    return 2;
  }
  {
    std::ofstream f(out, std::ios::binary);
    f << engine::specToJson(spec) << "\n";
    f.close();
    if (!f) throw UsageError("cannot write " + out);
  }
  std::string cuts;
  for (int c : spec.partition.cuts) cuts += (cuts.empty() ? "" : ", ") + std::to_string(c);
  std::cout << "wrote " << out << ": " << plan.layers.size() << " layers, "
            << plan.totalParams() << " parameters, " << spec.stageCount() << " stage(s)"
            << (cuts.empty() ? std::string() : " (cuts at " + cuts + ")") << "; "
            << spec.model.path << " sha256 " << engine::torchScriptSha256(spec.model.path)
            << "\n";
  return 0;
}

#ifdef STAGEWISE_HAVE_STORE
int runsExportModelCommand(const std::vector<std::string>& argv) {
  Args args(argv, {"--db", "--out"}, {}, {"--help"});
  if (args.flag("--help") || args.positional().size() != 1) {
    std::cout << "usage: stagewise-cli runs export-model ID --out FILE.pt [--db PATH]\n"
                 "  writes a torchscript run's trained network back as TorchScript: the run's\n"
                 "  model file with the weights of its last checkpoint (a torchscript run keeps\n"
                 "  one at its last step)\n";
    return args.flag("--help") ? 0 : 2;
  }
  int64_t id = 0;
  try {
    id = std::stoll(args.positional()[0]);
  } catch (const std::exception&) {
    throw UsageError("run id must be a number, got '" + args.positional()[0] + "'");
  }
  const std::string out = args.required("--out");
  const std::string db = storage::resolveDbPath(args.value("--db"));
  std::string path;
  int64_t best = -1;
  {
    storage::RunStore store(db);
    storage::RunReader reader(store);
    const auto run = reader.run(id);
    if (!run) throw UsageError("there is no run " + std::to_string(id) + " in " + db);
    const engine::ExperimentSpec spec = engine::parseSpec(run->specJson);
    if (spec.model.kind != "torchscript")
      throw UsageError("run " + std::to_string(id) + " trained a " + spec.model.kind +
                       " model: export-model writes torchscript runs' networks");
    for (const auto& c : reader.checkpoints(id))
      if (c.step > best && std::filesystem::exists(c.path)) best = c.step, path = c.path;
    if (path.empty())
      throw UsageError("run " + std::to_string(id) +
                       " has no checkpoint left to export (it failed, or its checkpoints were "
                       "deleted)");
  }
  engine::exportTorchScript(path, out);
  std::cout << "wrote " << out << ": run " << id << "'s network at step " << best << "\n";
  return 0;
}
#endif

}  // namespace stagewise::cli
