#include <fstream>
#include <sstream>

#include "config/json_reader.h"
#include "config/layers_json.h"
#include "stagewise/engine/spec.h"

namespace stagewise::engine {
namespace detail {

using nlohmann::json;

ObjectReader::ObjectReader(const json& object, std::string path)
    : m_object(object), m_path(std::move(path)) {
  if (!m_object.is_object())
    throw SpecError(m_path, "expected an object ({...}), found " + typeName(m_object));
}

std::string ObjectReader::field(const std::string& key) const {
  return m_path.empty() ? key : m_path + "." + key;
}

bool ObjectReader::has(const std::string& key) {
  m_known.insert(key);
  return m_object.contains(key) && !m_object.at(key).is_null();
}

const json* ObjectReader::child(const std::string& key) {
  return has(key) ? &m_object.at(key) : nullptr;
}

const json& ObjectReader::value(const std::string& key) {
  return m_object.at(key);
}

void ObjectReader::get(const std::string& key, std::string& out) {
  if (!has(key)) return;
  const json& v = value(key);
  if (!v.is_string()) throw SpecError(field(key), "expected a string, found " + typeName(v));
  out = v.get<std::string>();
}

template <typename T>
static T readInteger(const json& v, const std::string& field) {
  if (v.is_number_integer()) {
    if (v.is_number_unsigned()) {
      auto u = v.get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<T>::max()))
        throw SpecError(field, "number " + v.dump() + " is too large");
      return static_cast<T>(u);
    }
    auto i = v.get<int64_t>();
    if (i < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
        (i > 0 && static_cast<uint64_t>(i) > static_cast<uint64_t>(std::numeric_limits<T>::max())))
      throw SpecError(field, "number " + v.dump() + " is out of range");
    return static_cast<T>(i);
  }
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (d == static_cast<double>(static_cast<int64_t>(d)) && std::abs(d) < 9e15)
      return readInteger<T>(json(static_cast<int64_t>(d)), field);
    throw SpecError(field, "expected a whole number, found " + v.dump());
  }
  throw SpecError(field, "expected a whole number, found " + typeName(v));
}

void ObjectReader::get(const std::string& key, int& out) {
  if (has(key)) out = readInteger<int>(value(key), field(key));
}
void ObjectReader::get(const std::string& key, int64_t& out) {
  if (has(key)) out = readInteger<int64_t>(value(key), field(key));
}
void ObjectReader::get(const std::string& key, uint64_t& out) {
  if (has(key)) out = readInteger<uint64_t>(value(key), field(key));
}

void ObjectReader::get(const std::string& key, double& out) {
  if (!has(key)) return;
  const json& v = value(key);
  if (!v.is_number()) throw SpecError(field(key), "expected a number, found " + typeName(v));
  out = v.get<double>();
}

void ObjectReader::get(const std::string& key, std::vector<int>& out) {
  if (!has(key)) return;
  const json& v = value(key);
  if (!v.is_array())
    throw SpecError(field(key),
                    "expected a list of whole numbers like [2, 4], found " + typeName(v));
  out.clear();
  for (size_t i = 0; i < v.size(); ++i)
    out.push_back(readInteger<int>(v[i], field(key) + "[" + std::to_string(i) + "]"));
}

void ObjectReader::finish() const {
  for (const auto& [key, v] : m_object.items()) {
    if (m_known.count(key)) continue;
    std::string msg = "unknown key";
    std::string guess = closestKey(key, m_known);
    if (!guess.empty()) msg += "; did you mean '" + field(guess) + "'?";
    throw SpecError(field(key), msg);
  }
}

std::string typeName(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::string:
      return "a string";
    case json::value_t::array:
      return "a list";
    case json::value_t::object:
      return "an object";
    case json::value_t::number_float:
      return "a number (" + v.dump() + ")";
    default:
      return "a number (" + v.dump() + ")";
  }
}

