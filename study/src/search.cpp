#include "stagewise/study/search.h"

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <boost/random/sobol.hpp>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

#include "stagewise/study/study.h"

namespace stagewise::study {

using nlohmann::json;

namespace {

std::string number(double v) {
  return json(v).dump();
}

/// Parses "A:B" (after the kind) as two numbers; throws naming the argument.
std::pair<double, double> bounds(const std::string& text, const std::string& what) {
  const size_t colon = text.find(':');
  auto parse = [&](const std::string& part) {
    try {
      size_t used = 0;
      const double v = std::stod(part, &used);
      if (used == part.size() && std::isfinite(v)) return v;
    } catch (const std::exception&) {
    }
    throw StudyError(what + ": '" + part + "' is not a number");
  };
  if (colon == std::string::npos) throw StudyError(what + ": write two bounds, LOW:HIGH");
  return {parse(text.substr(0, colon)), parse(text.substr(colon + 1))};
}

void checkBounds(Distribution& d, const std::string& field) {
  if (d.kind == Distribution::Kind::Choice) {
    if (d.choices.empty()) throw StudyError(field + ": choice needs at least one value");
    return;
  }
  if (!std::isfinite(d.low) || !std::isfinite(d.high))
    throw StudyError(field + ": the bounds must be numbers");
  if (d.kind == Distribution::Kind::Int) {
    if (d.low != std::floor(d.low) || d.high != std::floor(d.high))
      throw StudyError(field + ": int bounds must be whole numbers");
    if (d.low > d.high) throw StudyError(field + ": the low bound is above the high bound");
    return;
  }
  if (!(d.low < d.high))
    throw StudyError(field +
                     ": the low bound must be below the high bound (use choice for one "
                     "value)");
  if (d.kind == Distribution::Kind::LogUniform && !(d.low > 0))
    throw StudyError(field + ": log_uniform bounds must be positive");
}

/// 53 random bits of a 64-bit word as a double in [0, 1).
double unit(uint64_t bits) {
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

/// Scrambled Sobol: Boost's Sobol sequence (Joe and Kuo's direction numbers) from its origin,
/// with Matousek's linear matrix scramble and a random digital shift per dimension, drawn from
/// the seed (as SciPy's scrambled Sobol). Both keep the net property: the first 2^k points
/// still fall one into each of the 2^k dyadic cells of a coordinate.
std::vector<double> sobolPoint(size_t dims, uint64_t seed, int trial) {
  std::vector<uint64_t> raw(dims, 0);
  if (trial > 0) {
    boost::random::sobol gen(dims);
    gen.discard(static_cast<boost::uintmax_t>(trial - 1) * dims);
    for (auto& r : raw) r = gen();
  }
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 0x50B01ull);
  std::vector<double> out(dims);
  for (size_t d = 0; d < dims; ++d) {
    // The scramble matrix: lower triangular over the bits (most significant first), ones on
    // the diagonal; row j says which input bits i <= j output bit j sums (mod 2).
    uint64_t y = 0;
    std::vector<uint64_t> rows(64);
    for (int j = 0; j < 64; ++j) {
      const uint64_t below = j == 0 ? 0 : (rng() & ~((~0ull) >> j));  // bits i < j (MSB first)
      rows[static_cast<size_t>(j)] = below | (1ull << (63 - j));
    }
    for (int j = 0; j < 64; ++j)
      if (__builtin_parityll(raw[d] & rows[static_cast<size_t>(j)])) y |= 1ull << (63 - j);
    y ^= rng();  // the digital shift
    out[d] = unit(y);
  }
  return out;
}

std::vector<double> randomPoint(size_t dims, uint64_t seed, int trial) {
  // One generator per trial, so a trial's draw does not depend on how many came before.
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                    static_cast<uint32_t>(trial), 0x5EA5C4u};
  std::mt19937_64 rng(seq);
  std::vector<double> out(dims);
  for (auto& u : out) u = unit(rng());
  return out;
}

}  // namespace

