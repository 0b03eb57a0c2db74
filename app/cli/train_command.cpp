#include <unistd.h>

#include <atomic>
#include <cmath>
#include <csignal>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli_args.h"
#include "commands.h"
#include "presets.h"
#include "progress_line.h"
#include "stagewise/engine/checkpoint.h"
#include "stagewise/engine/engine.h"
#include "stagewise/engine/observer_fanout.h"
#include "summary_json.h"
#include "train_run.h"
#ifdef STAGEWISE_HAVE_STORE
#include "stagewise/recorder/recorder.h"
#include "stagewise/storage/paths.h"
#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"
#endif

namespace stagewise::cli {

namespace {
std::atomic<int> g_signal{0};
extern "C" void onSignal(int sig) {
  g_signal.store(sig);
}
}  // namespace

void installStopSignals() {
  std::signal(SIGINT, onSignal);
  std::signal(SIGTERM, onSignal);
}

int stopSignal() {
  return g_signal.load();
}

TrainOutcome trainInProcess(const engine::ExperimentSpec& spec, const engine::RunOptions& options,
                            storage::RunStore* store, std::optional<int64_t> resumeRunId,
                            ProgressPrinter& printer, const TrainHooks& hooks) {
  const auto& onRecorded = hooks.onRecorded;
  engine::ObserverFanout fanout;
  fanout.add(&printer);
  if (hooks.observer) fanout.add(hooks.observer);
  TrainOutcome outcome;
#ifdef STAGEWISE_HAVE_STORE
  std::unique_ptr<recorder::Recorder> rec;
  if (store) {
    recorder::RecorderOptions recOptions;
    recOptions.resumeRunId = resumeRunId;
    // Across processes the trace groups stages by rank; the spec was checked at launch.
    if (options.dist.enabled())
      recOptions.stageRanks = engine::assignRanks(spec, spec.stageCount(), options.dist.worldSize);
    // Disk full, store locked, points lost: said while the run goes on (from the writer thread).
    recOptions.onStoreNotice = [](const storage::WriterNotice& n) {
      std::cerr << "\n[" << (n.kind == storage::WriterNotice::Kind::Recovered ? "info" : "warning")
                << "] " << n.message << std::endl;
    };
    rec = std::make_unique<recorder::Recorder>(*store, recOptions);
    fanout.add(rec.get());
  }
#else
  (void)store;
  (void)resumeRunId;
#endif
  auto run = engine::createRun(spec, &fanout, options);
  if (hooks.onCreated) hooks.onCreated(*run);
  installStopSignals();
  run->start();
  bool stopAsked = false;
  bool announced = false;
  auto announce = [&] {
#ifdef STAGEWISE_HAVE_STORE
    if (!announced && rec && onRecorded)
      if (const auto id = rec->runId()) {
        announced = true;
        onRecorded(*id);
      }
#endif
  };
  while (!run->waitFor(std::chrono::milliseconds(200))) {
    announce();
    if (g_signal.load() && !stopAsked) {
      stopAsked = true;
      printer.done();
      std::cerr << "[info] stopping (signal " << g_signal.load()
                << "); the run is kept as 'stopped'\n";
      run->requestStop();
    }
    if (hooks.stopWhen && !stopAsked && hooks.stopWhen()) {
      stopAsked = true;
      run->requestStop();
    }
    printer.tick(run->progress());
  }
  outcome.summary = run->wait();
  outcome.changes = run->changes();
  if (hooks.sample && outcome.summary.status != engine::RunStatus::Failed)
    outcome.sample = run->sample(*hooks.sample);
  printer.tick(run->progress());
  printer.done();
  announce();
#ifdef STAGEWISE_HAVE_STORE
  if (rec) {
    outcome.runId = rec->runId();
    outcome.storeError = rec->error();
  }
#endif
  return outcome;
}

engine::ExperimentSpec specFromArgs(const std::string& given,
                                    const std::vector<std::string>& sets) {
  const std::string path = resolveConfig(given);  // a file, or a preset's name
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("cannot open experiment file '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  try {
    std::string json = sets.empty() ? text.str() : engine::applyOverrides(text.str(), sets);
    return engine::parseSpec(json);
  } catch (const engine::SpecError& e) {
    throw engine::SpecError(e.field(), e.message(), path);
  }
}

#ifdef STAGEWISE_HAVE_STORE
namespace {
// The record a checkpoint was taken from, so a resumed run continues it.
std::optional<int64_t> runOwning(const storage::RunStore& store,
                                 const engine::CheckpointInfo& info) {
  storage::RunReader reader(store);
  storage::RunFilter filter;
  filter.text = info.spec.name;
  for (const auto& run : reader.listRuns(filter))
    for (const auto& c : reader.checkpoints(run.id))
      if (c.path == info.path) return run.id;
  return std::nullopt;
}
}  // namespace
#endif

int trainCommand(const std::vector<std::string>& argv) {
  Args args(argv,
            {"--config", "--db", "--resume", "--replay", "--rank", "--world-size", "--master",
             "--timeout", "--sample", "--temperature", "--sample-length"},
            {"--set", "--change"}, {"--json", "--quiet", "--no-store", "--help", "--dist"});
  if (args.flag("--help")) {
    std::cout
        << "usage: stagewise-cli train --config FILE [--set key=value]... [--db PATH | --no-store] "
           "[--json] [--quiet]\n"
           "       stagewise-cli train --resume CHECKPOINT [--set key=value]... [...]\n"
           "       stagewise-cli train --replay RUN_ID [--set key=value]... [...]\n"
           "  --change STEP:KEY=VALUE (repeatable): change the run at a step, as a live change "
           "would;\n"
           "          keys partition.cuts ([4]: local mode), stages.N.delay_ms, "
           "stages.N.lr_scale,\n"
           "          stages.N.threads (N: the stage's index at that step). --json lists them "
           "under 'changes'.\n"
           "  --replay RUN_ID: train a stored run's spec again with the changes it recorded, at "
           "the same steps.\n"
           "       stagewise-cli train --dist --config FILE [--rank N --world-size N --master "
           "HOST:PORT] "
           "[--timeout S] [...]\n"
           "  --dist: run the stages the spec maps to this rank (stages[i].rank; default: spread "
           "in order)\n"
           "          and exchange activations with the other ranks over c10d (Gloo). Rank, world "
           "size and\n"
           "          master default to RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT; rank 0 records "
           "the run.\n"
           "          'stagewise-cli launch' starts all ranks on this machine.\n"
           "  --sample PROMPT: language models (model.kind gpt): print text the trained network "
           "writes after\n"
           "          PROMPT at the end, greedy (the likeliest byte each step); --temperature T "
           "(> 0) draws\n"
           "          bytes at T with the run's seed; --sample-length N bytes (default 200).\n";
    return 0;
  }
  if (!args.positional().empty())
    throw UsageError("unexpected argument '" + args.positional()[0] + "'");
  engine::RunOptions options;
  std::optional<engine::CheckpointInfo> checkpoint;
  engine::ExperimentSpec spec;
  std::optional<int64_t> replayId;
  if (auto replay = args.value("--replay")) {
    if (args.value("--config") || args.value("--resume"))
      throw UsageError(
          "give --replay alone, without --config or --resume (the run holds its spec)");
    try {
      size_t used = 0;
      replayId = std::stoll(*replay, &used);
      if (used != replay->size()) throw std::invalid_argument(*replay);
    } catch (const std::exception&) {
      throw UsageError("--replay needs a run id, got '" + *replay + "'");
    }
  }
  for (const std::string& text : args.values("--change")) {
    try {
      options.changes.push_back(engine::parseRunChange(text));
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--change ") + e.what());
    }
  }
  if (replayId) {
#ifdef STAGEWISE_HAVE_STORE
    if (args.flag("--no-store"))
      throw UsageError("--replay reads the run from the store; leave out --no-store");
    storage::RunStore source(storage::resolveDbPath(args.value("--db")));
    storage::RunReader reader(source);
    const auto record = reader.run(*replayId);
    if (!record)
      throw UsageError("no run " + std::to_string(*replayId) +
                       " in the store; 'stagewise-cli "
                       "runs list' shows the ids");
    const auto sets = args.values("--set");
    spec = engine::parseSpec(sets.empty() ? record->specJson
                                          : engine::applyOverrides(record->specJson, sets));
    std::vector<engine::RunChange> history;
    for (const auto& e : reader.events(*replayId))
      if (e.kind == "info")
        if (auto c = engine::changeFromEvent(e.message)) history.push_back(*c);
    options.changes.insert(options.changes.begin(), history.begin(), history.end());
    std::cerr << "[info] replaying run " << *replayId << " with " << history.size()
              << " change(s)\n";
#else
    throw UsageError("this build has no run store: --replay needs one");
#endif
  } else if (auto resume = args.value("--resume")) {
    if (args.value("--config"))
      throw UsageError("give --config or --resume, not both (a checkpoint holds its spec)");
    checkpoint = engine::readCheckpointInfo(*resume);
    const auto sets = args.values("--set");
    spec = engine::parseSpec(sets.empty() ? checkpoint->specJson
                                          : engine::applyOverrides(checkpoint->specJson, sets));
    options.resumeFrom = checkpoint->path;
  } else {
    spec = specFromArgs(args.required("--config"), args.values("--set"));
  }
  if (spec.name.empty()) spec.name = "experiment";

  const bool dist = args.flag("--dist");
  if (dist) {
    try {
      options.dist = engine::DistOptions::fromEnvironment();
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    auto number = [&](const char* flag, int& out) {
      if (auto v = args.value(flag)) {
        try {
          size_t used = 0;
          out = std::stoi(*v, &used);
          if (used != v->size()) throw std::invalid_argument(flag);
        } catch (const std::exception&) {
          throw UsageError(std::string(flag) + " needs a whole number, got '" + *v + "'");
        }
      }
    };
    number("--rank", options.dist.rank);
    number("--world-size", options.dist.worldSize);
    if (auto m = args.value("--master")) {
      const auto colon = m->rfind(':');
      if (colon == std::string::npos || colon == 0)
        throw UsageError("--master needs HOST:PORT, got '" + *m + "'");
      options.dist.masterAddr = m->substr(0, colon);
      int port = 0;
      try {
        port = std::stoi(m->substr(colon + 1));
      } catch (const std::exception&) {
        throw UsageError("--master needs HOST:PORT with a numeric port, got '" + *m + "'");
      }
      options.dist.masterPort = port;
    }
    if (auto t = args.value("--timeout")) {
      try {
        options.dist.timeoutS = std::stod(*t);
      } catch (const std::exception&) {
        throw UsageError("--timeout needs seconds, got '" + *t + "'");
      }
      if (!(options.dist.timeoutS >= 1)) throw UsageError("--timeout must be at least 1 second");
    }
    if (options.dist.rank < 0)
      throw UsageError("--dist needs this process's rank: --rank N or RANK=N");
    if (options.dist.worldSize < 1)
      throw UsageError("--dist needs the number of processes: --world-size N or WORLD_SIZE=N");
  } else {
    for (const char* f : {"--rank", "--world-size", "--master", "--timeout"})
      if (args.value(f)) throw UsageError(std::string(f) + " only applies with --dist");
  }
  TrainHooks hooks;
  if (auto prompt = args.value("--sample")) {
    if (spec.model.kind != "gpt")
      throw UsageError("--sample needs a language model (model.kind gpt); this spec's model is '" +
                       spec.model.kind + "'");
    if (dist) throw UsageError("--sample works in one process; leave out --dist");
    engine::SampleRequest request;
    request.prompt = *prompt;
    if (auto t = args.value("--temperature")) {
      try {
        size_t used = 0;
        request.temperature = std::stod(*t, &used);
        if (used != t->size()) throw std::invalid_argument(*t);
      } catch (const std::exception&) {
        throw UsageError("--temperature needs a number, got '" + *t + "'");
      }
      if (!(request.temperature >= 0) || !std::isfinite(request.temperature))
        throw UsageError("--temperature must be 0 (greedy) or more, got '" + *t + "'");
    }
    if (auto n = args.value("--sample-length")) {
      try {
        size_t used = 0;
        request.length = std::stoi(*n, &used);
        if (used != n->size()) throw std::invalid_argument(*n);
      } catch (const std::exception&) {
        throw UsageError("--sample-length needs a whole number of bytes, got '" + *n + "'");
      }
      if (request.length < 1 || request.length > 100000)
        throw UsageError("--sample-length must be 1 to 100000 bytes, got '" + *n + "'");
    }
    hooks.sample = request;
  } else {
    for (const char* f : {"--temperature", "--sample-length"})
      if (args.value(f)) throw UsageError(std::string(f) + " only applies with --sample PROMPT");
  }
  // In a distributed run only rank 0 records the run (the others' reports reach it).
  const bool record = !args.flag("--no-store") && (!dist || options.dist.rank == 0);

  const bool json = args.flag("--json");
  ProgressPrinter printer(std::cerr, isatty(STDERR_FILENO) != 0, args.flag("--quiet"));
  std::optional<int64_t> resumeRunId;
#ifdef STAGEWISE_HAVE_STORE
  std::unique_ptr<storage::RunStore> store;
  if (record) {
    store = std::make_unique<storage::RunStore>(storage::resolveDbPath(args.value("--db")));
    if (checkpoint) resumeRunId = runOwning(*store, *checkpoint);
  }
  storage::RunStore* storePtr = store.get();
#else
  (void)record;
  storage::RunStore* storePtr = nullptr;
  if (args.value("--db")) std::cerr << "[warning] this build has no run store; --db is ignored\n";
#endif
  const TrainOutcome outcome = trainInProcess(spec, options, storePtr, resumeRunId, printer, hooks);
  const engine::RunSummary& summary = outcome.summary;
  const std::optional<int64_t> runId = outcome.runId;
  if (!outcome.storeError.empty())
    std::cerr << "[warning] not everything was recorded: " << outcome.storeError << "\n";
  const auto& sample = outcome.sample;
  if (sample && !sample->ok) std::cerr << "[warning] no sample: " << sample->error << "\n";
  const bool sampled = sample && sample->ok;
  if (json) {
    auto out = summaryJson(summary, runId, &outcome.changes);
    if (sampled)  // the prompt as given may not be UTF-8: the text holds the continuation only
      out["sample"] = {{"text", sample->text}, {"temperature", hooks.sample->temperature}};
    std::cout << out.dump() << std::endl;
  } else {
    std::cout << summaryTable(summary, dist ? options.dist.rank : -1);
    if (runId) std::cout << "saved as run " << *runId << "\n";
    if (sampled) {
      const double t = hooks.sample->temperature;
      std::cout << "sample (";
      if (t > 0)
        std::cout << "temperature " << t;
      else
        std::cout << "greedy";
      std::cout << ", " << hooks.sample->length << " bytes):\n"
                << hooks.sample->prompt << sample->text << "\n";
    }
  }
  return summary.status == engine::RunStatus::Failed ? 1 : 0;
}

#ifdef STAGEWISE_HAVE_STORE
int runsResumeCommand(const std::vector<std::string>& argv) {
  Args args(argv, {"--db"}, {"--set"}, {"--json", "--quiet", "--help"});
  if (args.flag("--help") || args.positional().size() != 1) {
    std::cout << "usage: stagewise-cli runs resume ID [--db PATH] [--set key=value]... [--json] "
                 "[--quiet]\n"
                 "  continues run ID from its newest checkpoint, in the same record\n";
    return args.flag("--help") ? 0 : 2;
  }
  int64_t id = 0;
  try {
    id = std::stoll(args.positional()[0]);
  } catch (const std::exception&) {
    throw UsageError("run id must be a number, got '" + args.positional()[0] + "'");
  }
  const std::string db = storage::resolveDbPath(args.value("--db"));
  std::string path;
  {
    storage::RunStore store(db);
    storage::RunReader reader(store);
    if (!reader.run(id)) throw UsageError("there is no run " + std::to_string(id) + " in " + db);
    int64_t best = -1;
    for (const auto& c : reader.checkpoints(id))
      if (c.step > best) best = c.step, path = c.path;
    if (path.empty())
      throw UsageError(
          "run " + std::to_string(id) +
          " has no checkpoint (train with --set checkpoint.interval=N or checkpoint.dir=DIR)");
  }
  std::vector<std::string> train = {"--resume", path, "--db", db};
  for (const auto& s : args.values("--set")) train.insert(train.end(), {"--set", s});
  for (const char* f : {"--json", "--quiet"})
    if (args.flag(f)) train.push_back(f);
  return trainCommand(train);
}
#endif

}  // namespace stagewise::cli
