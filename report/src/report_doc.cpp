#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "format.h"
#include "search_stage.h"
#include "stagewise/report/report.h"

namespace stagewise::report {

using nlohmann::ordered_json;

MachineInfo describeMachine(int cores, const std::string& blas, const std::string& torchVersion,
                            const std::vector<std::string>& devices) {
  MachineInfo m;
  m.cores = cores;
  m.blas = blas;
  m.torchVersion = torchVersion;
  m.devices = devices;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) m.cpu = line.substr(line.find_first_not_of(' ', colon + 1));
      break;
    }
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) m.host = host;
  return m;
}

Tally tally(const std::vector<Finding>& findings) {
  Tally t;
  for (const auto& f : findings) {
    if (f.paperFinding <= 0) {
      ++t.extra;
      continue;
    }
    ++t.paper;
    switch (f.verdict) {
      case Verdict::Reproduced:
        ++t.reproduced;
        break;
      case Verdict::NotReproduced:
        ++t.notReproduced;
        break;
      case Verdict::Inconclusive:
        ++t.inconclusive;
        t.notConverged += f.reason == "not_converged";
        break;
      case Verdict::HoldsByConstruction:
        ++t.byConstruction;
        break;
    }
  }
  return t;
}

std::string tallyText(const Tally& t) {
  std::string s = std::to_string(t.reproduced) + " of " + std::to_string(t.paper) +
                  " findings that test the paper reproduced, " + std::to_string(t.notReproduced) +
                  " not reproduced, " + std::to_string(t.inconclusive) + " inconclusive";
  if (t.notConverged > 0) s += " (" + std::to_string(t.notConverged) + " not converged)";
  s += "; " + std::to_string(t.byConstruction) + " holds by construction (not evidence)";
  s += "; " + std::to_string(t.extra) + " extra check" + (t.extra == 1 ? "" : "s") +
       " (not a claim of the paper, not counted)";
  return s;
}

std::string reportJson(const ReportDoc& doc) {
  ordered_json j;
  j["version"] = ReportDoc::kVersion;
  j["quick"] = doc.quick;
  j["created_at"] = doc.createdAt;
  j["seconds"] = jsonNumber(doc.seconds);
  j["machine"] = {{"cores", doc.machine.cores},
                  {"cpu", doc.machine.cpu},
                  {"host", doc.machine.host},
                  {"blas", doc.machine.blas},
                  {"libtorch", doc.machine.torchVersion},
                  {"devices", doc.machine.devices}};
  const ordered_json base = ordered_json::parse(doc.baseSpecJson, nullptr, false);
  j["base"] = base.is_discarded() ? ordered_json(doc.baseSpecJson) : base;
  j["adaptations"] = doc.adaptations;
  ordered_json paper = ordered_json::array();
  for (size_t n = 0; n < kPaperFindings.size(); ++n) {
    ordered_json by = ordered_json::array();
    for (const auto& f : doc.findings)
      if (f.paperFinding == static_cast<int>(n + 1)) by.push_back(f.id);
    paper.push_back({{"n", n + 1}, {"claim", kPaperFindings[n]}, {"tested_by", by}});
  }
  j["paper_findings"] = paper;
  const Tally t = tally(doc.findings);
  j["summary"] = {{"paper", t.paper},
                  {"reproduced", t.reproduced},
                  {"not_reproduced", t.notReproduced},
                  {"inconclusive", t.inconclusive},
                  {"not_converged", t.notConverged},
                  {"holds_by_construction", t.byConstruction},
                  {"extra", t.extra},
                  {"text", tallyText(t)}};
  ordered_json findings = ordered_json::array();
  for (const auto& f : doc.findings) {
    ordered_json o;
    o["id"] = f.id;
    o["title"] = f.title;
    o["kind"] = kindOf(f);
    o["paper_finding"] = f.paperFinding > 0 ? ordered_json(f.paperFinding) : ordered_json(nullptr);
    o["claim"] = f.claim;
    o["paper_value"] = f.paperValue ? ordered_json(*f.paperValue) : ordered_json(nullptr);
    o["paper_source"] = f.paperSource;
    const ordered_json ours =
        ordered_json::parse(f.oursJson.empty() ? "{}" : f.oursJson, nullptr, false);
    o["ours"] = ours.is_discarded() ? ordered_json::object() : ours;
    o["ours_text"] = f.oursText;
    o["settings"] = f.settings.empty() ? ordered_json(nullptr) : ordered_json(f.settings);
    o["rule"] = f.rule;
    o["verdict"] = toString(f.verdict);
    o["reason"] = f.reason.empty() ? ordered_json(nullptr) : ordered_json(f.reason);
    o["why"] = f.why;
    o["carried_by"] = f.carriedBy.empty() ? ordered_json(nullptr) : ordered_json(f.carriedBy);
    const ordered_json conv =
        ordered_json::parse(f.convergenceJson.empty() ? "null" : f.convergenceJson, nullptr, false);
    o["convergence"] = conv.is_discarded() ? ordered_json(nullptr) : conv;
    o["decide_steps"] = f.decideSteps > 0 ? ordered_json(f.decideSteps) : ordered_json(nullptr);
    o["runs"] = f.runs;
    // issue 37: the finding's tables, cells as shown
    ordered_json tables = ordered_json::array();
    for (const auto& t : f.tables)
      tables.push_back({{"title", t.title}, {"columns", t.columns}, {"rows", t.rows}});
    o["tables"] = tables;
    auto it = doc.studyIds.find(f.id);
    o["study_id"] = it == doc.studyIds.end() ? ordered_json(nullptr) : ordered_json(it->second);
    // issue 32 §5
    auto atRates = [](const Finding::AtRates& a) {
      const ordered_json settings = ordered_json::parse(a.settingsJson, nullptr, false);
      const ordered_json ours =
          ordered_json::parse(a.oursJson.empty() ? "{}" : a.oursJson, nullptr, false);
      return ordered_json{
          {"settings", settings.is_discarded() ? ordered_json::object() : settings},
          {"verdict", toString(a.verdict)},
          {"reason", a.reason.empty() ? ordered_json(nullptr) : ordered_json(a.reason)},
          {"ours", ours.is_discarded() ? ordered_json::object() : ours},
          {"ours_text", a.oursText},
          {"why", a.why},
          {"runs", a.runs},
          {"study_id", a.studyId > 0 ? ordered_json(a.studyId) : ordered_json(nullptr)}};
    };
    if (f.tuned) o["tuned"] = atRates(*f.tuned);
    if (f.sharedLr) o["shared_lr"] = atRates(*f.sharedLr);
    findings.push_back(o);
  }
  j["findings"] = findings;
  ordered_json specs = ordered_json::array();
  for (const auto& s : doc.specs) {
    const ordered_json spec = ordered_json::parse(s.specJson, nullptr, false);
    specs.push_back({{"label", s.label},
                     {"runs", s.runs},
                     {"spec", spec.is_discarded() ? ordered_json(s.specJson) : spec}});
  }
  j["specs"] = specs;
  j["store"] = doc.storePath;
  j["failures"] = doc.failures;
  if (doc.search) j["search"] = searchJson(*doc.search);  // issue 32 §5
  return j.dump(2);
}

