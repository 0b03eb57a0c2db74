#pragma once
// One replication report being made: its studies in the store, the runs it reuses, the runs it
// still has to make, and the documents at the end. `stagewise-cli report` and the workbench's
// Replication report both drive it (each trains the runs its own way), so a report is the same
// whichever starts it. Torch-free and Qt-free.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "stagewise/report/report.h"
#include "stagewise/report/suite.h"

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
  /// reused (the same spec and seed, completed). Returns the indices of the jobs left to run,
  /// in order. Throws storage::StoreError.
  std::vector<size_t> begin();

  const Suite& suite() const { return m_suite; }
  const std::vector<SuiteJob>& jobs() const { return m_jobs; }
  const std::vector<int64_t>& studyIds() const { return m_studyIds; }
  size_t reused() const { return m_reused; }
  /// The run name a job's run gets.
  std::string runName(size_t job) const;

  /// Links job `job`'s run to every point it makes (call as soon as the record exists).
  void linkRun(size_t job, int64_t runId);
  /// The job's run ended; `error` names why when it failed (kept for the report).
  void runEnded(size_t job, bool completed, const std::string& error = {});
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
};

/// "2026-12-02T17:05:11Z" for now.
std::string isoNow();

}  // namespace stagewise::report
