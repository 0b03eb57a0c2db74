#include "schema.h"

#include <string>

#include "levels.h"

namespace stagewise::storage::detail {

namespace {

// Version 1: runs with their stages, layers, tags, series, points and events.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL,
  finished_at_ms INTEGER,
  status TEXT NOT NULL
    CHECK (status IN ('running','completed','stopped','failed','interrupted')),
  mode TEXT NOT NULL,
  spec_json TEXT NOT NULL,
  summary_json TEXT,
  model_kind TEXT NOT NULL DEFAULT '',
  stage_count INTEGER NOT NULL DEFAULT 0,
  devices TEXT NOT NULL DEFAULT '',
  total_steps INTEGER NOT NULL DEFAULT 0,
  batch_size INTEGER NOT NULL DEFAULT 0,
  blas TEXT NOT NULL DEFAULT '',
  torch_version TEXT NOT NULL DEFAULT '',
  steps INTEGER,
  test_accuracy REAL,
  test_loss REAL,
  samples_per_sec REAL,
  wall_seconds REAL,
  cpu_utilization REAL,
  error TEXT NOT NULL DEFAULT '',
  failed_stage INTEGER,
  notes TEXT NOT NULL DEFAULT '',
  writer_pid INTEGER,
  writer_host TEXT,
  heartbeat_at_ms INTEGER
);
CREATE INDEX runs_created ON runs(created_at_ms);
CREATE INDEX runs_status ON runs(status);
CREATE TABLE run_tags (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  tag TEXT NOT NULL,
  PRIMARY KEY (run_id, tag)
) WITHOUT ROWID;
CREATE INDEX run_tags_tag ON run_tags(tag);
CREATE TABLE stages (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL,
  first_layer INTEGER NOT NULL,
  last_layer INTEGER NOT NULL,
  device TEXT NOT NULL,
  aux_head TEXT NOT NULL DEFAULT '',
  threads INTEGER NOT NULL DEFAULT 1,
  params INTEGER NOT NULL DEFAULT 0,
  aux_params INTEGER NOT NULL DEFAULT 0,
  steps INTEGER,
  final_loss REAL,
  final_accuracy REAL,
  compute_fraction REAL,
  grad_cosine REAL,
  PRIMARY KEY (run_id, idx)
) WITHOUT ROWID;
CREATE TABLE layers (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL,
  name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  out_shape TEXT NOT NULL DEFAULT '',
  params INTEGER NOT NULL DEFAULT 0,
  flops INTEGER NOT NULL DEFAULT 0,
  activation_bytes INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (run_id, idx)
) WITHOUT ROWID;
CREATE TABLE series (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  stage INTEGER NOT NULL DEFAULT -1,
  layer INTEGER NOT NULL DEFAULT -1,
  point_count INTEGER NOT NULL DEFAULT 0,
  UNIQUE (run_id, name, stage, layer)
);
CREATE TABLE points (
  series_id INTEGER NOT NULL REFERENCES series(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  step INTEGER NOT NULL,
  t REAL NOT NULL,
  value REAL,
  PRIMARY KEY (series_id, seq)
) WITHOUT ROWID;
CREATE TABLE events (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  t REAL NOT NULL,
  kind TEXT NOT NULL,
  stage INTEGER NOT NULL DEFAULT -1,
  message TEXT NOT NULL DEFAULT '',
  wall_ms INTEGER NOT NULL
);
CREATE INDEX events_run ON events(run_id, t);
)sql";

// Version 2: min/max summary levels per series, so plots of long series read a few thousand
// rows instead of every point. Existing points are summarized here.
constexpr const char* kSchemaV2 = R"sql(
CREATE TABLE series_levels (
  series_id INTEGER NOT NULL REFERENCES series(id) ON DELETE CASCADE,
  level INTEGER NOT NULL,
  bucket INTEGER NOT NULL,
  count INTEGER NOT NULL,
  step_first INTEGER NOT NULL,
  step_last INTEGER NOT NULL,
  t_first REAL NOT NULL,
  t_last REAL NOT NULL,
  v_min REAL,
  v_max REAL,
  v_first REAL,
  v_last REAL,
  PRIMARY KEY (series_id, level, bucket)
) WITHOUT ROWID;
)sql";

// Version 3: checkpoints, the writer's start time (liveness) and pipeline efficiency as a
// sortable column, filled from the summaries already stored.
constexpr const char* kSchemaV3 = R"sql(
CREATE TABLE checkpoints (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  path TEXT NOT NULL,
  step INTEGER NOT NULL,
  created_at_ms INTEGER NOT NULL
);
CREATE INDEX checkpoints_run ON checkpoints(run_id, step);
ALTER TABLE runs ADD COLUMN writer_started_at_ms INTEGER;
ALTER TABLE runs ADD COLUMN pipeline_efficiency REAL;
UPDATE runs SET pipeline_efficiency = json_extract(summary_json, '$.pipeline_efficiency')
  WHERE summary_json IS NOT NULL AND json_valid(summary_json);
)sql";

