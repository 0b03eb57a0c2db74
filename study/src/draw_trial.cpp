// Drawing a trial's values: random and scrambled Sobol from the unit cube, and dlib's
// global_function_search (MaxLIPO+TR) from the earlier trials' results. dlib's headers are heavy;
// they stay in this file.

#include <dlib/global_optimization.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "stagewise/study/search.h"
#include "stagewise/study/study.h"

namespace stagewise::study {

namespace {

using Kind = Distribution::Kind;

/// A key's range in dlib's space: log_uniform on log(x), choice as the index of the choice.
struct Axis {
  double lower = 0, upper = 0;
  bool integer = false;
  bool fixed() const { return !(lower < upper); }
};

Axis axisOf(const Distribution& d) {
  switch (d.kind) {
    case Kind::LogUniform:
      return {std::log(d.low), std::log(d.high), false};
    case Kind::Uniform:
      return {d.low, d.high, false};
    case Kind::Int:
      return {d.low, d.high, true};
    case Kind::Choice:
      return {0, static_cast<double>(d.choices.size() - 1), true};
  }
  return {};
}

/// A stored value (JSON text) in dlib's space; empty when it is not one the distribution gives.
std::optional<double> coordinate(const Distribution& d, const std::string& value) {
  const nlohmann::json v = nlohmann::json::parse(value, nullptr, false);
  if (d.kind == Kind::Choice) {
    for (size_t i = 0; i < d.choices.size(); ++i)
      if (nlohmann::json::parse(d.choices[i], nullptr, false) == v) return static_cast<double>(i);
    return std::nullopt;
  }
  if (!v.is_number()) return std::nullopt;
  const double x = v.get<double>();
  if (d.kind == Kind::LogUniform) return x > 0 ? std::optional<double>(std::log(x)) : std::nullopt;
  return x;
}

/// dlib's coordinate back to a value (JSON text).
std::string valueOf(const Distribution& d, double x) {
  switch (d.kind) {
    case Kind::LogUniform:
      return nlohmann::json(std::clamp(std::exp(x), d.low, d.high)).dump();
    case Kind::Uniform:
      return nlohmann::json(std::clamp(x, d.low, d.high)).dump();
    case Kind::Int:
      return nlohmann::json(static_cast<int64_t>(std::llround(std::clamp(x, d.low, d.high))))
          .dump();
    case Kind::Choice: {
      const auto i = static_cast<size_t>(
          std::clamp<long long>(std::llround(x), 0, static_cast<long long>(d.choices.size()) - 1));
      return d.choices[i];
    }
  }
  return "null";
}

std::vector<std::string> drawModel(const SearchSpec& search, uint64_t seed, int trial,
                                   const std::vector<TrialResult>& earlier, bool higherBetter) {
  std::vector<size_t> free;  // keys dlib searches (a key with one possible value is not one)
  std::vector<Axis> axes;
  for (size_t k = 0; k < search.keys.size(); ++k) {
    axes.push_back(axisOf(search.keys[k].dist));
    if (!axes.back().fixed()) free.push_back(k);
  }
  std::vector<std::string> out(search.keys.size());
  for (size_t k = 0; k < search.keys.size(); ++k)
    if (axes[k].fixed()) out[k] = valueOf(search.keys[k].dist, axes[k].lower);
  if (free.empty()) return out;

  dlib::matrix<double, 0, 1> lower(static_cast<long>(free.size())),
      upper(static_cast<long>(free.size()));
  std::vector<bool> integer;
  for (size_t i = 0; i < free.size(); ++i) {
    lower(static_cast<long>(i)) = axes[free[i]].lower;
    upper(static_cast<long>(i)) = axes[free[i]].upper;
    integer.push_back(axes[free[i]].integer);
  }
  // The earlier trials as evaluations (dlib maximises: a lower-is-better metric is negated). A
  // trial without a value (it failed, or diverged) counts as the worst value seen so far, so the
  // search moves away from it; with nothing seen yet it is left out.
  std::vector<dlib::function_evaluation> evals;
  double worst = std::numeric_limits<double>::infinity();
  for (const auto& r : earlier)
    if (r.value && std::isfinite(*r.value))
      worst = std::min(worst, higherBetter ? *r.value : -*r.value);
  for (const auto& r : earlier) {
    dlib::matrix<double, 0, 1> x(static_cast<long>(free.size()));
    bool ok = r.values.size() == search.keys.size();
    for (size_t i = 0; ok && i < free.size(); ++i) {
      const auto c = coordinate(search.keys[free[i]].dist, r.values[free[i]]);
      if (c)
        x(static_cast<long>(i)) = std::clamp(*c, axes[free[i]].lower, axes[free[i]].upper);
      else
        ok = false;
    }
    if (!ok) continue;
    double y = 0;
    if (r.value && std::isfinite(*r.value))
      y = higherBetter ? *r.value : -*r.value;
    else if (std::isfinite(worst))
      y = worst;
    else
      continue;
    // dlib refuses two evaluations at the same point; the first one stands.
    bool seen = false;
    for (const auto& e : evals) seen = seen || dlib::equal(e.x, x);
    if (!seen) evals.emplace_back(x, y);
  }
  dlib::function_spec spec(lower, upper, integer);
  dlib::global_function_search opt({spec}, {evals});
  opt.set_seed(static_cast<time_t>((seed * 0x9E3779B97F4A7C15ull) ^ static_cast<uint64_t>(trial)));
  dlib::function_evaluation_request next = opt.get_next_x();
  const dlib::matrix<double, 0, 1> x = next.x();
  for (size_t i = 0; i < free.size(); ++i)
    out[free[i]] = valueOf(search.keys[free[i]].dist, x(static_cast<long>(i)));
  return out;
}

}  // namespace

std::vector<std::string> drawTrial(const SearchSpec& search, uint64_t seed, int trial,
                                   const std::vector<TrialResult>& earlier, bool higherBetter) {
  if (search.sampler == "maxlipo") return drawModel(search, seed, trial, earlier, higherBetter);
  const std::vector<double> u = unitPoint(search.sampler, search.keys.size(), seed, trial);
  std::vector<std::string> out;
  for (size_t k = 0; k < search.keys.size(); ++k) out.push_back(search.keys[k].dist.valueAt(u[k]));
  return out;
}

}  // namespace stagewise::study
