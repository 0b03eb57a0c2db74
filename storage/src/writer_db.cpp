#include "writer_db.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "connection.h"

namespace stagewise::storage::detail {

namespace {

std::string joinDevices(const std::vector<StageRecord>& stages) {
  std::vector<std::string> seen;
  std::string out;
  for (const StageRecord& s : stages) {
    if (std::find(seen.begin(), seen.end(), s.device) != seen.end()) continue;
    seen.push_back(s.device);
    if (!out.empty()) out += ',';
    out += s.device;
  }
  return out;
}

std::string joinShape(const std::vector<int64_t>& shape) {
  std::string out;
  for (int64_t d : shape) {
    if (!out.empty()) out += 'x';
    out += std::to_string(d);
  }
  return out;
}

}  // namespace

size_t WriterDb::KeyHash::operator()(const KeyView& k) const {
  const size_t h = std::hash<std::string_view>()(k.name);
  return h ^ (static_cast<size_t>(k.stage + 1) * 0x9e3779b97f4a7c15ULL) ^
         (static_cast<size_t>(k.layer + 1) * 0xc2b2ae3d27d4eb4fULL);
}

WriterDb::WriterDb(const std::string& path, const StoreOptions& options)
    : m_path(path),
      m_options(options.writer),
      m_db(openConnection(path, options, Access::ReadWrite)),
      m_host(hostName()),
      m_pid(currentPid()),
      m_startedAtMs(nowMs()) {
  // The writer inserts children only under parents it created itself, so foreign keys need
  // no checking here: skipping the parent lookup per point is ~15% of ingest time. Deletes
  // (RunStore's connection) still cascade.
  m_db->exec("PRAGMA foreign_keys = OFF");
  // Every series appends at its own end of the points b-tree: keep those pages cached (16 MiB).
  m_db->exec("PRAGMA cache_size = -16384");
  m_insertPoint = std::make_unique<Statement>(
      *m_db, "INSERT INTO points (series_id, seq, step, t, value) VALUES (?1, ?2, ?3, ?4, ?5)");
  m_upsertLevel = std::make_unique<Statement>(*m_db, kUpsertLevelSql);
  m_updateCount =
      std::make_unique<Statement>(*m_db, "UPDATE series SET point_count = ?2 WHERE id = ?1");
}

WriterDb::~WriterDb() {
  // Statements must go before the connection; locks are released with m_runs.
  m_insertPoint.reset();
  m_upsertLevel.reset();
  m_updateCount.reset();
  m_insertSpan.reset();
}

void WriterDb::insertRunChildren(int64_t runId, const NewRun& run) {
  Statement stage(*m_db,
                  "INSERT INTO stages (run_id, idx, first_layer, last_layer, device, aux_head, "
                  "threads, params, aux_params) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
  for (const StageRecord& s : run.stages) {
    stage.bind(1, runId).bind(2, s.index).bind(3, s.firstLayer).bind(4, s.lastLayer);
    stage.bind(5, s.device).bind(6, s.auxHead).bind(7, s.threads).bind(8, s.params);
    stage.bind(9, s.auxParams).run();
  }
  Statement layer(*m_db,
                  "INSERT INTO layers (run_id, idx, name, description, out_shape, params, flops, "
                  "activation_bytes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  for (const LayerRecord& l : run.layers) {
    layer.bind(1, runId).bind(2, l.index).bind(3, l.name).bind(4, l.description);
    layer.bind(5, joinShape(l.outShape)).bind(6, l.params).bind(7, l.flops);
    layer.bind(8, l.activationBytes).run();
  }
  Statement tag(*m_db, "INSERT OR IGNORE INTO run_tags (run_id, tag) VALUES (?1, ?2)");
  for (const std::string& t : run.tags) {
    if (!t.empty()) tag.bind(1, runId).bind(2, t).run();
  }
}

int64_t WriterDb::createRun(const NewRun& run) {
  Transaction tx(*m_db);
  const TimestampMs now = nowMs();
  Statement insert(
      *m_db,
      "INSERT INTO runs (name, created_at_ms, status, mode, spec_json, model_kind, "
      "stage_count, devices, total_steps, batch_size, blas, torch_version, notes, "
      "writer_pid, writer_host, writer_started_at_ms, heartbeat_at_ms) VALUES "
      "(?1, ?2, 'running', ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?2)");
  insert.bind(1, run.name).bind(2, now).bind(3, run.mode).bind(4, run.specJson);
  insert.bind(5, run.modelKind).bind(6, static_cast<int64_t>(run.stages.size()));
  insert.bind(7, joinDevices(run.stages)).bind(8, run.totalSteps).bind(9, run.batchSize);
  insert.bind(10, run.blas).bind(11, run.torchVersion).bind(12, run.notes).bind(13, m_pid);
  insert.bind(14, m_host).bind(15, m_startedAtMs).run();
  const int64_t runId = m_db->lastInsertId();
  insertRunChildren(runId, run);
  // Hold the lock before `running` becomes visible, so nobody sees a live run with a free lock.
  auto lock = RunLock::tryAcquire(lockPathFor(m_path, runId));
  if (!lock) {
    throw StoreError("the lock file of new run " + std::to_string(runId) +
                     " is held by another process; remove '" + lockPathFor(m_path, runId) +
                     "' if no Stagewise process is running");
  }
  tx.commit();
  m_runs[runId].lock = std::move(lock);
  return runId;
}

void WriterDb::resumeRun(int64_t runId) {
  if (m_runs.count(runId)) return;
  Transaction tx(*m_db);
  {
    Statement find(*m_db, "SELECT writer_pid, writer_host FROM runs WHERE id = ?1");
    if (!find.bind(1, runId).step()) {
      throw StoreError("cannot resume run " + std::to_string(runId) + ": there is no such run");
    }
  }
  auto lock = RunLock::tryAcquire(lockPathFor(m_path, runId));
  if (!lock) {
    throw StoreError("cannot resume run " + std::to_string(runId) +
                     ": another process is still recording it");
  }
  Statement update(*m_db,
                   "UPDATE runs SET status = 'running', finished_at_ms = NULL, error = '', "
                   "failed_stage = NULL, writer_pid = ?2, writer_host = ?3, "
                   "writer_started_at_ms = ?4, heartbeat_at_ms = ?5 WHERE id = ?1");
  update.bind(1, runId).bind(2, m_pid).bind(3, m_host).bind(4, m_startedAtMs).bind(5, nowMs());
  update.run();
  Statement event(*m_db,
                  "INSERT INTO events (run_id, t, kind, stage, message, wall_ms) VALUES "
                  "(?1, coalesce((SELECT max(t) FROM events WHERE run_id = ?1), 0), 'info', -1, "
                  "'recording resumed', ?2)");
  event.bind(1, runId).bind(2, nowMs()).run();
  tx.commit();
  m_runs[runId].lock = std::move(lock);
}

WriterDb::RunState* WriterDb::live(int64_t runId) {
  auto it = m_runs.find(runId);
  return it == m_runs.end() ? nullptr : &it->second;
}

WriterDb::SeriesState& WriterDb::seriesFor(int64_t runId, RunState& run, const PointInput& p) {
  const KeyView key{p.name, p.stage, p.layer};
  if (auto it = run.series.find(key); it != run.series.end()) return *it->second;

  auto state = std::make_unique<SeriesState>();
  Statement insert(*m_db,
                   "INSERT INTO series (run_id, name, stage, layer) VALUES (?1, ?2, ?3, ?4) "
                   "ON CONFLICT (run_id, name, stage, layer) DO NOTHING");
  insert.bind(1, runId).bind(2, p.name).bind(3, p.stage).bind(4, p.layer).run();
  Statement find(*m_db,
                 "SELECT id, (SELECT max(seq) FROM points WHERE series_id = series.id) "
                 "FROM series WHERE run_id = ?1 AND name = ?2 AND stage = ?3 AND layer = ?4");
  find.bind(1, runId).bind(2, p.name).bind(3, p.stage).bind(4, p.layer).step();
  state->id = find.getInt(0);
  state->nextSeq = find.isNull(1) ? 0 : find.getInt(1) + 1;
  // A series continued after a resume: pick up its open buckets so levels stay exact.
  if (state->nextSeq > 0) {
    Statement level(*m_db,
                    "SELECT count, step_first, step_last, t_first, t_last, v_min, v_max, "
                    "v_first, v_last FROM series_levels WHERE series_id = ?1 AND level = ?2 "
                    "AND bucket = ?3");
    for (size_t i = 0; i < kLevelSizes.size(); ++i) {
      const int64_t bucket = (state->nextSeq - 1) / kLevelSizes[i];
      level.bind(1, state->id).bind(2, kLevelSizes[i]).bind(3, bucket);
      if (level.step()) {
        LevelBucket b;
        b.bucket = bucket;
        b.count = level.getInt(0);
        b.stepFirst = level.getInt(1);
        b.stepLast = level.getInt(2);
        b.tFirst = level.getDouble(3);
        b.tLast = level.getDouble(4);
        b.vMin = level.getDouble(5);
        b.vMax = level.getDouble(6);
        b.vFirst = level.getDouble(7);
        b.vLast = level.getDouble(8);
        state->levels.restore(i, b);
      }
      level.reset();
    }
  }
  SeriesState& ref = *state;
  run.series.emplace(SeriesKey{p.name, p.stage, p.layer}, std::move(state));
  return ref;
}

void WriterDb::insert(SeriesState& s, int64_t step, double timeS, double value) {
  Statement& insert = *m_insertPoint;
  insert.bind(1, s.id).bind(2, s.nextSeq).bind(3, step).bind(4, timeS).bind(5, value);
  insert.run();
  s.levels.add(s.nextSeq, step, timeS, value);
  ++s.nextSeq;
  if (!s.touched) {
    s.touched = true;
    m_touched.push_back(&s);
  }
}

int64_t WriterDb::windowWidth(int64_t rows) const {
  const int64_t raw = m_options.rawPointsPerSeries;
  if (raw <= 0 || rows < raw) return 1;
  const int64_t phase = (rows - raw) / std::max<int64_t>(1, m_options.rowsPerPhase);
  return int64_t{4} << std::min<int64_t>(phase, 40);
}

void WriterDb::emitWindow(SeriesState& s, bool final) {
  Window& w = s.window;
  if (w.count == 0) return;
  // The window's extremes (and a NaN, which min/max skip), each once, in the order they came.
  std::vector<Sample> keep;
  auto add = [&](const Sample& p) {
    for (const Sample& k : keep)
      if (k.step == p.step && k.timeS == p.timeS &&
          (k.value == p.value || (std::isnan(k.value) && std::isnan(p.value))))
        return;
    keep.push_back(p);
  };
  if (w.min) add(*w.min);
  if (w.max) add(*w.max);
  if (w.nan) add(*w.nan);
  if (final) add(w.last);
  std::sort(keep.begin(), keep.end(), [](const Sample& a, const Sample& b) {
    return a.step != b.step ? a.step < b.step : a.timeS < b.timeS;
  });
  for (const Sample& p : keep) insert(s, p.step, p.timeS, p.value);
  w = Window{};
}

int64_t WriterDb::writePoints(int64_t runId, const std::vector<PointInput>& points) {
  RunState* run = live(runId);
  if (!run || run->finishing) return static_cast<int64_t>(points.size());
  SeriesState* last = nullptr;
  const PointInput* lastPoint = nullptr;
  for (const PointInput& p : points) {
    // Consecutive points of one series are common; skip the hash lookup for them.
    SeriesState* s = last;
    if (!lastPoint || lastPoint->stage != p.stage || lastPoint->layer != p.layer ||
        lastPoint->name != p.name) {
      s = &seriesFor(runId, *run, p);
    }
    last = s;
    lastPoint = &p;
    Window& w = s->window;
    const int64_t width = windowWidth(s->nextSeq);
    if (width == 1 && w.count == 0) {
      insert(*s, p.step, p.timeS, p.value);
      continue;
    }
    const Sample sample{p.step, p.timeS, p.value};
    ++w.count;
    w.last = sample;
    if (std::isnan(p.value)) {
      if (!w.nan) w.nan = sample;
    } else {
      if (!w.min || p.value < w.min->value) w.min = sample;
      if (!w.max || p.value > w.max->value) w.max = sample;
    }
    if (w.count >= width) emitWindow(*s, false);
  }
  return 0;
}

void WriterDb::closeWindows(RunState& run) {
  for (auto& [key, s] : run.series) emitWindow(*s, true);
}

bool WriterDb::writeEvent(int64_t runId, const EventInput& e) {
  if (!live(runId)) return false;
  Statement insert(*m_db,
                   "INSERT INTO events (run_id, t, kind, stage, message, wall_ms) "
                   "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  insert.bind(1, runId).bind(2, e.timeS).bind(3, e.kind).bind(4, e.stage).bind(5, e.message);
  insert.bind(6, nowMs()).run();
  return true;
}

bool WriterDb::writeCheckpoint(int64_t runId, const std::string& path, int64_t step) {
  if (!live(runId)) return false;
  Statement insert(*m_db,
                   "INSERT INTO checkpoints (run_id, path, step, created_at_ms) "
                   "VALUES (?1, ?2, ?3, ?4)");
  insert.bind(1, runId).bind(2, path).bind(3, step).bind(4, nowMs()).run();
  return true;
}

bool WriterDb::finishRun(int64_t runId, const RunFinish& f) {
  RunState* run = live(runId);
  if (!run || run->finishing) return false;
  closeWindows(*run);
  const TimestampMs now = nowMs();
  Statement update(*m_db,
                   "UPDATE runs SET status = ?2, finished_at_ms = ?3, heartbeat_at_ms = ?3, "
                   "summary_json = ?4, steps = ?5, test_accuracy = ?6, test_loss = ?7, "
                   "samples_per_sec = ?8, wall_seconds = ?9, cpu_utilization = ?10, "
                   "pipeline_efficiency = ?11, error = ?12, failed_stage = ?13 WHERE id = ?1");
  update.bind(1, runId).bind(2, toString(f.status)).bind(3, now);
  if (f.summaryJson.empty()) {
    update.bindNull(4);
  } else {
    update.bind(4, f.summaryJson);
  }
  update.bind(5, f.steps).bind(6, f.testAccuracy).bind(7, f.testLoss).bind(8, f.samplesPerSec);
  update.bind(9, f.wallSeconds).bind(10, f.cpuUtilization).bind(11, f.pipelineEfficiency);
  update.bind(12, f.error).bind(13, f.failedStage).run();
  if (f.replaceStages) {
    // The run was re-partitioned: its stage rows describe the end (the start is in its spec).
    Statement(*m_db, "DELETE FROM stages WHERE run_id = ?1").bind(1, runId).run();
    NewRun end;
    end.stages = f.stages;
    insertRunChildren(runId, end);
    Statement(*m_db, "UPDATE runs SET stage_count = ?2 WHERE id = ?1")
        .bind(1, runId)
        .bind(2, static_cast<int64_t>(f.stages.size()))
        .run();
  }
  Statement stage(*m_db,
                  "UPDATE stages SET steps = ?3, final_loss = ?4, final_accuracy = ?5, "
                  "compute_fraction = ?6, grad_cosine = ?7 WHERE run_id = ?1 AND idx = ?2");
  for (const StageRecord& s : f.stages) {
    stage.bind(1, runId).bind(2, s.index).bind(3, s.steps).bind(4, s.finalLoss);
    stage.bind(5, s.finalAccuracy).bind(6, s.computeFraction).bind(7, s.gradCosine).run();
  }
  run->finishing = true;
  return true;
}

void WriterDb::writeHeartbeats() {
  Statement update(*m_db, "UPDATE runs SET heartbeat_at_ms = ?2 WHERE id = ?1");
  const TimestampMs now = nowMs();
  for (const auto& [id, run] : m_runs) {
    if (!run.finishing) update.bind(1, id).bind(2, now).run();
  }
}

void WriterDb::noteInLiveRuns(const std::string& kind, const std::string& message,
                              const std::map<int64_t, double>& tByRun) {
  Statement insert(
      *m_db,
      "INSERT INTO events (run_id, t, kind, stage, message, wall_ms) VALUES (?1, "
      "coalesce(?2, (SELECT max(t) FROM events WHERE run_id = ?1), 0), ?3, -1, ?4, ?5)");
  for (const auto& [id, run] : m_runs) {
    if (run.finishing) continue;
    const auto t = tByRun.find(id);
    insert.bind(1, id);
    if (t == tByRun.end()) {
      insert.bindNull(2);
    } else {
      insert.bind(2, t->second);
    }
    insert.bind(3, kind).bind(4, message).bind(5, nowMs()).run();
  }
}

void WriterDb::interruptAll(const std::string& why) {
  for (auto& [id, run] : m_runs) {
    if (run.finishing) continue;
    Statement update(*m_db,
                     "UPDATE runs SET status = 'interrupted', finished_at_ms = ?2, "
                     "heartbeat_at_ms = ?2, error = ?3 WHERE id = ?1 AND status = 'running'");
    update.bind(1, id).bind(2, nowMs()).bind(3, why).run();
    run.finishing = true;
  }
}

void WriterDb::abandonAll() {
  for (auto& [id, run] : m_runs) {
    if (run.lock) run.lock->abandon();
  }
  m_runs.clear();
}

void WriterDb::flushLevels() {
  for (SeriesState* s : m_touched) {
    for (const auto& [level, bucket] : s->levels.takeDirty()) {
      bindLevel(*m_upsertLevel, s->id, level, bucket);
    }
    m_updateCount->bind(1, s->id).bind(2, s->nextSeq).run();
    s->touched = false;
  }
  m_touched.clear();
}

void WriterDb::afterCommit() {
  for (auto it = m_runs.begin(); it != m_runs.end();) {
    it = it->second.finishing ? m_runs.erase(it) : std::next(it);
  }
}

void WriterDb::afterRollback() {
  m_touched.clear();
  for (auto& [id, run] : m_runs) {
    run.finishing = false;
    run.series.clear();
    run.spanStages.clear();
  }
}

}  // namespace stagewise::storage::detail
