// stagewise-cli report: the paper's findings checked against runs made here. Runs the suite's
// studies one run at a time (reusing stored runs of the same spec and seed, measuring the
// throughput runs anew), then writes DIR/report.json and DIR/report.html.

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "cli_args.h"
#include "commands.h"
#include "presets.h"
#include "stagewise/engine/dataset.h"
#include "stagewise/engine/engine.h"
#include "stagewise/engine/machine_load.h"
#include "stagewise/report/report.h"
#include "stagewise/report/session.h"
#include "stagewise/report/suite.h"
#include "stagewise/storage/paths.h"
#include "stagewise/storage/run_store.h"
#include "train_run.h"

namespace stagewise::cli {

namespace {

namespace fs = std::filesystem;

const char* kReportUsage =
    R"(usage: stagewise-cli report [--config BASE] [--quick] [--out DIR] [--db PATH]
                           [--set k=v]... [--quiet] [--quiet-wait S]

  Checks each of the paper's findings (gradient similarity, communication, memory, throughput
  over stages, accuracy, overlapping updates, the compute/time front, random labels) against
  runs made on this machine, as one study per finding in the run store. Before the learning
  findings it searches each method's learning rate on a validation split (the same trials for
  each), then judges them with each method at its own chosen rate, the base's shared rate
  beside. Stored runs of the same spec and seed are reused, so a second call is quick;
  throughput and memory are measured anew each time, the pipeline at its fastest schedule
  (gpipe, 1f1b, interleaved, zb-h1) and micro-batch count, and memory with and without
  activation recomputation. Writes DIR/report.html (self-contained) and DIR/report.json, and
  prints a table: each finding, which of the paper's six findings it tests (or "extra"), its
  verdict (reproduced, not reproduced, inconclusive, inconclusive: not converged, holds by
  construction), the verdict at the shared rate and the numbers, then a summary that counts only the paper's findings and
  never one that holds by construction, and the findings' tables in Markdown (each schedule's
  samples/s and bubble, the peaks with and without recomputation).
  On text (a gpt base such as gpt-text-4stage) the learning findings read test bits per byte
  (lower is better) where they read test accuracy; no learning-rate search runs (text has no
  validation split) and random labels are not applicable (docs/replication.md).

  --config BASE  the base experiment (a file or a preset; default mlp-fmnist-4stage)
  --quick        fewer steps and 2 seeds: about 10 minutes on 2 cores
  --out DIR      where the report goes (default: stagewise-report)
  --db PATH      the run store (default: $STAGEWISE_DB, else ~/.local/share/stagewise/runs.db)
  --quiet-wait S before each throughput run, wait while the machine is busy (1-minute load
                 average above half its cores, or over 10 % steal), at most S seconds (default
                 60; 0 with --quick); each run's summary records the load it ran under
  exit codes: 0 written, 1 written but a run failed, 2 bad input, 130 stopped (run the same
  command again: what completed is reused)
)";

/// The base: the file without a study object, --set applied, as canonical JSON.
std::string baseSpec(const std::string& path, const std::vector<std::string>& sets) {
  const std::string text = readConfigText(path);
  nlohmann::ordered_json doc = nlohmann::ordered_json::parse(text, nullptr, false);
  if (doc.is_object()) doc.erase("study");
  try {
    std::string base = doc.is_discarded() ? text : doc.dump(2);
    if (!sets.empty()) base = engine::applyOverrides(base, sets);
    return engine::specToJson(engine::parseSpec(base));
  } catch (const engine::SpecError& e) {
    throw engine::SpecError(e.field(), e.message(), path);
  }
}

/// Writes `text` to `path` whole or not at all.
void writeFile(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".part";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) throw UsageError("cannot write '" + path.string() + "'");
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) throw UsageError("cannot write '" + path.string() + "': " + ec.message());
}

/// The samples a job trains (for the report's ETA): its steps times its batch.
double jobSamples(const engine::ExperimentSpec& spec) {
  if (spec.train.maxSteps > 0)
    return static_cast<double>(spec.train.maxSteps) * spec.train.batchSize;
  try {
    return static_cast<double>(engine::probeTrainSamples(spec.dataset)) * spec.train.epochs;
  } catch (const std::exception&) {
    return 1;
  }
}

