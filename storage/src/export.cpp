#include "stagewise/storage/export.h"

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/store_error.h"

namespace stagewise::storage {

namespace {

using Json = nlohmann::json;

template <typename T>
Json orNull(const std::optional<T>& value) {
  if (!value) return nullptr;
  if constexpr (std::is_floating_point_v<T>) {
    if (!std::isfinite(*value)) return nullptr;
  }
  return *value;
}

Json number(double value) {
  return std::isfinite(value) ? Json(value) : Json(nullptr);
}

Json parsedOrNull(const std::string& text) {
  if (text.empty()) return nullptr;
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? Json(text) : j;
}

Json runJson(const RunRecord& r) {
  Json j = {
      {"id", r.id},
      {"name", r.name},
      {"status", toString(r.status)},
      {"created_at_ms", r.createdAtMs},
      {"finished_at_ms", orNull(r.finishedAtMs)},
      {"mode", r.mode},
      {"model_kind", r.modelKind},
      {"stage_count", r.stageCount},
      {"devices", r.devices},
      {"total_steps", r.totalSteps},
      {"batch_size", r.batchSize},
      {"blas", r.blas},
      {"torch_version", r.torchVersion},
      {"steps", orNull(r.steps)},
      {"test_accuracy", orNull(r.testAccuracy)},
      {"test_loss", orNull(r.testLoss)},
      {"samples_per_sec", orNull(r.samplesPerSec)},
      {"wall_seconds", orNull(r.wallSeconds)},
      {"cpu_utilization", orNull(r.cpuUtilization)},
      {"pipeline_efficiency", orNull(r.pipelineEfficiency)},
      {"error", r.error},
      {"failed_stage", orNull(r.failedStage)},
      {"notes", r.notes},
      {"tags", r.tags},
      {"writer",
       {{"pid", r.writer.pid},
        {"host", r.writer.host},
        {"started_at_ms", r.writer.startedAtMs},
        {"heartbeat_at_ms", r.writer.heartbeatAtMs}}},
  };
  if (!r.specJson.empty()) j["spec"] = parsedOrNull(r.specJson);
  if (!r.summaryJson.empty()) j["summary"] = parsedOrNull(r.summaryJson);
  return j;
}

RunRecord requireRun(RunReader& reader, int64_t runId) {
  auto run = reader.run(runId);
  if (!run) throw StoreError("no run " + std::to_string(runId) + " in the store");
  return *run;
}

// Shortest text that reads back as the same double.
void writeDouble(std::ostream& out, double value) {
  char buf[32];
  const auto result = std::to_chars(buf, buf + sizeof(buf), value);
  out.write(buf, result.ptr - buf);
}

void writeCsvField(std::ostream& out, const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) {
    out << text;
    return;
  }
  out << '"';
  for (char c : text) {
    if (c == '"') out << '"';
    out << c;
  }
  out << '"';
}

}  // namespace

std::string runToJson(const RunRecord& run, int indent) {
  return runJson(run).dump(indent);
}

void exportCsv(RunReader& reader, const std::vector<int64_t>& runIds, std::ostream& out) {
  std::vector<RunRecord> runs;
  for (int64_t id : runIds) runs.push_back(requireRun(reader, id));
  out << "run_id,run_name,series,stage,layer,step,time_s,value\n";
  for (const RunRecord& run : runs) {
    for (const SeriesInfo& s : reader.listSeries(run.id)) {
      std::string prefix;
      {
        std::ostringstream p;
        p << run.id << ',';
        writeCsvField(p, run.name);
        p << ',';
        writeCsvField(p, s.key.name);
        p << ',' << s.key.stage << ',' << s.key.layer << ',';
        prefix = p.str();
      }
      reader.forEachPoint(s.id, [&](const SeriesPoint& point) {
        out << prefix << point.step << ',';
        writeDouble(out, point.timeS);
        out << ',';
        if (!std::isnan(point.value)) writeDouble(out, point.value);
        out << '\n';
      });
    }
  }
}

void exportJson(RunReader& reader, const std::vector<int64_t>& runIds, std::ostream& out) {
  std::vector<RunRecord> runs;
  for (int64_t id : runIds) runs.push_back(requireRun(reader, id));
  out << "{\"format\":\"stagewise-runs\",\"version\":1,\"runs\":[";
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunRecord& run = runs[i];
    Json j = runJson(run);
    Json stages = Json::array();
    for (const StageRecord& s : reader.stages(run.id)) {
      stages.push_back({{"index", s.index},
                        {"first_layer", s.firstLayer},
                        {"last_layer", s.lastLayer},
                        {"device", s.device},
                        {"aux_head", s.auxHead},
                        {"threads", s.threads},
                        {"params", s.params},
                        {"aux_params", s.auxParams},
                        {"steps", orNull(s.steps)},
                        {"final_loss", orNull(s.finalLoss)},
                        {"final_accuracy", orNull(s.finalAccuracy)},
                        {"compute_fraction", orNull(s.computeFraction)},
                        {"grad_cosine", orNull(s.gradCosine)}});
    }
    j["stages"] = std::move(stages);
    Json layers = Json::array();
    for (const LayerRecord& l : reader.layers(run.id)) {
      layers.push_back({{"index", l.index},
                        {"name", l.name},
                        {"description", l.description},
                        {"out_shape", l.outShape},
                        {"params", l.params},
                        {"flops", l.flops},
                        {"activation_bytes", l.activationBytes}});
    }
    j["layers"] = std::move(layers);
    Json events = Json::array();
    for (const EventRecord& e : reader.events(run.id)) {
      events.push_back({{"kind", e.kind},
                        {"time_s", number(e.timeS)},
                        {"stage", e.stage},
                        {"message", e.message},
                        {"wall_ms", e.wallMs}});
    }
    j["events"] = std::move(events);
    Json checkpoints = Json::array();
    for (const CheckpointRecord& c : reader.checkpoints(run.id)) {
      checkpoints.push_back({{"path", c.path}, {"step", c.step}, {"created_at_ms", c.createdAtMs}});
    }
    j["checkpoints"] = std::move(checkpoints);

    // Everything but the points as one object; the series are streamed into it.
    std::string head = j.dump();
    head.pop_back();  // the closing brace
    out << (i ? "," : "") << head << ",\"series\":[";
    const auto series = reader.listSeries(run.id);
    for (size_t k = 0; k < series.size(); ++k) {
      const SeriesInfo& s = series[k];
      out << (k ? "," : "") << "{\"name\":" << Json(s.key.name).dump()
          << ",\"stage\":" << s.key.stage << ",\"layer\":" << s.key.layer << ",\"points\":[";
      bool first = true;
      reader.forEachPoint(s.id, [&](const SeriesPoint& p) {
        out << (first ? "[" : ",[") << p.step << ',';
        first = false;
        if (std::isfinite(p.timeS))
          writeDouble(out, p.timeS);
        else
          out << "null";
        out << ',';
        if (std::isfinite(p.value))
          writeDouble(out, p.value);
        else
          out << "null";
        out << ']';
      });
      out << "]}";
    }
    out << "]}";
  }
  out << "]}\n";
}

}  // namespace stagewise::storage
