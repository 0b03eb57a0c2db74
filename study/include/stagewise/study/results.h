#pragma once
// A stored study read back: its plan, what each point still needs (run, continue, nothing), and
// its runs' outcomes grouped (the `study show` table and JSON, the `study export` rows). Shared by
// the CLI and the workbench; Torch-free and Qt-free.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "stagewise/storage/records.h"
#include "stagewise/study/study.h"

namespace stagewise::storage {
class RunReader;
}

namespace stagewise::study {

/// The plan a stored study was made with (its keys, values, seeds and sample).
StudyPlan planOf(const storage::StudyRecord& study);

/// What a point of a study needs next.
struct PointWork {
  GridPoint point;
  enum class Kind {
    Done,      ///< a run linked to it completed: never repeated
    Continue,  ///< its stopped or interrupted run has a checkpoint: continue that record
    Run,       ///< run it (again): `replaces` lists its earlier records, kept and marked replaced
  } kind = Kind::Run;
  int64_t runId = 0;           ///< Done / Continue: the run
  std::string checkpointPath;  ///< Continue: the newest checkpoint
  std::vector<int64_t> replaces;
};
/// Every point of the study known now, in order, with what it needs. A grid knows all of its
/// points; a search (searchWork) knows its trials as far as the sampler can draw them and each
/// vary point's tuned runs once all its trials have ended.
std::vector<PointWork> pendingWork(storage::RunReader& reader, const storage::StudyRecord& study);

/// What a point needs given its links: Done when a run linked to it completed or was pruned (or
/// failed, with `failedIsDone`: a search's trial that diverged is a result, not an accident),
/// Continue from the newest checkpoint of its stopped or interrupted run, else Run.
PointWork workFor(storage::RunReader& reader, const GridPoint& point,
                  const std::vector<storage::StudyRunRecord>& links, bool failedIsDone);

/// One trial of a search as stored: its point, run and the choosing metric's value.
struct TrialState {
  GridPoint point;
  PointWork work;
  /// The choosing metric: a completed run's final value, a pruned run's last (at its rung);
  /// empty while it runs, or when it failed or measured none.
  std::optional<double> value;
  storage::RunStatus status = storage::RunStatus::Running;  ///< of its run (Running: none yet)
  std::optional<int64_t> prunedAt;
};

/// A search's state read back: its trials per vary point, the best of each, and the work.
struct SearchState {
  std::vector<std::vector<std::string>> varyPoints;
  std::vector<std::vector<TrialState>> trials;  ///< per vary point, the trials known so far
  /// Per vary point: the index of the best completed trial (by the choosing metric), once all
  /// its trials have ended; empty before, or when none completed with a value.
  std::vector<std::optional<size_t>> best;
  std::vector<PointWork> work;  ///< trials and tuned runs known now, in the study's order
};
SearchState searchWork(storage::RunReader& reader, const storage::StudyRecord& study,
                       const StudyPlan& plan);

/// The identity of a resolved spec for sharing runs between points: its canonical JSON without
/// `name` and `checkpoint` (which do not change what is trained) and without what its mode does
/// not read (backprop: the cut, the aux heads, the probe; local: the pipeline schedule; pipeline:
/// the local overlap). `debug` stays: a fault hook changes the run.
std::string specIdentity(const std::string& canonicalSpecJson);

/// What runs equal in every key except the seed share: specIdentity without `train.seed` (the
/// workbench's grouped overlay groups any selection of stored runs by it).
std::string groupIdentity(const std::string& specJson);

/// One run of a study with what it gave back.
struct StudyRunRow {
  storage::StudyRunRecord link;
  storage::RunRecord run;           ///< without spec / summary JSON
  std::vector<std::string> values;  ///< the point's values, JSON texts in key order
  /// Searches: the run's validation metrics (the choosing metric first); a pruned run's is its
  /// value at the rung that stopped it.
  std::optional<double> valAccuracy, valLoss;
  double trainFlops = 0;
  std::vector<EvalPoint> evals;  ///< its test-accuracy evaluations
  std::optional<TargetHit> hit;  ///< time- and samples-to-target
};

/// A search's result for one vary point: its best trial and, with tuning, the tuned runs.
struct TunedResult {
  std::vector<std::string> varyValues;  ///< JSON texts, in the vary keys' order
  std::vector<std::string> best;        ///< the best trial's searched values (empty: none)
  std::string metric;                   ///< the choosing metric (a validation metric)
  std::optional<double> bestValue;      ///< the best trial's value of it
  int64_t bestRunId = 0;
  int trials = 0;     ///< trials with a run (ended or not)
  int completed = 0;  ///< trials that completed
  int pruned = 0;     ///< trials stopped at a rung
  int failed = 0;     ///< trials that failed (diverged, say)
  /// The tuned runs' test accuracy (completed, not replaced): mean, sample std, n; the 95 %
  /// confidence interval of the mean, Student's t (n - 1 degrees of freedom; none for n < 2).
  Stat test;
  std::optional<std::pair<double, double>> ci95;
  std::vector<int64_t> tunedRuns;
  /// The best choosing-metric value after each trial, in trial order (NaN before the first).
  std::vector<double> bestSoFar;
};

struct StudyResults {
  storage::StudyRecord study;
  std::vector<std::string> keys;     ///< varied keys, in order (a search's searched keys after)
  double target = 0;                 ///< the accuracy used for time-to-target
  bool targetIsDefault = false;      ///< no --target given nor stored: see defaultTarget
  std::vector<StudyRunRow> rows;     ///< every linked run (replaced ones too), by point
  std::vector<RunOutcome> outcomes;  ///< the completed, not replaced runs, one per run
  std::vector<size_t> outcomeRows;   ///< outcomes[i] comes from rows[outcomeRows[i]]
  std::vector<Group> groups;
  /// Searches: the plan, and one result per vary point (empty for a grid).
  StudyPlan plan;
  std::vector<TunedResult> tuned;
  /// Distinct runs (points sharing a run count once): completed, and the plan's total (a
  /// search's: its stored total). study.runsCompleted / runsTotal count grid points.
  int runsCompleted = 0;
  int runsTotal = 0;
};

/// Whether `mode` reads spec key `key` (dotted): backprop reads no partition, local, pipeline or
/// probe key; local no pipeline key; pipeline no local key. The rule specIdentity applies.
bool modeReadsKey(const std::string& mode, const std::string& key);

/// The distinct runs of a grid plan: its points per seed, with keys their mode (the varied
/// mode, else the base's) does not read counted once.
int distinctRuns(const StudyPlan& plan, const std::string& baseSpecJson);

/// A study's runs counted as `study show` counts them (StudyResults::runsCompleted / runsTotal):
/// the distinct runs among its completed, not replaced links, and distinctRuns of a grid's plan
/// (a search's stored total). One read of its links, no series: cheap enough for every study of
/// a list (`study list`, the Runs study filter), where StudyRecord's counts are grid points.
struct RunCounts {
  int completed = 0;
  int total = 0;
};
RunCounts distinctRunCounts(storage::RunReader& reader, const storage::StudyRecord& study);

/// A search's result per vary point (loadStudyResults fills StudyResults::tuned with it).
std::vector<TunedResult> tunedResults(storage::RunReader& reader, const StudyResults& results);

/// The 95 % confidence interval of a mean (Student's t), empty for fewer than 2 values.
std::optional<std::pair<double, double>> confidence95(const Stat& s);

/// The default target: the lowest, over the study's completed runs, of each run's best test
/// accuracy, so that every completed run reaches it and their times compare.
double defaultTarget(const std::vector<std::vector<EvalPoint>>& evalsPerRun);

/// Reads the study's runs and groups them. `target` overrides the stored one. Throws
/// StudyError for an unknown study id.
StudyResults loadStudyResults(storage::RunReader& reader, int64_t studyId,
                              std::optional<double> target = std::nullopt);

/// The `study show --json` object: study_id, name, status, target, groups[...].
std::string showJson(const StudyResults& results);
/// The `study list --json` array.
/// `counts[i]`: distinctRunCounts of studies[i], as runs_distinct_completed / runs_distinct_total
/// beside the grid-point counts runs_completed / runs_total (missing: left out).
std::string listJson(const std::vector<storage::StudyRecord>& studies,
                     const std::vector<RunCounts>& counts = {});
/// The `study show` table.
std::string showTable(const StudyResults& results);
/// `study export`: one row per run with the study's keys as columns (csv or json).
std::string exportRows(const StudyResults& results, const std::string& format);

}  // namespace stagewise::study