std::string closestKey(const std::string& key, const std::set<std::string>& known) {
  auto distance = [](const std::string& a, const std::string& b) {
    std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      cur[0] = i;
      for (size_t j = 1; j <= b.size(); ++j)
        cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
      std::swap(prev, cur);
    }
    return prev[b.size()];
  };
  std::string best;
  size_t bestD = 4;
  for (const auto& k : known) {
    size_t d = distance(key, k);
    if (d < bestD) bestD = d, best = k;
  }
  return best;
}

}  // namespace detail

using detail::ObjectReader;
using nlohmann::json;

static void readStageFields(ObjectReader& r, StageOverride& o) {
  std::string s;
  int i = 0;
  double d = 0;
  std::vector<int> v;
  if (r.has("device")) r.get("device", s), o.device = s;
  if (r.has("aux_head")) r.get("aux_head", s), o.auxHead = s;
  if (r.has("aux_hidden")) r.get("aux_hidden", i), o.auxHidden = i;
  if (r.has("threads")) r.get("threads", i), o.threads = i;
  if (r.has("cores")) r.get("cores", v), o.cores = v;
  if (r.has("lr_scale")) r.get("lr_scale", d), o.lrScale = d;
  if (r.has("delay_ms")) r.get("delay_ms", i), o.delayMs = i;
  if (r.has("rank")) r.get("rank", i), o.rank = i;
  r.finish();
}

