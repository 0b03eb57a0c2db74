// The writer's share of spans: each stage's timeline, bounded by the run's timeline.max_spans.
// The rule (docs/metrics.md, "Spans kept"): a stage keeps every span of its newest W steps (the
// recent window) and, from the steps before them, those of every n-th step (the sample), n
// doubling whenever the sample grows past S steps. Default W = S = 200; with max_spans = M,
// each of the run's stages gets M / stages spans, half for each part, counted in steps of the
// most spans one step of that stage has had.

#include <algorithm>

#include "writer_db.h"

namespace stagewise::storage::detail {

namespace {

constexpr int64_t kDefaultWindowSteps = 200;
constexpr int64_t kDefaultSampleSteps = 200;

}  // namespace

WriterDb::SpanStage& WriterDb::spanStage(int64_t runId, RunState& run, int stage) {
  if (!run.spanBudget.loaded) {
    Statement read(*m_db,
                   "SELECT CASE WHEN json_valid(spec_json) THEN "
                   "coalesce(json_extract(spec_json, '$.timeline.max_spans'), 0) ELSE 0 END, "
                   "stage_count FROM runs WHERE id = ?1");
    if (read.bind(1, runId).step()) {
      run.spanBudget.maxSpans = std::max<int64_t>(0, read.getInt(0));
      run.spanBudget.stages = std::max<int>(1, static_cast<int>(read.getInt(1)));
    }
    run.spanBudget.loaded = true;
  }
  auto [it, added] = run.spanStages.try_emplace(stage);
  SpanStage& s = it->second;
  if (added) {
    // A run continued after a resume (or a batch rolled back): go on from what is stored.
    Statement read(*m_db, "SELECT max(seq), max(step) FROM spans WHERE run_id = ?1 AND stage = ?2");
    read.bind(1, runId).bind(2, stage).step();
    if (!read.isNull(0)) {
      s.nextSeq = read.getInt(0) + 1;
      s.lastStep = read.getInt(1);
    }
  }
  return s;
}

std::pair<int64_t, int64_t> WriterDb::spanSteps(const RunState& run, const SpanStage& s) const {
  if (run.spanBudget.maxSpans <= 0) return {kDefaultWindowSteps, kDefaultSampleSteps};
  const int64_t share = run.spanBudget.maxSpans / run.spanBudget.stages;
  const int64_t steps = share / 2 / std::max<int64_t>(1, s.perStep);
  return {std::max<int64_t>(1, steps), std::max<int64_t>(1, steps)};
}

void WriterDb::trimSpans(int64_t runId, const RunState& run, int stage, SpanStage& s) {
  const auto [window, sample] = spanSteps(run, s);
  const int64_t cutoff = s.lastStep - window + 1;
  if (cutoff > s.cutoff) {
    // Steps leaving the window join the sample if they fall on its stride.
    Statement drop(*m_db,
                   "DELETE FROM spans WHERE run_id = ?1 AND stage = ?2 AND step >= ?3 AND "
                   "step < ?4 AND step % ?5 != 0");
    drop.bind(1, runId).bind(2, stage).bind(3, s.cutoff).bind(4, cutoff).bind(5, s.stride).run();
    Statement count(*m_db,
                    "SELECT count(DISTINCT step) FROM spans WHERE run_id = ?1 AND stage = ?2 "
                    "AND step >= ?3 AND step < ?4");
    count.bind(1, runId).bind(2, stage).bind(3, s.cutoff).bind(4, cutoff).step();
    s.sampled += count.getInt(0);
    s.cutoff = cutoff;
  }
  while (s.sampled > sample) {
    s.stride *= 2;
    Statement drop(*m_db,
                   "DELETE FROM spans WHERE run_id = ?1 AND stage = ?2 AND step < ?3 AND "
                   "step % ?4 != 0");
    drop.bind(1, runId).bind(2, stage).bind(3, s.cutoff).bind(4, s.stride).run();
    Statement count(*m_db,
                    "SELECT count(DISTINCT step) FROM spans WHERE run_id = ?1 AND stage = ?2 "
                    "AND step < ?3");
    count.bind(1, runId).bind(2, stage).bind(3, s.cutoff).step();
    s.sampled = count.getInt(0);
  }
}

int64_t WriterDb::writeSpans(int64_t runId, const std::vector<SpanInput>& spans) {
  if (spans.empty()) return 0;
  RunState* run = live(runId);
  if (!run || run->finishing) return static_cast<int64_t>(spans.size());
  if (!m_insertSpan) {
    m_insertSpan = std::make_unique<Statement>(
        *m_db,
        "INSERT INTO spans (run_id, stage, step, seq, start_s, end_s, kind, micro) VALUES "
        "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  }
  std::vector<int> touched;
  for (const SpanInput& span : spans) {
    SpanStage& s = spanStage(runId, *run, span.stage);
    if (span.step == s.step) {
      s.perStep = std::max(s.perStep, ++s.inStep);
    } else {
      s.step = span.step;
      s.inStep = 1;
    }
    // A late span of a step already left out of the sample stays out.
    if (span.step < s.cutoff && span.step % s.stride != 0) continue;
    Statement& insert = *m_insertSpan;
    insert.bind(1, runId).bind(2, span.stage).bind(3, span.step).bind(4, s.nextSeq++);
    insert.bind(5, span.startS).bind(6, span.endS).bind(7, span.kind).bind(8, span.micro);
    insert.run();
    s.lastStep = std::max(s.lastStep, span.step);
    if (std::find(touched.begin(), touched.end(), span.stage) == touched.end())
      touched.push_back(span.stage);
  }
  for (int stage : touched) trimSpans(runId, *run, stage, run->spanStages[stage]);
  return 0;
}

}  // namespace stagewise::storage::detail