std::string Distribution::valueAt(double u) const {
  u = std::clamp(u, 0.0, std::nextafter(1.0, 0.0));
  switch (kind) {
    case Kind::LogUniform:
      // Clamped both ways: exp(log(low)) may round below low.
      return number(
          std::clamp(std::exp(std::log(low) + u * (std::log(high) - std::log(low))), low, high));
    case Kind::Uniform:
      return number(std::clamp(low + u * (high - low), low, high));
    case Kind::Int: {
      const double n = high - low + 1;
      return nlohmann::json(static_cast<int64_t>(std::min(high, low + std::floor(u * n)))).dump();
    }
    case Kind::Choice: {
      const size_t i =
          std::min(choices.size() - 1,
                   static_cast<size_t>(std::floor(u * static_cast<double>(choices.size()))));
      return choices[i];
    }
  }
  return "null";
}

std::string Distribution::json() const {
  nlohmann::json out;
  switch (kind) {
    case Kind::LogUniform:
      out["log_uniform"] = {low, high};
      break;
    case Kind::Uniform:
      out["uniform"] = {low, high};
      break;
    case Kind::Int:
      out["int"] = {static_cast<int64_t>(low), static_cast<int64_t>(high)};
      break;
    case Kind::Choice: {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& c : choices) list.push_back(nlohmann::json::parse(c));
      out["choice"] = list;
      break;
    }
  }
  return out.dump();
}

std::string Distribution::text() const {
  switch (kind) {
    case Kind::LogUniform:
      return "log_uniform:" + number(low) + ":" + number(high);
    case Kind::Uniform:
      return "uniform:" + number(low) + ":" + number(high);
    case Kind::Int:
      return "int:" + std::to_string(static_cast<int64_t>(low)) + ":" +
             std::to_string(static_cast<int64_t>(high));
    case Kind::Choice: {
      std::string out = "choice:[";
      for (size_t i = 0; i < choices.size(); ++i) out += (i ? "," : "") + choices[i];
      return out + "]";
    }
  }
  return {};
}

std::string SearchSpec::choosingMetric() const {
  if (tune) return tune->metric;
  if (prune) return prune->metric;
  return "val_accuracy";
}

std::vector<std::string> samplerNames() {
  return {"random", "sobol", "maxlipo"};
}

Distribution parseDistribution(const std::string& text, const std::string& field) {
  const json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  const char* kHint =
      R"(: write one of {"log_uniform": [LOW, HIGH]}, {"uniform": [LOW, HIGH]}, {"int": [LOW, HIGH]}, {"choice": [...]})";
  if (doc.is_discarded() || !doc.is_object() || doc.size() != 1) throw StudyError(field + kHint);
  const std::string kind = doc.begin().key();
  const json& arg = doc.begin().value();
  Distribution d;
  if (kind == "choice") {
    d.kind = Distribution::Kind::Choice;
    if (!arg.is_array() || arg.empty())
      throw StudyError(field + ".choice: expected a non-empty list of values");
    for (const auto& c : arg) d.choices.push_back(c.dump());
  } else {
    if (kind == "log_uniform")
      d.kind = Distribution::Kind::LogUniform;
    else if (kind == "uniform")
      d.kind = Distribution::Kind::Uniform;
    else if (kind == "int")
      d.kind = Distribution::Kind::Int;
    else
      throw StudyError(field + ": unknown distribution '" + kind + "'" + kHint);
    if (!arg.is_array() || arg.size() != 2 || !arg[0].is_number() || !arg[1].is_number())
      throw StudyError(field + "." + kind + ": expected two numbers [LOW, HIGH]");
    d.low = arg[0].get<double>();
    d.high = arg[1].get<double>();
  }
  checkBounds(d, field + "." + kind);
  return d;
}

