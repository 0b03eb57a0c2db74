#include "stagewise/study/results.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "rung_value.h"
#include "stagewise/engine/number_text.h"
#include "stagewise/storage/run_reader.h"

namespace stagewise::study {

using nlohmann::json;
using storage::RunStatus;

StudyPlan planOf(const storage::StudyRecord& study) {
  StudyPlan plan;
  for (const auto& k : study.keys) {
    VariedKey v;
    v.key = k.key;
    const json list = json::parse(k.valuesJson, nullptr, false);
    if (list.is_discarded() || !list.is_array())
      throw StudyError("study " + std::to_string(study.id) + ": the stored values of " + k.key +
                       " are not a JSON list");
    for (const auto& x : list) v.values.push_back(x.dump());
    plan.keys.push_back(std::move(v));
  }
  plan.seeds = study.seeds;
  plan.sample = study.sample;
  plan.sampleSeed = static_cast<uint64_t>(study.sampleSeed);
  if (!study.searchJson.empty()) {
    try {
      plan.search = parseStudyObject(study.searchJson).search;
    } catch (const StudyError& e) {
      throw StudyError("study " + std::to_string(study.id) + ": its stored search is not valid (" +
                       e.what() + ")");
    }
  }
  return plan;
}

PointWork workFor(storage::RunReader& reader, const GridPoint& point,
                  const std::vector<storage::StudyRunRecord>& links, bool failedIsDone) {
  PointWork w;
  w.point = point;
  for (const auto& l : links)
    if (!l.replaced && (l.runStatus == RunStatus::Completed || l.runStatus == RunStatus::Pruned ||
                        (failedIsDone && l.runStatus == RunStatus::Failed))) {
      w.kind = PointWork::Kind::Done;
      w.runId = l.runId;
      if (l.runStatus == RunStatus::Completed) break;
    }
  if (w.kind != PointWork::Kind::Done) {
    // The newest record that is not replaced continues when it has a checkpoint.
    for (auto it = links.rbegin(); it != links.rend(); ++it) {
      if (it->replaced) continue;
      if (it->runStatus == RunStatus::Stopped || it->runStatus == RunStatus::Interrupted) {
        int64_t best = -1;
        for (const auto& c : reader.checkpoints(it->runId))
          if (c.step > best) best = c.step, w.checkpointPath = c.path;
        if (!w.checkpointPath.empty()) {
          w.kind = PointWork::Kind::Continue;
          w.runId = it->runId;
        }
      }
      break;
    }
    if (w.kind == PointWork::Kind::Run)
      for (const auto& l : links)
        if (!l.replaced) w.replaces.push_back(l.runId);
  }
  return w;
}

std::vector<PointWork> pendingWork(storage::RunReader& reader, const storage::StudyRecord& study) {
  const StudyPlan plan = planOf(study);
  if (plan.isSearch()) return searchWork(reader, study, plan).work;
  std::map<int, std::vector<storage::StudyRunRecord>> byPoint;
  for (const auto& link : reader.studyRuns(study.id)) byPoint[link.point].push_back(link);
  std::vector<PointWork> out;
  for (const GridPoint& point : expandGrid(plan))
    out.push_back(workFor(reader, point, byPoint[point.index], /*failedIsDone=*/false));
  return out;
}

namespace {

/// The sections of a spec a mode does not read: backprop trains the whole model as one stage
/// with the first stage's settings (no cut, no aux heads, no probe); local mode has no pipeline
/// schedule and the pipeline no local overlap.
std::vector<std::string> unreadSections(const std::string& mode) {
  if (mode == "backprop") return {"partition", "local", "pipeline", "probe"};
  if (mode == "local") return {"pipeline"};
  if (mode == "pipeline") return {"local"};
  return {};
}

}  // namespace

bool modeReadsKey(const std::string& mode, const std::string& key) {
  for (const auto& section : unreadSections(mode))
    if (key == section || key.rfind(section + ".", 0) == 0) return false;
  return true;
}

std::string specIdentity(const std::string& canonicalSpecJson) {
  json doc = json::parse(canonicalSpecJson, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return canonicalSpecJson;
  for (const char* k : {"name", "checkpoint"}) doc.erase(k);
  const std::string mode = doc.value("mode", std::string("local"));
  for (const auto& section : unreadSections(mode)) doc.erase(section);
  if (mode == "backprop" && doc.contains("stages") && doc["stages"].is_array() &&
      doc["stages"].size() > 1)
    doc["stages"].erase(doc["stages"].begin() + 1, doc["stages"].end());
  return doc.dump();
}

std::string groupIdentity(const std::string& specJson) {
  json doc = json::parse(specIdentity(specJson), nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return specJson;
  if (doc.contains("train") && doc["train"].is_object()) doc["train"].erase("seed");
  return doc.dump();
}

double defaultTarget(const std::vector<std::vector<EvalPoint>>& evalsPerRun) {
  double target = std::nan("");
  for (const auto& evals : evalsPerRun) {
    double best = std::nan("");
    for (const auto& e : evals)
      if (std::isfinite(e.accuracy) && !(best >= e.accuracy)) best = e.accuracy;
    if (std::isfinite(best) && !(target <= best)) target = best;
  }
  return target;
}

std::vector<TunedResult> tunedResults(storage::RunReader& reader, const StudyResults& res) {
  const StudyPlan& plan = res.plan;
  const SearchState state = searchWork(reader, res.study, plan);
  const std::string metric = plan.search.choosingMetric();
  const bool higher = higherIsBetter(metric);
  std::vector<TunedResult> out;
  for (size_t p = 0; p < state.varyPoints.size(); ++p) {
    TunedResult t;
    t.varyValues = state.varyPoints[p];
    t.metric = metric;
    double best = std::nan("");
    for (const auto& tr : state.trials[p]) {
      if (tr.work.kind != PointWork::Kind::Run || tr.status != RunStatus::Running) ++t.trials;
      t.completed += tr.status == RunStatus::Completed;
      t.pruned += tr.status == RunStatus::Pruned;
      t.failed += tr.status == RunStatus::Failed;
      // Best so far counts completed trials: a pruned trial's value is from fewer steps.
      if (tr.status == RunStatus::Completed && tr.value &&
          (std::isnan(best) || (higher ? *tr.value > best : *tr.value < best)))
        best = *tr.value;
      if (tr.work.kind == PointWork::Kind::Done) t.bestSoFar.push_back(best);
    }
    if (const auto b = state.best[p]) {
      const TrialState& w = state.trials[p][*b];
      t.best.assign(w.point.values.begin() + static_cast<long>(plan.keys.size()),
                    w.point.values.end());
      t.bestValue = w.value;
      t.bestRunId = w.work.runId;
    }
    std::vector<double> accuracy;
    for (const auto& row : res.rows) {
      if (row.link.replaced || row.run.status != RunStatus::Completed) continue;
      const int first = plan.search.trials * static_cast<int>(state.varyPoints.size());
      const int seeds = plan.search.tune ? plan.search.tune->seeds : 0;
      const int index = row.link.point - first;
      if (index < 0 || index / std::max(1, seeds) != static_cast<int>(p)) continue;
      // Only runs of the values chosen now (a stale tuned run of other values is left out).
      if (!t.best.empty() &&
          std::vector<std::string>(row.values.begin() + static_cast<long>(plan.keys.size()),
                                   row.values.end()) != t.best)
        continue;
      if (std::find(t.tunedRuns.begin(), t.tunedRuns.end(), row.run.id) != t.tunedRuns.end())
        continue;
      t.tunedRuns.push_back(row.run.id);
      accuracy.push_back(row.run.testAccuracy.value_or(std::nan("")));
    }
    t.test = stat(accuracy);
    t.ci95 = confidence95(t.test);
    out.push_back(std::move(t));
  }
  return out;
}

namespace {

// How many runs a study plans, the one rule for `study show` and `study list`: a search's stored
// trial count; a grid's distinct runs (points differing only in keys their mode does not read
// share one run).
int plannedRuns(const storage::StudyRecord& study, const StudyPlan& plan) {
  return plan.isSearch() ? study.runsTotal : distinctRuns(plan, study.baseSpecJson);
}

}  // namespace

StudyResults loadStudyResults(storage::RunReader& reader, int64_t studyId,
                              std::optional<double> target) {
  StudyResults res;
  auto study = reader.study(studyId);
  if (!study) throw StudyError("there is no study " + std::to_string(studyId) + " in the store");
  res.study = *study;
  res.plan = planOf(*study);
  res.keys = pointKeys(res.plan);

  storage::RunFilter filter;
  filter.study = studyId;
  std::map<int64_t, storage::RunRecord> runs;
  for (auto& r : reader.listRuns(filter)) runs.emplace(r.id, std::move(r));
  std::map<int64_t, std::pair<double, std::vector<EvalPoint>>> perRun;  // flops, evaluations
  const auto flops = reader.studySummaryNumbers(studyId, "$.train_flops");
  const auto links = reader.studyRuns(studyId);
  std::map<int64_t, int64_t> prunedAt;  // run id -> the rung that stopped it
  for (const auto& l : links)
    if (l.runStatus == RunStatus::Pruned && l.prunedAt) prunedAt[l.runId] = *l.prunedAt;
  auto valMetric = [&](const char* name) {
    std::map<int64_t, double> out = reader.studySummaryNumbers(studyId, std::string("$.") + name);
    for (const auto& [id, points] : reader.studySeries(studyId, {name, -1, -1})) {
      // A pruned run's value is the one the pruner judged, at its rung.
      if (auto rung = prunedAt.find(id); rung != prunedAt.end()) {
        if (auto v = detail::rungValue(points, rung->second)) out[id] = *v;
        continue;
      }
      // A run that ended early (stopped) has no final value: its last evaluation.
      if (!points.empty() && !out.count(id)) out[id] = points.back().value;
    }
    return out;
  };
  const auto valAccuracy = valMetric("val_accuracy");
  const auto valLoss = valMetric("val_loss");
  const auto series = reader.studySeries(studyId, {"test_accuracy", -1, -1});
  for (const auto& [id, run] : runs) {
    std::vector<EvalPoint> evals;
    const int64_t steps = run.steps.value_or(0);
    if (auto it = series.find(id); it != series.end())
      for (const auto& p : it->second) {
        // A periodic evaluation's step is the index of the step it follows; the final one's is
        // the step count.
        const int64_t done = std::min<int64_t>(p.step + 1, std::max<int64_t>(steps, p.step));
        evals.push_back({p.timeS, static_cast<double>(done) * run.batchSize, p.value});
      }
    const auto f = flops.find(id);
    perRun[id] = {f == flops.end() ? 0.0 : f->second, std::move(evals)};
  }

  for (const auto& link : links) {
    auto it = runs.find(link.runId);
    if (it == runs.end()) continue;
    StudyRunRow row;
    row.link = link;
    row.run = it->second;
    const json values = json::parse(link.valuesJson, nullptr, false);
    if (values.is_array())
      for (const auto& v : values) row.values.push_back(v.dump());
    row.trainFlops = perRun[link.runId].first;
    row.evals = perRun[link.runId].second;
    if (auto v = valAccuracy.find(link.runId); v != valAccuracy.end()) row.valAccuracy = v->second;
    if (auto v = valLoss.find(link.runId); v != valLoss.end()) row.valLoss = v->second;
    res.rows.push_back(std::move(row));
  }

  // The target: given, else stored with the study, else the default over completed runs.
  std::vector<std::vector<EvalPoint>> completedEvals;
  for (const auto& row : res.rows)
    if (!row.link.replaced && row.run.status == RunStatus::Completed)
      completedEvals.push_back(row.evals);
  if (target) {
    res.target = *target;
  } else if (study->target) {
    res.target = *study->target;
  } else {
    res.target = defaultTarget(completedEvals);
    res.targetIsDefault = true;
  }

  // One outcome per run: points that differ only in a key their mode does not read (a local run
  // in a sweep of pipeline.micro_batches) share one run, shown once with "-" for that key
  // (issue 36's walkthrough: the local cut was listed once per micro-batch count).
  std::set<int64_t> seenRun;
  for (size_t i = 0; i < res.rows.size(); ++i) {
    StudyRunRow& row = res.rows[i];
    if (std::isfinite(res.target)) row.hit = timeToTarget(row.evals, res.target);
    if (row.link.replaced || row.run.status != RunStatus::Completed) continue;
    if (!seenRun.insert(row.run.id).second) continue;
    RunOutcome o;
    o.values = row.values;
    for (size_t k = 0; k < o.values.size() && k < res.keys.size(); ++k)
      if (!modeReadsKey(row.run.mode, res.keys[k])) o.values[k] = "null";
    o.seed = row.link.seed;
    o.mode = row.run.mode;
    o.testAccuracy = row.run.testAccuracy.value_or(std::nan(""));
    o.samplesPerSec = row.run.samplesPerSec.value_or(std::nan(""));
    o.wallS = row.run.wallSeconds.value_or(std::nan(""));
    o.trainFlops = row.trainFlops;
    if (row.hit) o.targetTimeS = row.hit->timeS, o.targetSamples = row.hit->samples;
    res.outcomes.push_back(std::move(o));
    res.outcomeRows.push_back(i);
  }
  res.groups = groupRuns(res.outcomes);
  if (res.plan.isSearch()) res.tuned = tunedResults(reader, res);
  res.runsCompleted = static_cast<int>(seenRun.size());
  res.runsTotal = plannedRuns(*study, res.plan);
  return res;
}

int distinctRuns(const StudyPlan& plan, const std::string& baseSpecJson) {
  const json base = json::parse(baseSpecJson, nullptr, false);
  const std::string baseMode =
      base.is_object() ? base.value("mode", std::string("local")) : std::string("local");
  size_t modeKey = plan.keys.size();
  for (size_t k = 0; k < plan.keys.size(); ++k)
    if (plan.keys[k].key == "mode") modeKey = k;
  std::set<std::pair<int64_t, std::vector<std::string>>> runs;
  for (const GridPoint& point : expandGrid(plan)) {
    std::vector<std::string> values = point.values;
    std::string mode = baseMode;
    if (modeKey < values.size()) {
      const json v = json::parse(values[modeKey], nullptr, false);
      if (v.is_string()) mode = v.get<std::string>();
    }
    for (size_t k = 0; k < values.size() && k < plan.keys.size(); ++k)
      if (!modeReadsKey(mode, plan.keys[k].key)) values[k] = "null";
    runs.insert({point.seed, std::move(values)});
  }
  return static_cast<int>(runs.size());
}

RunCounts distinctRunCounts(storage::RunReader& reader, const storage::StudyRecord& study) {
  RunCounts counts;
  std::set<int64_t> completed;
  for (const auto& link : reader.studyRuns(study.id))
    if (!link.replaced && link.runStatus == RunStatus::Completed) completed.insert(link.runId);
  counts.completed = static_cast<int>(completed.size());
  // A list keeps going past a study whose stored keys do not parse: its stored total stands
  // (`study show` names what is wrong with it).
  try {
    counts.total = plannedRuns(study, planOf(study));
  } catch (const StudyError&) {
    counts.total = study.runsTotal;
  }
  return counts;
}

namespace {

json num(double v) {
  return std::isfinite(v) ? json(v) : json(nullptr);
}

json keyValues(const std::vector<std::string>& keys, const std::vector<std::string>& values) {
  json out = json::object();
  for (size_t i = 0; i < keys.size() && i < values.size(); ++i)
    out[keys[i]] = json::parse(values[i], nullptr, false);
  return out;
}

json statJson(const Stat& s) {
  json out = {{"mean", s.n > 0 ? num(s.mean) : json(nullptr)},
              {"std", s.n > 1 ? num(s.std) : json(nullptr)},
              {"sem", s.n > 1 ? num(s.sem()) : json(nullptr)},
              {"ci95", nullptr},
              {"min", s.n > 0 ? num(s.min) : json(nullptr)},
              {"max", s.n > 0 ? num(s.max) : json(nullptr)},
              {"n", s.n}};
  if (const auto ci = confidence95(s)) out["ci95"] = {num(ci->first), num(ci->second)};
  return out;
}

json tunedJson(const StudyResults& r) {
  json out = json::array();
  const size_t varied = r.plan.keys.size();
  std::vector<std::string> varyKeys(r.keys.begin(), r.keys.begin() + static_cast<long>(varied));
  std::vector<std::string> searchKeys(r.keys.begin() + static_cast<long>(varied), r.keys.end());
  for (const auto& t : r.tuned) {
    json best = t.best.empty() ? json(nullptr) : keyValues(searchKeys, t.best);
    json curve = json::array();
    for (double v : t.bestSoFar) curve.push_back(num(v));
    out.push_back({{"keys", keyValues(varyKeys, t.varyValues)},
                   {"best", best},
                   {"metric", t.metric},
                   {"best_value", t.bestValue ? num(*t.bestValue) : json(nullptr)},
                   {"best_run", t.bestRunId > 0 ? json(t.bestRunId) : json(nullptr)},
                   {"test_accuracy", statJson(t.test)},
                   {"runs", t.tunedRuns},
                   {"trials", t.trials},
                   {"completed", t.completed},
                   {"pruned", t.pruned},
                   {"failed", t.failed},
                   {"best_so_far", curve}});
  }
  return out;
}

std::string fmt(const char* format, double a, double b = 0) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, a, b);
  return buf;
}

/// A value as people read it: a JSON string without its quotes, anything else as JSON.
/// A value as stored, a string without its quotes (exports keep every digit).
std::string exact(const std::string& jsonText) {
  const json v = json::parse(jsonText, nullptr, false);
  return v.is_string() ? v.get<std::string>() : jsonText;
}

/// For tables: a fraction to 3 significant digits (a learning rate reads 0.00316, not
/// 0.0031622776601683794).
std::string display(const std::string& jsonText) {
  if (jsonText == "null") return "-";  // a key the run's mode does not read
  const json v = json::parse(jsonText, nullptr, false);
  if (v.is_number_float()) return engine::significant(v.get<double>(), 3);
  return v.is_string() ? v.get<std::string>() : jsonText;
}

bool hasKey(const std::vector<std::string>& keys, const char* key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

/// Mean ± std to the decimal place the std supports (number_text.h), the one rule the
/// workbench's Groups table follows too; one run: its value to 4 significant digits.
std::string meanStd(const Stat& s) {
  if (s.n == 0 || !std::isfinite(s.mean)) return "-";
  if (s.n == 1) return engine::significant(s.mean, 4);
  return engine::meanPlusMinus(s.mean, s.std);
}

}  // namespace

std::string showJson(const StudyResults& r) {
  json groups = json::array();
  for (const auto& g : r.groups) {
    json runs = json::array();
    for (size_t i : g.runs) runs.push_back(r.rows[r.outcomeRows[i]].run.id);
    json ttt = g.targetTimeS ? statJson(*g.targetTimeS) : json(nullptr);
    if (g.targetTimeS) ttt["reached"] = g.reached;
    groups.push_back({{"keys", keyValues(r.keys, g.values)},
                      {"mode", g.mode},
                      {"n", g.accuracy.n},
                      {"runs", runs},
                      {"test_accuracy", statJson(g.accuracy)},
                      {"samples_per_sec", statJson(g.samplesPerSec)},
                      {"wall_seconds", statJson(g.wallS)},
                      {"train_flops", statJson(g.trainFlops)},
                      {"time_to_target_s", ttt},
                      {"reached", g.reached},
                      {"on_front", g.onFront}});
  }
  json out = {{"study_id", r.study.id},
              {"name", r.study.name},
              {"status", storage::toString(r.study.status)},
              {"target", num(r.target)},
              {"target_default", r.targetIsDefault},
              {"keys", r.keys},
              {"runs_total", r.study.runsTotal},
              {"runs_completed", r.study.runsCompleted},
              {"runs_distinct_total", r.runsTotal},
              {"runs_distinct_completed", r.runsCompleted},
              {"groups", groups}};
  if (r.plan.isSearch()) {
    json search = json::parse(r.study.searchJson, nullptr, false);
    out["search"] = search.is_discarded() ? json(nullptr) : search;
    out["runs_pruned"] = r.study.runsPruned;
    out["tuned"] = tunedJson(r);
  }
  return out.dump();
}

std::string listJson(const std::vector<storage::StudyRecord>& studies,
                     const std::vector<RunCounts>& counts) {
  json out = json::array();
  for (size_t i = 0; i < studies.size(); ++i) {
    const storage::StudyRecord& s = studies[i];
    json keys = json::array();
    for (const auto& k : s.keys) keys.push_back(k.key);
    out.push_back({{"id", s.id},
                   {"name", s.name},
                   {"status", storage::toString(s.status)},
                   {"created_at_ms", s.createdAtMs},
                   {"keys", keys},
                   {"seeds", s.seeds},
                   {"runs_total", s.runsTotal},
                   {"runs_completed", s.runsCompleted}});
    if (i < counts.size()) {
      out.back()["runs_distinct_total"] = counts[i].total;
      out.back()["runs_distinct_completed"] = counts[i].completed;
    }
  }
  return out.dump();
}

/// Lines of a table, columns padded to their widest cell.
std::string tableText(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], row[i].size());
    }
  std::string out;
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i)
      out += row[i] + std::string(i + 1 < row.size() ? width[i] - row[i].size() + 2 : 0, ' ');
    out += "\n";
  }
  return out;
}

