// Run queries (docs/query.md) on a 10,000-run store: what the Runs table pays when a query is
// typed (count the matches, then read the first page of 100) and what `runs list --where` pays
// (every match). Prints a table; --json FILE writes the same rows.
//
//   bench_query [--runs N] [--json FILE] [--dir DIR]
//
// Each run has a spec (train.lr, partition.cuts, ...), a summary of ~30 figures, 20 test
// accuracy points and 200 loss points of its last stage. Each query is timed 5 times; the median
// is reported. The store lives in DIR (default: a new folder under /tmp, removed afterwards).

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "stagewise/storage/run_query.h"
#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"
#include "stagewise/storage/run_writer.h"

using namespace stagewise::storage;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

template <typename F>
double medianMs(int repeats, F&& f) {
  std::vector<double> ms;
  for (int i = 0; i < repeats; ++i) {
    const auto start = Clock::now();
    f();
    ms.push_back(msSince(start));
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

void createRuns(RunStore& store, int count) {
  RunWriter& w = store.writer();
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  const char* modes[] = {"local", "backprop", "pipeline"};
  for (int i = 0; i < count; ++i) {
    const int stages = 1 + i % 6;
    const double lr = std::pow(10.0, -4 + 3 * u(rng));
    NewRun run;
    run.name = "run " + std::to_string(i);
    run.mode = modes[i % 3];
    run.modelKind = "mlp";
    run.tags = {i % 2 ? "sweep" : "baseline"};
    nlohmann::json spec = {
        {"name", run.name},
        {"mode", run.mode},
        {"dataset", {{"kind", "fashion_mnist"}, {"limit_train", 60000}}},
        {"model", {{"kind", "mlp"}, {"hidden", {512, 512, 256, 256, 128}}}},
        {"partition", {{"cuts", std::vector<int>(size_t(stages - 1), 2)}}},
        {"train", {{"lr", lr}, {"batch_size", 32 << (i % 4)}, {"optimizer", "adam"}, {"seed", i}}}};
    run.specJson = spec.dump();
    for (int s = 0; s < stages; ++s)
      run.stages.push_back({s, s, s, "cpu", "linear", 1, 1000, 10, {}, {}, {}, {}, {}});
    const int64_t id = w.createRun(run);
    const double accuracy = 0.5 + 0.45 * u(rng);
    std::vector<PointInput> points;
    for (int step = 0; step < 200; ++step) {
      points.push_back(
          {"loss", stages - 1, -1, step, step * 0.05, 2.0 * std::exp(-step / 50.0) + 0.3 * u(rng)});
      if (step % 10 == 9)
        points.push_back({"test_accuracy", -1, -1, step, step * 0.05,
                          accuracy * (0.6 + 0.4 * step / 200.0) + 0.02 * u(rng)});
    }
    w.appendPoints(id, std::move(points));
    nlohmann::json summary = {{"status", "completed"}, {"mode", run.mode}};
    for (const char* key :
         {"samples_per_sec", "test_accuracy", "test_loss", "wall_seconds", "paused_seconds",
          "cpu_utilization", "measure_share", "pipeline_efficiency", "bytes_sent", "train_flops"})
      summary[key] = 1000 * u(rng);
    summary["test_accuracy"] = accuracy;
    summary["stages"] = nlohmann::json::array();
    for (int s = 0; s < stages; ++s)
      summary["stages"].push_back({{"final_loss", u(rng)}, {"final_accuracy", u(rng)}});
    RunFinish f;
    f.status = i % 10 == 0 ? RunStatus::Failed : RunStatus::Completed;
    f.testAccuracy = accuracy;
    f.samplesPerSec = summary["samples_per_sec"].get<double>();
    f.summaryJson = summary.dump();
    w.finishRun(id, f);
  }
  w.flush();
}

struct Row {
  std::string query;
  int64_t matches = 0;
  double countAndPageMs = 0;
  double listAllMs = 0;
};

}  // namespace

int main(int argc, char** argv) {
  std::string jsonPath;
  std::string dir;
  int runCount = 10000;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json" && i + 1 < argc) {
      jsonPath = argv[++i];
    } else if (a == "--dir" && i + 1 < argc) {
      dir = argv[++i];
    } else if (a == "--runs" && i + 1 < argc) {
      runCount = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: %s [--runs N] [--json FILE] [--dir DIR]\n", argv[0]);
      return 2;
    }
  }
  const bool ownDir = dir.empty();
  if (ownDir)
    dir = (fs::temp_directory_path() / ("bench_query." + std::to_string(getpid()))).string();
  fs::create_directories(dir);
  const std::vector<std::string> queries = {
      "mode = \"local\"",
      "sweep",
      "train.lr < 1e-3",
      "bytes_sent > 500",
      "partition.cuts[2] = 2",
      "tag = \"baseline\" and status != \"failed\"",
      "name ~ \"*7?\"",
      "max(test_accuracy) > 0.8",
      "last(test_accuracy) > 0.8",
      "min(loss) < 0.06",
      "mean(loss) < 0.7",
      "mode = \"local\" and train.lr < 1e-3 and max(test_accuracy) > 0.8 and tag = \"baseline\"",
      "not (train.lr < 1e-3 or min(loss) < 0.06) and (tag ~ \"sw*\" or mode = \"pipeline\")",
  };
  std::vector<Row> rows;
  double createS = 0;
  try {
    const std::string path = (fs::path(dir) / "runs.db").string();
    const bool exists = fs::exists(path);
    RunStore store(path);
    if (!exists) {
      const auto start = Clock::now();
      createRuns(store, runCount);
      createS = msSince(start) / 1000;
    }
    RunReader reader(store);
    for (const std::string& text : queries) {
      RunFilter filter;
      filter.query = RunQuery::parse(text);
      Row row;
      row.query = text;
      // The Runs table: the count (the scroll bar), then the first page in its default order.
      row.countAndPageMs = medianMs(5, [&] {
        row.matches = reader.countRuns(filter);
        reader.listRuns(filter, {}, 100, 0);
      });
      row.listAllMs = medianMs(5, [&] { reader.listRuns(filter); });
      rows.push_back(row);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_query: %s\n", e.what());
    return 1;
  }
  if (ownDir) fs::remove_all(dir);

  size_t width = 5;
  for (const Row& r : rows) width = std::max(width, r.query.size());
  if (createS > 0) std::printf("store: %d runs written in %.1f s\n", runCount, createS);
  std::printf("%-*s  %8s  %16s  %12s\n", int(width), "query", "matches", "count+page ms",
              "list all ms");
  for (const Row& r : rows) {
    std::printf("%-*s  %8lld  %16.1f  %12.1f\n", int(width), r.query.c_str(),
                static_cast<long long>(r.matches), r.countAndPageMs, r.listAllMs);
  }
  if (!jsonPath.empty()) {
    nlohmann::json out = nlohmann::json::array();
    for (const Row& r : rows)
      out.push_back({{"query", r.query},
                     {"runs", runCount},
                     {"matches", r.matches},
                     {"count_and_page_ms", r.countAndPageMs},
                     {"list_all_ms", r.listAllMs}});
    std::ofstream(jsonPath) << out.dump(2) << '\n';
  }
  return 0;
}
