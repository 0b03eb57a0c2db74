// stagewise-cli study run|resume|list|show|export: a setting swept over seeds, run one run at a
// time in this process (the runs `train` would make), kept in the run store and grouped.

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_args.h"
#include "commands.h"
#include "presets.h"
#include "stagewise/engine/checkpoint.h"
#include "stagewise/engine/engine.h"
#include "stagewise/storage/paths.h"
#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"
#include "stagewise/study/driver.h"
#include "stagewise/study/points.h"
#include "stagewise/study/results.h"
#include "train_run.h"

namespace stagewise::cli {

namespace {

using nlohmann::ordered_json;
using study::GridPoint;
using study::PointWork;
using study::StudyPlan;

const char* kStudyUsage = R"(usage: stagewise-cli study <command> [options]

  run     --config FILE --vary KEY=JSON_LIST [--vary ...] [--seeds N] [--sample N]
          [--search KEY=DIST ...] [--trials N] [--sampler random|sobol|maxlipo] [--prune]
          [--tune-seeds N] [--sample-seed N]
          [--set k=v]... [--name NAME] [--target ACC] [--db PATH] [--json] [--quiet]
          sweep the keys over their values (a Cartesian grid, or N points drawn from it) and
          seeds 1..N, one run at a time; Ctrl+C stops the current run (kept) and the study.
          A search draws N trials per point of the --vary grid from each DIST
          (log_uniform:1e-5:1e-1, uniform:A:B, int:A:B, choice:[32,128]); --prune stops trials
          that fall behind (successive halving on val_accuracy from 100 steps, halving by 3);
          --tune-seeds N runs each point's best trial (on val_accuracy) again on N fresh seeds
          and compares the points on test accuracy (mean, 95 % CI). Needs dataset.validation.
  resume  ID [--db PATH] [--json] [--quiet]
          continue a stopped or killed study: completed runs are kept, a stopped run continues
          from its newest checkpoint, any other runs again (the old record stays, replaced)
  list    [--db PATH] [--json]
  show    ID [--db PATH] [--json] [--target ACC]
          one row per group (equal in every key but the seed): n, mean ± std of test accuracy,
          samples/s and wall time, time-to-target, and whether it is on the front
  export  ID [--db PATH] [--format csv|json] [--out FILE]   one row per run

  The experiment's "study" object ({"vary": {"train.lr": [0.001, 0.0003]}, "seeds": 3, ...})
  gives the same settings as the options; the options win.
  exit codes: 0 every run completed, 1 a run failed, 2 bad input, 130 stopped
)";

int64_t parseId(const Args& args, const char* what) {
  if (args.positional().size() != 1)
    throw UsageError(std::string("study ") + what + " needs one study id (see 'study list')");
  const std::string& text = args.positional()[0];
  try {
    size_t used = 0;
    const long long id = std::stoll(text, &used);
    if (used == text.size() && id > 0) return id;
  } catch (const std::exception&) {
  }
  throw UsageError("a study id is a positive number, got '" + text + "'");
}

double parseTarget(const std::string& text) {
  try {
    size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size() && v > 0 && v <= 1) return v;
  } catch (const std::exception&) {
  }
  throw UsageError("--target is a test accuracy in (0, 1], got '" + text + "'");
}

int parseCount(const std::string& flag, const std::string& text, int least) {
  try {
    size_t used = 0;
    const int v = std::stoi(text, &used);
    if (used == text.size() && v >= least) return v;
  } catch (const std::exception&) {
  }
  throw UsageError(flag + " needs a whole number of at least " + std::to_string(least) + ", got '" +
                   text + "'");
}

/// The store of a command that reads studies: refused, not created, when the file is missing.
std::unique_ptr<storage::RunStore> existingStore(const Args& args) {
  const std::string db = storage::resolveDbPath(args.value("--db"));
  if (!std::ifstream(db).good())
    throw UsageError("there is no run store at " + db + " (give --db PATH, or run a study first)");
  return std::make_unique<storage::RunStore>(db);
}

/// Runs a study's points one at a time, as the study driver orders them (a grid's points; a
/// search's trials, pruned when they fall behind, then each point's tuned runs).
class StudyRunner {
 public:
  StudyRunner(storage::RunStore& store, const storage::StudyRecord& record, bool quiet, bool json)
      : m_store(store),
        m_study(record),
        m_driver(store, record.id, engine::engineInfo().devices),
        m_quiet(quiet),
        m_json(json) {}