ExperimentSpec parseSpec(std::string_view text) {
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (
      const json::exception& e) {  // parse_error, and out_of_range for huge numbers (fuzz_spec)
    throw SpecError("", std::string("not valid JSON: ") + e.what());
  }
  ExperimentSpec spec;
  ObjectReader top(doc, "");
  top.get("name", spec.name);
  // A study (a sweep over this experiment) is read by `stagewise-cli study` and the workbench;
  // a run ignores it (docs/experiment-format.md).
  if (top.has("study") && !doc.at("study").is_object())
    throw SpecError("study",
                    "expected an object like {\"vary\": {\"train.lr\": [0.001, 0.0003]}, "
                    "\"seeds\": 3}, found " +
                        detail::typeName(doc.at("study")));

  if (auto* d = top.child("dataset")) {
    ObjectReader r(*d, "dataset");
    r.get("kind", spec.dataset.kind);
    r.get("path", spec.dataset.path);
    r.get("limit_train", spec.dataset.limitTrain);
    r.get("limit_test", spec.dataset.limitTest);
    r.get("synthetic_train", spec.dataset.syntheticTrain);
    r.get("synthetic_test", spec.dataset.syntheticTest);
    r.get("synthetic_features", spec.dataset.syntheticFeatures);
    r.get("synthetic_classes", spec.dataset.syntheticClasses);
    if (r.has("augment")) {
      const json& v = d->at("augment");
      if (!v.is_boolean())
        throw SpecError("dataset.augment", "expected true or false, found " + detail::typeName(v));
      spec.dataset.augment = v.get<bool>();
    }
    if (r.has("random_labels")) {
      const json& v = d->at("random_labels");
      if (!v.is_boolean())
        throw SpecError("dataset.random_labels",
                        "expected true or false, found " + detail::typeName(v));
      spec.dataset.randomLabels = v.get<bool>();
    }
    r.get("validation", spec.dataset.validation);
    r.get("size", spec.dataset.size);
    r.get("channels", spec.dataset.channels);
    r.get("context", spec.dataset.context);
    r.get("test_fraction", spec.dataset.testFraction);
    r.finish();
  }
  if (auto* m = top.child("model")) {
    ObjectReader r(*m, "model");
    r.get("kind", spec.model.kind);
    r.get("hidden", spec.model.hidden);
    r.get("activation", spec.model.activation);
    r.get("channels", spec.model.channels);
    r.get("blocks", spec.model.blocks);
    r.get("patch", spec.model.patch);
    r.get("dim", spec.model.dim);
    r.get("depth", spec.model.depth);
    r.get("heads", spec.model.heads);
    r.get("mlp_ratio", spec.model.mlpRatio);
    r.get("init", spec.model.init);
    r.get("norm", spec.model.norm);
    r.get("path", spec.model.path);  // torchscript
    if (r.has("reinit")) {
      const json& v = m->at("reinit");
      if (!v.is_boolean())
        throw SpecError("model.reinit", "expected true or false, found " + detail::typeName(v));
      spec.model.reinit = v.get<bool>();
    }
    if (auto* layers = r.child("layers"))
      spec.model.layers = detail::readLayers(*layers, "model.layers");
    r.finish();
  }
  if (auto* p = top.child("partition")) {
    ObjectReader r(*p, "partition");
    r.get("cuts", spec.partition.cuts);
    r.get("balance", spec.partition.balance);
    r.get("stages", spec.partition.numStages);
    r.finish();
  }
  if (auto* s = top.child("stage_defaults")) {
    ObjectReader r(*s, "stage_defaults");
    StageOverride o;
    readStageFields(r, o);
    ExperimentSpec tmp;
    tmp.stages = {o};
    spec.stageDefaults = tmp.stageSettings(0);
  }
  if (auto* list = top.child("stages")) {
    if (!list->is_array())
      throw SpecError("stages",
                      "expected a list of per-stage objects, found " + detail::typeName(*list));
    for (size_t i = 0; i < list->size(); ++i) {
      ObjectReader r((*list)[i], "stages[" + std::to_string(i) + "]");
      StageOverride o;
      readStageFields(r, o);
      spec.stages.push_back(o);
    }
  }
  if (top.has("mode")) {
    std::string mode;
    top.get("mode", mode);
    auto m = modeFromString(mode);
    if (!m)
      throw SpecError("mode",
                      "unknown mode '" + mode + "'; use \"local\", \"pipeline\" or \"backprop\"");
    spec.mode = *m;
  }
  if (auto* t = top.child("train")) {
    ObjectReader r(*t, "train");
    r.get("batch_size", spec.train.batchSize);
    r.get("epochs", spec.train.epochs);
    r.get("max_steps", spec.train.maxSteps);
    r.get("optimizer", spec.train.optimizer);
    r.get("lr", spec.train.lr);
    r.get("weight_decay", spec.train.weightDecay);
    r.get("momentum", spec.train.momentum);
    r.get("seed", spec.train.seed);
    r.get("queue_capacity", spec.train.queueCapacity);
    r.get("backprop_threads", spec.train.backpropThreads);
    r.get("lr_schedule", spec.train.lrSchedule);
    r.get("warmup_steps", spec.train.warmupSteps);
    r.get("clip_norm", spec.train.clipNorm);
    r.finish();
  }
  if (auto* l = top.child("local")) {
    ObjectReader r(*l, "local");
    r.get("overlap", spec.local.overlap);
    r.finish();
  }
  if (auto* p = top.child("pipeline")) {
    ObjectReader r(*p, "pipeline");
    r.get("micro_batches", spec.pipeline.microBatches);
    r.get("schedule", spec.pipeline.schedule);
    r.get("chunks", spec.pipeline.chunks);
    if (r.has("recompute")) {
      const json& v = p->at("recompute");
      if (!v.is_boolean())
        throw SpecError("pipeline.recompute",
                        "expected true or false, found " + detail::typeName(v));
      spec.pipeline.recompute = v.get<bool>();
    }
    r.finish();
  }
  if (auto* t = top.child("timeline")) {
    ObjectReader r(*t, "timeline");
    r.get("max_spans", spec.timeline.maxSpans);
    r.finish();
  }
  if (auto* e = top.child("eval")) {
    ObjectReader r(*e, "eval");
    r.get("interval", spec.eval.interval);
    r.get("max_samples", spec.eval.maxSamples);
    r.finish();
  }
  if (auto* p = top.child("probe")) {
    ObjectReader r(*p, "probe");
    r.get("interval", spec.probe.interval);
    r.get("batch_size", spec.probe.batchSize);
    r.finish();
  }
  if (auto* m = top.child("measure")) {
    ObjectReader r(*m, "measure");
    r.get("budget", spec.measure.budget);
    r.finish();
  }
  if (auto* c = top.child("checkpoint")) {
    ObjectReader r(*c, "checkpoint");
    r.get("interval", spec.checkpoint.interval);
    r.get("dir", spec.checkpoint.dir);
    if (r.has("at_stop")) {
      const json& v = c->at("at_stop");
      if (!v.is_boolean())
        throw SpecError("checkpoint.at_stop",
                        "expected true or false, found " + detail::typeName(v));
      spec.checkpoint.atStop = v.get<bool>();
    }
    r.finish();
  }
  if (auto* g = top.child("distributed")) {
    ObjectReader r(*g, "distributed");
    r.get("timeout_s", spec.distributed.timeoutS);
    r.get("backend", spec.distributed.backend);
    r.finish();
  }
  if (auto* g = top.child("debug")) {
    ObjectReader r(*g, "debug");
    r.get("fail_at_step", spec.debug.failAtStep);
    r.get("nan_at_step", spec.debug.nanAtStep);
    r.get("stage", spec.debug.stage);
    r.get("fail_checkpoint", spec.debug.failCheckpoint);
    r.finish();
  }
  top.finish();
  return spec;
}

