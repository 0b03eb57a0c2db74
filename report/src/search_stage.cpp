// issue 32 §5: the suite's learning-rate search read back, and shown. Choosing reads the
// search's validation metric only (study::searchWork gives each trial's value of it); a test
// metric never enters.

#include "search_stage.h"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "format.h"
#include "stagewise/storage/run_reader.h"
#include "stagewise/study/results.h"

namespace stagewise::report {

using nlohmann::ordered_json;

namespace {

std::string fmtLr(double lr) {
  if (!std::isfinite(lr)) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", lr);
  return buf;
}

std::string statusText(storage::RunStatus status, bool linked) {
  if (!linked) return "not run";
  return storage::toString(status);
}

}  // namespace

ReportDoc::Search readSearch(storage::RunReader& reader, const SuiteStudy& study, int64_t studyId,
                             double baseLr) {
  ReportDoc::Search out;
  const study::StudyPlan& plan = study.plan;
  const study::SearchSpec& search = plan.search;
  out.studyId = studyId;
  if (!search.keys.empty()) {
    out.key = search.keys.front().key;
    out.distributionJson = search.keys.front().dist.json();
  }
  out.trials = search.trials;
  out.sampler = search.sampler;
  out.metric = search.choosingMetric();
  out.pruneJson = search.prune ? ordered_json({{"metric", search.prune->metric},
                                               {"min_steps", search.prune->minSteps},
                                               {"reduction", search.prune->reduction}})
                                     .dump()
                               : "null";
  if (auto v = study::valueAt(study.baseSpecJson, "dataset.validation"))
    out.validation = std::atof(v->c_str());
  out.baseLr = baseLr;
  const auto record = reader.study(studyId);
  if (!record) return out;
  const bool higher = study::higherIsBetter(out.metric);
  const study::SearchState state = study::searchWork(reader, *record, plan);
  for (size_t p = 0; p < state.varyPoints.size(); ++p) {
    ReportDoc::SearchMethod m;
    const nlohmann::json mode =
        nlohmann::json::parse(state.varyPoints[p].empty() ? "null" : state.varyPoints[p][0],
                              nullptr, false);
    m.mode = mode.is_string() ? mode.get<std::string>() : state.varyPoints[p].front();
    double best = kNaN;
    for (const auto& tr : state.trials[p]) {
      ReportDoc::SearchTrial t;
      t.trial = tr.point.trial + 1;
      const size_t at = plan.keys.size();
      if (at < tr.point.values.size()) t.lr = std::atof(tr.point.values[at].c_str());
      const bool linked = tr.work.runId != 0;
      t.runId = tr.work.runId;
      t.status = statusText(tr.status, linked);
      if (tr.value) t.value = *tr.value;
      if (tr.prunedAt) t.prunedAt = *tr.prunedAt;
      if (linked)
        if (const auto run = reader.run(tr.work.runId)) t.steps = run->steps.value_or(0);
      out.steps += t.steps;
      // Only a completed trial can be chosen: a pruned one's value is its rung's.
      const bool candidate = tr.status == storage::RunStatus::Completed && linked && tr.value &&
                             std::isfinite(*tr.value);
      if (candidate && (!std::isfinite(best) || (higher ? *tr.value > best : *tr.value < best))) {
        best = *tr.value;
        m.chosenLr = t.lr;
        m.bestValue = best;
        m.chosenTrial = t.trial;
      }
      m.bestSoFar.push_back(best);
      m.trials.push_back(t);
    }
    out.methods.push_back(std::move(m));
  }

  Plot soFar;
  soFar.title = "Learning-rate search: the best " + out.metric + " so far";
  soFar.xLabel = "trial";
  soFar.yLabel = out.metric + " (validation)";
  Plot slice;
  slice.title = "Each trial's " + out.metric + " against its learning rate";
  slice.xLabel = out.key + " (log)";
  slice.yLabel = out.metric + " (validation; pruned: at its rung)";
  slice.logX = true;
  for (size_t i = 0; i < out.methods.size(); ++i) {
    const auto& m = out.methods[i];
    PlotSeries s;
    s.label = m.mode;
    s.style = PlotSeries::Style::LinePoints;
    s.color = static_cast<int>(i);
    PlotSeries trials;
    trials.label = m.mode;
    trials.style = PlotSeries::Style::Points;
    trials.color = static_cast<int>(i);
    for (size_t k = 0; k < m.trials.size(); ++k) {
      if (std::isfinite(m.bestSoFar[k]))
        s.x.push_back(static_cast<double>(k + 1)), s.y.push_back(m.bestSoFar[k]);
      if (std::isfinite(m.trials[k].value) && m.trials[k].lr > 0)
        trials.x.push_back(m.trials[k].lr), trials.y.push_back(m.trials[k].value);
    }
    if (!s.x.empty()) soFar.series.push_back(std::move(s));
    if (!trials.x.empty()) slice.series.push_back(std::move(trials));
  }
  if (!soFar.series.empty()) out.plots.push_back(std::move(soFar));
  if (!slice.series.empty()) out.plots.push_back(std::move(slice));
  return out;
}

std::map<std::string, double> chosenRates(const ReportDoc::Search& search) {
  std::map<std::string, double> out;
  for (const auto& m : search.methods)
    if (std::isfinite(m.chosenLr) && m.chosenLr > 0) out[m.mode] = m.chosenLr;
  return out;
}

std::vector<std::string> findingModes(const std::string& id) {
  if (id == "accuracy" || id == "compute_time_front" || id == "random_labels")
    return {"local", "backprop"};
  if (id == "gradient_similarity" || id == "overlap") return {"local"};
  return {};
}

std::string settingsJson(const std::string& findingId, double baseLr,
                         const ReportDoc::Search* search) {
  ordered_json out = ordered_json::object();
  for (const auto& mode : findingModes(findingId)) {
    ordered_json s = {{"train.lr", jsonNumber(baseLr)}};
    if (search) {
      s["chosen"] = false;
      for (const auto& m : search->methods)
        if (m.mode == mode && std::isfinite(m.chosenLr)) {
          s = {{"train.lr", m.chosenLr},
               {"chosen", true},
               {"trial", m.chosenTrial},
               {search->metric, jsonNumber(m.bestValue)}};
        }
    }
    out[mode] = s;
  }
  return out.dump();
}

ordered_json searchJson(const ReportDoc::Search& search) {
  ordered_json o;
  o["study_id"] = search.studyId;
  o["key"] = search.key;
  const ordered_json dist = ordered_json::parse(search.distributionJson, nullptr, false);
  o["distribution"] = dist.is_discarded() ? ordered_json(nullptr) : dist;
  o["trials"] = search.trials;
  o["sampler"] = search.sampler;
  o["metric"] = search.metric;
  const ordered_json prune = ordered_json::parse(search.pruneJson, nullptr, false);
  o["prune"] = prune.is_discarded() ? ordered_json(nullptr) : prune;
  o["validation"] = search.validation;
  o["base_lr"] = jsonNumber(search.baseLr);
  o["steps"] = search.steps;
  ordered_json methods = ordered_json::array();
  for (const auto& m : search.methods) {
    ordered_json mo;
    mo["mode"] = m.mode;
    mo["chosen"] = std::isfinite(m.chosenLr)
                       ? ordered_json({{search.key, m.chosenLr},
                                       {"trial", m.chosenTrial},
                                       {search.metric, jsonNumber(m.bestValue)}})
                       : ordered_json(nullptr);
    mo["best_so_far"] = jsonNumbers(m.bestSoFar);
    ordered_json trials = ordered_json::array();
    for (const auto& t : m.trials)
      trials.push_back({{"trial", t.trial},
                        {search.key, t.lr},
                        {search.metric, jsonNumber(t.value)},
                        {"status", t.status},
                        {"steps", t.steps},
                        {"pruned_at", t.prunedAt > 0 ? ordered_json(t.prunedAt) : nullptr},
                        {"run", t.runId > 0 ? ordered_json(t.runId) : nullptr}});
    mo["trials"] = trials;
    methods.push_back(mo);
  }
  o["methods"] = methods;
  return o;
}

std::string searchHtml(const ReportDoc::Search& search,
                       const std::function<std::string(size_t, const Plot&)>& plot) {
  std::ostringstream h;
  h << "<h2 id=\"lr_search\">Each method's learning rate</h2>\n";
  h << "<p>Before the learning findings, the suite searched " << escapeHtml(search.key)
    << " for each method over the same " << search.trials << " trials ("
    << escapeHtml(search.sampler) << " draws from " << escapeHtml(search.distributionJson);
  if (search.pruneJson != "null") h << ", asynchronous successive halving " << escapeHtml(search.pruneJson);
  h << "), and chose each method's rate on <b>validation</b> (" << escapeHtml(search.metric)
    << ", " << escapeHtml(fmt(100 * search.validation, 0))
    << " % of the training samples held out), never on the test set. Every learning finding "
       "below trains each method at its own chosen rate; its result at the base's shared rate ("
    << escapeHtml(fmtLr(search.baseLr)) << ") stands beside it, marked <i>shared lr</i>. "
    << search.steps << " steps of search in all.</p>\n";
  h << "<table>\n<tr><th>method</th><th>chosen rate</th><th>" << escapeHtml(search.metric)
    << "</th><th>trial</th><th>trials completed / pruned / failed</th></tr>\n";
  for (const auto& m : search.methods) {
    int completed = 0, pruned = 0, failed = 0;
    for (const auto& t : m.trials)
      completed += t.status == "completed", pruned += t.status == "pruned",
          failed += t.status == "failed";
    h << "<tr><td>" << escapeHtml(m.mode) << "</td><td>"
      << (std::isfinite(m.chosenLr) ? escapeHtml(fmtLr(m.chosenLr))
                                    : "none: the base's " + escapeHtml(fmtLr(search.baseLr)))
      << "</td><td>" << escapeHtml(fmt(m.bestValue, 4)) << "</td><td>"
      << (m.chosenTrial > 0 ? std::to_string(m.chosenTrial) : std::string("–")) << "</td><td>"
      << completed << " / " << pruned << " / " << failed << "</td></tr>\n";
  }
  h << "</table>\n";
  for (size_t i = 0; i < search.plots.size(); ++i)
    h << "<figure>" << plot(i, search.plots[i]) << "</figure>\n";
  for (const auto& m : search.methods) {
    h << "<details><summary>" << escapeHtml(m.mode) << ": " << m.trials.size()
      << " trials</summary>\n<table>\n<tr><th>trial</th><th>" << escapeHtml(search.key)
      << "</th><th>" << escapeHtml(search.metric) << "</th><th>status</th><th>steps</th>"
      << "<th>best so far</th><th>run</th></tr>\n";
    for (size_t k = 0; k < m.trials.size(); ++k) {
      const auto& t = m.trials[k];
      std::string status = t.status;
      if (t.prunedAt > 0) status += " at " + std::to_string(t.prunedAt) + " steps";
      if (t.trial == m.chosenTrial) status += " (chosen)";
      h << "<tr><td>" << t.trial << "</td><td>" << escapeHtml(fmtLr(t.lr)) << "</td><td>"
        << escapeHtml(fmt(t.value, 4)) << "</td><td>" << escapeHtml(status) << "</td><td>"
        << t.steps << "</td><td>" << escapeHtml(fmt(m.bestSoFar[k], 4)) << "</td><td>";
      if (t.runId > 0)
        h << '#' << t.runId;
      else
        h << "–";
      h << "</td></tr>\n";
    }
    h << "</table>\n</details>\n";
  }
  h << "<p class=\"muted\">Study " << search.studyId << ": <code>stagewise-cli study show "
    << search.studyId << "</code>.</p>\n";
  return h.str();
}

}  // namespace stagewise::report
