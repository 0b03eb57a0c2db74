// report.html: one page, well-formed (XHTML syntax, so an XML parser checks it), with every plot
// inline and no reference outside itself: no scripts, fonts, style sheets or images to fetch.

#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "format.h"
#include "search_stage.h"
#include "stagewise/report/report.h"

namespace stagewise::report {

std::string escapeHtml(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

const char* kStyle = R"(
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 960px; color: #222;
       line-height: 1.45; padding: 0 1em; }
h1 { margin-bottom: 0.2em; }
h2 { margin-top: 2em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; }
table { border-collapse: collapse; width: 100%; margin: 1em 0; }
th, td { border: 1px solid #ddd; padding: 0.35em 0.5em; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
.verdict { font-weight: bold; white-space: nowrap; padding: 0.1em 0.4em; border-radius: 3px; }
.reproduced { background: #d8f0dd; color: #11561f; }
.not_reproduced { background: #f7d7d7; color: #7a1010; }
.inconclusive { background: #fbefc8; color: #6b4e00; }
.holds_by_construction { background: #e4e4ee; color: #333366; }
.extra { color: #666; font-style: italic; }
.quick { background: #fbefc8; padding: 0.5em 0.8em; border-radius: 4px; }
.shared { border-left: 3px solid #bbb; padding-left: 0.6em; color: #444; }
.sharedlr { font-size: 0.8em; background: #eee; color: #444; padding: 0.05em 0.35em; border-radius: 3px; }
.muted { color: #666; font-size: 0.92em; }
pre { background: #f7f7f7; padding: 0.6em; overflow-x: auto; font-size: 0.85em; }
figure { margin: 1em 0; }
table.numbers td { font-variant-numeric: tabular-nums; }
caption { text-align: left; font-weight: bold; padding: 0.3em 0; }
)";

std::string verdictBadge(const Finding& f) {
  return "<span class=\"verdict " + toString(f.verdict) + "\">" + escapeHtml(verdictWords(f)) +
         "</span>";
}
std::string verdictBadge(const Finding::AtRates& a) {
  return "<span class=\"verdict " + toString(a.verdict) + "\">" + escapeHtml(verdictWords(a)) +
         "</span>";
}

/// Which of the paper's findings it tests, in words.
std::string testsWords(const Finding& f) {
  if (f.paperFinding <= 0) return "extra check, not a claim of the paper";
  return "the paper's finding " + std::to_string(f.paperFinding);
}

std::string runList(const std::vector<int64_t>& runs) {
  std::string out;
  for (size_t i = 0; i < runs.size(); ++i)
    out += (i ? ", " : "") + std::string("#") + std::to_string(runs[i]);
  return out.empty() ? "none" : out;
}

/// "local 0.0003, backprop 0.0001" from a finding's settings JSON.
std::string ratesText(const std::string& settingsJson) {
  const nlohmann::ordered_json s = nlohmann::ordered_json::parse(settingsJson, nullptr, false);
  std::string out;
  if (!s.is_object()) return out;
  for (const auto& [mode, v] : s.items()) {
    char lr[32] = "n/a";
    if (v.contains("train.lr") && v["train.lr"].is_number())
      std::snprintf(lr, sizeof lr, "%.3g", v["train.lr"].get<double>());
    out += (out.empty() ? "" : ", ") + mode + " " + lr;
    if (v.contains("chosen") && v["chosen"] == false) out += " (none chosen: the base's)";
  }
  return out;
}

}  // namespace

std::string reportHtml(const ReportDoc& doc, const PlotMarkup& markup) {
  std::ostringstream h;
  h << "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n"
    << "<meta charset=\"utf-8\"/>\n<title>Stagewise replication report</title>\n<style>" << kStyle
    << "</style>\n</head>\n<body>\n";
  h << "<h1>Replication report</h1>\n<p class=\"muted\">Laskin, Metz et al., <i>Parallel "
       "Training of Deep Networks with Local Updates</i> (2020), checked against runs made on "
       "this machine by Stagewise. "
    << escapeHtml(doc.createdAt) << ", " << escapeHtml(fmt(doc.seconds / 60, 1))
    << " minutes.</p>\n";
  if (doc.quick)
    h << "<p class=\"quick\"><b>Quick report</b>: fewer steps and 2 seeds per group. Its verdicts "
         "are indicative; run the full report (without --quick) for the findings' real test.</p>\n";
  // issue 32 §5: the learning-rate search, then the findings at each method's chosen rate.
  auto drawPlot = [&](size_t finding, size_t pi, const Plot& p) {
    if (markup) return markup(finding, pi, p);
    try {
      return renderSvg(p);
    } catch (const std::exception& e) {
      return "<p class=\"muted\">(plot not drawn: " + escapeHtml(e.what()) + ")</p>";
    }
  };
  if (doc.search)
    h << searchHtml(*doc.search,
                    [&](size_t pi, const Plot& p) { return drawPlot(doc.findings.size(), pi, p); });
  h << "<h2>Findings</h2>\n<table>\n<tr><th>finding</th><th>tests</th><th>the paper</th>"
       "<th>ours</th><th>verdict</th><th>shared lr</th></tr>\n";
  for (const auto& f : doc.findings) {
    h << "<tr><td><a href=\"#" << escapeHtml(f.id) << "\">" << escapeHtml(f.id) << "</a></td><td"
      << (f.paperFinding > 0 ? "" : " class=\"extra\"") << ">" << escapeHtml(testsWords(f))
      << "</td><td>" << escapeHtml(f.claim);
    if (f.paperValue) h << " <b>(" << escapeHtml(fmt(*f.paperValue, 2)) << ")</b>";
    h << "</td><td>" << escapeHtml(f.oursText) << "</td><td>" << verdictBadge(f) << "</td><td>"
      << (f.sharedLr ? verdictBadge(*f.sharedLr) : std::string("–")) << "</td></tr>\n";
  }
  h << "</table>\n";
  h << "<p><b>Summary.</b> " << escapeHtml(tallyText(tally(doc.findings))) << ".</p>\n";
  h << "<details><summary>The paper's six findings and which finding here tests each"
       "</summary><ol>\n";
  for (size_t n = 0; n < kPaperFindings.size(); ++n) {
    std::string by;
    for (const auto& f : doc.findings)
      if (f.paperFinding == static_cast<int>(n + 1)) by += (by.empty() ? "" : ", ") + f.id;
    h << "<li>" << escapeHtml(kPaperFindings[n]) << " <span class=\"muted\">("
      << escapeHtml(by.empty() ? "not tested by this report" : "tested by " + by)
      << ")</span></li>\n";
  }
  h << "</ol></details>\n";
  h << "<p class=\"muted\">Every rule was fixed before the data was seen (docs/replication.md); a "
       "learning finding whose methods were still improving at the end is inconclusive: not "
       "converged. "
       "The paper's throughput and communication numbers come from Graphcore IPUs, one stage per "
       "processor; this machine has "
    << doc.machine.cores << " core(s) that all stages share.</p>\n";

  for (size_t fi = 0; fi < doc.findings.size(); ++fi) {
    const Finding& f = doc.findings[fi];
    h << "<h2 id=\"" << escapeHtml(f.id) << "\">" << escapeHtml(f.title) << " " << verdictBadge(f)
      << "</h2>\n";
    if (f.paperFinding > 0)
      h << "<p class=\"muted\">Tests the paper's finding " << f.paperFinding << ": "
        << escapeHtml(kPaperFindings[size_t(f.paperFinding - 1)]) << ".</p>\n";
    else
      h << "<p class=\"extra\">An extra check, not a claim of the paper; not counted in the "
           "summary.</p>\n";
    h << "<p><b>" << (f.paperFinding > 0 ? "The paper." : "The check.") << "</b> "
      << escapeHtml(f.claim) << "</p>\n";
    if (!f.paperSource.empty())
      h << "<p class=\"muted\">Source: " << escapeHtml(f.paperSource) << "</p>\n";
    h << "<p><b>Ours.</b> " << escapeHtml(f.oursText) << "</p>\n";
    if (!f.settings.empty()) h << "<p><b>Settings.</b> " << escapeHtml(f.settings) << "</p>\n";
    h << "<p><b>Rule.</b> " << escapeHtml(f.rule) << "</p>\n";
    h << "<p><b>Verdict.</b> " << verdictBadge(f) << " " << escapeHtml(f.why) << ".";
    if (f.verdict == Verdict::HoldsByConstruction)
      h << " <i>Holds by construction: not counted as evidence.</i>";
    if (!f.carriedBy.empty())
      h << " <span class=\"muted\">Carried by: " << escapeHtml(f.carriedBy) << ".</span>";
    h << "</p>\n";
    if (f.tuned)
      h << "<p class=\"muted\">Each method at its own chosen rate: "
        << escapeHtml(ratesText(f.tuned->settingsJson)) << ".</p>\n";
    if (f.sharedLr)
      h << "<p class=\"shared\"><span class=\"sharedlr\">shared lr</span> At the base's rate for "
           "every method ("
        << escapeHtml(ratesText(f.sharedLr->settingsJson)) << "): " << verdictBadge(*f.sharedLr)
        << " " << escapeHtml(f.sharedLr->oursText) << " " << escapeHtml(f.sharedLr->why)
        << ". Runs: " << escapeHtml(runList(f.sharedLr->runs)) << ".</p>\n";
    for (size_t pi = 0; pi < f.plots.size(); ++pi)
      h << "<figure>" << drawPlot(fi, pi, f.plots[pi]) << "</figure>\n";
    // issue 37: the throughput's schedules, memory's recomputation
    for (const auto& t : f.tables) {
      h << "<table class=\"numbers\">\n<caption>" << escapeHtml(t.title) << "</caption>\n<tr>";
      for (const auto& c : t.columns) h << "<th>" << escapeHtml(c) << "</th>";
      h << "</tr>\n";
      for (const auto& row : t.rows) {
        h << "<tr>";
        for (const auto& c : row) h << "<td>" << escapeHtml(c) << "</td>";
        h << "</tr>\n";
      }
      h << "</table>\n";
    }
    const nlohmann::ordered_json ours =
        nlohmann::ordered_json::parse(f.oursJson.empty() ? "{}" : f.oursJson, nullptr, false);
    h << "<details><summary>Numbers (JSON)</summary><pre>"
      << escapeHtml(ours.is_discarded() ? f.oursJson : ours.dump(2)) << "</pre></details>\n";
    h << "<p class=\"muted\">Runs: " << escapeHtml(runList(f.runs));
    if (auto it = doc.studyIds.find(f.id); it != doc.studyIds.end())
      h << " (study " << it->second << ": <code>stagewise-cli study show " << it->second
        << "</code>)";
    h << "</p>\n";
  }

  if (!doc.adaptations.empty()) {
    h << "<h2>What the suite adapted</h2>\n<ul>\n";
    for (const auto& a : doc.adaptations) h << "<li>" << escapeHtml(a) << "</li>\n";
    h << "</ul>\n";
  }
  if (!doc.failures.empty()) {
    h << "<h2>Runs that failed</h2>\n<ul>\n";
    for (const auto& a : doc.failures) h << "<li>" << escapeHtml(a) << "</li>\n";
    h << "</ul>\n";
  }
  h << "<h2>The machine</h2>\n<table>\n"
    << "<tr><th>cores</th><td>" << doc.machine.cores << "</td></tr>\n"
    << "<tr><th>processor</th><td>" << escapeHtml(doc.machine.cpu) << "</td></tr>\n"
    << "<tr><th>host</th><td>" << escapeHtml(doc.machine.host) << "</td></tr>\n"
    << "<tr><th>BLAS</th><td>" << escapeHtml(doc.machine.blas) << "</td></tr>\n"
    << "<tr><th>LibTorch</th><td>" << escapeHtml(doc.machine.torchVersion) << "</td></tr>\n"
    << "<tr><th>devices</th><td>";
  for (size_t i = 0; i < doc.machine.devices.size(); ++i)
    h << (i ? ", " : "") << escapeHtml(doc.machine.devices[i]);
  h << "</td></tr>\n<tr><th>run store</th><td>" << escapeHtml(doc.storePath) << "</td></tr>\n"
    << "</table>\n";
  h << "<h2>Every spec</h2>\n<p class=\"muted\">The base experiment, then each distinct spec the "
       "suite trained with the runs made from it.</p>\n";
  h << "<details><summary>base</summary><pre>" << escapeHtml(doc.baseSpecJson)
    << "</pre></details>\n";
  for (const auto& s : doc.specs)
    h << "<details><summary>" << escapeHtml(s.label) << " (runs " << escapeHtml(runList(s.runs))
      << ")</summary><pre>" << escapeHtml(s.specJson) << "</pre></details>\n";
  h << "</body>\n</html>\n";
  return h.str();
}

}  // namespace stagewise::report
