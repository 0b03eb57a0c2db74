#include "stagewise/study/study.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <set>

namespace stagewise::study {

using nlohmann::json;

VariedKey parseVary(const std::string& argument) {
  const size_t eq = argument.find('=');
  if (eq == std::string::npos || eq == 0)
    throw StudyError("--vary '" + argument +
                     "': write KEY=JSON_LIST, e.g. --vary 'train.lr=[0.001,0.0003]'");
  VariedKey v;
  v.key = argument.substr(0, eq);
  const json list = json::parse(argument.substr(eq + 1), nullptr, /*allow_exceptions=*/false);
  if (list.is_discarded() || !list.is_array())
    throw StudyError("--vary " + v.key + ": '" + argument.substr(eq + 1) +
                     "' is not a JSON list; write e.g. " + v.key + "=[1,2]");
  if (list.empty()) throw StudyError("--vary " + v.key + ": the list of values is empty");
  for (const auto& x : list) v.values.push_back(x.dump());
  return v;
}

StudyObject parseStudyObject(const std::string& text) {
  // ordered_json keeps the text's order of the "vary" keys (json would sort them).
  const nlohmann::ordered_json ordered =
      nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (ordered.is_discarded() || !ordered.is_object()) throw StudyError("study: expected an object");
  StudyObject out;
  auto bad = [](const std::string& key, const std::string& what) {
    return StudyError("study." + key + ": " + what);
  };
  for (const auto& [key, value] : ordered.items()) {
    if (key == "vary") {
      if (!value.is_object())
        throw bad("vary", "expected an object of key: [values], like {\"train.lr\": [0.001]}");
      for (const auto& [k, list] : value.items()) {
        if (k.empty()) throw bad("vary", "a key is empty");
        if (!list.is_array() || list.empty())
          throw bad("vary." + k, "expected a non-empty list of values");
        VariedKey v;
        v.key = k;
        for (const auto& x : list) v.values.push_back(x.dump());
        out.keys.push_back(std::move(v));
      }
    } else if (key == "seeds" || key == "sample") {
      if (!value.is_number_integer() || value.get<int64_t>() < (key == "seeds" ? 1 : 0) ||
          value.get<int64_t>() > 1000000)
        throw bad(key, key == "seeds" ? "expected a whole number >= 1" : "expected a whole number");
      (key == "seeds" ? out.seeds : out.sample) = value.get<int>();
    } else if (key == "sample_seed") {
      if (!value.is_number_integer()) throw bad(key, "expected a whole number");
      out.sampleSeed = value.get<int64_t>();
    } else if (key == "name") {
      if (!value.is_string()) throw bad(key, "expected a string");
      out.name = value.get<std::string>();
    } else if (key == "target") {
      if (!value.is_number() || !(value.get<double>() > 0 && value.get<double>() <= 1))
        throw bad(key, "expected a test accuracy in (0, 1]");
      out.target = value.get<double>();
    } else if (key == "search") {
      if (!value.is_object() || value.empty())
        throw bad(
            "search",
            R"(expected an object of key: distribution, like {"train.lr": {"log_uniform": [1e-5, 0.1]}})");
      for (const auto& [k, dist] : value.items()) {
        if (k.empty()) throw bad("search", "a key is empty");
        out.search.keys.push_back({k, parseDistribution(dist.dump(), "study.search." + k)});
      }
    } else if (key == "trials") {
      if (!value.is_number_integer() || value.get<int64_t>() < 1 || value.get<int64_t>() > 100000)
        throw bad(key, "expected a whole number of trials >= 1");
      out.search.trials = value.get<int>();
    } else if (key == "sampler") {
      const auto names = samplerNames();
      if (!value.is_string() ||
          std::find(names.begin(), names.end(), value.get<std::string>()) == names.end())
        throw bad(key, "expected one of random, sobol, maxlipo");
      out.search.sampler = value.get<std::string>();
    } else if (key == "prune") {
      if (!value.is_object()) throw bad(key, R"(expected an object, like {"min_steps": 100})");
      PruneSpec p;
      for (const auto& [k, v] : value.items()) {
        if (k == "metric" && v.is_string()) {
          p.metric = v.get<std::string>();
        } else if (k == "min_steps" && v.is_number_integer() && v.get<int64_t>() >= 1) {
          p.minSteps = v.get<int64_t>();
        } else if (k == "reduction" && v.is_number_integer() && v.get<int64_t>() >= 2 &&
                   v.get<int64_t>() <= 100) {
          p.reduction = v.get<int>();
        } else if (k == "metric" || k == "min_steps" || k == "reduction") {
          throw bad("prune." + k, k == "metric"      ? "expected a metric name like val_accuracy"
                                  : k == "min_steps" ? "expected a whole number of steps >= 1"
                                                     : "expected a whole number from 2 to 100");
        } else {
          throw bad("prune." + k, "unknown key (use metric, min_steps, reduction)");
        }
      }
      requireValidationMetric(p.metric, "study.prune.metric");
      out.search.prune = p;
    } else if (key == "tune") {
      if (!value.is_object()) throw bad(key, R"(expected an object, like {"seeds": 3})");
      TuneSpec t;
      for (const auto& [k, v] : value.items()) {
        if (k == "metric" && v.is_string()) {
          t.metric = v.get<std::string>();
        } else if (k == "seeds" && v.is_number_integer() && v.get<int64_t>() >= 1 &&
                   v.get<int64_t>() <= 1000) {
          t.seeds = v.get<int>();
        } else if (k == "metric" || k == "seeds") {
          throw bad("tune." + k, k == "metric" ? "expected a metric name like val_accuracy"
                                               : "expected a whole number from 1 to 1000");
        } else {
          throw bad("tune." + k, "unknown key (use metric, seeds)");
        }
      }
      requireValidationMetric(t.metric, "study.tune.metric");
      out.search.tune = t;
    } else {
      throw bad(key,
                "unknown key (use vary, search, trials, sampler, prune, tune, seeds, sample, "
                "sample_seed, name, target)");
    }
  }
  const bool searchOnly =
      out.search.trials > 0 || out.search.prune || out.search.tune || ordered.contains("sampler");
  if (out.search.empty() && searchOnly)
    throw bad(out.search.trials > 0 ? "trials"
              : out.search.prune    ? "prune"
              : out.search.tune     ? "tune"
                                    : "sampler",
              "belongs to a search: add a \"search\" object with the keys to draw");
  if (!out.search.empty() && out.search.trials == 0) out.search.trials = kDefaultTrials;
  return out;
}

std::string studyObjectJson(const StudyObject& study, int indent) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  nlohmann::ordered_json vary = nlohmann::ordered_json::object();
  for (const auto& k : study.keys) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto& v : k.values) list.push_back(nlohmann::ordered_json::parse(v));
    vary[k.key] = std::move(list);
  }
  out["vary"] = std::move(vary);
  if (study.seeds) out["seeds"] = *study.seeds;
  if (study.sample) out["sample"] = *study.sample;
  if (study.sampleSeed) out["sample_seed"] = *study.sampleSeed;
  if (study.name) out["name"] = *study.name;
  if (study.target) out["target"] = *study.target;
  if (!study.search.empty()) {
    nlohmann::ordered_json search = nlohmann::ordered_json::object();
    for (const auto& k : study.search.keys)
      search[k.key] = nlohmann::ordered_json::parse(k.dist.json());
    out["search"] = std::move(search);
    out["trials"] = study.search.trials;
    out["sampler"] = study.search.sampler;
    if (const auto& p = study.search.prune)
      out["prune"] = {
          {"metric", p->metric}, {"min_steps", p->minSteps}, {"reduction", p->reduction}};
    if (const auto& t = study.search.tune)
      out["tune"] = {{"metric", t->metric}, {"seeds", t->seeds}};
  }
  return out.dump(indent);
}