// Version 4: studies (issue 15). A study's varied keys with their values, and its runs by grid
// point: many-to-many, since a run whose resolved spec two points share is linked to both, and a
// run may serve several studies (the replication report).
constexpr const char* kSchemaV4 = R"sql(
CREATE TABLE studies (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL,
  finished_at_ms INTEGER,
  status TEXT NOT NULL CHECK (status IN ('running','stopped','interrupted','completed')),
  base_spec_json TEXT NOT NULL,
  seeds INTEGER NOT NULL DEFAULT 1,
  sample INTEGER NOT NULL DEFAULT 0,
  sample_seed INTEGER NOT NULL DEFAULT 1,
  target REAL,
  runs_total INTEGER NOT NULL DEFAULT 0,
  writer_pid INTEGER,
  writer_host TEXT,
  heartbeat_at_ms INTEGER
);
CREATE TABLE study_keys (
  study_id INTEGER NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  key TEXT NOT NULL,
  values_json TEXT NOT NULL,
  PRIMARY KEY (study_id, position)
) WITHOUT ROWID;
CREATE TABLE study_runs (
  study_id INTEGER NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
  point INTEGER NOT NULL,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  seed INTEGER NOT NULL,
  values_json TEXT NOT NULL,
  replaced INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (study_id, point, run_id)
) WITHOUT ROWID;
CREATE INDEX study_runs_run ON study_runs(run_id);
)sql";

// Version 5: searches (issue 32). A study's search (its searched keys, trials, sampler, pruning
// and tuning as JSON), the rung at which a trial was pruned, and `pruned` as a run status.
constexpr const char* kSchemaV5 = R"sql(
ALTER TABLE studies ADD COLUMN search_json TEXT;
ALTER TABLE study_runs ADD COLUMN pruned_at INTEGER;
)sql";

// Version 6: spans (issue 37), each stage's timeline as the engine timed it, for `runs trace`
// and the Timeline's export. Bounded by the writer (docs/metrics.md, "Spans kept"): `seq` is
// the order a stage's spans arrived in.
constexpr const char* kSchemaV6 = R"sql(
CREATE TABLE spans (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  stage INTEGER NOT NULL,
  step INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  start_s REAL NOT NULL,
  end_s REAL NOT NULL,
  kind TEXT NOT NULL,
  micro INTEGER NOT NULL DEFAULT -1,
  PRIMARY KEY (run_id, stage, step, seq)
) WITHOUT ROWID;
)sql";

/// Adds 'pruned' to the values runs.status may take. SQLite cannot alter a CHECK constraint;
/// loosening one may edit the table's stored definition, the procedure SQLite's ALTER TABLE
/// page gives for it (every row that passed the old check passes the new one, so nothing is
/// rewritten). The edit is checked: a definition that does not read as expected is refused.
void allowPrunedStatus(Database& db) {
  const std::string from = "'failed','interrupted')";
  const std::string to = "'failed','interrupted','pruned')";
  Statement read(db, "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'runs'");
  if (!read.step()) throw StoreError("run store '" + db.path() + "' has no runs table");
  const std::string sql = read.getText(0);
  if (sql.find(to) != std::string::npos) return;
  if (sql.find(from) == std::string::npos)
    throw StoreError("run store '" + db.path() +
                     "': the runs table's status check is not the one this version migrates; "
                     "the store was changed by another program");
  const int64_t version = db.queryInt("PRAGMA schema_version");
  db.exec("PRAGMA writable_schema = ON");
  Statement(db,
            "UPDATE sqlite_master SET sql = replace(sql, ?1, ?2) WHERE type = 'table' AND "
            "name = 'runs'")
      .bind(1, from)
      .bind(2, to)
      .run();
  db.exec("PRAGMA schema_version = " + std::to_string(version + 1));
  db.exec("PRAGMA writable_schema = OFF");
}

void backfillLevels(Database& db) {
  Statement read(db, "SELECT series_id, seq, step, t, value FROM points ORDER BY series_id, seq");
  Statement write(db, kUpsertLevelSql);
  int64_t current = -1;
  SeriesLevels levels;
  auto emit = [&] {
    for (const auto& [level, bucket] : levels.takeDirty()) bindLevel(write, current, level, bucket);
  };
  while (read.step()) {
    const int64_t seriesId = read.getInt(0);
    if (seriesId != current) {
      if (current >= 0) emit();
      current = seriesId;
      levels = SeriesLevels();
    }
    levels.add(read.getInt(1), read.getInt(2), read.getDouble(3), read.getDouble(4));
  }
  if (current >= 0) emit();
}

}  // namespace

int migrate(Database& db) {
  // A current file needs no write lock: opening it to read works while another process holds
  // a write transaction.
  const int current = static_cast<int>(db.queryInt("PRAGMA user_version"));
  if (current == kSchemaVersion) return current;
  Transaction tx(db);
  const int found = static_cast<int>(db.queryInt("PRAGMA user_version"));
  if (found > kSchemaVersion) {
    throw StoreError("run store '" + db.path() + "' has schema version " + std::to_string(found) +
                     ", newer than this build reads (" + std::to_string(kSchemaVersion) +
                     "): update Stagewise");
  }
  if (found < 1) {
    db.exec(kSchemaV1);
    db.exec("PRAGMA application_id = " + std::to_string(kApplicationId));
  }
  if (found < 2) {
    db.exec(kSchemaV2);
    backfillLevels(db);
  }
  if (found < 3) db.exec(kSchemaV3);
  if (found < 4) db.exec(kSchemaV4);
  if (found < 5) {
    db.exec(kSchemaV5);
    allowPrunedStatus(db);
  }
  if (found < 6) db.exec(kSchemaV6);
  if (found != kSchemaVersion) db.exec("PRAGMA user_version = " + std::to_string(kSchemaVersion));
  tx.commit();
  return found;
}

}  // namespace stagewise::storage::detail
