#pragma once
// Reading the run store: listing runs, their details and their series.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stagewise/storage/records.h"
#include "stagewise/storage/run_query.h"

namespace stagewise::storage {

class RunStore;

/// Columns runs can be sorted by. Names as in runColumnFromString / the CLI's --sort.
enum class RunColumn {
  Id,
  Name,
  CreatedAt,
  FinishedAt,
  Status,
  Mode,
  ModelKind,
  StageCount,
  Steps,
  TestAccuracy,
  TestLoss,
  SamplesPerSec,
  WallSeconds,
  CpuUtilization,
  PipelineEfficiency
};
/// "id", "name", "created", "finished", "status", "mode", "model", "stages", "steps",
/// "test_accuracy", "test_loss", "samples_per_sec", "wall_seconds", "cpu_utilization",
/// "pipeline_efficiency".
std::string toString(RunColumn column);
std::optional<RunColumn> runColumnFromString(std::string_view text);
std::vector<std::string> runColumnNames();

/// Which runs to list. Every set criterion must hold.
struct RunFilter {
  std::string text;                        ///< case-insensitive substring of name, notes or any tag
  std::vector<RunStatus> statuses;         ///< any of these; empty: all
  std::string mode;                        ///< "local" / "backprop"; empty: all
  std::optional<TimestampMs> createdFrom;  ///< inclusive
  std::optional<TimestampMs> createdTo;    ///< exclusive
  std::vector<std::string> tags;           ///< carries every one of these tags (exact)
  std::optional<int64_t> study;            ///< linked to this study (replaced runs included)
  std::optional<RunQuery> query;           ///< must hold (docs/query.md)
};

/// Sort order of listRuns. Runs with no value in the column (e.g. no test accuracy yet) come
/// last either way; ties are broken by id, newest first.
struct RunOrder {
  RunColumn column = RunColumn::CreatedAt;
  bool descending = true;
};

/// An x range for series reads, inclusive on both ends, on the XAxis of the call.
struct XRange {
  double from = 0;
  double to = 0;
};

/// Read access with its own read-only connection. In WAL mode readers never block the writer
/// and see each committed batch as it lands. One RunReader per thread; it is cheap to make.
/// Everything throws StoreError on a database error.
class RunReader {
 public:
  explicit RunReader(const RunStore& store);
  ~RunReader();
  RunReader(RunReader&&) noexcept;
  RunReader& operator=(RunReader&&) noexcept;

  // ---- runs
  /// A page of runs (limit < 0: all). specJson / summaryJson are left empty; see run().
  std::vector<RunRecord> listRuns(const RunFilter& filter = {}, const RunOrder& order = {},
                                  int limit = -1, int offset = 0);
  int64_t countRuns(const RunFilter& filter = {});
  /// One run with everything, or nullopt.
  std::optional<RunRecord> run(int64_t runId);
  std::vector<StageRecord> stages(int64_t runId);
  std::vector<LayerRecord> layers(int64_t runId);
  std::vector<EventRecord> events(int64_t runId);
  std::vector<CheckpointRecord> checkpoints(int64_t runId);
  /// The timeline spans stored of the run, by stage, then start (a bounded share of them:
  /// docs/metrics.md, "Spans kept"); empty for a run recorded before the store kept spans.
  std::vector<SpanRecord> spans(int64_t runId);
  /// Every tag in use, sorted, for filter completion.
  std::vector<std::string> allTags();
  /// The dotted spec keys whose values differ between the runs, in key order. Throws StoreError
  /// for an unknown run id.
  std::vector<SpecDifference> diffSpecs(const std::vector<int64_t>& runIds);

  // ---- studies
  /// Every study, newest first, with its keys and counts (baseSpecJson left empty).
  std::vector<StudyRecord> listStudies();
  /// One study with everything, or nullopt.
  std::optional<StudyRecord> study(int64_t studyId);
  /// The study's runs by point, then run id (replaced ones included, flagged).
  std::vector<StudyRunRecord> studyRuns(int64_t studyId);
  /// The step a pruned run's rung stopped it at, by run id, for those of `runIds` a search
  /// pruned (what `runs list` shows beside "pruned").
  std::map<int64_t, int64_t> prunedSteps(const std::vector<int64_t>& runIds);
  /// One series of every run linked to the study, by run id, in one read (a study's
  /// evaluations for time-to-target).
  std::map<int64_t, std::vector<SeriesPoint>> studySeries(int64_t studyId, const SeriesKey& key);
  /// A number from the summary JSON of every run linked to the study (`jsonPath` as SQLite's
  /// json_extract takes it, e.g. "$.train_flops"); runs without it are left out.
  std::map<int64_t, double> studySummaryNumbers(int64_t studyId, const std::string& jsonPath);

  // ---- series
  /// The run's series ordered by name, stage, layer.
  std::vector<SeriesInfo> listSeries(int64_t runId);
  std::optional<SeriesInfo> findSeries(int64_t runId, const SeriesKey& key);
  /// Every point (in write order), optionally only those with x in `range`. Empty if there is
  /// no such series.
  std::vector<SeriesPoint> loadSeries(int64_t runId, const SeriesKey& key, XAxis axis = XAxis::Step,
                                      std::optional<XRange> range = std::nullopt);
  /// The series cut into `pixels` equal columns of x (over `range`, else its whole extent), each
  /// with the min/max/first/last of its points. Uses the stored summary levels, so a
  /// million-point series costs about as much as a few thousand points.
  DecimatedSeries loadDecimated(int64_t runId, const SeriesKey& key, int pixels,
                                XAxis axis = XAxis::Step,
                                std::optional<XRange> range = std::nullopt);
  /// Several series (of one or several runs) sampled on one grid of `points` x values spread
  /// over `range` (else the union of their extents); see AlignedSeries. With `smoothing` in
  /// (0, 1) the values are the debiased exponential moving average of every stored point (from
  /// the series' first), taken before sampling on the grid, so a long series does not alias.
  AlignedSeries alignSeries(const std::vector<SeriesRef>& refs, int points,
                            XAxis axis = XAxis::Step, std::optional<XRange> range = std::nullopt,
                            double smoothing = 0);
  /// Streams a series' points in write order without holding them all (exports).
  void forEachPoint(int64_t seriesId, const std::function<void(const SeriesPoint&)>& visit);

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

}  // namespace stagewise::storage
