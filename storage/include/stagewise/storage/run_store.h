#pragma once
// The run store: one SQLite file holding every run, its series, events and checkpoints.

#include <memory>
#include <string>
#include <vector>

#include "stagewise/storage/options.h"
#include "stagewise/storage/records.h"
#include "stagewise/storage/store_error.h"

namespace stagewise::storage {

class RunWriter;

/// Opens (creating or upgrading) a run store file and owns its writer thread.
///
/// Opening checks the file before writing anything: a file that is not SQLite, is damaged, is
/// some other program's database or comes from a newer Stagewise throws StoreError and is left
/// byte-for-byte as it was. Then the connection is set to WAL with synchronous=NORMAL, older
/// schemas are migrated forward, and runs left `running` by a dead writer become `interrupted`.
///
/// Thread-safe. Reading goes through RunReader objects (one per thread, each with its own
/// connection); writing goes through writer(); the small edits below run synchronously.
class RunStore {
 public:
  /// Throws StoreError (message names the file and what to do).
  explicit RunStore(std::string path, StoreOptions options = {});
  /// Flushes the writer; runs it still records without a final status become `interrupted`.
  ~RunStore();
  RunStore(const RunStore&) = delete;
  RunStore& operator=(const RunStore&) = delete;

  const std::string& path() const;
  const StoreOptions& options() const;
  /// Schema version the file had before opening (0: new file).
  int schemaVersionFound() const;
  /// Runs this open marked `interrupted`.
  const std::vector<int64_t>& recoveredRuns() const;
  /// Checks again (e.g. on a timer in the GUI); returns the runs newly marked `interrupted`.
  std::vector<int64_t> recoverStaleRuns();
  /// True if the run is `running` and its writer (in this or another process) is alive.
  bool isLive(int64_t runId) const;

  /// The writer thread, started on first use.
  RunWriter& writer();

  // Edits. Each throws StoreError for an unknown run id.
  void renameRun(int64_t runId, const std::string& name);
  void setNotes(int64_t runId, const std::string& notes);
  /// Tags are trimmed; empty ones are ignored; adding an existing tag is a no-op.
  void addTags(int64_t runId, const std::vector<std::string>& tags);
  void removeTags(int64_t runId, const std::vector<std::string>& tags);
  void setTags(int64_t runId, const std::vector<std::string>& tags);
  /// Deletes runs with their stages, series, points, events, checkpoints and tags, all or none.
  /// Refuses (StoreError) an unknown id or a run that is still being recorded.
  void deleteRuns(const std::vector<int64_t>& runIds);

  // Studies. A study being run holds a lock like a run's (`<db>.study-<id>.lock`); opening the
  // store and recoverStaleRuns() mark a `running` study whose process is gone `interrupted`.
  /// Creates a `running` study written by this process. Throws StoreError.
  int64_t createStudy(const NewStudy& study);
  /// Takes a study that is not running back to `running` in this process (a completed one too,
  /// to run again what failed). Refuses (StoreError) an unknown id or a study that another
  /// process is still running.
  void resumeStudy(int64_t studyId);
  /// Links a run to a point of the study (idempotent).
  void linkStudyRun(int64_t studyId, const StudyRunRecord& link);
  /// Marks the run's links in the study replaced (it is run again from the start).
  void markStudyRunReplaced(int64_t studyId, int64_t runId);
  /// A search's trial that the pruner stopped at `rung` steps: its status becomes `pruned` (it
  /// ended stopped, or completed before the stop took effect; a failed run stays failed), its
  /// link notes the rung, and `message` (why) is added to its events.
  void markRunPruned(int64_t studyId, int64_t runId, int64_t rung, const std::string& message);
  /// The study's final status (stopped or completed); releases its lock.
  void finishStudy(int64_t studyId, StudyStatus status);
  /// Deletes studies with their links (not their runs), all or none; refuses a live one.
  void deleteStudies(const std::vector<int64_t>& studyIds);

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

}  // namespace stagewise::storage