std::string tunedTable(const StudyResults& r) {
  const SearchSpec& s = r.plan.search;
  std::string out =
      "search: " + std::to_string(s.trials) + " trials per point (" + s.sampler + " sampler)";
  if (s.prune)
    out += ", pruned at " + std::to_string(s.prune->minSteps) + " x " +
           std::to_string(s.prune->reduction) + "^k steps on " + s.prune->metric;
  out += ", chosen on " + s.choosingMetric();
  if (s.tune) out += ", best re-run on " + std::to_string(s.tune->seeds) + " fresh seeds";
  out += "\n";
  const size_t varied = r.plan.keys.size();
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header(r.keys.begin(), r.keys.begin() + static_cast<long>(varied));
  for (const char* h : {"best", "", "test acc (tuned) mean ± std", "95% CI", "n", "trials",
                        "completed", "pruned", "failed"})
    header.emplace_back(h);
  header[varied + 1] = s.choosingMetric();
  rows.push_back(header);
  for (const auto& t : r.tuned) {
    std::vector<std::string> row;
    for (const auto& v : t.varyValues) row.push_back(display(v));
    std::string best;
    for (size_t i = 0; i < t.best.size(); ++i) {
      best += (i ? ", " : "") + r.keys[varied + i] + "=" + display(t.best[i]);
    }
    row.push_back(best.empty() ? "-" : best);
    row.push_back(t.bestValue ? fmt("%.4f", *t.bestValue) : "-");
    row.push_back(s.tune ? meanStd(t.test) : "(no tune)");
    row.push_back(t.ci95 ? fmt("[%.4f, ", t.ci95->first) + fmt("%.4f]", t.ci95->second) : "-");
    row.push_back(std::to_string(t.test.n));
    row.push_back(std::to_string(t.trials));
    row.push_back(std::to_string(t.completed));
    row.push_back(std::to_string(t.pruned));
    row.push_back(std::to_string(t.failed));
    rows.push_back(std::move(row));
  }
  out += tableText(rows);
  out +=
      "each point at its own best settings, chosen on validation; test accuracy reported, "
      "never used to choose\n\nevery trial:\n";
  return out;
}