std::string markdownTable(const Table& table) {
  auto cell = [](std::string text) {
    std::string out;
    for (char c : text) {
      if (c == '|') out += '\\';
      out += c == '\n' ? ' ' : c;
    }
    return out;
  };
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out = "|";
    for (const auto& c : cells) {
      out += ' ';
      out += cell(c);
      out += " |";
    }
    return out + "\n";
  };
  std::string out = "**";
  out += cell(table.title);
  out += "**\n\n";
  out += line(table.columns);
  out += '|';
  for (size_t i = 0; i < table.columns.size(); ++i) out += " --- |";
  out += "\n";
  for (const auto& row : table.rows) out += line(row);
  return out;
}

std::string verdictTable(const ReportDoc& doc) {
  std::ostringstream out;
  char line[512];
  std::snprintf(line, sizeof line, "%-22s %-8s %-28s %-28s %s\n", "finding", "tests", "verdict",
                "shared lr", "ours");
  out << line;
  for (const auto& f : doc.findings) {
    const std::string tests =
        f.paperFinding > 0 ? "paper " + std::to_string(f.paperFinding) : std::string("extra");
    // issue 32 §5: the verdict at each method's chosen rate, and at the base's shared rate.
    const std::string shared = f.sharedLr ? verdictWords(*f.sharedLr) : "-";
    std::snprintf(line, sizeof line, "%-22s %-8s %-28s %-28s ", f.id.c_str(), tests.c_str(),
                  verdictWords(f).c_str(), shared.c_str());
    out << line << f.oursText << "\n";
  }
  out << tallyText(tally(doc.findings)) << "\n";
  if (doc.search)
    for (const auto& m : doc.search->methods) {
      char lr[32] = "none (the base's)";
      if (std::isfinite(m.chosenLr)) std::snprintf(lr, sizeof lr, "%.3g", m.chosenLr);
      std::snprintf(line, sizeof line, "lr search: %-9s train.lr %s (%s %s, trial %d of %zu)\n",
                    m.mode.c_str(), lr, doc.search->metric.c_str(), fmt(m.bestValue, 4).c_str(),
                    m.chosenTrial, m.trials.size());
      out << line;
    }
  // issue 37: the findings' tables (the throughput's schedules, memory's recomputation)
  for (const auto& f : doc.findings)
    for (const auto& t : f.tables) out << "\n" << f.id << ": " << markdownTable(t);
  return out.str();
}

}  // namespace stagewise::report
