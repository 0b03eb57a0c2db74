// The paper's finding 6 (issue 37): activation recomputation lowers pipelined backprop's memory
// but does not cancel local parallelism's advantage. The rule is in docs/replication.md.

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "format.h"
#include "stagewise/report/findings.h"
#include "stats.h"

namespace stagewise::report {

using nlohmann::ordered_json;

namespace {

/// One (stages, M) setting's medians over rounds: the largest stage's allocator peak of local,
/// of GPipe and of GPipe with recomputation, and the pipeline's samples/s without and with.
struct Setting {
  int stages = 0, microBatches = 0;
  bool missing = true;  ///< a local run, or a pipeline run with or without recomputation, absent
  double local = kNaN, pipeline = kNaN, recomputed = kNaN;
  double pipelineSpeed = kNaN, recomputedSpeed = kNaN;
};

double medianSpeed(const std::vector<RunData>& runs) {
  std::vector<double> v;
  for (const auto& r : runs)
    if (std::isfinite(r.samplesPerSec)) v.push_back(r.samplesPerSec);
  return stats::median(v);
}

std::string settingWords(const Setting& s) {
  return std::to_string(s.stages) + " stages M = " + std::to_string(s.microBatches);
}

}  // namespace

Finding judgeMemoryRecompute(const std::vector<RunData>& runs) {
  Finding f;
  f.id = "memory_recompute";
  f.paperFinding = 6;
  f.title = "Recomputation: it lowers the pipeline's memory, but a local stage still holds less";
  f.claim =
      "Activation recomputation lowers backprop's memory but does not cancel local parallelism's "
      "advantage at scale: a pipeline stage that keeps only its input per micro-batch and "
      "recomputes its forward pass before the backward (as GPipe does) holds less than without, "
      "and still more than a local stage.";
  f.paperSource = "a qualitative claim; the paper gives no number for it.";
  f.rule =
      "At the largest setting measured (most stages, then most micro-batches M) of local against "
      "pipelined backprop (GPipe) with and without activation recomputation "
      "(pipeline.recompute): q_rec = the largest per-stage allocator peak of a local run over "
      "that of the pipeline with recomputation, medians over rounds. Reproduced when "
      "recomputation lowers the pipeline's largest peak (with < without) and q_rec <= " +
      fmt(rules::kMemoryLower, 2) +
      "; not reproduced when q_rec >= " + fmt(rules::kMemoryHigher, 2) +
      " or recomputation does not lower the pipeline's peak; inconclusive between, or when "
      "memory was not counted or a run is missing at that setting. Every other measured setting "
      "is shown beside it, with the pipeline's samples/s (what recomputation costs).";
  std::vector<RunData> local, off, on;
  for (const auto& r : runs) {
    if (r.mode == "local") local.push_back(r);
    if (r.mode == "pipeline") (r.recompute ? on : off).push_back(r);
  }
  f.runs = stats::runIds({&local, &off, &on});
  std::set<std::pair<int, int>> keys;  // (stages, M) of every pipeline run
  for (const auto* set : {&off, &on})
    for (const auto& r : *set) keys.insert({r.stages, r.microBatches});
  std::vector<Setting> settings;
  for (const auto& [k, m] : keys) {
    Setting s;
    s.stages = k;
    s.microBatches = m;
    const auto l = stats::atSetting(local, k), p = stats::atSetting(off, k, m),
               rc = stats::atSetting(on, k, m);
    s.missing = l.empty() || p.empty() || rc.empty();
    s.local = stats::maxOf(stats::peaksPerStage(l));
    s.pipeline = stats::maxOf(stats::peaksPerStage(p));
    s.recomputed = stats::maxOf(stats::peaksPerStage(rc));
    s.pipelineSpeed = medianSpeed(p);
    s.recomputedSpeed = medianSpeed(rc);
    settings.push_back(s);
  }

  ordered_json rows = ordered_json::array();
  Table table;
  table.title =
      "Peak memory with and without activation recomputation (GPipe; the largest stage's "
      "allocator peak, medians over rounds)";
  table.columns = {"stages",
                   "M",
                   "local",
                   "pipeline",
                   "pipeline, recompute",
                   "q (local / pipeline)",
                   "q (local / pipeline, recompute)",
                   "samples/s (pipeline)",
                   "samples/s (pipeline, recompute)",
                   ""};
  Plot plot;
  plot.title = "Largest stage's peak memory per setting (allocator)";
  plot.yLabel = "bytes";
  PlotSeries sl{"local", {}, {}, {}, {}, PlotSeries::Style::Bars, 0};
  PlotSeries sp{"pipelined backprop", {}, {}, {}, {}, PlotSeries::Style::Bars, 1};
  PlotSeries sr{"pipelined backprop, recompute", {}, {}, {}, {}, PlotSeries::Style::Bars, 3};
  // The verdict's setting: the last one, keys being ordered by stages, then M.
  const Setting* judged = settings.empty() ? nullptr : &settings.back();
  for (const auto& s : settings) {
    rows.push_back({{"stages", s.stages},
                    {"micro_batches", s.microBatches},
                    {"local_peak", jsonNumber(s.local)},
                    {"pipeline_peak", jsonNumber(s.pipeline)},
                    {"pipeline_recompute_peak", jsonNumber(s.recomputed)},
                    {"ratio", jsonNumber(s.local / s.pipeline)},
                    {"ratio_recompute", jsonNumber(s.local / s.recomputed)},
                    {"pipeline_samples_per_sec", jsonNumber(s.pipelineSpeed)},
                    {"pipeline_recompute_samples_per_sec", jsonNumber(s.recomputedSpeed)},
                    {"judged", &s == judged}});
    table.rows.push_back({std::to_string(s.stages), std::to_string(s.microBatches),
                          fmtBytes(s.local), fmtBytes(s.pipeline), fmtBytes(s.recomputed),
                          fmt(s.local / s.pipeline, 2), fmt(s.local / s.recomputed, 2),
                          fmt(s.pipelineSpeed, 0), fmt(s.recomputedSpeed, 0),
                          &s == judged ? "the verdict's setting" : ""});
    const double x = static_cast<double>(plot.categories.size());
    plot.categories.push_back(std::to_string(s.stages) +
                              " stages, M = " + std::to_string(s.microBatches));
    auto bar = [x](PlotSeries& series, double y) {
      series.x.push_back(x);
      series.y.push_back(y);
    };
    bar(sl, s.local);
    bar(sp, s.pipeline);
    bar(sr, s.recomputed);
  }
  if (!table.rows.empty()) f.tables.push_back(table);
  plot.series = {sl, sp, sr};
  if (!plot.categories.empty()) f.plots.push_back(plot);

  ordered_json ours;
  ours["by_setting"] = rows;
  if (!judged) {
    f.verdict = Verdict::Inconclusive;
    f.why = "no pipeline run with or without recomputation was measured";
    f.oursJson = ours.dump();
    f.oursText = "not measured";
    return f;
  }
  const Setting& s = *judged;
  const double qRec = s.local / s.recomputed, q = s.local / s.pipeline;
  const bool lowers = s.recomputed < s.pipeline;
  ours["stages"] = s.stages;
  ours["micro_batches"] = s.microBatches;
  ours["local_peak_bytes"] = jsonNumber(s.local);
  ours["pipeline_peak_bytes"] = jsonNumber(s.pipeline);
  ours["pipeline_recompute_peak_bytes"] = jsonNumber(s.recomputed);
  ours["ratio_local_pipeline"] = jsonNumber(q);
  ours["ratio_local_pipeline_recompute"] = jsonNumber(qRec);
  ours["recompute_saves"] = jsonNumber(1 - s.recomputed / s.pipeline);
  const bool measured =
      std::isfinite(s.local) && std::isfinite(s.pipeline) && std::isfinite(s.recomputed);
  ours["recompute_lowers"] = measured && !s.missing ? ordered_json(lowers) : ordered_json(nullptr);
  ours["pipeline_samples_per_sec"] = jsonNumber(s.pipelineSpeed);
  ours["pipeline_recompute_samples_per_sec"] = jsonNumber(s.recomputedSpeed);
  f.oursJson = ours.dump();
  f.settings = "GPipe at " + settingWords(s) +
               " micro-batches per batch, with and without pipeline.recompute (the largest "
               "setting measured)";
  std::string elsewhere;
  for (const auto& x : settings)
    if (&x != judged)
      elsewhere += std::string(elsewhere.empty() ? "" : ", ") + settingWords(x) +
                   ": q_rec = " + fmt(x.local / x.recomputed, 2) + " (" +
                   fmt(x.local / x.pipeline, 2) + " without)";
  const std::string beside = elsewhere.empty() ? "" : "; elsewhere " + elsewhere;
  if (s.missing || !measured) {
    f.verdict = Verdict::Inconclusive;
    f.why = s.missing ? "a local run, or a pipeline run with or without recomputation, is "
                        "missing at " +
                            settingWords(s)
                      : "the allocator did not count memory (STAGEWISE_COUNT_MEMORY=0, or a "
                        "CUDA stage)";
    f.oursText = "not measured at " + settingWords(s) + beside;
    return f;
  }
  f.oursText = "q_rec = " + fmt(qRec, 3) + " at " + settingWords(s) + " (largest stage " +
               fmtBytes(s.local) + " local, " + fmtBytes(s.recomputed) +
               " pipeline with recomputation, " + fmtBytes(s.pipeline) +
               " without: q = " + fmt(q, 2) + ")" + beside;
  const std::string saved =
      lowers ? "recomputation lowered the pipeline's largest stage from " + fmtBytes(s.pipeline) +
                   " to " + fmtBytes(s.recomputed) + " (" +
                   fmt(100 * (1 - s.recomputed / s.pipeline), 0) + " % less)"
             : "recomputation did not lower the pipeline's largest stage (" +
                   fmtBytes(s.recomputed) + " with it, " + fmtBytes(s.pipeline) + " without)";
  if (!lowers) {
    f.verdict = Verdict::NotReproduced;
    f.why = saved + " at " + settingWords(s);
  } else if (qRec <= rules::kMemoryLower) {
    f.verdict = Verdict::Reproduced;
    f.why = saved + " at " + settingWords(s) + ", and the largest local stage still peaked at " +
            fmt(qRec, 2) + "x it";
  } else if (qRec >= rules::kMemoryHigher) {
    f.verdict = Verdict::NotReproduced;
    f.why = saved + " at " + settingWords(s) +
            ", below local's: the largest local stage peaked at " + fmt(qRec, 2) + "x it";
  } else {
    f.verdict = Verdict::Inconclusive;
    f.why = saved + " at " + settingWords(s) +
            "; the largest local stage and the recomputing pipeline's are within 10 % of each "
            "other (q_rec = " +
            fmt(qRec, 2) + ")";
  }
  return f;
}

}  // namespace stagewise::report