std::string showTable(const StudyResults& r) {
  const bool modeVaried = hasKey(r.keys, "mode");
  std::vector<std::string> header = r.keys;
  if (!modeVaried) header.emplace_back("mode");
  for (const char* h : {"n", "test acc", "samples/s", "wall s", "to target s", "front"})
    header.emplace_back(h);
  std::vector<std::vector<std::string>> rows;
  for (const auto& g : r.groups) {
    std::vector<std::string> row;
    for (const auto& v : g.values) row.push_back(display(v));
    if (!modeVaried) row.push_back(g.mode);
    row.push_back(std::to_string(g.accuracy.n));
    row.push_back(meanStd(g.accuracy));
    row.push_back(meanStd(g.samplesPerSec));
    row.push_back(meanStd(g.wallS));
    row.push_back(g.targetTimeS ? meanStd(*g.targetTimeS) + " (" + std::to_string(g.reached) + "/" +
                                      std::to_string(g.accuracy.n) + ")"
                                : "not reached");
    row.push_back(g.onFront ? "*" : "");
    rows.push_back(std::move(row));
  }
  // A pruned trial is no group (its test accuracy is from fewer steps), but it is a trial: it
  // is listed with the step its rung stopped it at and the value judged there (issue 32's
  // walkthrough: the "every trial" list left them out).
  for (const auto& runRow : r.rows) {
    if (runRow.link.replaced || runRow.run.status != RunStatus::Pruned) continue;
    std::vector<std::string> row;
    for (const auto& v : runRow.values) row.push_back(display(v));
    while (row.size() < r.keys.size()) row.emplace_back("-");
    if (!modeVaried) row.push_back(runRow.run.mode);
    row.emplace_back("-");
    std::string at = "pruned";
    if (runRow.link.prunedAt) at += " at step " + std::to_string(*runRow.link.prunedAt);
    const std::optional<double> judged =
        r.plan.search.choosingMetric() == "val_loss" ? runRow.valLoss : runRow.valAccuracy;
    if (judged)
      at += " (" + r.plan.search.choosingMetric() + " " + engine::significant(*judged, 4) + ")";
    row.push_back(at);
    for (int i = 0; i < 3; ++i) row.emplace_back("-");
    row.emplace_back("");
    rows.push_back(std::move(row));
  }
  std::vector<size_t> width(header.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i)
      width[i] = std::max(width[i], row[i].size());
  };
  measure(header);
  for (const auto& row : rows) measure(row);
  auto line = [&](const std::vector<std::string>& row) {
    std::string out;
    for (size_t i = 0; i < row.size(); ++i)
      out += row[i] + std::string(i + 1 < row.size() ? width[i] - row[i].size() + 2 : 0, ' ');
    return out + "\n";
  };
  std::string out = "study " + std::to_string(r.study.id) + " '" + r.study.name + "' (" +
                    storage::toString(r.study.status) + "): " + std::to_string(r.runsCompleted) +
                    " of " + std::to_string(r.runsTotal) +
                    (r.runsTotal == 1 ? " run completed" : " runs completed");
  if (!r.plan.isSearch() && r.runsTotal < r.study.runsTotal)
    out += " (" + std::to_string(r.study.runsTotal) +
           " grid points: points that differ only in a key their mode does not read share one "
           "run, shown once with - for that key)";
  out += "\n";
  out += "target accuracy " + (std::isfinite(r.target) ? fmt("%.4f", r.target) : "-") +
         (r.targetIsDefault ? " (default: the lowest best accuracy of the completed runs)" : "") +
         "\n";
  if (r.plan.isSearch()) out += tunedTable(r);
  out += line(header);
  for (const auto& row : rows) out += line(row);
  if (!rows.empty())
    out += "mean ± sample std over seeds; * on the front (wall time vs accuracy)\n";
  return out;
}

