#pragma once
// What the report's tests share (test_report_costs, test_report_accuracy, test_report_suite): a
// store that reads its runs back as the findings do, and the runs whose series a finding's rule
// reads (cosines, evaluations that rise or plateau, text runs, recomputation's settings).

#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report_fixture.h"
#include "stagewise/report/collect.h"
#include "stagewise/report/findings.h"
#include "stagewise/report/report.h"
#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"

Q_DECLARE_METATYPE(stagewise::report::Verdict)
Q_DECLARE_METATYPE(std::vector<int>)

namespace report_cases {

using namespace stagewise;
using namespace stagewise::report;
using report_fixture::FakeRun;
using report_fixture::storeRun;

/// A store in a temporary folder, and the stored runs read back as the findings read them.
struct Store {
  QTemporaryDir dir;
  storage::RunStore store{(dir.path() + "/runs.db").toStdString()};
  study::ShapeCache shapes;
  std::vector<RunData> read(const std::vector<FakeRun>& runs) {
    std::vector<int64_t> ids;
    for (const auto& r : runs) ids.push_back(storeRun(store, r));
    storage::RunReader reader(store);
    std::vector<RunData> out;
    for (int64_t id : ids) out.push_back(collectRun(reader, id, shapes));
    return out;
  }
};

/// Per-layer and per-stage cosines over 300 steps, probes every 50: layer l's value is
/// `base[l]` (layers 0..5; the last stage's 6..8 at 1), plus `jitter` for the seed.
inline FakeRun cosineRun(const std::vector<double>& base, double jitter, int64_t seed) {
  FakeRun r;
  r.seed = seed;
  for (int64_t step = 49; step < 300; step += 50) {
    for (int l = 0; l < 9; ++l) {
      const int stage = l < 2 ? 0 : l < 4 ? 1 : l < 6 ? 2 : 3;
      const double v = stage == 3 ? 1.0 : base[size_t(l)] + jitter;
      r.cosines.push_back({stage, l, step, v});
    }
    for (int k = 0; k < 4; ++k) {
      const double v =
          k == 3 ? 1.0 : 0.5 * (base[size_t(2 * k)] + base[size_t(2 * k + 1)]) + jitter;
      r.cosines.push_back({k, -1, step, v});
    }
  }
  return r;
}

// issue 37, the paper's finding 6: local against GPipe with and without recomputation, judged
// at the largest setting (4 stages, M = 8), whatever the smaller ones say (at 2 stages local
// holds 4x the recomputing pipeline).
inline std::vector<FakeRun> recomputeRuns(qint64 localPeak, qint64 withPeak, qint64 withoutPeak,
                                          bool dropRecomputed) {
  std::vector<FakeRun> runs;
  FakeRun l4;
  l4.peakMemory = {localPeak, localPeak < 0 ? -1 : 100000, localPeak < 0 ? -1 : 100000,
                   localPeak < 0 ? -1 : 100000};
  FakeRun l2 = l4;
  l2.cuts = {4};
  l2.peakMemory = {2000000, 100000};
  runs.push_back(l4);
  runs.push_back(l2);
  auto pipe = [&](const FakeRun& at, int m, bool rc, qint64 peak, double speed) {
    FakeRun p = at;
    p.mode = "pipeline";
    p.microBatches = m;
    p.recompute = rc;
    p.samplesPerSec = speed;
    p.peakMemory = std::vector<int64_t>(at.cuts.size() + 1, 50000);
    p.peakMemory.back() = peak;  // the largest stage need not be the first
    runs.push_back(p);
  };
  pipe(l2, 8, false, 3000000, 1000);
  pipe(l2, 8, true, 500000, 700);
  pipe(l4, 4, false, 1200000, 1100);
  pipe(l4, 4, true, 1100000, 800);
  pipe(l4, 8, false, withoutPeak, 1200);
  if (!dropRecomputed) pipe(l4, 8, true, withPeak, 900);
  return runs;
}

/// Evaluations at 10 points of a run of `wall` seconds rising to `final`.
inline std::vector<FakeRun::Eval> rising(double final, double wall, int64_t steps = 300) {
  std::vector<FakeRun::Eval> e;
  for (int i = 1; i <= 10; ++i)
    e.push_back({wall * i / 10, steps * i / 10 - 1, final * (0.5 + 0.05 * i)});
  return e;
}

/// Evaluations at 10 points of a run of `wall` seconds that reach `final` at the 7th and stay
/// there: converged by the rule (no rise over the last quarter).
inline std::vector<FakeRun::Eval> plateau(double final, double wall, int64_t steps = 300) {
  std::vector<FakeRun::Eval> e;
  for (int i = 1; i <= 10; ++i)
    e.push_back({wall * i / 10, steps * i / 10 - 1, final * std::min(1.0, 0.3 + 0.1 * i)});
  return e;
}

inline FakeRun accuracyRun(const std::string& mode, double acc, double wall, int64_t seed) {
  FakeRun r;
  r.mode = mode;
  r.seed = seed;
  r.testAccuracy = acc;
  r.wall = wall;
  r.evals = plateau(acc, wall);
  return r;
}

/// A text run (issue 34) whose test loss falls to `bitsPerByte` x ln 2 nats by its 7th of 10
/// evaluations and stays there: converged by the rule.
inline FakeRun textRun(const std::string& mode, double bitsPerByte, double wall, int64_t seed) {
  FakeRun r;
  r.mode = mode;
  r.seed = seed;
  r.text = true;
  r.wall = wall;
  r.testAccuracy = 0.3;  // next-token accuracy: the text findings must not read it
  r.testLoss = bitsPerByte * std::log(2.0);
  for (int i = 1; i <= 10; ++i)
    r.evals.push_back({wall * i / 10, 300 * i / 10 - 1, r.testLoss * std::max(1.0, 1.7 - 0.1 * i)});
  return r;
}

/// The finding's JSON, for the fields every document reads.
inline nlohmann::json findingJson(const Finding& f) {
  ReportDoc doc;
  doc.baseSpecJson = "{}";
  doc.findings = {f};
  return nlohmann::json::parse(reportJson(doc))["findings"][0];
}

}  // namespace report_cases
