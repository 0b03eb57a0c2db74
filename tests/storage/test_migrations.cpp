// Forward migrations: stores written by every earlier schema version open at the current one
// with their data intact, their summary levels built, and the same schema as a new store.

#include <QFile>
#include <QTest>
#include <cmath>

#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"
#include "stagewise/storage/run_writer.h"
#include "store_test_util.h"

using namespace stagewise::storage;
using namespace stagewise::storage::testing;

namespace {

std::string readFixture(const char* name) {
  QFile f(QString(STAGEWISE_SOURCE_DIR "/tests/storage/fixtures/") + name);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return f.readAll().toStdString();
}

// Empty if the stored levels of a series agree with its points (count, min, max per bucket, and
// first/last of write order), else what differs.
std::string levelMismatch(const std::string& path, int seriesId) {
  for (int level : {32, 1024, 32768}) {
    const std::string l = std::to_string(level);
    const std::string s = std::to_string(seriesId);
    const std::string agg = "SELECT seq / " + l +
                            " AS b, count(*) AS c, min(value) AS mn, max(value) AS mx, "
                            "min(seq) AS s0, max(seq) AS s1 FROM points WHERE series_id = " +
                            s + " GROUP BY b";
    const long long buckets = rawInt(path, "SELECT count(*) FROM (" + agg + ")");
    const long long rows = rawInt(
        path, "SELECT count(*) FROM series_levels WHERE series_id = " + s + " AND level = " + l);
    const long long matching =
        rawInt(path, "SELECT count(*) FROM (" + agg +
                         ") a JOIN series_levels v ON v.series_id = " + s + " AND v.level = " + l +
                         " AND v.bucket = a.b WHERE v.count = a.c AND "
                         "v.v_min IS a.mn AND v.v_max IS a.mx AND "
                         "v.v_first IS (SELECT value FROM points WHERE series_id = " +
                         s +
                         " AND seq = a.s0) AND "
                         "v.v_last IS (SELECT value FROM points WHERE series_id = " +
                         s +
                         " AND seq = a.s1) AND "
                         "v.step_first = (SELECT step FROM points WHERE series_id = " +
                         s + " AND seq = a.s0)");
    if (buckets != rows || rows != matching) {
      return "level " + l + ": " + std::to_string(buckets) + " buckets, " + std::to_string(rows) +
             " rows, " + std::to_string(matching) + " matching";
    }
  }
  return {};
}

}  // namespace