  int execute() {
    const auto studyStart = std::chrono::steady_clock::now();
    const int doneBefore = m_driver.doneCount();
    const int total = m_driver.totalCount();
    int ran = 0;
    std::vector<std::string> failures;
    installStopSignals();
    auto note = [&](const std::string& text) {
      if (!m_quiet) std::cerr << "[info] " << text << "\n";
    };
    while (true) {
      std::optional<study::StudyDriver::Job> job;
      try {
        job = m_driver.next(note);
      } catch (const study::StudyError& e) {
        throw UsageError(e.what());
      }
      if (!job) break;
      const std::string& what = job->description;
      ProgressPrinter printer(std::cerr, isatty(STDERR_FILENO) != 0, m_quiet);
      const int ordinal = ran;
      const int toRun = std::max(1, total - doneBefore);
      printer.setContext([&, ordinal, toRun, position = job->position](const engine::Progress& p) {
        const double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - studyStart).count();
        const double part =
            p.totalSteps > 0 ? static_cast<double>(p.step) / static_cast<double>(p.totalSteps) : 0;
        const double fraction = std::min(1.0, (ordinal + part) / toRun);
        const double eta = fraction > 0.002 ? elapsed * (1 - fraction) / fraction : -1;
        return "[run " + std::to_string(position) + " of " + std::to_string(total) +
               ", study ETA " + formatDuration(eta) + "] ";
      });
      if (!m_quiet)
        std::cerr << "[info] run " << job->position << " of " << total << ": " << what
                  << (job->continueRunId
                          ? " (continuing run " + std::to_string(*job->continueRunId) + ")"
                          : "")
                  << "\n";
      const auto watch = m_driver.watch(*job);
      TrainHooks hooks;
      hooks.onRecorded = [&](int64_t runId) { m_driver.link(*job, runId); };
      hooks.observer = watch.get();
      if (watch) {
        hooks.stopWhen = [&] { return watch->shouldStop(); };
        // Stopped as soon as the pruner decides, from the run's reporting thread.
        hooks.onCreated = [&](engine::Run& run) {
          watch->setOnPrune([&run] { run.requestStop(); });
        };
      }
      TrainOutcome outcome;
      ++ran;
      try {
        outcome =
            trainInProcess(job->spec, job->options, &m_store, job->continueRunId, printer, hooks);
      } catch (const std::exception& e) {
        // A run that cannot start (its checkpoint does not fit, say) fails; the study goes on.
        failures.push_back(what + ": " + e.what());
        std::cerr << "[failed] " << what << ": " << e.what() << "\n";
        continue;
      }
      if (!outcome.storeError.empty())
        std::cerr << "[warning] not everything was recorded: " << outcome.storeError << "\n";
      const auto status = outcome.summary.status;
      // Stopped by the pruner, or completed before its stop took effect: pruned either way.
      const bool pruned =
          watch && watch->shouldStop() &&
          (status == engine::RunStatus::Stopped || status == engine::RunStatus::Completed);
      if (stopSignal()) {
        m_driver.ended(*job, outcome.runId, status, nullptr);
        m_store.finishStudy(m_study.id, storage::StudyStatus::Stopped);
        std::cerr << "[info] study " << m_study.id << " stopped; continue it with: stagewise-cli "
                  << "study resume " << m_study.id << " --db " << m_store.path() << "\n";
        report();
        return 130;
      }
      m_driver.ended(*job, outcome.runId, status, watch.get());
      if (pruned && !m_quiet) std::cerr << "[info] " << what << ": " << watch->reason() << "\n";
      // A search's trial that fails (diverges at a high learning rate, say) is a result.
      if (status == engine::RunStatus::Failed && job->work.point.trial < 0)
        failures.push_back(what + ": " + outcome.summary.error);
      else if (status == engine::RunStatus::Failed && !m_quiet)
        std::cerr << "[info] " << what << " failed (" << outcome.summary.error
                  << "): kept as a failed trial\n";
    }
    m_store.finishStudy(m_study.id, storage::StudyStatus::Completed);
    for (const auto& f : failures) std::cerr << "[failed] " << f << "\n";
    report();
    return failures.empty() ? 0 : 1;
  }

 private:
  void report() const {
    storage::RunReader reader(m_store);
    const study::StudyResults results = study::loadStudyResults(reader, m_study.id);
    if (m_json)
      std::cout << study::showJson(results) << std::endl;
    else
      std::cout << study::showTable(results);
  }

  storage::RunStore& m_store;
  storage::StudyRecord m_study;
  study::StudyDriver m_driver;
  bool m_quiet, m_json;
};