namespace {

std::string csvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string csvNumber(double v) {
  if (!std::isfinite(v)) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace

std::string exportRows(const StudyResults& r, const std::string& format) {
  if (format == "json") {
    json out = json::array();
    for (const auto& row : r.rows) {
      out.push_back({{"run_id", row.run.id},
                     {"study_id", r.study.id},
                     {"point", row.link.point},
                     {"seed", row.link.seed},
                     {"keys", keyValues(r.keys, row.values)},
                     {"status", storage::toString(row.run.status)},
                     {"replaced", row.link.replaced},
                     {"mode", row.run.mode},
                     {"test_accuracy", num(row.run.testAccuracy.value_or(std::nan("")))},
                     {"samples_per_sec", num(row.run.samplesPerSec.value_or(std::nan("")))},
                     {"wall_seconds", num(row.run.wallSeconds.value_or(std::nan("")))},
                     {"train_flops", num(row.trainFlops)},
                     {"time_to_target_s", row.hit ? num(row.hit->timeS) : json(nullptr)},
                     {"samples_to_target", row.hit ? num(row.hit->samples) : json(nullptr)},
                     {"val_accuracy", row.valAccuracy ? num(*row.valAccuracy) : json(nullptr)},
                     {"val_loss", row.valLoss ? num(*row.valLoss) : json(nullptr)},
                     {"pruned_at", row.link.prunedAt ? json(*row.link.prunedAt) : json(nullptr)}});
    }
    return out.dump(2) + "\n";
  }
  // The study's keys are columns (a varied mode is the mode column).
  const bool modeVaried = hasKey(r.keys, "mode");
  std::string out = "run_id,study_id,point,seed";
  for (const auto& k : r.keys) out += "," + csvField(k);
  out += std::string(",status,replaced") + (modeVaried ? "" : ",mode") +
         ",test_accuracy,samples_per_sec,wall_seconds,train_flops,time_to_target_s,"
         "samples_to_target,val_accuracy,val_loss,pruned_at\n";
  for (const auto& row : r.rows) {
    out += std::to_string(row.run.id) + "," + std::to_string(r.study.id) + "," +
           std::to_string(row.link.point) + "," + std::to_string(row.link.seed);
    for (size_t i = 0; i < r.keys.size(); ++i)
      out += "," + csvField(i < row.values.size() ? exact(row.values[i]) : "");
    out += "," + storage::toString(row.run.status) + "," + (row.link.replaced ? "1" : "0") +
           (modeVaried ? "" : "," + row.run.mode) + "," +
           csvNumber(row.run.testAccuracy.value_or(std::nan(""))) + "," +
           csvNumber(row.run.samplesPerSec.value_or(std::nan(""))) + "," +
           csvNumber(row.run.wallSeconds.value_or(std::nan(""))) + "," + csvNumber(row.trainFlops) +
           "," + (row.hit ? csvNumber(row.hit->timeS) : "") + "," +
           (row.hit ? csvNumber(row.hit->samples) : "") + "," +
           (row.valAccuracy ? csvNumber(*row.valAccuracy) : "") + "," +
           (row.valLoss ? csvNumber(*row.valLoss) : "") + "," +
           (row.link.prunedAt ? std::to_string(*row.link.prunedAt) : "") + "\n";
  }
  return out;
}

}  // namespace stagewise::study
