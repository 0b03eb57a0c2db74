// RunReader's studies: the study records with their keys and counts, and their runs by point.

#include "connection.h"
#include "reader_impl.h"

namespace stagewise::storage {

using detail::Statement;

namespace {

// Column list shared by listStudies and study(); readStudy() depends on this order. A point
// counts as completed once a run linked to it (not replaced) completed.
constexpr const char* kStudyColumns =
    "s.id, s.name, s.created_at_ms, s.finished_at_ms, s.status, s.seeds, s.sample, "
    "s.sample_seed, s.target, s.runs_total, s.writer_pid, s.writer_host, s.heartbeat_at_ms, "
    "(SELECT count(DISTINCT sr.point) FROM study_runs sr JOIN runs r ON r.id = sr.run_id "
    "WHERE sr.study_id = s.id AND sr.replaced = 0 AND r.status = 'completed'), "
    "(SELECT count(DISTINCT sr.point) FROM study_runs sr JOIN runs r ON r.id = sr.run_id "
    "WHERE sr.study_id = s.id AND sr.replaced = 0 AND r.status = 'pruned'), "
    "COALESCE(s.search_json, '')";

StudyRecord readStudy(const Statement& st) {
  StudyRecord s;
  s.id = st.getInt(0);
  s.name = st.getText(1);
  s.createdAtMs = st.getInt(2);
  s.finishedAtMs = st.getOptInt(3);
  s.status = studyStatusFromString(st.getText(4)).value_or(StudyStatus::Interrupted);
  s.seeds = static_cast<int>(st.getInt(5));
  s.sample = static_cast<int>(st.getInt(6));
  s.sampleSeed = st.getInt(7);
  s.target = st.getOptDouble(8);
  s.runsTotal = static_cast<int>(st.getInt(9));
  s.writer.pid = st.getOptInt(10).value_or(0);
  s.writer.host = st.getText(11);
  s.writer.heartbeatAtMs = st.getOptInt(12).value_or(0);
  s.runsCompleted = static_cast<int>(st.getInt(13));
  s.runsPruned = static_cast<int>(st.getInt(14));
  s.searchJson = st.getText(15);
  return s;
}

}  // namespace

std::vector<StudyRecord> RunReader::listStudies() {
  std::vector<StudyRecord> out;
  {
    Statement st(*m_impl->db, std::string("SELECT ") + kStudyColumns +
                                  " FROM studies s ORDER BY s.created_at_ms DESC, s.id DESC");
    while (st.step()) out.push_back(readStudy(st));
  }
  Statement keys(*m_impl->db,
                 "SELECT study_id, key, values_json FROM study_keys ORDER BY study_id, position");
  std::vector<std::pair<int64_t, StudyKeyRecord>> all;
  while (keys.step()) all.push_back({keys.getInt(0), {keys.getText(1), keys.getText(2)}});
  for (auto& s : out)
    for (const auto& [id, key] : all)
      if (id == s.id) s.keys.push_back(key);
  return out;
}

std::optional<StudyRecord> RunReader::study(int64_t studyId) {
  StudyRecord s;
  {
    Statement st(*m_impl->db, std::string("SELECT ") + kStudyColumns +
                                  ", s.base_spec_json FROM studies s WHERE s.id = ?1");
    if (!st.bind(1, studyId).step()) return std::nullopt;
    s = readStudy(st);
    s.baseSpecJson = st.getText(16);
  }
  Statement keys(*m_impl->db,
                 "SELECT key, values_json FROM study_keys WHERE study_id = ?1 ORDER BY position");
  keys.bind(1, studyId);
  while (keys.step()) s.keys.push_back({keys.getText(0), keys.getText(1)});
  return s;
}

std::vector<StudyRunRecord> RunReader::studyRuns(int64_t studyId) {
  Statement st(*m_impl->db,
               "SELECT sr.point, sr.run_id, sr.seed, sr.values_json, sr.replaced, r.status, "
               "sr.pruned_at "
               "FROM study_runs sr JOIN runs r ON r.id = sr.run_id WHERE sr.study_id = ?1 "
               "ORDER BY sr.point, sr.run_id");
  st.bind(1, studyId);
  std::vector<StudyRunRecord> out;
  while (st.step()) {
    StudyRunRecord r;
    r.point = static_cast<int>(st.getInt(0));
    r.runId = st.getInt(1);
    r.seed = st.getInt(2);
    r.valuesJson = st.getText(3);
    r.replaced = st.getInt(4) != 0;
    r.runStatus = runStatusFromString(st.getText(5)).value_or(RunStatus::Interrupted);
    r.prunedAt = st.getOptInt(6);
    out.push_back(r);
  }
  return out;
}

std::map<int64_t, int64_t> RunReader::prunedSteps(const std::vector<int64_t>& runIds) {
  std::map<int64_t, int64_t> out;
  Statement st(*m_impl->db,
               "SELECT pruned_at FROM study_runs WHERE run_id = ?1 AND pruned_at IS NOT NULL "
               "AND replaced = 0 ORDER BY study_id LIMIT 1");
  for (int64_t id : runIds) {
    st.reset();
    st.bind(1, id);
    if (st.step()) out[id] = st.getInt(0);
  }
  return out;
}

std::map<int64_t, std::vector<SeriesPoint>> RunReader::studySeries(int64_t studyId,
                                                                   const SeriesKey& key) {
  Statement st(*m_impl->db,
               "SELECT s.run_id, p.step, p.t, p.value FROM series s JOIN points p ON "
               "p.series_id = s.id WHERE s.run_id IN (SELECT run_id FROM study_runs WHERE "
               "study_id = ?1) AND s.name = ?2 AND s.stage = ?3 AND s.layer = ?4 "
               "ORDER BY s.run_id, p.seq");
  st.bind(1, studyId).bind(2, key.name).bind(3, key.stage).bind(4, key.layer);
  std::map<int64_t, std::vector<SeriesPoint>> out;
  while (st.step()) out[st.getInt(0)].push_back({st.getInt(1), st.getDouble(2), st.getDouble(3)});
  return out;
}

std::map<int64_t, double> RunReader::studySummaryNumbers(int64_t studyId,
                                                         const std::string& jsonPath) {
  Statement st(*m_impl->db,
               "SELECT r.id, json_extract(r.summary_json, ?2) FROM runs r WHERE r.id IN "
               "(SELECT run_id FROM study_runs WHERE study_id = ?1) AND r.summary_json IS NOT "
               "NULL AND json_valid(r.summary_json)");
  st.bind(1, studyId).bind(2, jsonPath);
  std::map<int64_t, double> out;
  while (st.step())
    if (!st.isNull(1)) out[st.getInt(0)] = st.getDouble(1);
  return out;
}

}  // namespace stagewise::storage
