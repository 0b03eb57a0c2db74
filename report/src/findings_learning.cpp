// The findings about what local updates learn: gradient similarity, accuracy against
// backprop, overlapping updates, the compute/time front and random labels. Each rule is in
// docs/replication.md.

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "convergence.h"
#include "format.h"
#include "stagewise/report/findings.h"
#include "stats.h"

namespace stagewise::report {

using nlohmann::ordered_json;

namespace {

constexpr int kBins = 24;  // points of a plotted mean curve

/// The first layer of the run's last stage: layers from there on have cosine 1 by construction.
int lastStageFirstLayer(const RunData& r) {
  return r.stageData.empty() ? 0 : r.stageData.back().firstLayer;
}

/// The mean of a (step, value) series over its last third of training (step >= 2/3 of steps).
std::pair<double, int> lastPartMean(const std::vector<std::pair<int64_t, double>>& series,
                                    int64_t steps) {
  const double from = static_cast<double>(steps) * (1 - rules::kLastPart);
  double sum = 0;
  int n = 0;
  for (const auto& [step, v] : series)
    if (static_cast<double>(step) >= from - 1 && std::isfinite(v)) sum += v, ++n;
  return {n ? sum / n : kNaN, n};
}

/// What the learning findings compare (issue 34): test accuracy, higher is better, in points;
/// on text, test bits per byte, lower is better.
struct Measure {
  bool text = false;
  std::string name = "test accuracy";
  std::string key = "test_accuracy";
  double sign = 1;  ///< +1: higher is better; -1: lower is better
  double tolerance = rules::kAccuracyTolerance;
  /// A difference in words: "2.0 points" or "0.050 bits per byte".
  std::string diff(double d) const {
    return text ? fmt(d, 3) + " bits per byte" : fmt(d * 100, 1) + " points";
  }
  /// A value in words: "81.2 %" or "2.310 bits per byte".
  std::string value(double v) const {
    return text ? fmt(v, 3) + " bits per byte" : fmt(v * 100, 1) + " %";
  }
};

Measure measureOf(std::initializer_list<const std::vector<RunData>*> sets) {
  Measure m;
  for (const auto* set : sets)
    for (const auto& r : *set) m.text = m.text || r.text;
  if (m.text) {
    m.name = "test bits per byte";
    m.key = "test_bits_per_byte";
    m.sign = -1;
    m.tolerance = rules::kBitsPerByteTolerance;
  }
  return m;
}

std::vector<double> finals(const std::vector<RunData>& runs) {
  std::vector<double> v;
  for (const auto& r : runs) v.push_back(r.text ? r.testBitsPerByte : r.testAccuracy);
  return v;
}

/// Test-accuracy curves of runs against samples seen or training time.
std::vector<std::vector<std::pair<double, double>>> evalCurves(const std::vector<RunData>& runs,
                                                               bool byTime) {
  std::vector<std::vector<std::pair<double, double>>> out;
  for (const auto& r : runs) {
    std::vector<std::pair<double, double>> c;
    for (const auto& e : r.evals) c.push_back({byTime ? e.timeS : e.samples, e.accuracy});
    out.push_back(c);
  }
  return out;
}

double xMaxOf(const std::vector<std::vector<std::pair<double, double>>>& curves) {
  double m = 0;
  for (const auto& c : curves)
    for (const auto& p : c) m = std::max(m, p.first);
  return m;
}

Plot accuracyPlot(const std::string& title, bool byTime,
                  const std::vector<std::pair<std::string, const std::vector<RunData>*>>& groups) {
  Plot plot;
  bool text = false;
  for (const auto& g : groups)
    for (const auto& r : *g.second) text = text || r.text;
  plot.title = title;
  if (text) {
    const size_t at = plot.title.find("Test accuracy");
    if (at != std::string::npos) plot.title.replace(at, 13, "Test bits per byte (lower is better)");
  }
  plot.xLabel = byTime ? "training time (s)" : "samples seen";
  plot.yLabel = text ? "test bits per byte" : "test accuracy";
  double xMax = 0;
  for (const auto& g : groups) xMax = std::max(xMax, xMaxOf(evalCurves(*g.second, byTime)));
  int color = 0;
  for (const auto& g : groups) {
    PlotSeries s = stats::meanCurve(evalCurves(*g.second, byTime), xMax, kBins, g.first);
    s.color = color++;
    plot.series.push_back(s);
  }
  return plot;
}

const char* sideWord(stats::Side s) {
  return s == stats::Side::Holds ? "holds" : s == stats::Side::Fails ? "fails" : "unclear";
}

}  // namespace

Finding judgeGradientSimilarity(const std::vector<RunData>& localRuns) {
  Finding f;
  f.id = "gradient_similarity";
  f.paperFinding = 5;
  f.title = "Gradient similarity falls toward the input";
  f.claim =
      "Local updates keep features and gradients similar to backprop's. The paper's "
      "gradient-similarity figure shows a layer's local gradient agreeing less with the true "
      "end-to-end gradient the farther the layer is from the output.";
  f.paperSource = "a figure (no single number), on the paper's MLPs, CNNs and Transformers.";
  f.rule =
      "Per seed, Spearman's rho between a layer's depth and its mean cosine over the last "
      "third of training, over the layers of every stage but the last (their cosine is 1 by "
      "construction), averaged over seeds; reproduced when rho >= " +
      fmt(rules::kRankReproduced, 1) +
      ", not reproduced when rho <= " + fmt(rules::kRankNotReproduced, 1) +
      ", inconclusive between, or with fewer than 3 such layers or 2 probes in the last "
      "third of a run.";
  f.runs = stats::runIds({&localRuns});
  std::vector<double> rhos;
  std::map<int, std::vector<double>> layerMeans;  // layer -> mean cosine per seed
  int layersSeen = 0;
  for (const auto& r : localRuns) {
    const int last = lastStageFirstLayer(r);
    std::vector<double> depth, cosine;
    for (const auto& [layer, series] : r.layerCosine) {
      if (layer >= last) continue;
      const auto [m, n] = lastPartMean(series, r.steps);
      if (n < 2) continue;
      depth.push_back(layer);
      cosine.push_back(m);
      layerMeans[layer].push_back(m);
    }
    layersSeen = std::max(layersSeen, static_cast<int>(depth.size()));
    const double rho = stats::spearman(depth, cosine);
    if (std::isfinite(rho)) rhos.push_back(rho);
  }
  const double rho = stats::mean(rhos);
  ordered_json ours;
  ours["rho"] = jsonNumber(rho);
  ours["rho_per_seed"] = jsonNumbers(rhos);
  ordered_json layers = ordered_json::array();
  for (const auto& [layer, v] : layerMeans)
    layers.push_back({{"layer", layer + 1},
                      {"mean_cosine", jsonNumber(stats::mean(v))},
                      {"std", jsonNumber(stats::sampleStd(v))}});
  ours["layers"] = layers;
  ours["seeds"] = rhos.size();
  f.oursJson = ours.dump();
  f.oursText = "rho = " + fmt(rho, 2) + " over " + std::to_string(layersSeen) + " layers, " +
               std::to_string(rhos.size()) + " seed(s)";
  if (layersSeen < 3 || rhos.empty()) {
    f.verdict = Verdict::Inconclusive;
    f.why = layersSeen < 3 ? "fewer than 3 layers lie outside the last stage with enough probes"
                           : "no run had probes to rank";
  } else if (rho >= rules::kRankReproduced) {
    f.verdict = Verdict::Reproduced;
    f.why = "layers nearer the input had lower cosines (rho = " + fmt(rho, 2) + ")";
  } else if (rho <= rules::kRankNotReproduced) {
    f.verdict = Verdict::NotReproduced;
    f.why = "the cosine did not fall toward the input (rho = " + fmt(rho, 2) + ")";
  } else {
    f.verdict = Verdict::Inconclusive;
    f.why = "the cosine fell toward the input only partly (rho = " + fmt(rho, 2) + ")";
  }
  Plot plot;
  plot.title = "Cosine of local and true gradient per layer (mean, band: min-max over seeds)";
  plot.xLabel = "step";
  plot.yLabel = "cosine";
  double xMax = 0;
  for (const auto& r : localRuns) xMax = std::max(xMax, static_cast<double>(r.steps));
  for (const auto& [layer, v] : layerMeans) {
    std::vector<std::vector<std::pair<double, double>>> curves;
    for (const auto& r : localRuns)
      if (auto it = r.layerCosine.find(layer); it != r.layerCosine.end()) {
        std::vector<std::pair<double, double>> c;
        for (const auto& [s, y] : it->second) c.push_back({static_cast<double>(s), y});
        curves.push_back(c);
      }
    plot.series.push_back(
        stats::meanCurve(curves, xMax, kBins, "layer " + std::to_string(layer + 1)));
  }
  f.plots.push_back(plot);
  convergence::check(f, {{"local", &localRuns}});
  return f;
}

Finding judgeAccuracy(const std::vector<RunData>& local, const std::vector<RunData>& backprop) {
  Finding f;
  f.id = "accuracy";
  f.paperFinding = 1;
  f.title = "Accuracy: local updates against backprop";
  f.claim =
      "Up to 10x fewer sequential steps on MLPs and 2x on Transformers: the stages' parallel "
      "work saves time only if local updates reach an accuracy close to backprop's, which this "
      "finding checks at equal epochs and at equal wall time.";
  f.paperSource = "figures and tables on the paper's models and hardware; no single number.";
  const Measure m = measureOf({&local, &backprop});
  const std::string tol =
      m.text ? fmt(m.tolerance, 2) + " bits per byte" : fmt(m.tolerance * 100, 0) + " points";
  f.rule = m.text ? "d = mean local minus mean backprop test bits per byte (over seeds; lower is "
                    "better), at the end (equal epochs) and at the same training time T = the "
                    "shorter of the two mean wall times (equal wall time); each holds when "
                    "d + 2 SE <= " +
                        tol + " and fails when d - 2 SE > " + tol +
                        ". Reproduced when both hold, not reproduced when either fails, "
                        "inconclusive otherwise (fewer than 2 seeds is inconclusive)."
                  : "d = mean local minus mean backprop test accuracy (over seeds), at the end "
                    "(equal epochs) and at the same training time T = the shorter of the two "
                    "mean wall times (equal wall time); each holds when d - 2 SE >= -" +
                        tol + " and fails when d + 2 SE < -" + tol +
                        ". Reproduced when both hold, not reproduced when either fails, "
                        "inconclusive otherwise (fewer than 2 seeds is inconclusive).";
  f.runs = stats::runIds({&local, &backprop});
  const auto al = finals(local), ab = finals(backprop);
  const double de = stats::mean(al) - stats::mean(ab);
  const double seE = stats::stdErrDiff(al, ab);
  std::vector<double> wl, wb;
  for (const auto& r : local) wl.push_back(r.wallSeconds);
  for (const auto& r : backprop) wb.push_back(r.wallSeconds);
  const double t = std::min(stats::mean(wl), stats::mean(wb));
  std::vector<double> tl, tb;
  for (const auto& r : local) tl.push_back(stats::accuracyAtTime(r.evals, t));
  for (const auto& r : backprop) tb.push_back(stats::accuracyAtTime(r.evals, t));
  const double dt = stats::mean(tl) - stats::mean(tb);
  const double seT = stats::stdErrDiff(tl, tb);
  // Local's lead over backprop, positive when local is better whichever way the metric runs.
  const auto epochs = stats::against(m.sign * de, seE, -m.tolerance, rules::kNoise);
  const auto time = stats::against(m.sign * dt, seT, -m.tolerance, rules::kNoise);
  ordered_json ours;
  ours["metric"] = m.key;
  ours["lower_is_better"] = m.text;
  ours["equal_epochs"] = {{"local_mean", jsonNumber(stats::mean(al))},
                          {"local_std", jsonNumber(stats::sampleStd(al))},
                          {"backprop_mean", jsonNumber(stats::mean(ab))},
                          {"backprop_std", jsonNumber(stats::sampleStd(ab))},
                          {"difference", jsonNumber(de)},
                          {"stderr", jsonNumber(seE)},
                          {"rule", sideWord(epochs)}};
  ours["equal_time"] = {{"time_s", jsonNumber(t)},
                        {"local_mean", jsonNumber(stats::mean(tl))},
                        {"backprop_mean", jsonNumber(stats::mean(tb))},
                        {"difference", jsonNumber(dt)},
                        {"stderr", jsonNumber(seT)},
                        {"rule", sideWord(time)}};
  ours["local_wall_s"] = jsonNumber(stats::mean(wl));
  ours["backprop_wall_s"] = jsonNumber(stats::mean(wb));
  ours["seeds"] = {{"local", al.size()}, {"backprop", ab.size()}};
  f.oursJson = ours.dump();
  const double scale = m.text ? 1 : 100;  // points for accuracy
  const std::string unit = m.text ? " bits per byte" : " points";
  f.oursText =
      (m.text ? "test bits per byte (lower is better), equal epochs: " : "equal epochs: ") +
      m.value(stats::mean(al)) + " against " + m.value(stats::mean(ab)) +
      " (d = " + fmt(de * scale, m.text ? 3 : 1) + " ± " + fmt(seE * scale, m.text ? 3 : 1) + unit +
      "); at " + fmt(t, 1) + " s: d = " + fmt(dt * scale, m.text ? 3 : 1) + " ± " +
      fmt(seT * scale, m.text ? 3 : 1) + unit;
  const double leadE = m.sign * de, leadT = m.sign * dt;
  if (epochs == stats::Side::Holds && time == stats::Side::Holds) {
    f.verdict = Verdict::Reproduced;
    f.why = leadE >= 0 && leadT >= 0
                ? "local updates were ahead of backprop by " + m.diff(leadE) +
                      " at equal epochs and " + m.diff(leadT) + " at equal time" +
                      (m.text ? " (lower test bits per byte)" : "")
                : "local updates stayed within " + tol + " of backprop's " + m.name +
                      " at equal epochs and at equal time, beyond the seeds' noise";
  } else if (epochs == stats::Side::Fails || time == stats::Side::Fails) {
    f.verdict = Verdict::NotReproduced;
    f.why = (m.text ? "local updates' test bits per byte rose more than " + tol +
                          " above backprop's at "
                    : "local updates fell more than " + tol + " behind backprop at ") +
            (epochs == stats::Side::Fails ? "equal epochs" : "equal wall time");
  } else {
    f.verdict = Verdict::Inconclusive;
    f.why = al.size() < 2 || ab.size() < 2
                ? "fewer than 2 seeds per method: the noise is unknown"
                : "the seeds' spread straddles the " + tol + " threshold";
  }
  f.plots.push_back(accuracyPlot("Test accuracy at equal samples (mean, band: min-max over seeds)",
                                 false, {{"local", &local}, {"backprop", &backprop}}));
  f.plots.push_back(accuracyPlot("Test accuracy at equal training time", true,
                                 {{"local", &local}, {"backprop", &backprop}}));
  convergence::check(f, {{"local", &local}, {"backprop", &backprop}});
  return f;
}

namespace {
/// Per run: the mean over its stages but the last of each stage's mean cosine over the last
/// third of training.
double runCosine(const RunData& r) {
  std::vector<double> v;
  const int lastStage = static_cast<int>(r.stageData.size()) - 1;
  for (const auto& [stage, series] : r.stageCosine) {
    if (stage >= lastStage) continue;
    const auto [m, n] = lastPartMean(series, r.steps);
    if (n > 0) v.push_back(m);
  }
  return stats::mean(v);
}
}  // namespace

Finding judgeOverlap(const std::vector<RunData>& chunked, const std::vector<RunData>& overlapping) {
  Finding f;
  f.id = "overlap";
  f.paperFinding = 5;
  f.title = "Overlapping local updates against chunked ones";
  f.claim =
      "Local updates keep features and gradients similar to backprop's; the paper's "
      "overlapping local updates, where each local loss also trains the last layers of the "
      "stage before, bring the gradients closer to the true gradient and reach a better "
      "accuracy than chunked local updates.";
  f.paperSource = "a figure on the paper's models; no single number.";
  const Measure m = measureOf({&chunked, &overlapping});
  f.rule =
      "dc = mean cosine (stages but the last, last third of training) of overlapping minus "
      "chunked runs, da = the same for the final " +
      m.name +
      (m.text ? " taken as chunked minus overlapping (lower is better, so da > 0 is a gain)"
              : std::string()) +
      ", over seeds; reproduced when dc - 2 SE > 0 and da + 2 SE >= 0, not reproduced when "
      "dc + 2 SE < 0 or da + 2 SE < 0, inconclusive otherwise.";
  f.runs = stats::runIds({&chunked, &overlapping});
  std::vector<double> cc, co;
  for (const auto& r : chunked) cc.push_back(runCosine(r));
  for (const auto& r : overlapping) co.push_back(runCosine(r));
  const auto ac = finals(chunked), ao = finals(overlapping);
  const double dc = stats::mean(co) - stats::mean(cc), seC = stats::stdErrDiff(co, cc);
  // Overlap's gain on the metric: positive when overlapping is better (lower bits per byte).
  const double da = m.sign * (stats::mean(ao) - stats::mean(ac));
  const double seA = stats::stdErrDiff(ao, ac);
  const int layers = overlapping.empty() ? 0 : overlapping.front().overlap;
  ordered_json ours;
  ours["overlap_layers"] = layers;
  ours["cosine"] = {{"chunked_mean", jsonNumber(stats::mean(cc))},
                    {"overlap_mean", jsonNumber(stats::mean(co))},
                    {"difference", jsonNumber(dc)},
                    {"stderr", jsonNumber(seC)}};
  ours[m.text ? "bits_per_byte" : "accuracy"] = {{"chunked_mean", jsonNumber(stats::mean(ac))},
                                                 {"overlap_mean", jsonNumber(stats::mean(ao))},
                                                 {"difference", jsonNumber(da)},
                                                 {"stderr", jsonNumber(seA)}};
  ours["lower_is_better"] = m.text;
  f.oursJson = ours.dump();
  f.oursText = "cosine " + fmt(stats::mean(co), 3) + " against " + fmt(stats::mean(cc), 3) +
               " (d = " + fmt(dc, 3) + " ± " + fmt(seC, 3) + "), " + m.name +
               " gain d = " + m.diff(da) + " ± " + m.diff(seA);
  if (!std::isfinite(seC) || !std::isfinite(seA)) {
    f.verdict = Verdict::Inconclusive;
    f.why = "fewer than 2 seeds with probes per variant: the noise is unknown";
  } else if (dc + rules::kNoise * seC < 0 || da + rules::kNoise * seA < 0) {
    f.verdict = Verdict::NotReproduced;
    f.why = dc + rules::kNoise * seC < 0
                ? "overlapping updates lowered the gradient cosine beyond the seeds' noise"
                : "overlapping updates made the " + m.name + " worse beyond the seeds' noise";
  } else if (dc - rules::kNoise * seC > 0 && da + rules::kNoise * seA >= 0) {
    f.verdict = Verdict::Reproduced;
    f.why = "overlapping updates raised the cosine by " + fmt(dc, 3) +
            " beyond noise without costing " + m.name;
  } else {
    f.verdict = Verdict::Inconclusive;
    f.why = "the cosine did not rise beyond the seeds' noise (d = " + fmt(dc, 3) + " ± " +
            fmt(seC, 3) + ")";
  }
  Plot cos;
  cos.title = "Cosine per stage, last third of training (mean, bars: min-max over seeds)";
  cos.yLabel = "cosine";
  const size_t stages = chunked.empty() ? 0 : chunked.front().stageData.size();
  PlotSeries sc{"chunked", {}, {}, {}, {}, PlotSeries::Style::Bars, 0};
  PlotSeries so{"overlap L=" + std::to_string(layers), {}, {}, {}, {}, PlotSeries::Style::Bars, 1};
  for (size_t k = 0; k + 1 < stages; ++k) {
    cos.categories.push_back("stage " + std::to_string(k + 1));
    for (auto [runs, s] : {std::pair{&chunked, &sc}, std::pair{&overlapping, &so}}) {
      std::vector<double> v;
      for (const auto& r : *runs)
        if (auto it = r.stageCosine.find(static_cast<int>(k)); it != r.stageCosine.end())
          v.push_back(lastPartMean(it->second, r.steps).first);
      s->x.push_back(static_cast<double>(k));
      s->y.push_back(stats::mean(v));
      s->lo.push_back(stats::minOf(v));
      s->hi.push_back(stats::maxOf(v));
    }
  }
  cos.series = {sc, so};
  f.plots.push_back(cos);
  f.plots.push_back(accuracyPlot("Test accuracy, chunked against overlapping", false,
                                 {{"chunked", &chunked}, {"overlap", &overlapping}}));
  convergence::check(f, {{"chunked", &chunked}, {"overlapping", &overlapping}});
  return f;
}

Finding judgeFront(const std::vector<RunData>& runs) {
  Finding f;
  f.id = "compute_time_front";
  f.paperFinding = 1;
  f.title = "The compute / time front";
  f.claim =
      "Up to 10x fewer sequential steps on MLPs and 2x on Transformers: over batch sizes and "
      "stage counts, local parallelism reaches a target in less sequential time than backprop "
      "when more compute is spent (the paper's compute/time front).";
  f.paperSource =
      "a figure; the paper counts sequential time as if every stage had a processor of its own.";
  const std::string ok = fmt(rules::kFrontReproduced, 2);
  const Measure m = measureOf({&runs});
  f.rule = (m.text ? "target = " + fmt(2 - rules::kFrontTarget, 2) +
                         " x the highest group mean of the runs' best (lowest) test bits per byte. "
                   : "target = " + fmt(rules::kFrontTarget, 2) +
                         " x the lowest group mean of the runs' best test accuracy. ") +
           "Two measures of time to "
           "target, each the least mean over a method's groups that reached it, local over "
           "backprop: the FLOPs model (sequential time = samples to target x the slowest "
           "stage's training FLOPs per sample, one processor per stage) and the wall time "
           "measured on this machine. Each measure holds when its ratio <= " +
           ok +
           ", fails when >= 1. Reproduced when one holds and the other does not fail, not "
           "reproduced when one fails and the other does not hold, inconclusive when they "
           "disagree (one holds, one fails), when both lie between, or when no group of a "
           "method reached the target. carried_by names the measure(s) that decided it.";
  f.runs = stats::runIds({&runs});
  struct Group {
    std::string label, mode;
    std::vector<const RunData*> runs;
  };
  std::map<std::string, Group> groups;
  for (const auto& r : runs) {
    const std::string label =
        (r.mode == "backprop" ? std::string("backprop")
                              : r.mode + " " + std::to_string(r.stages) + " stages") +
        ", batch " + std::to_string(r.batchSize);
    auto& g = groups[label];
    g.label = label, g.mode = r.mode;
    g.runs.push_back(&r);
  }
  // Reached the target: as accuracy, at or above it; as bits per byte, at or below (the
  // evaluations are read negated, so "reached" is ">=" for both).
  auto scored = [&](const std::vector<study::EvalPoint>& evals) {
    std::vector<study::EvalPoint> out = evals;
    for (auto& e : out) e.accuracy *= m.sign;
    return out;
  };
  double target = kNaN;  // in m.sign x metric: higher is better
  for (const auto& [label, g] : groups) {
    std::vector<double> best;
    for (const auto* r : g.runs) {
      double b = kNaN;
      for (const auto& e : scored(r->evals))
        if (!(b >= e.accuracy)) b = e.accuracy;
      best.push_back(b);
    }
    const double mean = stats::mean(best);
    if (std::isfinite(mean) && !(target <= mean)) target = mean;
  }
  // 2 % short of the worst group's best: 0.98 x an accuracy, 1.02 x bits per byte.
  target *= m.text ? 2 - rules::kFrontTarget : rules::kFrontTarget;
  const double shown = m.sign * target;  // the target in the metric's own units
  ordered_json ours;
  ours["metric"] = m.key;
  ours["target"] = jsonNumber(shown);
  ordered_json rows = ordered_json::array();
  double tL = kNaN, tB = kNaN, wL = kNaN, wB = kNaN;
  Plot seq, wall;
  seq.title = "Compute against sequential time to " + m.value(shown) + " (one processor per stage)";
  seq.xLabel = "sequential training FLOPs to target";
  seq.yLabel = "total training FLOPs to target";
  seq.logX = seq.logY = true;
  wall.title = "Compute against measured wall time to target (this machine)";
  wall.xLabel = "wall time to target (s)";
  wall.yLabel = "total training FLOPs to target";
  wall.logX = wall.logY = true;
  std::map<std::string, PlotSeries> seqBy, wallBy;
  for (const auto& [label, g] : groups) {
    std::vector<double> seqT, comp, wallT;
    for (const auto* r : g.runs) {
      const auto hit = study::timeToTarget(scored(r->evals), target);
      if (!hit) continue;
      seqT.push_back(hit->samples * r->slowestStageFlopsPerSample);
      comp.push_back(hit->samples * r->flopsPerSample);
      wallT.push_back(hit->timeS);
    }
    const double ms = stats::mean(seqT), mc = stats::mean(comp), mw = stats::mean(wallT);
    rows.push_back({{"group", label},
                    {"mode", g.mode},
                    {"runs", g.runs.size()},
                    {"reached", seqT.size()},
                    {"sequential_flops", jsonNumber(ms)},
                    {"compute_flops", jsonNumber(mc)},
                    {"wall_s", jsonNumber(mw)}});
    if (seqT.empty()) continue;
    const bool isLocal = g.mode == "local";
    double& t = isLocal ? tL : tB;
    double& w = isLocal ? wL : wB;
    if (!(t <= ms)) t = ms;
    if (!(w <= mw)) w = mw;
    for (auto [by, x] : {std::pair{&seqBy, ms}, std::pair{&wallBy, mw}}) {
      auto& s = (*by)[g.mode];
      s.label = g.mode;
      s.style = PlotSeries::Style::Points;
      s.color = isLocal ? 0 : g.mode == "pipeline" ? 1 : 2;
      s.x.push_back(x);
      s.y.push_back(mc);
    }
  }
  for (auto& [mode, s] : seqBy) seq.series.push_back(s);
  for (auto& [mode, s] : wallBy) wall.series.push_back(s);
  ours["groups"] = rows;
  ours["local_best_sequential_flops"] = jsonNumber(tL);
  ours["backprop_best_sequential_flops"] = jsonNumber(tB);
  ours["ratio_sequential"] = jsonNumber(tL / tB);
  ours["ratio_wall"] = jsonNumber(wL / wB);
  f.oursJson = ours.dump();
  f.oursText = "t_L / t_B = " + fmt(tL / tB, 2) + " in sequential FLOPs, " + fmt(wL / wB, 2) +
               " in wall time here (target " + m.value(shown) + ")";
  const double rs = tL / tB, rw = wL / wB;
  auto side = [](double r) {
    return !std::isfinite(r)              ? stats::Side::Unclear
           : r <= rules::kFrontReproduced ? stats::Side::Holds
           : r >= 1                       ? stats::Side::Fails
                                          : stats::Side::Unclear;
  };
  const stats::Side ss = side(rs), sw = side(rw);
  auto carried = [&](stats::Side by) {
    return ss == by && sw == by ? "both" : ss == by ? "flops_model" : "wall_time";
  };
  const std::string both =
      "the FLOPs model gives " + fmt(rs, 2) + "x, the wall time here " + fmt(rw, 2) + "x";
  if (!std::isfinite(tL) || !std::isfinite(tB)) {
    f.verdict = Verdict::Inconclusive;
    f.carriedBy = "neither";
    f.why = std::string("no ") + (!std::isfinite(tL) ? "local" : "backprop") +
            " group reached the target " + m.name;
  } else if ((ss == stats::Side::Holds && sw != stats::Side::Fails) ||
             (sw == stats::Side::Holds && ss != stats::Side::Fails)) {
    f.verdict = Verdict::Reproduced;
    f.carriedBy = carried(stats::Side::Holds);
    f.why =
        "the fastest local group reached the target ahead of the fastest backprop group: " + both +
        " (carried by " +
        (f.carriedBy == "both" ? std::string("both measures")
         : f.carriedBy == "flops_model"
             ? std::string("the FLOPs model alone; the wall time did not fail")
             : std::string("the wall time alone; the FLOPs model did not fail")) +
        ")";
  } else if ((ss == stats::Side::Fails && sw != stats::Side::Holds) ||
             (sw == stats::Side::Fails && ss != stats::Side::Holds)) {
    f.verdict = Verdict::NotReproduced;
    f.carriedBy = carried(stats::Side::Fails);
    f.why = "no local group reached the target in less time than backprop: " + both +
            " (carried by " +
            (f.carriedBy == "both"          ? std::string("both measures")
             : f.carriedBy == "flops_model" ? std::string("the FLOPs model")
                                            : std::string("the wall time")) +
            ")";
  } else {
    f.verdict = Verdict::Inconclusive;
    f.carriedBy = "neither";
    f.why = ss == stats::Side::Holds || sw == stats::Side::Holds
                ? "the two measures disagree: " + both
                : "local was ahead by less than the rule asks on both measures: " + both;
  }
  ours["carried_by"] = f.carriedBy;
  f.oursJson = ours.dump();
  f.plots.push_back(seq);
  f.plots.push_back(wall);
  std::vector<RunData> localRuns, backpropRuns;
  for (const auto& r : runs) (r.mode == "backprop" ? backpropRuns : localRuns).push_back(r);
  convergence::check(f, {{"local", &localRuns}, {"backprop", &backpropRuns}});
  return f;
}

Finding judgeRandomLabels(const std::vector<RunData>& local, const std::vector<RunData>& backprop,
                          bool text) {
  Finding f;
  f.id = "random_labels";
  f.paperFinding = 0;
  f.title = "Fitting random labels (an extra check)";
  f.claim =
      "An extra check, not a claim of the paper: backprop can fit (memorise) random labels; "
      "local updates, whose stages but the last never learn from the final loss, might fit them "
      "less.";
  f.paperSource = "none of the paper's six findings; kept as a check of what local updates learn.";
  f.rule =
      "fit = the model head's training accuracy over the last 50 steps on a training set "
      "whose labels were drawn at random (dataset.random_labels); reproduced when backprop's "
      "mean fit >= " +
      fmt(rules::kFitReproduced, 2) + " and exceeds local's by >= " + fmt(rules::kFitGap, 2) +
      ", not reproduced when backprop fits (>= " + fmt(rules::kFitReproduced, 2) +
      ") but leads by <= " + fmt(rules::kFitGapNot, 2) +
      ", inconclusive otherwise (backprop did not fit in the budget, or a gap between).";
  if (text || measureOf({&local, &backprop}).text) {
    // issue 34: a language model's labels are the text's next bytes; drawing them at random
    // leaves no text (the engine refuses dataset.random_labels on text), so the suite skips it.
    f.verdict = Verdict::Inconclusive;
    f.reason = "not_applicable";
    f.oursJson = ordered_json{{"applies", false}}.dump();
    f.oursText = "not run: random labels do not apply to text";
    f.why =
        "random labels do not apply to a language model on text (its labels are the next "
        "bytes; the engine refuses dataset.random_labels on text), so the suite did not run it";
    return f;
  }
  f.runs = stats::runIds({&local, &backprop});
  auto fits = [](const std::vector<RunData>& runs) {
    std::vector<double> v;
    for (const auto& r : runs)
      v.push_back(r.stageData.empty() ? kNaN : r.stageData.back().finalAccuracy);
    return v;
  };
  const auto fl = fits(local), fb = fits(backprop);
  const double ml = stats::mean(fl), mb = stats::mean(fb);
  const int classes = !backprop.empty() ? backprop.front().numClasses : 0;
  ordered_json ours;
  ours["backprop_fit"] = jsonNumber(mb);
  ours["backprop_fit_std"] = jsonNumber(stats::sampleStd(fb));
  ours["local_fit"] = jsonNumber(ml);
  ours["local_fit_std"] = jsonNumber(stats::sampleStd(fl));
  ours["chance"] = jsonNumber(classes > 0 ? 1.0 / classes : kNaN);
  f.oursJson = ours.dump();
  f.oursText = "training accuracy on random labels: backprop " + fmt(mb * 100, 1) + " %, local " +
               fmt(ml * 100, 1) + " % (chance " + fmt(classes > 0 ? 100.0 / classes : kNaN, 1) +
               " %)";
  if (!std::isfinite(mb) || !std::isfinite(ml)) {
    f.verdict = Verdict::Inconclusive;
    f.why = "a local or a backprop run is missing";
  } else if (mb < rules::kFitReproduced) {
    f.verdict = Verdict::Inconclusive;
    f.why = "backprop itself did not fit the random labels in this budget (" + fmt(mb * 100, 1) +
            " %): train longer";
  } else if (mb - ml >= rules::kFitGap) {
    f.verdict = Verdict::Reproduced;
    f.why = "backprop fit " + fmt(mb * 100, 0) + " % of the random labels, local updates " +
            fmt(ml * 100, 0) + " %";
  } else if (mb - ml <= rules::kFitGapNot) {
    f.verdict = Verdict::NotReproduced;
    f.why = "local updates fit the random labels about as well as backprop";
  } else {
    f.verdict = Verdict::Inconclusive;
    f.why = "backprop led by " + fmt((mb - ml) * 100, 0) + " points, less than the rule asks";
  }
  Plot plot;
  plot.title = "Training accuracy on random labels (mean, band: min-max over seeds)";
  plot.xLabel = "step";
  plot.yLabel = "training accuracy of the model's head";
  double xMax = 0;
  for (const auto* set : {&backprop, &local})
    for (const auto& r : *set) xMax = std::max(xMax, static_cast<double>(r.steps));
  int color = 0;
  for (auto [label, set] : {std::pair{"local", &local}, std::pair{"backprop", &backprop}}) {
    std::vector<std::vector<std::pair<double, double>>> curves;
    for (const auto& r : *set) {
      std::vector<std::pair<double, double>> c;
      for (const auto& [s, y] : r.headAccuracy) c.push_back({static_cast<double>(s), y});
      curves.push_back(c);
    }
    PlotSeries s = stats::meanCurve(curves, xMax, kBins, label);
    s.color = color++ == 0 ? 0 : 2;
    plot.series.push_back(s);
  }
  plot.yMin = 0, plot.yMax = 1;
  f.plots.push_back(plot);
  convergence::check(f, {{"local", &local}, {"backprop", &backprop}},
                     convergence::Metric::HeadAccuracy);
  return f;
}

}  // namespace stagewise::report
