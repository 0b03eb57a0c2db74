#pragma once
// Searches (issue 32): keys whose values are drawn from distributions rather than listed,
// `trials` draws per point of the study's `vary` grid, by a seeded sampler (random, scrambled
// Sobol, or dlib's model-based MaxLIPO+TR), asynchronous successive halving to stop trials that
// fall behind at a rung, and tuning: each vary point's best trial, chosen on a validation metric,
// run again with fresh seeds. Torch-free and Qt-free; docs/experiment-format.md, "Searches".

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace stagewise::study {

/// Trials per vary point when a search gives none.
inline constexpr int kDefaultTrials = 8;

/// Where a searched key's values come from.
struct Distribution {
  enum class Kind { LogUniform, Uniform, Int, Choice };
  Kind kind = Kind::Uniform;
  double low = 0;                    ///< LogUniform, Uniform, Int (inclusive)
  double high = 0;                   ///< LogUniform, Uniform, Int (inclusive)
  std::vector<std::string> choices;  ///< Choice: JSON texts
  /// The value at u in [0, 1) (a quantile), as JSON text: log_uniform and uniform spread u over
  /// [low, high] (log_uniform on a log scale), int over the whole numbers low..high, choice over
  /// the choices, each an equal share.
  std::string valueAt(double u) const;
  /// The distribution as the study object writes it: {"log_uniform": [1e-5, 0.1]}.
  std::string json() const;
  /// As the CLI writes it: log_uniform:1e-5:0.1.
  std::string text() const;
};

/// One searched key.
struct SearchedKey {
  std::string key;
  Distribution dist;
};

/// Stops trials that fall behind (asynchronous successive halving, as ASHA): at `min_steps` x
/// `reduction`^k steps a trial that is not in the top 1/`reduction` of the trials of its vary
/// point that reached that rung is stopped and kept as `pruned`.
struct PruneSpec {
  std::string metric = "val_accuracy";
  int64_t minSteps = 100;
  int reduction = 3;
};

/// Each vary point's best trial (by `metric`, a validation metric) run again on `seeds` fresh
/// seeds: the study's result for that point.
struct TuneSpec {
  std::string metric = "val_accuracy";
  int seeds = 3;
};

/// The search part of a study object.
struct SearchSpec {
  std::vector<SearchedKey> keys;   ///< "search", in the object's order
  int trials = 0;                  ///< per vary point
  std::string sampler = "random";  ///< random | sobol | maxlipo
  std::optional<PruneSpec> prune;
  std::optional<TuneSpec> tune;
  bool empty() const { return keys.empty(); }
  /// The metric that decides the best trial: tune's, else prune's, else val_accuracy.
  std::string choosingMetric() const;
};

/// The samplers, by name (docs: which to pick).
std::vector<std::string> samplerNames();

/// Parses a distribution as the study object writes it ({"log_uniform": [A, B]},
/// {"uniform": [A, B]}, {"int": [A, B]}, {"choice": [...]}); throws StudyError naming `field`.
Distribution parseDistribution(const std::string& json, const std::string& field);
/// Parses `--search KEY=DIST` (DIST: log_uniform:A:B, uniform:A:B, int:A:B, choice:[JSON,...]).
SearchedKey parseSearchArgument(const std::string& argument);

/// Whether a metric is better when higher (accuracy) or lower (loss, bits per byte, perplexity).
bool higherIsBetter(const std::string& metric);
/// A metric that may choose: a validation metric (`val_...`). Throws StudyError naming `field`
/// for any other (test metrics are reported, never used to choose).
void requireValidationMetric(const std::string& metric, const std::string& field);

/// What is known of a finished trial when the next is drawn (model-based sampling).
struct TrialResult {
  std::vector<std::string> values;  ///< the searched keys' values (JSON texts)
  std::optional<double> value;      ///< the choosing metric; empty: failed / no value
};

/// The searched values of trial `trial` (0-based), in key order. random and sobol depend only on
/// (keys, seed, trial): every vary point gets the same draws, so methods are searched over the
/// same candidates. maxlipo depends on the earlier trials' results of its vary point too
/// (`earlier`, in trial order, one per trial before `trial`), replayed through dlib's
/// global_function_search seeded by `seed`, so the same results give the same draws.
std::vector<std::string> drawTrial(const SearchSpec& search, uint64_t seed, int trial,
                                   const std::vector<TrialResult>& earlier = {},
                                   bool higherBetter = true);

/// The unit-cube point of trial `trial` (one coordinate per key) for random and sobol: exposed
/// for the tests (Sobol's stratification).
std::vector<double> unitPoint(const std::string& sampler, size_t dims, uint64_t seed, int trial);

/// The rungs of a prune spec within a run of `totalSteps` steps: min_steps x reduction^k, below
/// the last step (the end is the trial's result, not a rung).
std::vector<int64_t> rungSteps(const PruneSpec& prune, int64_t totalSteps);

/// Asynchronous successive halving over one vary point's trials. A trial reaching a rung is
/// compared with every trial of the point that reached it before (whatever happened to them
/// since) and itself: it goes on when it is among the best max(1, n / reduction) of those n,
/// else it is pruned. Nothing waits for a rung to fill.
class AshaPruner {
 public:
  AshaPruner(PruneSpec spec, bool higherBetter);
  /// A value another trial had at `rung` (read back from the store).
  void record(int64_t rung, double value);
  struct Decision {
    bool keep = true;
    int rank = 1;         ///< 1: best
    int competitors = 1;  ///< n, itself included
    int promoted = 1;     ///< max(1, n / reduction)
  };
  /// The trial has `value` at `rung`: records it and decides.
  Decision decide(int64_t rung, double value);

 private:
  PruneSpec m_spec;
  bool m_higher;
  std::vector<std::pair<int64_t, double>> m_values;
};

/// Student's t quantile for the two-sided 95 % interval with `df` degrees of freedom (>= 1).
double tQuantile975(int df);

}  // namespace stagewise::study
