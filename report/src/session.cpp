#include "stagewise/report/session.h"

#include <algorithm>
#include <ctime>
#include <map>

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

std::vector<size_t> ReportSession::begin() {
  for (const auto& s : m_suite.studies) {
    const size_t points = study::expandGrid(s.plan).size();
    m_studyIds.push_back(m_store.createStudy(study::newStudyRecord(
        m_name + ": " + s.finding, s.baseSpecJson, s.plan, std::nullopt, points)));
  }
  // Completed runs by what they trained; the newest wins.
  std::map<std::string, int64_t> stored;
  {
    storage::RunReader reader(m_store);
    storage::RunFilter filter;
    filter.statuses = {storage::RunStatus::Completed};
    storage::RunOrder oldestFirst;
    oldestFirst.descending = false;
    for (const auto& r : reader.listRuns(filter, oldestFirst)) {
      const auto full = reader.run(r.id);
      if (full) stored[reuseIdentity(full->specJson)] = r.id;
    }
  }
  std::vector<size_t> left;
  for (size_t i = 0; i < m_jobs.size(); ++i) {
    auto it = m_jobs[i].fresh ? stored.end() : stored.find(m_jobs[i].identity);
    if (it == stored.end()) {
      left.push_back(i);
      continue;
    }
    linkRun(i, it->second);
    ++m_reused;
  }
  return left;
}

std::string ReportSession::runName(size_t job) const {
  return m_name + " · " + m_jobs[job].label;
}

void ReportSession::linkRun(size_t job, int64_t runId) {
  m_runOf[job] = runId;
  for (const auto& l : m_jobs[job].links) {
    storage::StudyRunRecord link;
    link.point = l.point.index;
    link.runId = runId;
    link.seed = l.point.seed;
    link.valuesJson = study::pointValuesJson(l.point);
    m_store.linkStudyRun(m_studyIds[l.study], link);
  }
}

void ReportSession::runEnded(size_t job, bool completed, const std::string& error) {
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
    doc.studyIds.emplace(m_suite.studies[i].finding, m_studyIds[i]);
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
