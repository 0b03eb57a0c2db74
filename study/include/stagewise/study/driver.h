#pragma once
// Running a stored study, one run at a time, the same way from the CLI (`study run|resume`) and
// the workbench's queue: which point runs next (a grid's, a search's trials as the sampler
// draws them, each vary point's tuned runs once its trials have ended), the run's spec and
// options (the rungs' evaluations), its links, the pruning of trials that fall behind, and what
// is left. Everything it decides it reads back from the store, so a study killed at any moment
// resumes where it was. Torch-free and Qt-free (the engine's run API is plain headers).

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "stagewise/engine/engine.h"
#include "stagewise/engine/metrics.h"
#include "stagewise/study/points.h"
#include "stagewise/study/results.h"

namespace stagewise::storage {
class RunStore;
}

namespace stagewise::study {

/// Watches one trial's run for a search with pruning: at each rung it compares the trial's
/// validation metric with the other trials of its vary point (AshaPruner) and, when it falls
/// behind, asks for a stop. Add it to the run's observers; the run's owner polls shouldStop().
class PruneWatch : public engine::RunObserver {
 public:
  PruneWatch(AshaPruner pruner, PruneSpec spec, std::vector<int64_t> rungs);
  void onMetrics(const std::vector<engine::MetricPoint>& points) override;
  /// The trial fell behind at a rung: stop its run (thread-safe).
  bool shouldStop() const { return m_stop.load(); }
  /// Called once, on the run's reporting thread, when the trial is pruned: stop the run there
  /// and then, rather than when someone next polls shouldStop() (a short run may end first).
  /// Set it before the run starts.
  void setOnPrune(std::function<void()> stop) { m_onPrune = std::move(stop); }
  /// The rung (steps) that stopped it, and why (after shouldStop()).
  int64_t prunedAt() const;
  std::string reason() const;

 private:
  AshaPruner m_pruner;
  PruneSpec m_spec;
  std::vector<int64_t> m_rungs;
  std::set<int64_t> m_seen;
  std::atomic<bool> m_stop{false};
  std::function<void()> m_onPrune;
  mutable std::mutex m_mutex;
  int64_t m_prunedAt = 0;
  std::string m_reason;
};

class StudyDriver {
 public:
  /// `devices`: the devices that exist (a point's spec is checked against them).
  StudyDriver(storage::RunStore& store, int64_t studyId, std::vector<std::string> devices);

  /// One point to run.
  struct Job {
    PointWork work;               ///< kind Run or Continue
    engine::ExperimentSpec spec;  ///< resolved and named (Continue: the checkpoint's)
    engine::RunOptions options;   ///< resumeFrom for Continue; the rungs' evaluations
    std::optional<int64_t> continueRunId;
    std::string description;  ///< "trial 3: mode=local, train.lr=0.0003, seed 1"
    int position = 0;         ///< 1-based, of `total`
    int total = 0;            ///< the study's points
  };

  /// The next point to run in the study's order, skipping what is done and what this driver
  /// already handed out. A point whose resolved spec equals a completed run's is linked to that
  /// run on the way (`note` says so). Empty: nothing left to run now. Throws StudyError when a
  /// point's spec is invalid (it names the point and the field).
  /// `onShared` is told each point linked that way (its index and the run it shares).
  std::optional<Job> next(const std::function<void(const std::string&)>& note = {},
                          const std::function<void(int point, int64_t runId)>& onShared = {});
  /// Leaves point `index` out of this driver's runs (the workbench's Skip): next() never hands
  /// it out; a later `study resume` runs it.
  void skip(int index) { m_handedOut.insert(index); }
  /// Links the job's run to its point (as soon as the run has a record; idempotent).
  void link(const Job& job, int64_t runId);
  /// The pruning watch for the job's run (null: the study does not prune, or it is not a trial).
  std::unique_ptr<PruneWatch> watch(const Job& job);
  /// The job's run ended with `status`: a trial that the watch stopped becomes `pruned`.
  void ended(const Job& job, std::optional<int64_t> runId, engine::RunStatus status,
             const PruneWatch* watch);

  const StudyPlan& plan() const { return m_plan; }
  int64_t studyId() const { return m_studyId; }
  /// Points ended (done before or handed out by this driver) and in all, for progress.
  int doneCount();
  int totalCount() const { return m_total; }

 private:
  storage::RunStore& m_store;
  int64_t m_studyId;
  std::vector<std::string> m_devices;
  StudyPlan m_plan;
  std::string m_base;
  int m_total = 0;
  ShapeCache m_shapes;
  std::set<int> m_handedOut;
};

/// Checks a new study before it is stored: every point of a grid resolves, and a search's
/// points at its bounds do, with a validation split when a validation metric chooses. Throws
/// StudyError naming the point or the key to fix.
void checkStudy(const std::string& baseSpecJson, const StudyPlan& plan,
                const std::vector<std::string>& devices);

}  // namespace stagewise::study
