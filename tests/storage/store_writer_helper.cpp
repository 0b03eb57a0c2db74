// A separate process that records one run through the writer, for the liveness tests: it is
// killed with SIGKILL mid-run, or two of them write one file at once.
//
//   store_writer_helper DB NAME POINTS CHUNK INTERVAL_MS SERIES
//
// Prints "run <id>" once the run exists. Each point's value is the wall-clock time (Unix seconds)
// at hand-over and its step counts the points of its series. POINTS = 0: write until killed;
// else finish the run as completed and print "done".

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "stagewise/storage/run_store.h"
#include "stagewise/storage/run_writer.h"

using namespace stagewise::storage;

int main(int argc, char** argv) {
  if (argc != 7) {
    std::fprintf(stderr, "usage: %s DB NAME POINTS CHUNK INTERVAL_MS SERIES\n", argv[0]);
    return 2;
  }
  const std::string db = argv[1];
  const std::string name = argv[2];
  const long long total = std::stoll(argv[3]);
  const int chunk = std::stoi(argv[4]);
  const int intervalMs = std::stoi(argv[5]);
  const int seriesCount = std::stoi(argv[6]);
  try {
    StoreOptions options;
    options.writer.rawPointsPerSeries = 0;  // every point: the tests count them
    RunStore store(db, options);
    RunWriter& writer = store.writer();
    NewRun run;
    run.name = name;
    run.mode = "local";
    run.specJson = "{\"name\":\"" + name + "\"}";
    for (int s = 0; s < seriesCount; ++s)
      run.stages.push_back({s, s, s, "cpu", "linear", 1, 0, 0, {}, {}, {}, {}, {}});
    const int64_t id = writer.createRun(run);
    std::printf("run %lld\n", static_cast<long long>(id));
    std::fflush(stdout);
    const auto start = std::chrono::steady_clock::now();
    long long written = 0;
    while (total == 0 || written < total) {
      std::vector<PointInput> points;
      const double now =
          std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
              .count();
      const double t =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      for (int i = 0; i < chunk && (total == 0 || written < total); ++i, ++written) {
        const int stage = static_cast<int>(written % seriesCount);
        points.push_back({"loss", stage, -1, written / seriesCount, t, now});
      }
      writer.appendPoints(id, std::move(points));
      if (intervalMs > 0) std::this_thread::sleep_for(std::chrono::milliseconds(intervalMs));
    }
    writer.finishRun(id, RunFinish{});
    writer.flush();
    std::printf("done\n");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "store_writer_helper: %s\n", e.what());
    return 1;
  }
}
