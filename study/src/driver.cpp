#include "stagewise/study/driver.h"

#include <cmath>
#include <cstdio>
#include <map>

#include "stagewise/engine/checkpoint.h"
#include "stagewise/engine/dataset.h"
#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"

namespace stagewise::study {

namespace {

/// The steps a run of `spec` trains (as the engine counts them: max_steps, else whole epochs of
/// the training samples left after the validation split).
int64_t totalSteps(const engine::ExperimentSpec& spec) {
  if (spec.train.maxSteps > 0) return spec.train.maxSteps;
  const int64_t n = engine::probeTrainSamples(spec.dataset);
  return (n + spec.train.batchSize - 1) / spec.train.batchSize * spec.train.epochs;
}

}  // namespace

PruneWatch::PruneWatch(AshaPruner pruner, PruneSpec spec, std::vector<int64_t> rungs)
    : m_pruner(std::move(pruner)), m_spec(std::move(spec)), m_rungs(std::move(rungs)) {}

void PruneWatch::onMetrics(const std::vector<engine::MetricPoint>& points) {
  for (const auto& p : points) {
    if (p.name != m_spec.metric || p.stage != -1 || p.layer != -1) continue;
    const int64_t done = p.step + 1;  // an evaluation after step s has s + 1 steps behind it
    if (std::find(m_rungs.begin(), m_rungs.end(), done) == m_rungs.end()) continue;
    if (!m_seen.insert(done).second || m_stop.load()) continue;
    const AshaPruner::Decision d = m_pruner.decide(done, p.value);
    if (d.keep) continue;
    char text[256];
    std::snprintf(text, sizeof text,
                  "pruned at rung %lld steps: %s %.4f ranks %d of %d trials that reached it "
                  "(the best %d go on)",
                  static_cast<long long>(done), m_spec.metric.c_str(), p.value, d.rank,
                  d.competitors, d.promoted);
    {
      std::lock_guard lock(m_mutex);
      m_prunedAt = done;
      m_reason = text;
      m_stop.store(true);
    }
    if (m_onPrune) m_onPrune();
  }
}

int64_t PruneWatch::prunedAt() const {
  std::lock_guard lock(m_mutex);
  return m_prunedAt;
}

std::string PruneWatch::reason() const {
  std::lock_guard lock(m_mutex);
  return m_reason;
}

StudyDriver::StudyDriver(storage::RunStore& store, int64_t studyId,
                         std::vector<std::string> devices)
    : m_store(store), m_studyId(studyId), m_devices(std::move(devices)) {
  storage::RunReader reader(m_store);
  const auto record = reader.study(studyId);
  if (!record) throw StudyError("there is no study " + std::to_string(studyId));
  m_plan = planOf(*record);
  m_base = record->baseSpecJson;
  m_total = record->runsTotal;
}

int StudyDriver::doneCount() {
  storage::RunReader reader(m_store);
  const auto record = reader.study(m_studyId);
  std::set<int> done = m_handedOut;
  for (const auto& w : pendingWork(reader, *record))
    if (w.kind == PointWork::Kind::Done) done.insert(w.point.index);
  return static_cast<int>(done.size());
}

std::optional<StudyDriver::Job> StudyDriver::next(
    const std::function<void(const std::string&)>& note,
    const std::function<void(int point, int64_t runId)>& onShared) {
  storage::RunReader reader(m_store);
  const auto record = reader.study(m_studyId);
  if (!record) throw StudyError("there is no study " + std::to_string(m_studyId));
  const std::vector<PointWork> work = pendingWork(reader, *record);
  // Completed runs by what they train: a point equal to one shares its run.
  std::map<std::string, int64_t> completedBy;
  for (const auto& w : work)
    if (w.kind == PointWork::Kind::Done && !w.point.tuned && w.point.trial < 0)
      completedBy[resolvePoint(m_base, m_plan, w.point, m_devices, m_shapes).identity] = w.runId;
  for (const auto& w : work) {
    if (w.kind == PointWork::Kind::Done || m_handedOut.count(w.point.index)) continue;
    const ResolvedPoint resolved = resolvePoint(m_base, m_plan, w.point, m_devices, m_shapes);
    const std::string what = describePoint(m_plan, w.point);
    if (auto shared = completedBy.find(resolved.identity);
        shared != completedBy.end() && w.kind == PointWork::Kind::Run && !m_plan.isSearch()) {
      storage::StudyRunRecord l;
      l.point = w.point.index;
      l.runId = shared->second;
      l.seed = w.point.seed;
      l.valuesJson = pointValuesJson(w.point);
      m_store.linkStudyRun(m_studyId, l);
      m_handedOut.insert(w.point.index);
      if (onShared) onShared(w.point.index, shared->second);
      if (note)
        note("run " + std::to_string(w.point.index + 1) + " of " + std::to_string(m_total) + " (" +
             what + ") is the same run as run " + std::to_string(shared->second) + ": shared");
      continue;
    }
    Job job;
    job.work = w;
    job.spec = resolved.spec;
    job.description = what;
    job.position = w.point.index + 1;
    job.total = m_total;
    m_handedOut.insert(w.point.index);
    if (w.kind == PointWork::Kind::Continue) {
      try {
        const engine::CheckpointInfo info = engine::readCheckpointInfo(w.checkpointPath);
        job.spec = engine::parseSpec(info.specJson);
        job.options.resumeFrom = info.path;
        job.continueRunId = w.runId;
      } catch (const std::exception& e) {
        if (note)
          note("run " + std::to_string(w.runId) + " cannot continue from " + w.checkpointPath +
               " (" + e.what() + "); running it again");
        m_store.markStudyRunReplaced(m_studyId, w.runId);
        job.work.kind = PointWork::Kind::Run;
      }
    } else {
      for (int64_t old : w.replaces) m_store.markStudyRunReplaced(m_studyId, old);
    }
    if (!job.continueRunId) nameStudyRun(job.spec, record->name, m_studyId, m_plan, w.point);
    if (m_plan.search.prune && w.point.trial >= 0) {
      // Every rung is evaluated, whatever the measurement budget leaves out.
      const int64_t total = totalSteps(job.spec);
      job.options.evalAtSteps = rungSteps(*m_plan.search.prune, total);
    }
    return job;
  }
  return std::nullopt;
}

void StudyDriver::link(const Job& job, int64_t runId) {
  storage::StudyRunRecord l;
  l.point = job.work.point.index;
  l.runId = runId;
  l.seed = job.work.point.seed;
  l.valuesJson = pointValuesJson(job.work.point);
  m_store.linkStudyRun(m_studyId, l);
}

std::unique_ptr<PruneWatch> StudyDriver::watch(const Job& job) {
  const auto& prune = m_plan.search.prune;
  if (!prune || job.work.point.trial < 0) return nullptr;
  const std::string& metric = prune->metric;
  AshaPruner pruner(*prune, higherIsBetter(metric));
  // The values the other trials of this vary point had at each rung, read back from the store
  // (a trial that was run again counts once: its newest record).
  const std::vector<int64_t> rungs = job.options.evalAtSteps;
  storage::RunReader reader(m_store);
  const auto record = reader.study(m_studyId);
  const SearchState state = searchWork(reader, *record, m_plan);
  const auto series = reader.studySeries(m_studyId, {metric, -1, -1});
  for (const auto& tr : state.trials.at(static_cast<size_t>(job.work.point.varyPoint))) {
    if (tr.point.index == job.work.point.index || tr.work.runId == 0) continue;
    const auto it = series.find(tr.work.runId);
    if (it == series.end()) continue;
    for (const auto& p : it->second)
      if (std::find(rungs.begin(), rungs.end(), p.step + 1) != rungs.end())
        pruner.record(p.step + 1, p.value);
  }
  // A trial continued from a checkpoint passed the rungs before it already.
  if (job.continueRunId)
    if (const auto it = series.find(*job.continueRunId); it != series.end()) {
      std::vector<int64_t> left;
      int64_t last = it->second.empty() ? 0 : it->second.back().step + 1;
      for (int64_t r : rungs)
        if (r > last) left.push_back(r);
      return std::make_unique<PruneWatch>(std::move(pruner), *prune, std::move(left));
    }
  return std::make_unique<PruneWatch>(std::move(pruner), *prune, rungs);
}

void StudyDriver::ended(const Job& job, std::optional<int64_t> runId, engine::RunStatus status,
                        const PruneWatch* watch) {
  // The pruner's decision at the rung is the record: a trial it stopped is pruned even when it
  // reached its end before the stop took effect (a short run on a busy machine), so which
  // trials survive, and which one is chosen, never depends on timing. A failure stays one.
  if (!runId || !watch || !watch->shouldStop()) return;
  if (status != engine::RunStatus::Stopped && status != engine::RunStatus::Completed) return;
  m_store.markRunPruned(m_studyId, *runId, watch->prunedAt(), watch->reason());
  (void)job;
}

void checkStudy(const std::string& baseSpecJson, const StudyPlan& plan,
                const std::vector<std::string>& devices) {
  ShapeCache shapes;
  if (!plan.isSearch()) {
    for (const auto& p : expandGrid(plan)) resolvePoint(baseSpecJson, plan, p, devices, shapes);
    return;
  }
  checkSearch(plan);
  const std::string metric = plan.search.choosingMetric();
  const auto split = valueAt(baseSpecJson, "dataset.validation");
  const bool choosesOnValidation =
      plan.search.prune || plan.search.tune || metric.rfind("val_", 0) == 0;
  if (choosesOnValidation && (!split || std::atof(split->c_str()) <= 0))
    throw StudyError("the search chooses on " + metric +
                     ", which needs a validation split: set dataset.validation (e.g. --set "
                     "dataset.validation=0.1), the share of the training set held out");
  for (const auto& p : searchCheckPoints(plan))
    resolvePoint(baseSpecJson, plan, p, devices, shapes);
}

}  // namespace stagewise::study