ExperimentSpec loadSpec(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SpecError("", "cannot open experiment file '" + path + "'");
  std::stringstream buf;
  buf << in.rdbuf();
  try {
    return parseSpec(buf.str());
  } catch (const SpecError& e) {
    throw SpecError(e.field(), e.message(), path);
  }
}

static json stageJson(const StageSettings& s) {
  json j = json{{"device", s.device},   {"aux_head", s.auxHead}, {"aux_hidden", s.auxHidden},
                {"threads", s.threads}, {"cores", s.cores},      {"lr_scale", s.lrScale},
                {"delay_ms", s.delayMs}};
  if (s.rank != -1) j["rank"] = s.rank;  // only where set: older specs stay byte-identical
  return j;
}

static json overrideJson(const StageOverride& o) {
  json j = json::object();
  if (o.device) j["device"] = *o.device;
  if (o.auxHead) j["aux_head"] = *o.auxHead;
  if (o.auxHidden) j["aux_hidden"] = *o.auxHidden;
  if (o.threads) j["threads"] = *o.threads;
  if (o.cores) j["cores"] = *o.cores;
  if (o.lrScale) j["lr_scale"] = *o.lrScale;
  if (o.delayMs) j["delay_ms"] = *o.delayMs;
  if (o.rank) j["rank"] = *o.rank;
  return j;
}

