#pragma once
// One replication report being made: its studies in the store, the runs it reuses, the runs it
// still has to make, and the documents at the end. `stagewise-cli report` and the workbench's
// Replication report both drive it (each trains the runs its own way), so a report is the same
// whichever starts it. Torch-free and Qt-free.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "stagewise/report/report.h"
#include "stagewise/report/suite.h"
#include "stagewise/study/driver.h"

namespace stagewise::storage {
class RunStore;
}

namespace stagewise::report {

class ReportSession {
 public:
  /// `name` names the studies ("report 2026-12-02 17:05: accuracy").
  ReportSession(storage::RunStore& store, Suite suite, std::vector<SuiteJob> jobs, std::string name,
                bool quick);

  /// Records the studies and links every run the store already has for a job that may be
  /// reused (the same spec and seed, completed; a search trial's also pruned). Returns the
  /// indices of the jobs left to run, in order. Throws storage::StoreError.
  std::vector<size_t> begin();

  // issue 32 §5
  /// Once the jobs begin() returned have ended: reads each method's rate from the search (on
  /// validation) and plans the tuned studies' runs at those rates, reusing stored runs as
  /// begin() does. Returns the indices of the jobs left to run (appended to jobs()); empty the
  /// second time. Throws study::StudyError when a tuned point does not resolve.
  std::vector<size_t> planTuned(const std::vector<std::string>& devices);
  /// The options a job's run trains with: a search trial evaluates at the rungs.
  engine::RunOptions runOptions(size_t job) const;
  /// The pruning watch for a search trial's run (null for other jobs). Add it to the run's
  /// observers and stop the run when it asks; then pass it to runEnded.
  std::unique_ptr<study::PruneWatch> watch(size_t job);
  /// mode -> the rate the search chose (after planTuned).
  const std::map<std::string, double>& chosenRates() const { return m_chosen; }

  const Suite& suite() const { return m_suite; }
  const std::vector<SuiteJob>& jobs() const { return m_jobs; }
  const std::vector<int64_t>& studyIds() const { return m_studyIds; }
  size_t reused() const { return m_reused; }
  /// The run name a job's run gets.
  std::string runName(size_t job) const;

  /// Links job `job`'s run to every point it makes (call as soon as the record exists).
  void linkRun(size_t job, int64_t runId);
  /// The job's run ended; `error` names why when it failed (kept for the report). `watch`: the
  /// search trial's pruning watch (a trial it stopped is kept as pruned).
  void runEnded(size_t job, bool completed, const std::string& error = {},
                const study::PruneWatch* watch = nullptr);
  /// Closes the studies: stopped (to be made again by the same command) or completed.
  void finish(bool stopped);

  /// Judges the findings from the store and fills the documents. `seconds`: how long it took.
  ReportDoc build(const MachineInfo& machine, double seconds);
  /// Something the session needs alive as long as it lives (the workbench's store).
  void keepAlive(std::shared_ptr<const void> owner) { m_keep = std::move(owner); }
  /// Adds a line to the suite's adaptations (where the report was made, say).
  void addAdaptation(std::string text) { m_suite.adaptations.push_back(std::move(text)); }

 private:
  storage::RunStore& m_store;
  Suite m_suite;
  std::vector<SuiteJob> m_jobs;
  std::string m_name;
  bool m_quick;
  std::vector<int64_t> m_studyIds;
  std::map<size_t, int64_t> m_runOf;  ///< job -> its run (made or reused)
  std::vector<std::string> m_failures;
  size_t m_reused = 0;
  std::shared_ptr<const void> m_keep;
  // issue 32 §5
  /// Links `links` of a job to `runId` in their studies.
  void linkPoints(const std::vector<SuiteJob::Link>& links, int64_t runId);
  /// The search study's index in the suite, its driver (rungs, pruning) and the trial job's
  /// point there.
  std::optional<size_t> m_searchStudy;
  std::unique_ptr<study::StudyDriver> m_searchDriver;
  std::optional<study::StudyDriver::Job> driverJob(size_t job) const;
  bool m_tunedPlanned = false;
  std::map<std::string, double> m_chosen;
};

/// Which of `jobs` a report would reuse from `store` as it stands (stored runs of the same spec
/// and seed, as ReportSession::begin() finds them); nothing is written. The workbench's estimate
/// counts only the others. Throws storage::StoreError.
std::vector<bool> reusableJobs(storage::RunStore& store, const std::vector<SuiteJob>& jobs);

/// "2026-12-02T17:05:11Z" for now.
std::string isoNow();

}  // namespace stagewise::report
