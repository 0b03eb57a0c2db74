#include "runs_output.h"

#include <cmath>
#include <ctime>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "stagewise/engine/run.h"
#include "stagewise/storage/export.h"

namespace stagewise::cli::detail {

using namespace stagewise::storage;

namespace {

std::string formatTime(TimestampMs ms) {
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm local{};
  localtime_r(&seconds, &local);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M", &local);
  return buf;
}

std::string fixed(const std::optional<double>& v, int decimals) {
  if (!v || !std::isfinite(*v)) return "-";
  std::ostringstream s;
  s << std::fixed << std::setprecision(decimals) << *v;
  return s.str();
}

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : sep) + item;
  return out;
}

// Names can be long; a table cell keeps the start and marks the cut.
std::string clip(const std::string& text, size_t width) {
  if (text.size() <= width) return text;
  return text.substr(0, width - 3) + "...";
}

void printTable(const std::vector<std::vector<std::string>>& rows,
                const std::vector<bool>& rightAligned, std::ostream& out) {
  std::vector<size_t> widths(rows.front().size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string pad(widths[c] - row[c].size(), ' ');
      const bool last = c + 1 == row.size();
      line += rightAligned[c] ? pad + row[c] : row[c] + (last ? "" : pad);
      if (!last) line += "  ";
    }
    out << line << '\n';
  }
}

// The spec's or summary's JSON, or null where it is missing or unreadable (an old run).
nlohmann::json parsedOrNull(const std::string& text) {
  if (text.empty()) return nullptr;
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

// A pipeline run's schedule as the spec ran it: "zb-h1, 4 micro-batches, chunks 1, recompute
// off" (a value the spec left out is its default).
std::string pipelineText(const nlohmann::json& spec) {
  const nlohmann::json p =
      spec.is_object() && spec.contains("pipeline") ? spec["pipeline"] : nlohmann::json::object();
  auto value = [&](const char* key, const nlohmann::json& fallback) {
    return p.is_object() && p.contains(key) ? p[key] : fallback;
  };
  const nlohmann::json micro = value("micro_batches", 0), chunks = value("chunks", 1),
                       recompute = value("recompute", false), schedule = value("schedule", "gpipe");
  std::string text = schedule.is_string() ? schedule.get<std::string>() : schedule.dump();
  text += ", micro-batches " +
          (micro.is_number_integer() && micro.get<int64_t>() <= 0 ? "one per stage" : micro.dump());
  text += ", chunks " + chunks.dump();
  text +=
      ", recompute " + (recompute.is_boolean() ? std::string(recompute.get<bool>() ? "on" : "off")
                                               : recompute.dump());
  return text;
}

// The summary's per-stage figure `key` (a run mean), "-" where it has none.
std::string stageFigure(const nlohmann::json& summary, int stage, const char* key) {
  if (!summary.is_object() || !summary.contains("stages") || !summary["stages"].is_array())
    return "-";
  for (const auto& s : summary["stages"])
    if (s.is_object() && s.value("index", -1) == stage && s.contains(key) && s[key].is_number())
      return fixed(s[key].get<double>(), 3);
  return "-";
}

}  // namespace

void printRunTable(const std::vector<RunRecord>& runs, std::ostream& out,
                   const std::map<int64_t, int64_t>& prunedAt) {
  std::vector<std::vector<std::string>> rows = {{"ID", "NAME", "STATUS", "MODE", "STAGES",
                                                 "TEST ACC", "SAMPLES/S", "WALL S", "CREATED",
                                                 "TAGS"}};
  for (const RunRecord& r : runs) {
    std::string status = toString(r.status);
    if (auto at = prunedAt.find(r.id); at != prunedAt.end())
      status += " at " + std::to_string(at->second);
    rows.push_back({std::to_string(r.id), clip(r.name, 40), status, r.mode,
                    std::to_string(r.stageCount), fixed(r.testAccuracy, 4),
                    fixed(r.samplesPerSec, 1), fixed(r.wallSeconds, 1), formatTime(r.createdAtMs),
                    join(r.tags, ",")});
  }
  printTable(rows, {true, false, false, false, true, true, true, true, false, false}, out);
}

void printRunJson(const std::vector<RunRecord>& runs, std::ostream& out) {
  out << "[";
  for (size_t i = 0; i < runs.size(); ++i) out << (i ? ",\n " : "\n ") << runToJson(runs[i]);
  out << (runs.empty() ? "]\n" : "\n]\n");
}