SearchedKey parseSearchArgument(const std::string& argument) {
  const size_t eq = argument.find('=');
  const char* kHint =
      ": write KEY=DIST, DIST one of log_uniform:LOW:HIGH, uniform:LOW:HIGH, int:LOW:HIGH, "
      "choice:[JSON,...] (e.g. --search train.lr=log_uniform:1e-5:1e-1)";
  if (eq == std::string::npos || eq == 0) throw StudyError("--search '" + argument + "'" + kHint);
  SearchedKey k;
  k.key = argument.substr(0, eq);
  const std::string dist = argument.substr(eq + 1);
  const size_t colon = dist.find(':');
  const std::string kind = dist.substr(0, colon);
  const std::string rest = colon == std::string::npos ? "" : dist.substr(colon + 1);
  const std::string what = "--search " + k.key;
  if (kind == "choice") {
    const json list = json::parse(rest, nullptr, /*allow_exceptions=*/false);
    if (list.is_discarded() || !list.is_array() || list.empty())
      throw StudyError(what + ": choice takes a non-empty JSON list, e.g. choice:[32,128]");
    k.dist.kind = Distribution::Kind::Choice;
    for (const auto& c : list) k.dist.choices.push_back(c.dump());
  } else {
    if (kind == "log_uniform")
      k.dist.kind = Distribution::Kind::LogUniform;
    else if (kind == "uniform")
      k.dist.kind = Distribution::Kind::Uniform;
    else if (kind == "int")
      k.dist.kind = Distribution::Kind::Int;
    else
      throw StudyError(what + ": unknown distribution '" + kind + "'" + kHint);
    std::tie(k.dist.low, k.dist.high) = bounds(rest, what);
  }
  checkBounds(k.dist, what);
  return k;
}

bool higherIsBetter(const std::string& metric) {
  for (const char* lower : {"loss", "bits_per_byte", "perplexity", "error"})
    if (metric.find(lower) != std::string::npos) return false;
  return true;
}

void requireValidationMetric(const std::string& metric, const std::string& field) {
  if (metric.rfind("val_", 0) == 0 && metric.size() > 4) return;
  throw StudyError(field + ": '" + metric +
                   "' cannot choose: only validation metrics (val_accuracy, val_loss) choose; "
                   "test metrics are reported, never used to choose");
}

std::vector<double> unitPoint(const std::string& sampler, size_t dims, uint64_t seed, int trial) {
  if (sampler == "sobol") return sobolPoint(dims, seed, trial);
  return randomPoint(dims, seed, trial);
}

std::vector<int64_t> rungSteps(const PruneSpec& prune, int64_t totalSteps) {
  std::vector<int64_t> rungs;
  if (prune.minSteps < 1 || prune.reduction < 2) return rungs;
  for (int64_t r = prune.minSteps; r < totalSteps; r *= prune.reduction) {
    rungs.push_back(r);
    if (r > totalSteps / prune.reduction) break;
  }
  return rungs;
}

AshaPruner::AshaPruner(PruneSpec spec, bool higherBetter)
    : m_spec(std::move(spec)), m_higher(higherBetter) {}

void AshaPruner::record(int64_t rung, double value) {
  m_values.emplace_back(rung, value);
}

AshaPruner::Decision AshaPruner::decide(int64_t rung, double value) {
  // A value that is not a number (a diverged trial) is worse than any number.
  auto better = [&](double a, double b) {
    if (std::isnan(b)) return !std::isnan(a);
    if (std::isnan(a)) return false;
    return m_higher ? a > b : a < b;
  };
  Decision d;
  d.competitors = 1;
  d.rank = 1;
  for (const auto& [r, v] : m_values) {
    if (r != rung) continue;
    ++d.competitors;
    if (better(v, value)) ++d.rank;
  }
  d.promoted = std::max(1, d.competitors / std::max(2, m_spec.reduction));
  d.keep = d.rank <= d.promoted;
  record(rung, value);
  return d;
}

double tQuantile975(int df) {
  if (df < 1) return std::nan("");
  return boost::math::quantile(boost::math::students_t(static_cast<double>(df)), 0.975);
}

}  // namespace stagewise::study
