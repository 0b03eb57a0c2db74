// Run store benchmarks: ingest through the writer, decimated read of a 1M-point series, and
// listing 10,000 runs sorted. Prints an aligned table; --json FILE writes the same rows.
//
//   bench_storage [--json FILE] [--dir DIR] [--quick]
//
// Each timed read is repeated and the median reported; the store lives in DIR (default: a new
// folder under /tmp, removed afterwards).

#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>

#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"
#include "stagewise/storage/run_writer.h"
#include "stagewise/study/results.h"

using namespace stagewise::storage;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

struct Row {
  std::string name;
  double value = 0;
  std::string unit;
  std::string target;  // e.g. ">= 500000"
  bool ok = true;
};

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

template <typename F>
double medianMs(int repeats, F&& f) {
  std::vector<double> ms;
  for (int i = 0; i < repeats; ++i) {
    const auto start = Clock::now();
    f();
    ms.push_back(secondsSince(start) * 1000.0);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

NewRun benchRun(const std::string& name, int stages) {
  NewRun run;
  run.name = name;
  run.mode = "local";
  run.modelKind = "mlp";
  run.specJson = R"({"name":")" + name + R"(","train":{"lr":0.001}})";
  for (int s = 0; s < stages; ++s)
    run.stages.push_back({s, 2 * s, 2 * s + 1, "cpu", "linear", 1, 1000, 10, {}, {}, {}, {}, {}});
  return run;
}

// Points as the engine hands them over: per step, every per-stage series of every stage.
Row ingest(RunStore& store, int64_t totalPoints) {
  static const char* kNames[] = {"loss", "accuracy", "queue_depth", "staleness", "step_seconds"};
  constexpr int kStages = 4;
  RunWriter& w = store.writer();
  const int64_t id = w.createRun(benchRun("ingest", kStages));
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> u(0, 1);
  const auto start = Clock::now();
  int64_t written = 0;
  for (int64_t step = 0; written < totalPoints; ++step) {
    std::vector<PointInput> batch;
    batch.reserve(kStages * 5 * 10);
    // ~10 steps per hand-over, like the engine's reporter at ~50 ms
    for (int64_t s = step * 10; s < step * 10 + 10; ++s) {
      for (int k = 0; k < kStages; ++k) {
        for (const char* name : kNames) batch.push_back({name, k, -1, s, s * 0.001, u(rng)});
      }
    }
    written += static_cast<int64_t>(batch.size());
    w.appendPoints(id, std::move(batch));
  }
  RunFinish f;
  w.finishRun(id, f);
  w.flush();
  const double seconds = secondsSince(start);
  const double rate = static_cast<double>(written) / seconds;
  return {"ingest through the writer (" + std::to_string(written / 1000) + "k points, 20 series)",
          rate, "points/s", ">= 500000", rate >= 500000};
}

int64_t writeBigSeries(RunStore& store, int64_t n) {
  RunWriter& w = store.writer();
  const int64_t id = w.createRun(benchRun("big", 1));
  std::vector<PointInput> chunk;
  for (int64_t i = 0; i < n; ++i) {
    chunk.push_back(
        {"loss", 0, -1, i, i * 0.01, std::sin(i * 1e-4) + (i % 99991 == 0 ? 50.0 : 0.0)});
    if (chunk.size() == 20000) {
      w.appendPoints(id, std::move(chunk));
      chunk = {};
    }
  }
  w.appendPoints(id, std::move(chunk));
  w.finishRun(id, RunFinish{});
  w.flush();
  return id;
}

void createRuns(RunStore& store, int count) {
  RunWriter& w = store.writer();
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0, 1);
  for (int i = 0; i < count; ++i) {
    NewRun run = benchRun("run " + std::to_string(i), 1 + i % 6);
    run.tags = {i % 2 ? "sweep" : "baseline"};
    const int64_t id = w.createRun(run);
    RunFinish f;
    f.status = i % 10 == 0 ? RunStatus::Failed : RunStatus::Completed;
    if (i % 7) f.testAccuracy = u(rng);
    f.samplesPerSec = 1000 * u(rng);
    f.wallSeconds = 100 * u(rng);
    f.summaryJson = R"({"status":"completed"})";
    w.finishRun(id, f);
  }
  w.flush();
}

StoreOptions everyPoint() {
  StoreOptions o;
  o.writer.rawPointsPerSeries = 0;
  return o;
}

// Studies as `stagewise-cli study run` leaves them: runs with a summary and a test-accuracy
// series (one evaluation per 500 steps of a 1-epoch run), linked to their grid points.
void createStudies(RunStore& store, int studies, int runsPerStudy) {
  RunWriter& w = store.writer();
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(0, 1);
  for (int s = 0; s < studies; ++s) {
    NewStudy ns;
    ns.name = "study " + std::to_string(s);
    ns.baseSpecJson = "{}";
    ns.keys = {{"train.lr", "[0.001,0.003,0.01,0.03]"}, {"mode", "[\"local\",\"backprop\"]"}};
    ns.seeds = runsPerStudy / 8;
    ns.runsTotal = runsPerStudy;
    const int64_t study = store.createStudy(ns);
    for (int r = 0; r < runsPerStudy; ++r) {
      const int64_t id =
          w.createRun(benchRun("s" + std::to_string(s) + "r" + std::to_string(r), 4));
      std::vector<PointInput> evals;
      for (int e = 0; e < 4; ++e)
        evals.push_back(
            {"test_accuracy", -1, -1, 500 * e + 499, 10.0 * (e + 1), 0.2 * e + 0.1 * u(rng)});
      w.appendPoints(id, std::move(evals));
      RunFinish f;
      f.steps = 1875;
      f.testAccuracy = 0.8 + 0.1 * u(rng);
      f.samplesPerSec = 1000 + 100 * u(rng);
      f.wallSeconds = 40 + u(rng);
      f.summaryJson = R"({"status":"completed","train_flops":1.5e12})";
      w.finishRun(id, f);
      w.flush();
      StudyRunRecord link;
      link.point = r;
      link.runId = id;
      link.seed = 1 + r % ns.seeds;
      const int point = r / ns.seeds;
      link.valuesJson = "[" +
                        std::string(point % 4 == 0   ? "0.001"
                                    : point % 4 == 1 ? "0.003"
                                    : point % 4 == 2 ? "0.01"
                                                     : "0.03") +
                        (point / 4 ? ",\"backprop\"]" : ",\"local\"]");
      store.linkStudyRun(study, link);
    }
    store.finishStudy(study, StudyStatus::Completed);
  }
}

void printTable(const std::vector<Row>& rows) {
  size_t nameWidth = 4;
  for (const Row& r : rows) nameWidth = std::max(nameWidth, r.name.size());
  std::printf("%-*s  %14s  %-9s  %-10s  %s\n", int(nameWidth), "benchmark", "value", "unit",
              "target", "ok");
  for (const Row& r : rows) {
    std::printf("%-*s  %14.2f  %-9s  %-10s  %s\n", int(nameWidth), r.name.c_str(), r.value,
                r.unit.c_str(), r.target.c_str(), r.target.empty() ? "" : (r.ok ? "yes" : "NO"));
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string jsonPath;
  std::string dir;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json" && i + 1 < argc) {
      jsonPath = argv[++i];
    } else if (a == "--dir" && i + 1 < argc) {
      dir = argv[++i];
    } else if (a == "--quick") {
      quick = true;
    } else {
      std::fprintf(stderr, "usage: %s [--json FILE] [--dir DIR] [--quick]\n", argv[0]);
      return 2;
    }
  }
  const bool ownDir = dir.empty();
  if (ownDir)
    dir = (fs::temp_directory_path() / ("bench_storage." + std::to_string(getpid()))).string();
  fs::create_directories(dir);
  std::vector<Row> rows;
  try {
    const int64_t ingestPoints = quick ? 200000 : 2000000;
    const int64_t seriesPoints = quick ? 100000 : 1000000;
    const int runCount = quick ? 1000 : 10000;
    {
      RunStore store((fs::path(dir) / "ingest.db").string(), everyPoint());
      rows.push_back(ingest(store, ingestPoints));
    }
    {
      // The default recording policy: the same ingest, and what a 10^6-step series keeps.
      RunStore store((fs::path(dir) / "policy.db").string());
      Row r = ingest(store, ingestPoints);
      r.name += ", recording policy";
      r.target = "", r.ok = true;
      rows.push_back(r);
      const int64_t id = writeBigSeries(store, 1000000);
      const int64_t kept = RunReader(store).findSeries(id, {"loss", 0, -1})->pointCount;
      rows.push_back({"rows a 10^6-step series keeps (recording policy)", double(kept), "rows",
                      "<= 100000", kept <= 100000});
    }
    {
      const std::string path = (fs::path(dir) / "series.db").string();
      int64_t id = 0;
      {
        RunStore store(path, everyPoint());
        id = writeBigSeries(store, seriesPoints);
      }
      auto start = Clock::now();
      RunStore store(path);
      const double openMs = secondsSince(start) * 1000;
      RunReader reader(store);
      const SeriesKey key{"loss", 0, -1};
      DecimatedSeries d;
      const double decimated = medianMs(21, [&] { d = reader.loadDecimated(id, key, 2000); });
      rows.push_back(
          {"decimated read, " + std::to_string(seriesPoints / 1000) + "k points -> 2000 px",
           decimated, "ms", "<= 50", decimated <= 50});
      const double zoomed = medianMs(21, [&] {
        reader.loadDecimated(id, key, 2000, XAxis::Step,
                             XRange{0.4 * seriesPoints, 0.5 * seriesPoints});
      });
      rows.push_back({"decimated read, 10% zoom -> 2000 px", zoomed, "ms", "", true});
      const double raw = medianMs(3, [&] { reader.loadSeries(id, key); });
      rows.push_back({"raw read of the whole series (for scale)", raw, "ms", "", true});
      rows.push_back({"open + integrity check of that store", openMs, "ms", "", true});
      std::fprintf(stderr, "(decimated: %zu columns, level %d)\n", d.buckets.size(), d.level);
    }
    {
      RunStore store((fs::path(dir) / "runs.db").string());
      const auto start = Clock::now();
      createRuns(store, runCount);
      const double createS = secondsSince(start);
      RunReader reader(store);
      size_t n = 0;
      const double sorted = medianMs(11, [&] {
        n = reader.listRuns({}, {RunColumn::TestAccuracy, true}).size();
      });
      rows.push_back({"list + sort " + std::to_string(n) + " runs by test_accuracy", sorted, "ms",
                      "<= 100", sorted <= 100});
      RunFilter filter;
      filter.text = "sweep";
      const double page = medianMs(11, [&] {
        reader.listRuns(filter, {RunColumn::SamplesPerSec, false}, 100, 500);
      });
      rows.push_back({"filter text + sort + page of 100", page, "ms", "", true});
      rows.push_back(
          {"create + finish a run (sync round trip)", createS * 1000 / runCount, "ms", "", true});
    }
    {
      RunStore store((fs::path(dir) / "studies.db").string());
      createStudies(store, 50, 20);
      RunReader reader(store);
      size_t groups = 0;
      const double grouped = medianMs(11, [&] {
        groups = 0;
        for (const auto& s : reader.listStudies())
          groups += stagewise::study::loadStudyResults(reader, s.id).groups.size();
      });
      rows.push_back({"list 50 studies + group their 1000 runs (" + std::to_string(groups) +
                          " groups, time-to-target)",
                      grouped, "ms", "<= 100", grouped <= 100});
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_storage: %s\n", e.what());
    return 1;
  }
  if (ownDir) fs::remove_all(dir);
  printTable(rows);
  if (!jsonPath.empty()) {
    nlohmann::json j;
    j["benchmark"] = "storage";
    j["quick"] = quick;
    j["hardware_threads"] = std::thread::hardware_concurrency();
    for (const Row& r : rows) {
      j["rows"].push_back({{"name", r.name},
                           {"value", r.value},
                           {"unit", r.unit},
                           {"target", r.target},
                           {"ok", r.ok}});
    }
    std::ofstream(jsonPath) << j.dump(2) << '\n';
  }
  bool allOk = true;
  for (const Row& r : rows) allOk = allOk && r.ok;
  return allOk ? 0 : 3;
}