/// Adds --search, --trials, --sampler, --prune and --tune-seeds to a plan (the options win over
/// the experiment's "study" object).
void applySearchFlags(const Args& args, StudyPlan& plan) {
  try {
    for (const std::string& a : args.values("--search")) {
      study::SearchedKey key = study::parseSearchArgument(a);
      bool replaced = false;
      for (auto& k : plan.search.keys)
        if (k.key == key.key && !replaced) k = key, replaced = true;
      if (!replaced) plan.search.keys.push_back(std::move(key));
    }
  } catch (const study::StudyError& e) {
    throw UsageError(e.what());
  }
  const bool searching = !plan.search.keys.empty();
  auto needsSearch = [&](const char* flag) {
    if (!searching)
      throw UsageError(std::string(flag) +
                       " belongs to a search: give --search KEY=DIST (e.g. --search "
                       "train.lr=log_uniform:1e-5:1e-1)");
  };
  if (auto t = args.value("--trials")) {
    needsSearch("--trials");
    plan.search.trials = parseCount("--trials", *t, 1);
  }
  if (searching && plan.search.trials == 0) plan.search.trials = study::kDefaultTrials;
  if (auto s = args.value("--sampler")) {
    needsSearch("--sampler");
    const auto names = study::samplerNames();
    if (std::find(names.begin(), names.end(), *s) == names.end())
      throw UsageError("--sampler is random, sobol or maxlipo, got '" + *s + "'");
    plan.search.sampler = *s;
  }
  if (args.flag("--prune")) {
    needsSearch("--prune");
    if (!plan.search.prune) plan.search.prune = study::PruneSpec{};
  }
  if (auto n = args.value("--tune-seeds")) {
    needsSearch("--tune-seeds");
    if (!plan.search.tune) plan.search.tune = study::TuneSpec{};
    plan.search.tune->seeds = parseCount("--tune-seeds", *n, 1);
  }
}

int studyRun(const std::vector<std::string>& argv) {
  Args args(argv,
            {"--config", "--seeds", "--sample", "--sample-seed", "--name", "--target", "--db",
             "--trials", "--sampler", "--tune-seeds"},
            {"--vary", "--set", "--search"}, {"--json", "--quiet", "--help", "--prune"});
  if (args.flag("--help")) {
    std::cout << kStudyUsage;
    return 0;
  }
  if (!args.positional().empty())
    throw UsageError("unexpected argument '" + args.positional()[0] + "'");
  const std::string path = resolveConfig(args.required("--config"));
  const std::string text = readConfigText(path);
  ordered_json doc = ordered_json::parse(text, nullptr, false);
  study::StudyObject fromFile;
  if (doc.is_object() && doc.contains("study")) {
    try {
      fromFile = study::parseStudyObject(doc["study"].dump());
    } catch (const study::StudyError& e) {
      throw UsageError(path + ": " + e.what());
    }
    doc.erase("study");
  }
  // The base: the file without its study, with --set applied (the runs add each point's keys).
  std::string base = doc.is_discarded() ? text : doc.dump(2);
  try {
    const auto sets = args.values("--set");
    if (!sets.empty()) base = engine::applyOverrides(base, sets);
    engine::parseSpec(base);
  } catch (const engine::SpecError& e) {
    throw engine::SpecError(e.field(), e.message(), path);
  }

  StudyPlan plan = study::planOf(fromFile);
  try {
    for (const std::string& v : args.values("--vary")) {
      study::VariedKey key = study::parseVary(v);
      bool replaced = false;
      for (auto& k : plan.keys)
        if (k.key == key.key && !replaced) k = key, replaced = true;
      if (!replaced) plan.keys.push_back(std::move(key));
    }
  } catch (const study::StudyError& e) {
    throw UsageError(e.what());
  }
  if (auto s = args.value("--seeds")) plan.seeds = parseCount("--seeds", *s, 1);
  if (auto s = args.value("--sample")) plan.sample = parseCount("--sample", *s, 1);
  if (auto s = args.value("--sample-seed"))
    plan.sampleSeed = static_cast<uint64_t>(parseCount("--sample-seed", *s, 0));
  applySearchFlags(args, plan);
  std::optional<double> target = fromFile.target;
  if (auto t = args.value("--target")) target = parseTarget(*t);
  if (plan.keys.empty() && plan.seeds == 1 && !plan.isSearch())
    throw UsageError(
        "a study varies or searches something: give --vary KEY=JSON_LIST, --search KEY=DIST or "
        "--seeds N (N > 1)");

  // Every point (a search: every vary point at its bounds) is checked before anything runs or
  // is stored.
  size_t points = 0;
  try {
    study::checkStudy(base, plan, engine::engineInfo().devices);
    if (!plan.isSearch()) points = study::expandGrid(plan).size();
  } catch (const study::StudyError& e) {
    throw UsageError(e.what());
  }

  std::string name = args.value("--name").value_or(fromFile.name.value_or(""));
  if (name.empty()) {
    const engine::ExperimentSpec spec = engine::parseSpec(base);
    name = (spec.name.empty() ? std::string("experiment") : spec.name) +
           (plan.isSearch() ? " search" : " study");
  }
  storage::RunStore store(storage::resolveDbPath(args.value("--db")));
  const storage::NewStudy ns = study::newStudyRecord(name, base, plan, target, points);
  const int64_t id = store.createStudy(ns);
  std::cerr << "[info] study " << id << " '" << name << "': " << ns.runsTotal
            << (ns.runsTotal == 1 ? " run" : " runs")
            << (plan.isSearch() && plan.search.prune ? " at most (trials may be pruned)" : "")
            << " into " << store.path() << "\n";
  storage::RunReader reader(store);
  const auto record = reader.study(id);
  StudyRunner runner(store, *record, args.flag("--quiet"), args.flag("--json"));
  return runner.execute();
}

