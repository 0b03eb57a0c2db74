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
std::vector<PointWork> pendingWork(storage::RunReader& reader, const storage::StudyRecord& study);

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
  double trainFlops = 0;
  std::vector<EvalPoint> evals;  ///< its test-accuracy evaluations
  std::optional<TargetHit> hit;  ///< time- and samples-to-target
};

struct StudyResults {
  storage::StudyRecord study;
  std::vector<std::string> keys;     ///< varied keys, in order
  double target = 0;                 ///< the accuracy used for time-to-target
  bool targetIsDefault = false;      ///< no --target given nor stored: see defaultTarget
  std::vector<StudyRunRow> rows;     ///< every linked run (replaced ones too), by point
  std::vector<RunOutcome> outcomes;  ///< the completed, not replaced runs, one per point
  std::vector<size_t> outcomeRows;   ///< outcomes[i] comes from rows[outcomeRows[i]]
  std::vector<Group> groups;
};

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
std::string listJson(const std::vector<storage::StudyRecord>& studies);
/// The `study show` table.
std::string showTable(const StudyResults& results);
/// `study export`: one row per run with the study's keys as columns (csv or json).
std::string exportRows(const StudyResults& results, const std::string& format);

}  // namespace stagewise::study