std::string withStudyObject(const std::string& experimentJson, const StudyObject& study) {
  nlohmann::ordered_json doc = nlohmann::ordered_json::parse(experimentJson);
  doc["study"] = nlohmann::ordered_json::parse(studyObjectJson(study));
  return doc.dump(2);
}

std::optional<StudyObject> studyObjectOf(const std::string& experimentJson) {
  const nlohmann::ordered_json doc =
      nlohmann::ordered_json::parse(experimentJson, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("study")) return std::nullopt;
  return parseStudyObject(doc["study"].dump());
}

std::optional<std::string> valueAt(const std::string& specJson, const std::string& key) {
  const json doc = json::parse(specJson, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || key.empty()) return std::nullopt;
  const json* at = &doc;
  size_t begin = 0;
  while (begin <= key.size()) {
    const size_t dot = std::min(key.find('.', begin), key.size());
    const std::string part = key.substr(begin, dot - begin);
    if (!at->is_object() || !at->contains(part)) return std::nullopt;
    at = &(*at)[part];
    begin = dot + 1;
  }
  return at->dump();
}

namespace {

bool variesSeed(const StudyPlan& plan) {
  return std::any_of(plan.keys.begin(), plan.keys.end(),
                     [](const VariedKey& k) { return k.key == "train.seed"; }) ||
         std::any_of(plan.search.keys.begin(), plan.search.keys.end(),
                     [](const SearchedKey& k) { return k.key == "train.seed"; });
}

}  // namespace