class TestMigrations : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir m_dir;
  int m_count = 0;

  std::string storeFromFixture(const char* fixture) {
    const std::string sql = readFixture(fixture);
    if (sql.empty()) return {};
    const std::string path = m_dir.filePath(QString("m%1.db").arg(++m_count)).toStdString();
    return rawExec(path, sql) ? path : std::string();
  }

  void checkMigrated(const std::string& path, int fromVersion) {
    {
      RunStore store(path);
      QCOMPARE(store.schemaVersionFound(), fromVersion);
      QVERIFY(store.recoveredRuns().empty());  // finished runs are not touched
      RunReader reader(store);
      QCOMPARE(reader.countRuns(), int64_t(2));
      const auto run = reader.run(1);
      QVERIFY(run.has_value());
      QCOMPARE(run->name, std::string("mlp-4-stages"));
      QCOMPARE(toString(run->status), toString(RunStatus::Completed));
      QCOMPARE(run->notes, std::string("first try"));
      QCOMPARE(run->tags, (std::vector<std::string>{"baseline", "fmnist"}));
      QCOMPARE(run->testAccuracy.value_or(0), 0.875);
      // v3 fills pipeline_efficiency from the stored summary
      QCOMPARE(run->pipelineEfficiency.value_or(0), 0.8125);
      QVERIFY(!reader.run(2)->pipelineEfficiency.has_value());
      QCOMPARE(reader.run(2)->error, std::string("stage 0 (fc2): loss is NaN"));
      QCOMPARE(reader.stages(1).size(), size_t(2));
      QCOMPARE(reader.stages(1)[0].finalLoss.value_or(0), 0.52);
      QCOMPARE(reader.layers(1)[0].outShape, std::vector<int64_t>{512});
      QCOMPARE(reader.events(2).back().kind, std::string("failed"));
      QVERIFY(reader.checkpoints(1).empty());
      QCOMPARE(reader.checkpoints(2).size(), size_t(fromVersion >= 3 ? 1 : 0));
      // v4: the study tables exist (empty before v4; the v4 fixture's study kept)
      QCOMPARE(reader.listStudies().size(), size_t(fromVersion >= 4 ? 1 : 0));
      // v6: the spans table exists, empty for runs recorded before it
      QVERIFY(reader.spans(1).empty());

      const auto points = reader.loadSeries(1, {"loss", 0, -1});
      QCOMPARE(points.size(), size_t(5000));
      QVERIFY(std::isnan(points[7].value));
      QCOMPARE(points[2500].value, 50.0);
      // The spike is found through the summary levels, not the raw points.
      const auto plot = reader.loadDecimated(1, {"loss", 0, -1}, 20);
      QCOMPARE(plot.level, 32);
      double top = 0;
      for (const auto& b : plot.buckets) top = std::max(top, b.max);
      QCOMPARE(top, 50.0);
    }
    QCOMPARE(rawInt(path, "PRAGMA user_version"), 6LL);
    QCOMPARE(QString::fromStdString(rawQuery(path, "PRAGMA integrity_check")), QString("ok"));
    for (int series : {1, 2, 3}) {
      const std::string mismatch = levelMismatch(path, series);
      QVERIFY2(mismatch.empty(), mismatch.c_str());
    }
  }

  std::string schemaText(const std::string& path) {
    return rawQuery(path,
                    "SELECT group_concat(name || ':' || coalesce(sql, ''), char(10)) FROM "
                    "(SELECT name, sql FROM sqlite_schema ORDER BY name)");
  }

 private Q_SLOTS:
  void fromVersion1() {
    const std::string path = storeFromFixture("store_v1.sql");
    QVERIFY(!path.empty());
    QCOMPARE(rawInt(path, "SELECT count(*) FROM sqlite_schema WHERE name = 'series_levels'"), 0LL);
    checkMigrated(path, 1);
  }

  void fromVersion2() {
    const std::string path = storeFromFixture("store_v2.sql");
    QVERIFY(!path.empty());
    const long long levelRows = rawInt(path, "SELECT count(*) FROM series_levels");
    QVERIFY(levelRows > 0);
    checkMigrated(path, 2);
    QCOMPARE(rawInt(path, "SELECT count(*) FROM series_levels"), levelRows);
  }

  void fromVersion3() {
    const std::string path = storeFromFixture("store_v3.sql");
    QVERIFY(!path.empty());
    QCOMPARE(rawInt(path, "SELECT count(*) FROM sqlite_schema WHERE name = 'studies'"), 0LL);
    checkMigrated(path, 3);
    QCOMPARE(rawInt(path, "SELECT count(*) FROM sqlite_schema WHERE name LIKE 'stud%'"), 4LL);
  }

  void fromVersion4() {
    const std::string path = storeFromFixture("store_v4.sql");
    QVERIFY(!path.empty());
    // v4 refuses the status a pruned trial gets; v5 takes it, and still refuses others.
    QCOMPARE(rawQuery(path, "SELECT count(*) FROM sqlite_schema WHERE sql LIKE '%pruned%'"),
             std::string("0"));
    checkMigrated(path, 4);
    {
      RunStore store(path);
      RunReader reader(store);
      const auto study = reader.study(1);
      QVERIFY(study.has_value());
      QCOMPARE(study->name, std::string("lr study"));
      QVERIFY(study->searchJson.empty());  // a grid
      QCOMPARE(study->runsCompleted, 1);
      QCOMPARE(reader.studyRuns(1).size(), size_t(2));
      QVERIFY(!reader.studyRuns(1)[0].prunedAt.has_value());
      store.markRunPruned(1, 2, 300, "pruned at rung 300 steps");  // run 2 failed: unchanged
      QCOMPARE(toString(reader.run(2)->status), std::string("failed"));
    }
    QVERIFY(rawExec(path, "UPDATE runs SET status = 'pruned' WHERE id = 2"));
    QCOMPARE(rawQuery(path, "SELECT status FROM runs WHERE id = 2"), std::string("pruned"));
    QVERIFY(!rawExec(path, "UPDATE runs SET status = 'bogus' WHERE id = 2"));
    QCOMPARE(QString::fromStdString(rawQuery(path, "PRAGMA integrity_check")), QString("ok"));
    RunStore again(path);
    RunReader reader(again);
    QCOMPARE(toString(reader.run(2)->status), std::string("pruned"));
    QCOMPARE(reader.study(1)->runsPruned, 1);
  }

  void fromVersion5() {
    const std::string path = storeFromFixture("store_v5.sql");
    QVERIFY(!path.empty());
    QCOMPARE(rawInt(path, "SELECT count(*) FROM sqlite_schema WHERE name = 'spans'"), 0LL);
    checkMigrated(path, 5);
    QCOMPARE(rawInt(path, "SELECT count(*) FROM sqlite_schema WHERE name = 'spans'"), 1LL);
    // A run finished before v6 stays as it was; a continued one gains spans.
    RunStore store(path);
    RunWriter& w = store.writer();
    w.resumeRun(1);
    w.appendSpans(1, {{0, 5001, 60.0, 60.5, "step", -1}});
    w.finishRun(1, RunFinish{});
    w.flush();
    RunReader reader(store);
    QCOMPARE(reader.spans(1).size(), size_t(1));
    QCOMPARE(reader.spans(1)[0].kind, std::string("step"));
  }

  void migratedSchemaEqualsNewSchema() {
    const std::string fresh = m_dir.filePath("fresh.db").toStdString();
    { RunStore store(fresh); }
    for (const char* fixture :
         {"store_v1.sql", "store_v2.sql", "store_v3.sql", "store_v4.sql", "store_v5.sql"}) {
      const std::string path = storeFromFixture(fixture);
      { RunStore store(path); }
      QCOMPARE(QString::fromStdString(schemaText(path)), QString::fromStdString(schemaText(fresh)));
    }
  }

  void migrationRunsOnce() {
    const std::string path = storeFromFixture("store_v1.sql");
    { RunStore store(path); }
    const long long rows = rawInt(path, "SELECT count(*) FROM series_levels");
    RunStore again(path);
    QCOMPARE(again.schemaVersionFound(), 6);
    QCOMPARE(rawInt(path, "SELECT count(*) FROM series_levels"), rows);
  }

  void migratedRunCanBeContinued() {
    const std::string path = storeFromFixture("store_v1.sql");
    {
      RunStore store(path);
      RunWriter& w = store.writer();
      w.resumeRun(1);
      std::vector<PointInput> more;
      for (int i = 0; i < 3000; ++i)
        more.push_back({"loss", 0, -1, 5001 + i, 60.0 + i * 0.01, i == 10 ? -7.0 : 0.3});
      w.appendPoints(1, std::move(more));
      w.finishRun(1, RunFinish{});
      w.flush();
      RunReader reader(store);
      QCOMPARE(reader.findSeries(1, {"loss", 0, -1})->pointCount, int64_t(8000));
      QCOMPARE(toString(reader.run(1)->status), toString(RunStatus::Completed));
    }
    const std::string mismatch = levelMismatch(path, 1);
    QVERIFY2(mismatch.empty(), mismatch.c_str());
  }
};

QTEST_GUILESS_MAIN(TestMigrations)
#include "test_migrations.moc"