std::string reportName() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "report %Y-%m-%d %H:%M", &tm);
  return buf;
}

}  // namespace

int reportCommand(const std::vector<std::string>& argv) {
  Args args(argv, {"--config", "--out", "--db", "--quiet-wait"}, {"--set"},
            {"--quick", "--quiet", "--help"});
  if (args.flag("--help")) {
    std::cout << kReportUsage;
    return 0;
  }
  if (!args.positional().empty())
    throw UsageError("unexpected argument '" + args.positional()[0] + "' (see report --help)");
  const std::string path = resolveConfig(args.value("--config").value_or("mlp-fmnist-4stage"));
  const std::string base = baseSpec(path, args.values("--set"));
  const bool quick = args.flag("--quick"), quiet = args.flag("--quiet");
  engine::QuietWait quietWait;
  quietWait.maxWaitS = quick ? 0 : 60;
  if (auto w = args.value("--quiet-wait")) {
    try {
      quietWait.maxWaitS = std::stod(*w);
    } catch (const std::exception&) {
      quietWait.maxWaitS = -1;
    }
    if (!(quietWait.maxWaitS >= 0))
      throw UsageError("--quiet-wait takes seconds >= 0, not '" + *w + "'");
  }
  const engine::EngineInfo info = engine::engineInfo();

  // Everything is planned and checked before anything trains or is stored.
  study::ShapeCache shapes;
  report::Suite suite;
  std::vector<report::SuiteJob> planned;
  try {
    report::SuiteOptions options;
    options.quick = quick;
    options.cores = info.hardwareCores;
    suite = report::planSuite(base, options, shapes);
    planned = report::planJobs(suite, info.devices, shapes);
  } catch (const study::StudyError& e) {
    throw UsageError(path + ": " + e.what());
  }
  const fs::path out = args.value("--out").value_or("stagewise-report");
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec || !fs::is_directory(out))
    throw UsageError("cannot create the report folder '" + out.string() + "'" +
                     (ec ? ": " + ec.message() : std::string()));
  if (access(out.c_str(), W_OK) != 0)
    throw UsageError("cannot write into the report folder '" + out.string() + "'");

  storage::RunStore store(storage::resolveDbPath(args.value("--db")));
  report::ReportSession session(store, suite, std::move(planned), reportName(), quick);
  auto jobs = [&session](size_t i) -> const report::SuiteJob& { return session.jobs()[i]; };
  const std::vector<size_t> left = session.begin();
  std::cerr << "[info] " << (quick ? "quick " : "") << "report: " << suite.studies.size()
            << " studies, " << session.jobs().size() << " runs (" << session.reused()
            << " reused from the store, " << left.size() << " to train) into " << store.path()
            << "\n";

  installStopSignals();
  int failed = 0;
  // Trains `list`'s jobs one at a time; false when a stop signal ended it.
  auto runJobs = [&](const std::vector<size_t>& list) {
    double total = 0, done = 0;
    for (size_t i : list) total += jobSamples(jobs(i).spec);
    const auto start = std::chrono::steady_clock::now();
    for (size_t n = 0; n < list.size(); ++n) {
      const size_t i = list[n];
      const report::SuiteJob& job = jobs(i);
      engine::ExperimentSpec spec = job.spec;
      spec.name = session.runName(i);
      const double weight = jobSamples(spec);
      ProgressPrinter printer(std::cerr, isatty(STDERR_FILENO) != 0, quiet);
      printer.setContext([&, n, weight](const engine::Progress& p) {
        const double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const double part = p.totalSteps > 0 ? static_cast<double>(p.step) / p.totalSteps : 0;
        const double fraction = total > 0 ? (done + part * weight) / total : 0;
        const double eta = fraction > 0.002 ? elapsed * (1 - fraction) / fraction : -1;
        return "[report run " + std::to_string(n + 1) + " of " + std::to_string(list.size()) +
               ", ETA " + formatDuration(eta) + "] ";
      });
      if (!quiet)
        std::cerr << "[info] run " << n + 1 << " of " << list.size() << ": " << job.label << "\n";
      // issue 36 §1.8: a throughput round measures on a quiet machine where it can.
      if (job.fresh && quietWait.maxWaitS > 0)
        engine::waitUntilQuiet(
            [] { return engine::LoadMeter().start(); }, quietWait,
            [](double s) {
              for (double t = 0; t < s && !stopSignal(); t += 0.25)
                std::this_thread::sleep_for(std::chrono::milliseconds(250));
            },
            [](const std::string& line) { std::cerr << "[info] " << line << "\n"; });
      if (stopSignal()) break;
      // issue 32 §5: a search trial evaluates at the rungs and is stopped when it falls behind.
      const auto watch = session.watch(i);
      TrainHooks hooks;
      hooks.onRecorded = [&](int64_t runId) { session.linkRun(i, runId); };
      hooks.observer = watch.get();
      if (watch) {
        hooks.stopWhen = [&] { return watch->shouldStop(); };
        hooks.onCreated = [&](engine::Run& run) {
          watch->setOnPrune([&run] { run.requestStop(); });
        };
      }
      TrainOutcome outcome;
      try {
        outcome = trainInProcess(spec, session.runOptions(i), &store, std::nullopt, printer, hooks);
      } catch (const std::exception& e) {
        ++failed;
        session.runEnded(i, false, e.what());
        std::cerr << "[failed] " << job.label << ": " << e.what() << "\n";
        done += weight;
        continue;
      }
      done += weight;
      const bool completed = outcome.summary.status == engine::RunStatus::Completed;
      const bool pruned = watch && watch->shouldStop() && !stopSignal() &&
                          outcome.summary.status == engine::RunStatus::Stopped;
      if (outcome.summary.status == engine::RunStatus::Failed && job.trial) {
        // A trial that diverges at a high rate is a result of the search, not a failure.
        if (!quiet)
          std::cerr << "[info] " << job.label << " failed (" << outcome.summary.error
                    << "): kept as a failed trial\n";
        session.runEnded(i, false, {});
      } else {
        if (outcome.summary.status == engine::RunStatus::Failed) {
          ++failed;
          std::cerr << "[failed] " << job.label << ": " << outcome.summary.error << "\n";
        }
        session.runEnded(i, completed, outcome.summary.error, pruned ? watch.get() : nullptr);
      }
      if (pruned && !quiet) std::cerr << "[info] " << job.label << ": " << watch->reason() << "\n";
      if (stopSignal()) return false;
    }
    return true;
  };
  auto stopped = [&] {
    session.finish(/*stopped=*/true);
    std::cerr << "[info] report stopped; run the same command again: the completed runs are "
                 "reused\n";
    return 130;
  };
  const auto start = std::chrono::steady_clock::now();
  if (!runJobs(left)) return stopped();
  // issue 32 §5: the learning findings again, each method at the rate its search chose.
  std::vector<size_t> tuned;
  try {
    tuned = session.planTuned(info.devices);
  } catch (const study::StudyError& e) {
    throw UsageError(path + ": " + e.what());
  }
  {
    std::string rates;
    for (const auto& [mode, lr] : session.chosenRates()) {
      char text[64];
      std::snprintf(text, sizeof text, "%s%s %.3g", rates.empty() ? "" : ", ", mode.c_str(), lr);
      rates += text;
    }
    std::cerr << "[info] the learning-rate search chose " << (rates.empty() ? "none" : rates)
              << " (on validation); " << tuned.size() << " tuned runs to train\n";
  }
  if (!runJobs(tuned)) return stopped();
  session.finish(/*stopped=*/false);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const report::ReportDoc doc = session.build(
      report::describeMachine(info.hardwareCores, info.blas, info.torchVersion, info.devices),
      seconds);
  writeFile(out / "report.json", report::reportJson(doc));
  writeFile(out / "report.html", report::reportHtml(doc));
  std::cout << report::verdictTable(doc);
  std::cerr << "[info] wrote " << (out / "report.html").string() << " and "
            << (out / "report.json").string() << "\n";
  return failed > 0 ? 1 : 0;
}

}  // namespace stagewise::cli