void printRunDetails(RunReader& reader, const RunRecord& r, bool json, std::ostream& out) {
  const auto stages = reader.stages(r.id);
  const auto series = reader.listSeries(r.id);
  const auto events = reader.events(r.id);
  const auto checkpoints = reader.checkpoints(r.id);
  std::vector<engine::RunChange> changes;
  for (const auto& e : events)
    if (e.kind == "info")
      if (auto c = engine::changeFromEvent(e.message)) changes.push_back(*c);
  if (json) {
    nlohmann::json j = nlohmann::json::parse(runToJson(r));
    for (const StageRecord& s : stages) {
      j["stages"].push_back(
          {{"index", s.index},
           {"first_layer", s.firstLayer},
           {"last_layer", s.lastLayer},
           {"device", s.device},
           {"aux_head", s.auxHead},
           {"params", s.params},
           {"aux_params", s.auxParams},
           {"final_loss", s.finalLoss ? nlohmann::json(*s.finalLoss) : nullptr},
           {"final_accuracy", s.finalAccuracy ? nlohmann::json(*s.finalAccuracy) : nullptr}});
    }
    for (const SeriesInfo& s : series) {
      j["series"].push_back({{"name", s.key.name},
                             {"stage", s.key.stage},
                             {"layer", s.key.layer},
                             {"points", s.pointCount}});
    }
    for (const CheckpointRecord& c : checkpoints) {
      j["checkpoints"].push_back({{"path", c.path}, {"step", c.step}});
    }
    // The changes made while it trained (a live re-partition, a stage's settings): with a
    // re-partition, `stages` above are the end's partition; the start's is in the spec's cuts.
    j["changes"] = nlohmann::json::array();
    for (const auto& c : changes)
      j["changes"].push_back(
          {{"step", c.step}, {"key", c.key}, {"value", c.value}, {"pause_s", c.pauseS}});
    j["event_count"] = events.size();
    out << j.dump(2) << '\n';
    return;
  }
  out << "Run " << r.id << ": " << r.name << '\n';
  std::vector<std::vector<std::string>> info = {
      {"status", toString(r.status) + (r.error.empty() ? "" : " (" + r.error + ")")},
      {"mode", r.mode},
  };
  const nlohmann::json summary = parsedOrNull(r.summaryJson);
  if (r.mode == "pipeline") info.push_back({"schedule", pipelineText(parsedOrNull(r.specJson))});
  const std::vector<std::vector<std::string>> rest = {
      {"model",
       r.modelKind + ", " + std::to_string(r.stageCount) + " stages on " + join(r.devices, ", ")},
      {"created", formatTime(r.createdAtMs)},
      {"finished", r.finishedAtMs ? formatTime(*r.finishedAtMs) : "-"},
      {"steps", r.steps ? std::to_string(*r.steps) : "-"},
      {"test accuracy", fixed(r.testAccuracy, 4)},
      {"test loss", fixed(r.testLoss, 4)},
      {"samples/s", fixed(r.samplesPerSec, 1)},
      {"wall seconds", fixed(r.wallSeconds, 1)},
      {"pipeline eff.", fixed(r.pipelineEfficiency, 3)},
      {"tags", r.tags.empty() ? "-" : join(r.tags, ", ")},
      {"notes", r.notes.empty() ? "-" : r.notes},
      {"writer", "pid " + std::to_string(r.writer.pid) + " on " + r.writer.host},
  };
  info.insert(info.end(), rest.begin(), rest.end());
  for (auto& row : info) row[0] += ":";
  printTable(info, {false, false}, out);

  bool moved = false;
  for (const auto& c : changes) moved = moved || c.key == "partition.cuts";
  out << (moved ? "\nStages (at the end; the run was re-partitioned, see Changes)\n"
                : "\nStages\n");
  // The bubble per stage, measured and planned (run means, docs/metrics.md), where the summary
  // has it: local and pipeline runs.
  std::vector<std::vector<std::string>> rows = {{"STAGE", "LAYERS", "DEVICE", "AUX HEAD", "PARAMS",
                                                 "AUX PARAMS", "STEPS", "FINAL LOSS", "FINAL ACC",
                                                 "BUBBLE MEASURED", "BUBBLE PLANNED"}};
  // Numbered from 1, as the workbench shows them (S1, layers 1-3); --json keeps the store's
  // 0-based `index`, `first_layer` and `last_layer` (docs/stagewise-cli.1).
  for (const StageRecord& s : stages) {
    rows.push_back({"S" + std::to_string(s.index + 1),
                    std::to_string(s.firstLayer + 1) + "-" + std::to_string(s.lastLayer + 1),
                    s.device, s.auxHead, std::to_string(s.params), std::to_string(s.auxParams),
                    s.steps ? std::to_string(*s.steps) : "-", fixed(s.finalLoss, 4),
                    fixed(s.finalAccuracy, 4), stageFigure(summary, s.index, "bubble_measured"),
                    stageFigure(summary, s.index, "bubble_planned")});
  }
  printTable(rows, {true, false, false, false, true, true, true, true, true, true, true}, out);
  if (!changes.empty()) {
    out << "\nChanges (" << changes.size() << ")\n";
    for (const auto& c : changes) {
      out << "  step " << c.step << ": " << c.key << "=" << c.value;
      if (c.key == "partition.cuts") out << " (training paused " << fixed(c.pauseS, 3) << " s)";
      out << '\n';
    }
  }

  out << "\nSeries (" << series.size() << ")\n";
  rows = {{"NAME", "STAGE", "LAYER", "POINTS", "STEPS"}};
  for (const SeriesInfo& s : series) {
    // 1-based like the stages above; "-" for a run-wide series (stage or layer -1).
    const auto fromOne = [](int i) { return i >= 0 ? std::to_string(i + 1) : std::string("-"); };
    rows.push_back({s.key.name, fromOne(s.key.stage), fromOne(s.key.layer),
                    std::to_string(s.pointCount),
                    std::to_string(s.firstStep) + "-" + std::to_string(s.lastStep)});
  }
  printTable(rows, {false, true, true, true, true}, out);
  out << "\nEvents: " << events.size() << ", checkpoints: " << checkpoints.size() << '\n';
  for (const CheckpointRecord& c : checkpoints)
    out << "  step " << c.step << ": " << c.path << '\n';
}

}  // namespace stagewise::cli::detail
