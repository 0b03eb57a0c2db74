#include "stagewise/report/session.h"

#include <algorithm>
#include <ctime>
#include <map>

#include "search_stage.h"
#include "stagewise/report/collect.h"
#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"
#include "stagewise/study/points.h"

namespace stagewise::report {

std::string isoNow() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

ReportSession::ReportSession(storage::RunStore& store, Suite suite, std::vector<SuiteJob> jobs,
                             std::string name, bool quick)
    : m_store(store),
      m_suite(std::move(suite)),
      m_jobs(std::move(jobs)),
      m_name(std::move(name)),
      m_quick(quick) {}

namespace {

/// Completed runs (and pruned and failed ones: a search's trials, whose failing at a high rate
/// is a result) by what they trained; the newest wins.
struct StoredRuns {
  std::map<std::string, int64_t> completed;
  std::map<std::string, std::pair<int64_t, int64_t>> pruned;  ///< run and its steps
  std::map<std::string, int64_t> failed;
};

StoredRuns storedRuns(storage::RunStore& store) {
  StoredRuns out;
  storage::RunReader reader(store);
  storage::RunFilter filter;
  filter.statuses = {storage::RunStatus::Completed, storage::RunStatus::Pruned,
                     storage::RunStatus::Failed};
  storage::RunOrder oldestFirst;
  oldestFirst.descending = false;
  for (const auto& r : reader.listRuns(filter, oldestFirst)) {
    const auto full = reader.run(r.id);
    if (!full) continue;
    const std::string identity = reuseIdentity(full->specJson);
    if (full->status == storage::RunStatus::Pruned)
      out.pruned[identity] = {r.id, full->steps.value_or(0)};
    else if (full->status == storage::RunStatus::Failed)
      out.failed[identity] = r.id;
    else
      out.completed[identity] = r.id;
  }
  return out;
}

/// A learning finding's study at the base's rate, when the suite has its tuned twin.
bool sharedLrStudy(const Suite& suite, const SuiteStudy& s) {
  if (s.fresh || s.tuned || s.plan.isSearch()) return false;
  for (const auto& t : suite.studies)
    if (t.tuned && t.finding == s.finding) return true;
  return false;
}

/// Whether begin() reuses a job from `stored` (a pruned trial: when it has a rung to be kept at).
bool reusable(const SuiteJob& job, const StoredRuns& stored) {
  return (!job.fresh && stored.completed.count(job.identity)) ||
         (job.trial && (stored.pruned.count(job.identity) || stored.failed.count(job.identity)));
}

}  // namespace

std::vector<bool> reusableJobs(storage::RunStore& store, const std::vector<SuiteJob>& jobs) {
  const StoredRuns stored = storedRuns(store);
  std::vector<bool> out;
  out.reserve(jobs.size());
  for (const auto& job : jobs) out.push_back(reusable(job, stored));
  return out;
}

std::vector<size_t> ReportSession::begin() {
  for (size_t i = 0; i < m_suite.studies.size(); ++i) {
    const SuiteStudy& s = m_suite.studies[i];
    const bool search = s.plan.isSearch();
    const size_t points = search ? static_cast<size_t>(study::searchPointCount(s.plan))
                                 : study::expandGrid(s.plan).size();
    const std::string suffix = s.tuned                     ? " (tuned lr)"
                               : sharedLrStudy(m_suite, s) ? " (shared lr)"
                                                           : "";
    m_studyIds.push_back(m_store.createStudy(study::newStudyRecord(
        m_name + ": " + s.finding + (s.part.empty() ? "" : " (" + s.part + ")") + suffix,
        s.baseSpecJson, s.plan, std::nullopt, points)));
    if (search && !m_searchStudy) {
      m_searchStudy = i;
      m_searchDriver = std::make_unique<study::StudyDriver>(m_store, m_studyIds.back(),
                                                            std::vector<std::string>{});
    }
  }
  const StoredRuns stored = storedRuns(m_store);
  std::vector<size_t> left;
  for (size_t i = 0; i < m_jobs.size(); ++i) {
    if (!m_jobs[i].fresh)
      if (auto it = stored.completed.find(m_jobs[i].identity); it != stored.completed.end()) {
        linkRun(i, it->second);
        ++m_reused;
        continue;
      }
    // issue 32 §5: a trial pruned in an earlier report stays pruned (the same draws, in the
    // same order, decide alike).
    if (auto dj = m_jobs[i].trial ? driverJob(i) : std::nullopt)
      if (auto it = stored.pruned.find(m_jobs[i].identity); it != stored.pruned.end()) {
        const auto [runId, steps] = it->second;
        int64_t rung = 0;
        for (int64_t r : dj->options.evalAtSteps)
          if (r <= steps) rung = r;
        linkRun(i, runId);
        m_store.markRunPruned(
            m_studyIds[*m_searchStudy], runId, rung,
            "pruned at rung " + std::to_string(rung) + " steps in an earlier report: reused");
        ++m_reused;
        continue;
      }
    if (m_jobs[i].trial)
      if (auto it = stored.failed.find(m_jobs[i].identity); it != stored.failed.end()) {
        linkRun(i, it->second);
        ++m_reused;
        continue;
      }
    left.push_back(i);
  }
  return left;
}

std::optional<study::StudyDriver::Job> ReportSession::driverJob(size_t job) const {
  if (!m_searchStudy || !m_searchDriver || job >= m_jobs.size() || !m_jobs[job].trial)
    return std::nullopt;
  for (const auto& l : m_jobs[job].links) {
    if (l.study != *m_searchStudy) continue;
    study::StudyDriver::Job j;
    j.work.point = l.point;
    j.spec = m_jobs[job].spec;
    const auto& prune = m_suite.studies[l.study].plan.search.prune;
    if (prune && m_jobs[job].spec.train.maxSteps > 0)
      j.options.evalAtSteps = study::rungSteps(*prune, m_jobs[job].spec.train.maxSteps);
    return j;
  }
  return std::nullopt;
}

engine::RunOptions ReportSession::runOptions(size_t job) const {
  if (auto j = driverJob(job)) return j->options;
  return {};
}

std::unique_ptr<study::PruneWatch> ReportSession::watch(size_t job) {
  if (auto j = driverJob(job)) return m_searchDriver->watch(*j);
  return nullptr;
}

std::vector<size_t> ReportSession::planTuned(const std::vector<std::string>& devices) {
  if (m_tunedPlanned) return {};
  m_tunedPlanned = true;
  if (m_searchStudy) {
    storage::RunReader reader(m_store);
    m_chosen = report::chosenRates(readSearch(reader, m_suite.studies[*m_searchStudy],
                                              m_studyIds[*m_searchStudy], m_suite.baseLr));
  }
  study::ShapeCache shapes;
  std::vector<SuiteJob> tuned = planTunedJobs(m_suite, m_chosen, devices, shapes);
  std::map<std::string, size_t> existing;
  for (size_t i = 0; i < m_jobs.size(); ++i)
    if (!m_jobs[i].fresh) existing.emplace(m_jobs[i].identity, i);
  const StoredRuns stored = storedRuns(m_store);
  std::vector<size_t> left;
  for (auto& job : tuned) {
    // A method whose chosen rate is the base's trains the same runs as the shared-lr studies.
    if (auto it = existing.find(job.identity); it != existing.end()) {
      auto& links = m_jobs[it->second].links;
      links.insert(links.end(), job.links.begin(), job.links.end());
      if (auto run = m_runOf.find(it->second); run != m_runOf.end())
        linkPoints(job.links, run->second);
      continue;
    }
    m_jobs.push_back(std::move(job));
    const size_t i = m_jobs.size() - 1;
    if (auto it = stored.completed.find(m_jobs[i].identity); it != stored.completed.end()) {
      linkRun(i, it->second);
      ++m_reused;
      continue;
    }
    left.push_back(i);
  }
  return left;
}

std::string ReportSession::runName(size_t job) const {
  return m_name + " · " + m_jobs[job].label;
}

void ReportSession::linkRun(size_t job, int64_t runId) {
  m_runOf[job] = runId;
  linkPoints(m_jobs[job].links, runId);
}

void ReportSession::linkPoints(const std::vector<SuiteJob::Link>& links, int64_t runId) {
  for (const auto& l : links) {
    storage::StudyRunRecord link;
    link.point = l.point.index;
    link.runId = runId;
    link.seed = l.point.seed;
    link.valuesJson = study::pointValuesJson(l.point);
    m_store.linkStudyRun(m_studyIds[l.study], link);
  }
}

void ReportSession::runEnded(size_t job, bool completed, const std::string& error,
                             const study::PruneWatch* watch) {
  if (watch && watch->shouldStop() && error.empty()) {
    // issue 32 §5: a trial the pruner stopped is a result, kept as pruned (also when it reached
    // its end before the stop took effect: the decision at the rung counts, not the timing).
    const auto run = m_runOf.find(job);
    const auto j = driverJob(job);
    if (run != m_runOf.end() && j)
      m_searchDriver->ended(*j, run->second,
                            completed ? engine::RunStatus::Completed : engine::RunStatus::Stopped,
                            watch);
    return;
  }
  if (!completed && !error.empty()) m_failures.push_back(m_jobs[job].label + ": " + error);
}

void ReportSession::finish(bool stopped) {
  for (int64_t id : m_studyIds)
    m_store.finishStudy(id,
                        stopped ? storage::StudyStatus::Stopped : storage::StudyStatus::Completed);
}

ReportDoc ReportSession::build(const MachineInfo& machine, double seconds) {
  ReportDoc doc;
  doc.quick = m_quick;
  doc.createdAt = isoNow();
  doc.seconds = seconds;
  doc.machine = machine;
  doc.baseSpecJson = m_suite.baseSpecJson;
  doc.adaptations = m_suite.adaptations;
  doc.storePath = m_store.path();
  doc.failures = m_failures;
  storage::RunReader reader(m_store);
  study::ShapeCache shapes;
  doc.findings = judgeSuite(reader, m_suite, m_studyIds, machine.cores, shapes);
  for (size_t i = 0; i < m_suite.studies.size() && i < m_studyIds.size(); ++i)
    if (m_suite.studies[i].part.empty())  // issue 37: a finding's study is its own, not a part
      doc.studyIds.emplace(m_suite.studies[i].finding, m_studyIds[i]);
  // issue 32 §5: the search, and each learning finding's rates (its tuned study is its study).
  if (m_searchStudy && *m_searchStudy < m_studyIds.size())
    doc.search = readSearch(reader, m_suite.studies[*m_searchStudy], m_studyIds[*m_searchStudy],
                            m_suite.baseLr);
  for (auto& f : doc.findings) {
    for (size_t i = 0; i < m_suite.studies.size() && i < m_studyIds.size(); ++i) {
      if (m_suite.studies[i].finding != f.id) continue;
      if (m_suite.studies[i].tuned && f.tuned) {
        f.tuned->studyId = doc.studyIds[f.id] = m_studyIds[i];
      } else if (f.sharedLr && !m_suite.studies[i].tuned) {
        f.sharedLr->studyId = m_studyIds[i];
      }
    }
    if (f.tuned)
      f.tuned->settingsJson =
          settingsJson(f.id, m_suite.baseLr, doc.search ? &*doc.search : nullptr);
    if (f.sharedLr) f.sharedLr->settingsJson = settingsJson(f.id, m_suite.baseLr, nullptr);
  }
  for (size_t i = 0; i < m_jobs.size(); ++i) {
    ReportDoc::SpecRuns s;
    s.label = m_jobs[i].label;
    s.specJson = engine::specToJson(m_jobs[i].spec);
    if (auto it = m_runOf.find(i); it != m_runOf.end()) s.runs.push_back(it->second);
    doc.specs.push_back(std::move(s));
  }
  return doc;
}

}  // namespace stagewise::report
