#pragma once
// Studies (issue 15): a base experiment, varied keys with their values (a Cartesian grid, or N
// points drawn from it) and seeds, expanded into the runs to make; and what the runs give back,
// grouped: mean and sample standard deviation per group, time-to-target interpolated between
// evaluations, and the non-dominated groups (the compute-vs-time front). Torch-free and Qt-free:
// the CLI, the store and the workbench share it.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "stagewise/study/search.h"

namespace stagewise::study {

/// A bad --vary, grid or point: `what` says which and what to fix.
struct StudyError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// One varied key and its values, each a JSON text (`[4]`, `0.001`, `"local"`).
struct VariedKey {
  std::string key;
  std::vector<std::string> values;
};

/// Parses `KEY=JSON_LIST` (`--vary 'train.lr=[0.001,0.0003]'`). Throws StudyError naming the
/// argument when the key is empty or the value is not a non-empty JSON list.
VariedKey parseVary(const std::string& argument);

/// An experiment's "study" object (docs/experiment-format.md): what the CLI reads from
/// `--config` and the workbench saves with the experiment. Unset fields take their defaults.
struct StudyObject {
  std::vector<VariedKey> keys;  ///< "vary", in the object's order
  std::optional<int> seeds, sample;
  std::optional<int64_t> sampleSeed;
  std::optional<std::string> name;
  std::optional<double> target;
  /// "search", "trials", "sampler", "prune", "tune" (search.h); empty keys: a grid.
  SearchSpec search;
  /// Nothing to run: no key varied or searched and at most one seed.
  bool empty() const { return keys.empty() && search.empty() && seeds.value_or(1) <= 1; }
};
/// Parses a study object (JSON text). Throws StudyError "study.KEY: what to fix".
StudyObject parseStudyObject(const std::string& json);
/// The object as JSON text (keys in the documented order; unset fields left out).
std::string studyObjectJson(const StudyObject& study, int indent = -1);
/// An experiment's JSON (an object) with `study` as its "study" object (replacing any), in the
/// same layout (two-space indent).
std::string withStudyObject(const std::string& experimentJson, const StudyObject& study);
/// The "study" object of an experiment file's text, if it has one (throws StudyError when it
/// is malformed; text that is not a JSON object has none).
std::optional<StudyObject> studyObjectOf(const std::string& experimentJson);

/// The value of a dotted key ("train.lr", "partition.cuts") in a spec's JSON, as JSON text;
/// empty when the spec has no such key (a varied key's first value is often the spec's own).
std::optional<std::string> valueAt(const std::string& specJson, const std::string& key);

struct StudyPlan {
  std::vector<VariedKey> keys;
  int seeds = 1;   ///< seeds 1..N, unless train.seed is a varied key
  int sample = 0;  ///< > 0: that many grid points drawn at random (seeded), not the whole grid
  uint64_t sampleSeed = 1;  ///< also seeds a search's sampler
  /// A search: `trials` drawn points per point of the grid of `keys` (run on one seed each, the
  /// base spec's), then with `tune` each grid point's best trial on `tune.seeds` fresh seeds.
  SearchSpec search;
  bool isSearch() const { return !search.empty(); }
};

/// One run of a study: the point's value for each varied key (JSON text, in key order; a
/// search's points add the searched keys' values after them) and its seed (pointSets gives the
/// `--set` assignments that make its spec from the base).
struct GridPoint {
  int index = 0;  ///< position in the study's order
  std::vector<std::string> values;
  int64_t seed = 1;
  /// Searches: which point of the vary grid (-1: a grid study's point), which trial, or that it
  /// is a tuned run (trial -1) and which of the tuned seeds.
  int varyPoint = -1;
  int trial = -1;
  bool tuned = false;
  /// Searches: the seed is written as train.seed even when it equals the base's.
  bool explicitSeed = false;
};

/// The runs of a plan, in order: the grid's points with the first key varying slowest, each
/// point once per seed (seeds innermost). With `sample` = N < the grid's size, N distinct points
/// drawn without replacement from a generator seeded by `sampleSeed`, in grid order. Throws
/// StudyError for a plan without keys and seeds, a key given twice, or seeds < 1.
std::vector<GridPoint> expandGrid(const StudyPlan& plan);

/// The grid of a search's `vary` keys (one point per combination, no seeds): what each trial and
/// tuned run of a search belongs to. A search without vary keys has one point with no values.
std::vector<std::vector<std::string>> varyGrid(const StudyPlan& plan);

/// Every key of a point, in value order: the varied keys, then a search's searched keys.
std::vector<std::string> pointKeys(const StudyPlan& plan);

/// Checks a search plan (counts, the sampler, the metrics that choose, seeds); throws StudyError
/// naming the study key.
void checkSearch(const StudyPlan& plan);

/// A search's order: trial t of every vary point before trial t + 1 (so a study stopped early
/// has searched every point alike), then each vary point's tuned runs. Points: vary points x
/// (trials + tune seeds).
int searchPointCount(const StudyPlan& plan);
/// Trial `trial` of vary point `vary` with its searched values (seed 1).
GridPoint trialPoint(const StudyPlan& plan, int vary, int trial,
                     const std::vector<std::string>& searched);
/// Tuned run `j` of vary point `vary` with the best trial's searched values (seed 2 + j: fresh).
GridPoint tunedPoint(const StudyPlan& plan, int vary, int j,
                     const std::vector<std::string>& searched);
/// Points to check a search's spec before it runs: every vary point with each searched key at
/// its bounds (each choice), the others at their low bounds.
std::vector<GridPoint> searchCheckPoints(const StudyPlan& plan);

/// `key=value` assignments that apply a point to the base spec (train.seed last, unless varied).
std::vector<std::string> pointSets(const StudyPlan& plan, const GridPoint& point);

/// "partition.cuts=[4], train.lr=0.001, mode=local, seed 2": how a point is named in messages
/// and run names (strings without their JSON quotes).
std::string describePoint(const StudyPlan& plan, const GridPoint& point);

/// What a finished run gives back to its study.
struct RunOutcome {
  std::vector<std::string> values;  ///< the point's values (not the seed)
  int64_t seed = 1;
  std::string mode;  ///< local, backprop, pipeline: marked apart on the front
  double testAccuracy = 0;
  double samplesPerSec = 0;
  double wallS = 0;
  double trainFlops = 0;
  std::optional<double> targetTimeS;    ///< time-to-target; empty: not reached
  std::optional<double> targetSamples;  ///< samples-to-target; empty: not reached
};

/// Mean and sample standard deviation (n - 1; 0 for a single value), with the extremes.
struct Stat {
  double mean = 0;
  double std = 0;
  int n = 0;
  double min = 0, max = 0;
  /// The standard error of the mean, std / sqrt(n) (0 for n < 2).
  double sem() const;
};
Stat stat(const std::vector<double>& values);

/// The runs equal in every key except the seed.
struct Group {
  std::vector<std::string> values;
  std::string mode;
  std::vector<size_t> runs;  ///< indices into the outcomes
  Stat accuracy, samplesPerSec, wallS, trainFlops;
  /// Time-to-target over the runs that reached it (`reached` of n); empty when none did.
  std::optional<Stat> targetTimeS;
  int reached = 0;
  bool onFront = false;
};

/// Groups outcomes by their values, in the order each group first appears; marks the front by
/// mean wall time (lower better) against mean accuracy (higher better).
std::vector<Group> groupRuns(const std::vector<RunOutcome>& runs);

/// One evaluation of a run: when the last stage finished that step, samples seen, accuracy.
struct EvalPoint {
  double timeS = 0;
  double samples = 0;
  double accuracy = 0;
};
struct TargetHit {
  double timeS = 0;
  double samples = 0;
};
/// The first time (and samples) at which accuracy reaches `target`, interpolated linearly
/// between the evaluation before and the one that reached it (the first evaluation itself when
/// it already does); empty when no evaluation reaches it.
std::optional<TargetHit> timeToTarget(const std::vector<EvalPoint>& evals, double target);

/// Non-dominated points with cost x (lower better) and quality y (higher better): a point is
/// dominated when another is no worse in both and better in one. Returns one flag per point.
std::vector<bool> paretoFront(const std::vector<std::pair<double, double>>& points);

}  // namespace stagewise::study