int studyResume(const std::vector<std::string>& argv) {
  Args args(argv, {"--db"}, {}, {"--json", "--quiet", "--help"});
  if (args.flag("--help")) {
    std::cout << kStudyUsage;
    return 0;
  }
  const int64_t id = parseId(args, "resume");
  const auto owned = existingStore(args);
  storage::RunStore& store = *owned;
  storage::RunReader reader(store);
  auto record = reader.study(id);
  if (!record)
    throw UsageError("there is no study " + std::to_string(id) + " in " + store.path() +
                     " (see 'study list')");
  std::vector<PointWork> work;
  try {
    work = study::pendingWork(reader, *record);
  } catch (const study::StudyError& e) {
    throw UsageError(e.what());
  }
  size_t left = 0;
  for (const auto& w : work) left += w.kind != PointWork::Kind::Done;
  if (left == 0) {
    std::cerr << "[info] study " << id << " has every run ended: nothing to resume\n";
    if (record->status != storage::StudyStatus::Completed) {
      store.resumeStudy(id);
      store.finishStudy(id, storage::StudyStatus::Completed);
    }
    const study::StudyResults results = study::loadStudyResults(reader, id);
    std::cout << (args.flag("--json") ? study::showJson(results) + "\n"
                                      : study::showTable(results));
    return 0;
  }
  store.resumeStudy(id);
  std::cerr << "[info] study " << id << " '" << record->name << "': " << left << " of "
            << record->runsTotal << (record->runsTotal == 1 ? " run left" : " runs left")
            << (record->searchJson.empty() ? "" : " (a search: more may follow as trials end)")
            << "\n";
  StudyRunner runner(store, *reader.study(id), args.flag("--quiet"), args.flag("--json"));
  return runner.execute();
}