std::string specToJson(const ExperimentSpec& spec, int indent) {
  json stages = json::array();
  for (const auto& o : spec.stages) stages.push_back(overrideJson(o));
  json doc = {
      {"name", spec.name},
      {"dataset",
       {{"kind", spec.dataset.kind},
        {"path", spec.dataset.path},
        {"limit_train", spec.dataset.limitTrain},
        {"limit_test", spec.dataset.limitTest},
        {"synthetic_train", spec.dataset.syntheticTrain},
        {"synthetic_test", spec.dataset.syntheticTest},
        {"synthetic_features", spec.dataset.syntheticFeatures},
        {"augment", spec.dataset.augment},
        {"synthetic_classes", spec.dataset.syntheticClasses}}},
      {"model",
       {{"kind", spec.model.kind},
        {"hidden", spec.model.hidden},
        {"activation", spec.model.activation},
        {"channels", spec.model.channels},
        {"blocks", spec.model.blocks},
        {"patch", spec.model.patch},
        {"dim", spec.model.dim},
        {"depth", spec.model.depth},
        {"heads", spec.model.heads},
        {"mlp_ratio", spec.model.mlpRatio}}},
      {"partition",
       {{"cuts", spec.partition.cuts},
        {"balance", spec.partition.balance},
        {"stages", spec.partition.numStages}}},
      {"stage_defaults", stageJson(spec.stageDefaults)},
      {"stages", stages},
      {"mode", toString(spec.mode)},
      {"train",
       {{"batch_size", spec.train.batchSize},
        {"epochs", spec.train.epochs},
        {"max_steps", spec.train.maxSteps},
        {"optimizer", spec.train.optimizer},
        {"lr", spec.train.lr},
        {"weight_decay", spec.train.weightDecay},
        {"momentum", spec.train.momentum},
        {"seed", spec.train.seed},
        {"queue_capacity", spec.train.queueCapacity},
        {"backprop_threads", spec.train.backpropThreads},
        {"lr_schedule", spec.train.lrSchedule},
        {"warmup_steps", spec.train.warmupSteps},
        {"clip_norm", spec.train.clipNorm}}},
      {"local", {{"overlap", spec.local.overlap}}},
      {"pipeline",
       {{"micro_batches", spec.pipeline.microBatches}, {"schedule", spec.pipeline.schedule}}},
      {"eval", {{"interval", spec.eval.interval}, {"max_samples", spec.eval.maxSamples}}},
      {"probe", {{"interval", spec.probe.interval}, {"batch_size", spec.probe.batchSize}}},
      {"checkpoint",
       {{"interval", spec.checkpoint.interval},
        {"dir", spec.checkpoint.dir},
        {"at_stop", spec.checkpoint.atStop}}},
      {"debug",
       {{"fail_at_step", spec.debug.failAtStep},
        {"nan_at_step", spec.debug.nanAtStep},
        {"stage", spec.debug.stage}}},
  };
  if (spec.debug.failCheckpoint != -1) doc["debug"]["fail_checkpoint"] = spec.debug.failCheckpoint;
  // Newer keys only where they differ from their defaults: older specs stay byte-identical.
  if (spec.dataset.randomLabels) doc["dataset"]["random_labels"] = true;
  if (spec.dataset.validation != DatasetSpec{}.validation)
    doc["dataset"]["validation"] = spec.dataset.validation;
  if (!spec.dataset.size.empty()) doc["dataset"]["size"] = spec.dataset.size;
  if (spec.dataset.channels != DatasetSpec{}.channels)
    doc["dataset"]["channels"] = spec.dataset.channels;
  if (spec.dataset.kind == "text" || spec.dataset.context != DatasetSpec{}.context)
    doc["dataset"]["context"] = spec.dataset.context;
  if (spec.dataset.kind == "text" || spec.dataset.testFraction != DatasetSpec{}.testFraction)
    doc["dataset"]["test_fraction"] = spec.dataset.testFraction;
  if (spec.model.init != ModelSpec{}.init) doc["model"]["init"] = spec.model.init;
  if (spec.model.norm != ModelSpec{}.norm) doc["model"]["norm"] = spec.model.norm;
  if (!spec.model.path.empty()) doc["model"]["path"] = spec.model.path;
  if (spec.model.reinit) doc["model"]["reinit"] = true;
  if (!spec.model.layers.empty()) doc["model"]["layers"] = detail::layersToJson(spec.model.layers);
  if (spec.pipeline.chunks != PipelineSpec{}.chunks)
    doc["pipeline"]["chunks"] = spec.pipeline.chunks;
  if (spec.pipeline.recompute) doc["pipeline"]["recompute"] = true;
  if (spec.timeline.maxSpans != TimelineSpec{}.maxSpans)
    doc["timeline"] = {{"max_spans", spec.timeline.maxSpans}};
  if (spec.measure.budget != MeasureSpec{}.budget)
    doc["measure"] = {{"budget", spec.measure.budget}};
  const DistributedSpec defaults;
  if (spec.distributed.timeoutS != defaults.timeoutS ||
      spec.distributed.backend != defaults.backend)
    doc["distributed"] = {{"timeout_s", spec.distributed.timeoutS},
                          {"backend", spec.distributed.backend}};
  return doc.dump(indent);
}

}  // namespace stagewise::engine