std::vector<GridPoint> expandGrid(const StudyPlan& plan) {
  if (plan.seeds < 1) throw StudyError("--seeds must be at least 1");
  std::set<std::string> seen;
  for (const auto& k : plan.keys) {
    if (k.values.empty()) throw StudyError("--vary " + k.key + ": the list of values is empty");
    if (!seen.insert(k.key).second)
      throw StudyError("--vary " + k.key + " is given twice: put every value in one list");
  }
  // The grid, first key slowest (an odometer over the value lists).
  size_t size = 1;
  for (const auto& k : plan.keys) {
    size *= k.values.size();
    if (size > 1000000) throw StudyError("the grid has more than 10^6 points: vary fewer values");
  }
  std::vector<std::vector<std::string>> points;
  std::vector<size_t> at(plan.keys.size(), 0);
  for (size_t p = 0; p < size; ++p) {
    std::vector<std::string> values;
    for (size_t i = 0; i < plan.keys.size(); ++i) values.push_back(plan.keys[i].values[at[i]]);
    points.push_back(std::move(values));
    for (size_t i = plan.keys.size(); i-- > 0;) {
      if (++at[i] < plan.keys[i].values.size()) break;
      at[i] = 0;
    }
  }
  if (plan.sample > 0 && static_cast<size_t>(plan.sample) < points.size()) {
    std::vector<size_t> order(points.size());
    std::iota(order.begin(), order.end(), 0);
    std::mt19937_64 rng(plan.sampleSeed);
    std::shuffle(order.begin(), order.end(), rng);
    order.resize(static_cast<size_t>(plan.sample));
    std::sort(order.begin(), order.end());  // drawn at random, run in grid order
    std::vector<std::vector<std::string>> drawn;
    for (size_t i : order) drawn.push_back(points[i]);
    points = std::move(drawn);
  }
  const int seeds = variesSeed(plan) ? 1 : plan.seeds;
  std::vector<GridPoint> out;
  for (const auto& values : points)
    for (int s = 1; s <= seeds; ++s) {
      GridPoint g;
      g.index = static_cast<int>(out.size());
      g.values = values;
      g.seed = s;
      out.push_back(std::move(g));
    }
  return out;
}

std::vector<std::string> pointKeys(const StudyPlan& plan) {
  std::vector<std::string> keys;
  for (const auto& k : plan.keys) keys.push_back(k.key);
  for (const auto& k : plan.search.keys) keys.push_back(k.key);
  return keys;
}

std::vector<std::string> pointSets(const StudyPlan& plan, const GridPoint& point) {
  std::vector<std::string> sets;
  const std::vector<std::string> keys = pointKeys(plan);
  for (size_t i = 0; i < keys.size() && i < point.values.size(); ++i)
    sets.push_back(keys[i] + "=" + point.values[i]);
  if (!variesSeed(plan)) sets.push_back("train.seed=" + std::to_string(point.seed));
  return sets;
}

