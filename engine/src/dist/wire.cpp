#include "dist/wire.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace stagewise::engine::dist {

using nlohmann::json;

namespace {
json num(double v) {
  return std::isfinite(v) ? json(v) : json(nullptr);
}
double val(const json& j) {
  return j.is_null() ? kNoValue : j.get<double>();
}

json stageJson(const StageSummary& s) {
  return {s.index,
          s.device,
          s.firstLayer,
          s.lastLayer,
          s.threads,
          s.steps,
          num(s.finalLoss),
          num(s.finalAccuracy),
          s.computeFraction,
          s.waitFraction,
          s.blockedFraction,
          s.bytesSent,
          s.backpropBytes,
          num(s.gradCosine),
          s.peakActivationBytes,
          num(s.paramChecksum),
          s.meanStepSeconds,
          s.gradBytesSent,
          s.peakMemoryBytes,
          num(s.bubbleMeasured),
          num(s.bubblePlanned)};
}

StageSummary stageFrom(const json& j) {
  StageSummary s;
  s.index = j.at(0).get<int>();
  s.device = j.at(1).get<std::string>();
  s.firstLayer = j.at(2).get<int>();
  s.lastLayer = j.at(3).get<int>();
  s.threads = j.at(4).get<int>();
  s.steps = j.at(5).get<int64_t>();
  s.finalLoss = val(j.at(6));
  s.finalAccuracy = val(j.at(7));
  s.computeFraction = j.at(8).get<double>();
  s.waitFraction = j.at(9).get<double>();
  s.blockedFraction = j.at(10).get<double>();
  s.bytesSent = j.at(11).get<int64_t>();
  s.backpropBytes = j.at(12).get<int64_t>();
  s.gradCosine = val(j.at(13));
  s.peakActivationBytes = j.at(14).get<int64_t>();
  s.paramChecksum = val(j.at(15));
  s.meanStepSeconds = j.at(16).get<double>();
  s.gradBytesSent = j.at(17).get<int64_t>();
  s.peakMemoryBytes = j.at(18).get<int64_t>();
  if (j.size() > 20) {  // a rank of a build before the bubble sends 19 fields
    s.bubbleMeasured = val(j.at(19));
    s.bubblePlanned = val(j.at(20));
  }
  return s;
}
// [stage, f, b, w, recompute, step seconds, micro-batches]; absent from a build before it.
json entriesJson(const std::vector<BubbleBoard::Entry>& entries) {
  json out = json::array();
  for (const auto& e : entries)
    out.push_back({e.stage, num(e.times.f), num(e.times.b), num(e.times.w), num(e.times.recompute),
                   num(e.stepSeconds), e.micro});
  return out;
}

std::vector<BubbleBoard::Entry> entriesFrom(const json& j, const char* key) {
  std::vector<BubbleBoard::Entry> out;
  if (!j.contains(key)) return out;
  auto seconds = [](const json& v) { return v.is_null() ? 0.0 : v.get<double>(); };
  for (const auto& x : j.at(key)) {
    BubbleBoard::Entry e;
    e.stage = x.at(0).get<int>();
    e.times = {seconds(x.at(1)), seconds(x.at(2)), seconds(x.at(3)), seconds(x.at(4))};
    e.stepSeconds = seconds(x.at(5));
    e.micro = x.at(6).get<int>();
    out.push_back(e);
  }
  return out;
}
}  // namespace

std::string encodeFeed(const FeedBatch& b) {
  json p = json::array(), s = json::array(), e = json::array();
  for (const auto& x : b.points)
    p.push_back({x.name, x.stage, x.layer, x.step, x.timeS, num(x.value)});
  for (const auto& x : b.spans)
    s.push_back({x.stage, x.step, x.startS, x.endS, static_cast<int>(x.kind), x.micro});
  for (const auto& x : b.events)
    e.push_back({static_cast<int>(x.kind), x.timeS, x.stage, x.message});
  json j{{"p", p}, {"s", s}, {"e", e}};
  if (!b.bubbleTimes.empty()) j["b"] = entriesJson(b.bubbleTimes);
  return j.dump();
}

FeedBatch decodeFeed(const std::string& text) {
  try {
    const json j = json::parse(text);
    FeedBatch b;
    for (const auto& x : j.at("p"))
      b.points.push_back({x.at(0).get<std::string>(), x.at(1).get<int>(), x.at(2).get<int>(),
                          x.at(3).get<int64_t>(), x.at(4).get<double>(), val(x.at(5))});
    for (const auto& x : j.at("s")) {
      const int kind = x.at(4).get<int>();
      if (kind < 0 || kind > static_cast<int>(SpanKind::Aux))
        throw std::runtime_error("malformed report batch from another rank: span kind " +
                                 std::to_string(kind));
      b.spans.push_back({x.at(0).get<int>(), x.at(1).get<int64_t>(), x.at(2).get<double>(),
                         x.at(3).get<double>(), static_cast<SpanKind>(kind), x.at(5).get<int>()});
    }
    for (const auto& x : j.at("e"))
      b.events.push_back({static_cast<EventKind>(x.at(0).get<int>()), x.at(1).get<double>(),
                          x.at(2).get<int>(), x.at(3).get<std::string>()});
    b.bubbleTimes = entriesFrom(j, "b");
    return b;
  } catch (const json::exception& e) {
    throw std::runtime_error(std::string("malformed report batch from another rank: ") + e.what());
  }
}

std::string encodeReport(const RankReport& r) {
  json stages = json::array();
  for (const auto& s : r.stages) stages.push_back(stageJson(s));
  return json{{"status", static_cast<int>(r.status)},
              {"error", r.error},
              {"failed_stage", r.failedStage},
              {"feed_count", r.feedCount},
              {"stages", stages},
              {"owns_last", r.ownsLast},
              {"last_stage_steps", r.lastStageSteps},
              {"samples_after_warmup", r.samplesAfterWarmup},
              {"warmup_end_s", r.warmupEndS},
              {"last_step_end_s", r.lastStepEndS},
              {"bubble_times", entriesJson(r.bubbleTimes)}}
      .dump();
}

RankReport decodeReport(const std::string& text) {
  try {
    const json j = json::parse(text);
    RankReport r;
    r.status = static_cast<RunStatus>(j.at("status").get<int>());
    r.error = j.at("error").get<std::string>();
    r.failedStage = j.at("failed_stage").get<int>();
    r.feedCount = j.at("feed_count").get<int64_t>();
    for (const auto& s : j.at("stages")) r.stages.push_back(stageFrom(s));
    r.ownsLast = j.at("owns_last").get<bool>();
    r.lastStageSteps = j.at("last_stage_steps").get<int64_t>();
    r.samplesAfterWarmup = j.at("samples_after_warmup").get<int64_t>();
    r.warmupEndS = j.at("warmup_end_s").get<double>();
    r.lastStepEndS = j.at("last_step_end_s").get<double>();
    r.bubbleTimes = entriesFrom(j, "bubble_times");
    return r;
  } catch (const json::exception& e) {
    throw std::runtime_error(std::string("malformed report from another rank: ") + e.what());
  }
}

std::string digest(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace stagewise::engine::dist
