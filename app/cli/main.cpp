// stagewise-cli: headless local-parallel training, inspection and the run store.

#include <iostream>

#include "cli_args.h"
#include "commands.h"
#include "presets.h"
#include "stagewise/engine/dataset.h"
#include "stagewise/engine/engine.h"
#include "stagewise/engine/omp_wait.h"
#ifdef STAGEWISE_HAVE_STORE
#include "stagewise/storage/store_error.h"
#endif
#ifdef STAGEWISE_HAVE_STORE
#include "stagewise/cli/runs_command.h"
#endif

namespace {

const char* kUsage = R"(usage: stagewise-cli <command> [options]

commands:
  train    --config FILE [--set key=value]... [--db PATH | --no-store] [--json] [--quiet]
           train an experiment; Ctrl+C stops it cleanly (the run is kept as 'stopped')
  launch   --config FILE --procs N [--set key=value]... [--db PATH | --no-store] [--json]
           the same run with its stages in N local processes (c10d/Gloo); ranks by hand on
           several hosts: train --dist --rank R --world-size N --master HOST:PORT (see train --help)
  inspect  --config FILE [--set key=value]... [--json]
           print the layer table, each stage's cost share and the predicted speed-up
  import   MODEL.pt --out NAME.stagewise.json [--set key=value]...
           an experiment for a TorchScript model (its children are the layers, cut by FLOPs)
  runs     list|show|export|tag|note|delete ... (the run store; 'runs --help')
  runs resume ID [--db PATH] [--set key=value]...  continue a stored run from its newest checkpoint
  runs export-model ID --out FILE.pt [--db PATH]   a torchscript run's trained network
  study    run|resume|list|show|export ... sweep settings over seeds, one run at a time, and
           group the runs: mean ± std, time-to-target, the front ('study --help')
  report   [--config BASE] [--quick] [--out DIR] [--db PATH] [--set key=value]...
           check each of the paper's findings against runs made here: DIR/report.html and
           DIR/report.json ('report --help')
  --version  the version of stagewise-cli, LibTorch and the BLAS it uses

  --set overrides any key of the experiment, its value read as JSON where it parses:
        --set train.max_steps=200 --set mode=backprop --set partition.cuts=[4]
  --config takes a file or a preset's name (the default experiment: mlp-fmnist-4stage)
)";

void printUsage(std::ostream& out) {
  out << kUsage;
  const std::string dir = stagewise::cli::presetDir();
  if (dir.empty()) return;
  out << "  presets in " << dir << ":\n";
  for (const std::string& name : stagewise::cli::presetNames()) out << "    " << name << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    printUsage(std::cout);
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version" || args[0] == "-V" || args[0] == "version") {
    const stagewise::engine::EngineInfo info = stagewise::engine::engineInfo();
    std::cout << "stagewise-cli " << STAGEWISE_VERSION << "\nLibTorch " << info.torchVersion
              << "\nBLAS " << info.blas << "\n";
    return 0;
  }
  const std::string command = args[0];
  // Commands that train, or report what training will use: idle OpenMP workers spin briefly.
  if (command == "train" || command == "launch" || command == "inspect" ||
      (command == "runs" && args.size() > 1 && args[1] == "resume") ||
      (command == "study" && args.size() > 1 && (args[1] == "run" || args[1] == "resume")) ||
      command == "report")
    stagewise::engine::ensureOmpWaitDefault(argv);
  args.erase(args.begin());
  try {
    if (command == "train") return stagewise::cli::trainCommand(args);
    if (command == "inspect") return stagewise::cli::inspectCommand(args);
    if (command == "launch") return stagewise::cli::launchCommand(args);
    if (command == "import") return stagewise::cli::importCommand(args);
#ifdef STAGEWISE_HAVE_STORE
    if (command == "runs" && !args.empty() && args[0] == "resume")
      return stagewise::cli::runsResumeCommand(
          std::vector<std::string>(args.begin() + 1, args.end()));
    if (command == "runs" && !args.empty() && args[0] == "export-model")
      return stagewise::cli::runsExportModelCommand(
          std::vector<std::string>(args.begin() + 1, args.end()));
    if (command == "runs") return stagewise::cli::runsCommand(args, std::cout, std::cerr);
    if (command == "study") return stagewise::cli::studyCommand(args);
    if (command == "report") return stagewise::cli::reportCommand(args);
#endif
    std::cerr << "error: unknown command '" << command
              << "'; use train, launch, inspect, import, runs, study or report (see --help)\n";
    return 2;
  } catch (const stagewise::cli::UsageError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const stagewise::engine::SpecError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const stagewise::engine::DatasetError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
#ifdef STAGEWISE_HAVE_STORE
  } catch (const stagewise::storage::StoreError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
#endif
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