std::string describePoint(const StudyPlan& plan, const GridPoint& point) {
  std::string s;
  const std::vector<std::string> keys = pointKeys(plan);
  for (size_t i = 0; i < keys.size() && i < point.values.size(); ++i) {
    // A string reads without its JSON quotes (mode=local); a drawn number with 4 digits;
    // anything else as JSON.
    const json v = json::parse(point.values[i], nullptr, false);
    std::string text = v.is_string() ? v.get<std::string>() : point.values[i];
    if (v.is_number_float()) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.4g", v.get<double>());
      text = buf;
    }
    s += (s.empty() ? "" : ", ") + keys[i] + "=" + text;
  }
  if (point.trial >= 0) s = "trial " + std::to_string(point.trial + 1) + ": " + s;
  if (point.tuned) s = "tuned: " + s;
  if (!variesSeed(plan))
    s += (s.empty() ? "" : ", ") + std::string("seed ") + std::to_string(point.seed);
  return s;
}

Stat stat(const std::vector<double>& values) {
  Stat s;
  s.n = static_cast<int>(values.size());
  if (values.empty()) return s;
  s.mean = std::accumulate(values.begin(), values.end(), 0.0) / s.n;
  s.min = *std::min_element(values.begin(), values.end());
  s.max = *std::max_element(values.begin(), values.end());
  if (s.n > 1) {
    double ss = 0;
    for (double v : values) ss += (v - s.mean) * (v - s.mean);
    s.std = std::sqrt(ss / (s.n - 1));
  }
  return s;
}

double Stat::sem() const {
  return n > 1 ? std / std::sqrt(static_cast<double>(n)) : 0;
}

std::vector<Group> groupRuns(const std::vector<RunOutcome>& runs) {
  std::vector<Group> groups;
  std::map<std::vector<std::string>, size_t> index;
  for (size_t r = 0; r < runs.size(); ++r) {
    auto [it, fresh] = index.emplace(runs[r].values, groups.size());
    if (fresh) {
      Group g;
      g.values = runs[r].values;
      g.mode = runs[r].mode;
      groups.push_back(std::move(g));
    }
    groups[it->second].runs.push_back(r);
  }
  std::vector<std::pair<double, double>> points;
  for (auto& g : groups) {
    std::vector<double> acc, sps, wall, flops, target;
    for (size_t r : g.runs) {
      acc.push_back(runs[r].testAccuracy);
      sps.push_back(runs[r].samplesPerSec);
      wall.push_back(runs[r].wallS);
      flops.push_back(runs[r].trainFlops);
      if (runs[r].targetTimeS) target.push_back(*runs[r].targetTimeS);
      if (runs[r].mode != g.mode) g.mode = "mixed";
    }
    g.accuracy = stat(acc), g.samplesPerSec = stat(sps), g.wallS = stat(wall);
    g.trainFlops = stat(flops);
    g.reached = static_cast<int>(target.size());
    if (!target.empty()) g.targetTimeS = stat(target);
    points.emplace_back(g.wallS.mean, g.accuracy.mean);
  }
  const std::vector<bool> front = paretoFront(points);
  for (size_t i = 0; i < groups.size(); ++i) groups[i].onFront = front[i];
  return groups;
}

std::optional<TargetHit> timeToTarget(const std::vector<EvalPoint>& evals, double target) {
  for (size_t i = 0; i < evals.size(); ++i) {
    if (!(evals[i].accuracy >= target)) continue;
    if (i == 0) return TargetHit{evals[0].timeS, evals[0].samples};
    const EvalPoint& a = evals[i - 1];
    const EvalPoint& b = evals[i];
    const double f =
        b.accuracy > a.accuracy ? (target - a.accuracy) / (b.accuracy - a.accuracy) : 1;
    return TargetHit{a.timeS + f * (b.timeS - a.timeS), a.samples + f * (b.samples - a.samples)};
  }
  return std::nullopt;
}

std::vector<bool> paretoFront(const std::vector<std::pair<double, double>>& points) {
  std::vector<bool> front(points.size(), true);
  for (size_t i = 0; i < points.size(); ++i)
    for (size_t j = 0; j < points.size() && front[i]; ++j) {
      if (i == j) continue;
      const auto& [xi, yi] = points[i];
      const auto& [xj, yj] = points[j];
      if (xj <= xi && yj >= yi && (xj < xi || yj > yi)) front[i] = false;
    }
  return front;
}

}  // namespace stagewise::study