int studyList(const std::vector<std::string>& argv) {
  Args args(argv, {"--db"}, {}, {"--json", "--help"});
  if (args.flag("--help")) {
    std::cout << kStudyUsage;
    return 0;
  }
  const std::string db = storage::resolveDbPath(args.value("--db"));
  std::vector<storage::StudyRecord> studies;
  // Runs, not grid points: points that differ only in a key their mode does not read share one
  // run, counted once as `study show` counts them.
  std::vector<study::RunCounts> counts;
  if (std::ifstream(db).good()) {
    storage::RunStore store(db);
    storage::RunReader reader(store);
    studies = reader.listStudies();
    for (const auto& s : studies) counts.push_back(study::distinctRunCounts(reader, s));
  }
  if (args.flag("--json")) {
    std::cout << study::listJson(studies, counts) << "\n";
    return 0;
  }
  if (studies.empty()) {
    std::cout << "No studies in " << db << "\n";
    return 0;
  }
  // Names are never cut (issue 36: two report studies read "report ...: ran" twice): the
  // column is as wide as the longest.
  int nameWidth = 4;
  for (const auto& s : studies) nameWidth = std::max(nameWidth, int(s.name.size()));
  std::printf("%5s  %-*s  %-11s  %-9s  %s\n", "id", nameWidth, "name", "status", "completed",
              "keys");
  for (size_t i = 0; i < studies.size(); ++i) {
    const storage::StudyRecord& s = studies[i];
    std::string keys;
    for (const auto& k : s.keys) keys += (keys.empty() ? "" : ", ") + k.key;
    if (s.seeds > 1) keys += (keys.empty() ? "" : ", ") + std::to_string(s.seeds) + " seeds";
    const std::string done =
        std::to_string(counts[i].completed) + "/" + std::to_string(counts[i].total);
    std::printf("%5lld  %-*s  %-11s  %-9s  %s\n", static_cast<long long>(s.id), nameWidth,
                s.name.c_str(), storage::toString(s.status).c_str(), done.c_str(), keys.c_str());
  }
  std::fflush(stdout);
  return 0;
}

study::StudyResults resultsFor(const Args& args, const char* what,
                               std::optional<double> target = std::nullopt) {
  const int64_t id = parseId(args, what);
  const auto store = existingStore(args);
  storage::RunReader reader(*store);
  try {
    return study::loadStudyResults(reader, id, target);
  } catch (const study::StudyError& e) {
    throw UsageError(std::string(e.what()) + " " + store->path() + " (see 'study list')");
  }
}

int studyShow(const std::vector<std::string>& argv) {
  Args args(argv, {"--db", "--target"}, {}, {"--json", "--help"});
  if (args.flag("--help")) {
    std::cout << kStudyUsage;
    return 0;
  }
  std::optional<double> target;
  if (auto t = args.value("--target")) target = parseTarget(*t);
  const study::StudyResults results = resultsFor(args, "show", target);
  std::cout << (args.flag("--json") ? study::showJson(results) + "\n" : study::showTable(results));
  return 0;
}

int studyExport(const std::vector<std::string>& argv) {
  Args args(argv, {"--db", "--format", "--out", "--target"}, {}, {"--help"});
  if (args.flag("--help")) {
    std::cout << kStudyUsage;
    return 0;
  }
  const std::string format = args.value("--format").value_or("csv");
  if (format != "csv" && format != "json")
    throw UsageError("--format is csv or json, got '" + format + "'");
  std::optional<double> target;
  if (auto t = args.value("--target")) target = parseTarget(*t);
  const std::string rows = study::exportRows(resultsFor(args, "export", target), format);
  if (auto out = args.value("--out")) {
    const std::string tmp = *out + ".part";
    {
      std::ofstream file(tmp, std::ios::binary | std::ios::trunc);
      file << rows;
      if (!file.flush()) throw UsageError("cannot write '" + *out + "'");
    }
    if (std::rename(tmp.c_str(), out->c_str()) != 0)
      throw UsageError("cannot write '" + *out + "'");
    std::cerr << "wrote " << *out << "\n";
  } else {
    std::cout << rows;
  }
  return 0;
}

}  // namespace

int studyCommand(const std::vector<std::string>& argv) {
  if (argv.empty() || argv[0] == "--help" || argv[0] == "-h" || argv[0] == "help") {
    std::cout << kStudyUsage;
    return argv.empty() ? 2 : 0;
  }
  const std::vector<std::string> rest(argv.begin() + 1, argv.end());
  const std::string& sub = argv[0];
  if (sub == "run") return studyRun(rest);
  if (sub == "resume") return studyResume(rest);
  if (sub == "list") return studyList(rest);
  if (sub == "show") return studyShow(rest);
  if (sub == "export") return studyExport(rest);
  throw UsageError("unknown study command '" + sub + "'; use run, resume, list, show or export");
}

}  // namespace stagewise::cli
