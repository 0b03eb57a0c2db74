#include "stagewise/storage/trace.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/store_error.h"

namespace stagewise::storage {

namespace {

using nlohmann::json;

// Microseconds, to the nanosecond: Perfetto reads fractions, and a shorter number keeps
// files small.
double micros(double seconds) {
  return std::round(seconds * 1e9) / 1e3;
}

// "S1" for stage 0, as on screen. (Appended, not `"S" + ...`: GCC 12 warns falsely on that.)
std::string stageLabel(int stage) {
  std::string label = "S";
  label += std::to_string(stage + 1);
  return label;
}

json metadata(const char* name, int pid, int tid, json args) {
  json e = {{"name", name}, {"ph", "M"}, {"pid", pid}, {"args", std::move(args)}};
  if (tid >= 0) e["tid"] = tid;
  return e;
}

}  // namespace

std::string traceEventName(const SpanRecord& span, const std::string& mode) {
  const std::string stage = "PP:" + std::to_string(span.stage);
  const std::string micro = std::to_string(span.micro);
  if (span.kind == "wait" || span.kind == "blocked") return span.kind;
  if (span.kind == "forward") return stage + "F" + micro;
  if (span.kind == "backward") return span.micro < 0 ? stage + "update" : stage + "B" + micro;
  if (span.kind == "weight") return stage + "W" + micro;
  if (span.kind == "recompute") return stage + "R" + micro;
  if (span.kind == "aux") return stage + "aux";
  if (span.kind == "step") return stage + (mode == "backprop" ? "step" : "local");
  return stage + span.kind;  // a kind of a newer build
}

int64_t writeTrace(RunReader& reader, int64_t runId, std::ostream& out) {
  const auto run = reader.run(runId);
  if (!run) throw StoreError("there is no run " + std::to_string(runId) + " (see `runs list`)");
  const std::vector<SpanRecord> spans = reader.spans(runId);
  if (spans.empty())
    throw StoreError("run " + std::to_string(runId) +
                     " has no spans stored (it was recorded before Stagewise kept spans, or "
                     "stopped before its first step); train it again to trace it");

  std::set<int> stages;
  for (const StageRecord& s : reader.stages(runId)) stages.insert(s.index);
  for (const SpanRecord& s : spans) stages.insert(s.stage);
  std::map<int, int> rankOf;  // by stage
  std::set<int> ranks;
  for (int k : stages) {
    const auto rank = reader.loadSeries(runId, {"rank", k, -1});
    rankOf[k] = rank.empty() ? 0 : static_cast<int>(rank.back().value);
    ranks.insert(rankOf[k]);
  }

  bool first = true;
  auto emit = [&](const json& event) {
    out << (first ? "\n" : ",\n") << event.dump();
    first = false;
  };
  out << "{\"displayTimeUnit\":\"ms\",\"otherData\":"
      << json{{"run_id", runId}, {"run_name", run->name}, {"mode", run->mode}}.dump()
      << ",\"traceEvents\":[";
  for (int r : ranks) {
    emit(metadata("process_name", r, -1, {{"name", "rank " + std::to_string(r)}}));
    emit(metadata("process_sort_index", r, -1, {{"sort_index", r}}));
  }
  for (int k : stages) {
    emit(metadata("thread_name", rankOf[k], k, {{"name", stageLabel(k)}}));
    emit(metadata("thread_sort_index", rankOf[k], k, {{"sort_index", k}}));
  }
  for (const SpanRecord& s : spans) {
    const int pid = rankOf.count(s.stage) ? rankOf[s.stage] : 0;
    emit({{"name", traceEventName(s, run->mode)},
          {"cat", s.kind},
          {"ph", "X"},
          {"ts", micros(s.startS)},
          {"dur", std::max(0.0, std::round((micros(s.endS) - micros(s.startS)) * 1e3) / 1e3)},
          {"pid", pid},
          {"tid", s.stage},
          {"args", {{"stage", s.stage}, {"step", s.step}, {"micro", s.micro}}}});
  }
  for (int k : stages) {
    for (const char* name : kTraceCounterSeries) {
      const auto points = reader.loadSeries(runId, {name, k, -1}, XAxis::Time);
      for (const SeriesPoint& p : points) {
        if (!std::isfinite(p.value)) continue;
        emit({{"name", stageLabel(k) + " " + name},
              {"ph", "C"},
              {"ts", micros(p.timeS)},
              {"pid", rankOf[k]},
              {"args", {{"bytes", p.value}}}});
      }
    }
  }
  out << "\n]}\n";
  return static_cast<int64_t>(spans.size());
}

int64_t writeTraceFile(RunReader& reader, int64_t runId, const std::string& path) {
  // Built in memory first, so an unknown run or one without spans leaves no file behind.
  std::ostringstream text;
  const int64_t count = writeTrace(reader, runId, text);
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file)
    throw StoreError("cannot write '" + path + "': " + std::strerror(errno) +
                     " (choose a writable folder)");
  file << text.view();
  file.flush();
  if (!file) throw StoreError("writing '" + path + "' failed (disk full?)");
  return count;
}

}  // namespace stagewise::storage
