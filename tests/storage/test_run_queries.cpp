// Listing, filtering, sorting and paging runs; SQL-looking input stays data; edits and deletes;
// spec differences and series alignment across runs.

#include <QTest>
#include <algorithm>
#include <cmath>

#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"
#include "stagewise/storage/run_writer.h"
#include "store_test_util.h"

using namespace stagewise::storage;
using namespace stagewise::storage::testing;

namespace {

const char* kEvil = "'; DROP TABLE runs; --";

std::vector<int64_t> ids(const std::vector<RunRecord>& runs) {
  std::vector<int64_t> out;
  for (const auto& r : runs) out.push_back(r.id);
  return out;
}

}  // namespace

class TestRunQueries : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir m_dir;
  std::string m_path;
  std::unique_ptr<RunStore> m_store;
  std::vector<int64_t> m_ids;  // 20 runs, see initTestCase

  int64_t addRun(const std::string& name, const std::string& mode, RunStatus status,
                 std::optional<double> accuracy, std::vector<std::string> tags = {},
                 std::string notes = {}) {
    NewRun run = sampleRun(name);
    run.mode = mode;
    run.tags = std::move(tags);
    run.notes = std::move(notes);
    RunWriter& w = m_store->writer();
    const int64_t id = w.createRun(run);
    if (status != RunStatus::Running) {
      RunFinish f;
      f.status = status;
      f.testAccuracy = accuracy;
      f.samplesPerSec = 100.0 * static_cast<double>(id);
      w.finishRun(id, f);
    }
    w.flush();
    return id;
  }

 private Q_SLOTS:
  void initTestCase() {
    m_path = m_dir.filePath("q.db").toStdString();
    m_store = std::make_unique<RunStore>(m_path);
    // 20 runs: even ids local, odd backprop; every 4th failed; accuracy missing on every 5th.
    for (int i = 0; i < 20; ++i) {
      const RunStatus status = i % 4 == 3 ? RunStatus::Failed : RunStatus::Completed;
      std::optional<double> acc;
      if (i % 5 != 4) acc = 0.5 + 0.01 * ((i * 7) % 20);
      std::vector<std::string> tags = {i % 2 ? "bp" : "local"};
      if (i % 3 == 0) tags.push_back("sweep-A");
      m_ids.push_back(addRun((i % 2 ? "Baseline " : "stagewise ") + std::to_string(i),
                             i % 2 ? "backprop" : "local", status, acc, tags,
                             i == 7 ? "the GOOD one" : ""));
    }
    // Creation times one hour apart so date ranges can be tested.
    for (int i = 0; i < 20; ++i) {
      QVERIFY(rawExec(m_path, "UPDATE runs SET created_at_ms = " +
                                  std::to_string(1700000000000LL + i * 3600000LL) +
                                  " WHERE id = " + std::to_string(m_ids[size_t(i)])));
    }
  }

  void listsNewestFirstByDefault() {
    RunReader reader(*m_store);
    const auto runs = reader.listRuns();
    QCOMPARE(runs.size(), size_t(20));
    QCOMPARE(runs.front().id, m_ids.back());
    QCOMPARE(runs.back().id, m_ids.front());
    QVERIFY(runs.front().specJson.empty());  // list rows are light
    QCOMPARE(reader.countRuns(), int64_t(20));
  }

  void filtersByTextInNameNotesAndTags() {
    RunReader reader(*m_store);
    RunFilter f;
    f.text = "BASELINE";  // case-insensitive
    QCOMPARE(reader.countRuns(f), int64_t(10));
    f.text = "good";  // notes
    QCOMPARE(ids(reader.listRuns(f)), std::vector<int64_t>{m_ids[7]});
    f.text = "sweep-a";  // tag
    QCOMPARE(reader.countRuns(f), int64_t(7));
    f.text = "no such thing";
    QCOMPARE(reader.countRuns(f), int64_t(0));
  }

  void filtersByStatusModeTagsAndDates() {
    RunReader reader(*m_store);
    RunFilter f;
    f.statuses = {RunStatus::Failed};
    QCOMPARE(reader.countRuns(f), int64_t(5));
    f.statuses = {RunStatus::Failed, RunStatus::Completed};
    QCOMPARE(reader.countRuns(f), int64_t(20));
    f = {};
    f.mode = "backprop";
    for (const auto& r : reader.listRuns(f)) QCOMPARE(r.mode, std::string("backprop"));
    QCOMPARE(reader.countRuns(f), int64_t(10));
    f = {};
    f.tags = {"local", "sweep-A"};              // both
    QCOMPARE(reader.countRuns(f), int64_t(4));  // i = 0, 6, 12, 18
    f = {};
    f.createdFrom = 1700000000000LL + 5 * 3600000LL;
    f.createdTo = 1700000000000LL + 8 * 3600000LL;  // exclusive
    QCOMPARE(ids(reader.listRuns(f, {RunColumn::CreatedAt, false})),
             (std::vector<int64_t>{m_ids[5], m_ids[6], m_ids[7]}));
  }

  void sortsByAnySummaryColumnWithMissingLast() {
    RunReader reader(*m_store);
    for (bool desc : {true, false}) {
      const auto runs = reader.listRuns({}, {RunColumn::TestAccuracy, desc});
      QCOMPARE(runs.size(), size_t(20));
      for (size_t i = 0; i < 16; ++i) QVERIFY(runs[i].testAccuracy.has_value());
      for (size_t i = 16; i < 20; ++i) QVERIFY(!runs[i].testAccuracy.has_value());
      for (size_t i = 1; i < 16; ++i) {
        const double a = *runs[i - 1].testAccuracy;
        const double b = *runs[i].testAccuracy;
        QVERIFY(desc ? a >= b : a <= b);
        if (a == b) QVERIFY(runs[i - 1].id > runs[i].id);  // ties: newest first
      }
    }
    const auto byName = reader.listRuns({}, {RunColumn::Name, false});
    QVERIFY(byName.front().name.rfind("Baseline", 0) == 0);  // B < s, case-insensitive
    const auto bySpeed = reader.listRuns({}, {RunColumn::SamplesPerSec, true}, 1);
    QCOMPARE(bySpeed.front().id, m_ids.back());
    for (const std::string& name : runColumnNames()) {
      const auto column = runColumnFromString(name);
      QVERIFY2(column.has_value(), name.c_str());
      QCOMPARE(toString(*column), name);
      QCOMPARE(reader.listRuns({}, {*column, true}).size(), size_t(20));
    }
    QVERIFY(!runColumnFromString("test_accuracy; DROP TABLE runs"));
  }

  void aRunningRunSortsByItsLiveSamplesPerSec() {
    // Issue 36 §2.2: the table showed a running run's live samples/s but sorted it by the
    // summary's (none yet), so it sat at the bottom until it finished.
    QTemporaryDir dir;
    RunStore store(dir.filePath("live.db").toStdString());
    RunWriter& w = store.writer();
    std::vector<int64_t> done;
    for (double rate : {100.0, 300.0}) {
      const int64_t id = w.createRun(sampleRun("done"));
      RunFinish f;
      f.status = RunStatus::Completed;
      f.samplesPerSec = rate;
      w.finishRun(id, f);
      done.push_back(id);
    }
    const int64_t running = w.createRun(sampleRun("running"));
    w.appendPoints(running, std::vector<PointInput>{{"samples_per_sec", -1, -1, 10, 0.5, 150.0},
                                                    {"samples_per_sec", -1, -1, 20, 1.0, 200.0}});
    w.flush();
    RunReader reader(store);
    const auto desc = reader.listRuns({}, {RunColumn::SamplesPerSec, true});
    QCOMPARE(ids(desc), (std::vector<int64_t>{done[1], running, done[0]}));
    QCOMPARE(desc[1].samplesPerSec.value_or(0), 200.0);
    const auto asc = reader.listRuns({}, {RunColumn::SamplesPerSec, false});
    QCOMPARE(ids(asc), (std::vector<int64_t>{done[0], running, done[1]}));
  }

  void pagesCoverTheListOnce() {
    RunReader reader(*m_store);
    const RunOrder order{RunColumn::TestAccuracy, true};
    const auto all = ids(reader.listRuns({}, order));
    std::vector<int64_t> paged;
    for (int offset = 0; offset < 20; offset += 7) {
      const auto page = ids(reader.listRuns({}, order, 7, offset));
      QVERIFY(page.size() <= 7);
      paged.insert(paged.end(), page.begin(), page.end());
    }
    QCOMPARE(paged, all);
    QVERIFY(reader.listRuns({}, order, 5, 40).empty());
  }

  void sqlLookingInputStaysData() {
    const int64_t id = addRun(kEvil, "local", RunStatus::Completed, 0.9, {kEvil, "50%_off"}, kEvil);
    RunReader reader(*m_store);
    QCOMPARE(reader.run(id)->name, std::string(kEvil));
    QCOMPARE(reader.run(id)->notes, std::string(kEvil));
    RunFilter f;
    f.text = kEvil;
    QCOMPARE(ids(reader.listRuns(f)), std::vector<int64_t>{id});
    f = {};
    f.tags = {kEvil};
    QCOMPARE(ids(reader.listRuns(f)), std::vector<int64_t>{id});
    f = {};
    f.mode = "local' OR '1'='1";
    QCOMPARE(reader.countRuns(f), int64_t(0));
    f = {};
    f.text = "%";  // LIKE wildcards are literal characters here
    QCOMPARE(ids(reader.listRuns(f)), std::vector<int64_t>{id});
    f.text = "_";
    QCOMPARE(reader.countRuns(f), int64_t(1));
    m_store->setNotes(id, "x'); DELETE FROM runs; --");
    m_store->addTags(id, {"\"; DROP TABLE run_tags; --"});
    QCOMPARE(rawInt(m_path, "SELECT count(*) FROM runs"), 21LL);
    QCOMPARE(rawInt(m_path, "SELECT count(*) FROM sqlite_schema WHERE name = 'run_tags'"), 1LL);
    m_store->deleteRuns({id});
    QCOMPARE(reader.countRuns(), int64_t(20));
  }

  void deleteRemovesEverythingTheRunOwns() {
    RunWriter& w = m_store->writer();
    NewRun kept = sampleRun("keep");
    kept.tags = {"k"};
    const int64_t keep = w.createRun(kept);
    NewRun run = sampleRun("doomed");
    run.tags = {"t1", "t2"};
    const int64_t id = w.createRun(run);
    std::vector<PointInput> points;
    for (int i = 0; i < 5000; ++i) points.push_back({"loss", 0, -1, i, i * 0.1, 1.0});
    w.appendPoints(id, std::move(points));
    w.appendPoints(keep, std::vector<PointInput>{{"loss", 0, -1, 0, 0.0, 1.0}});
    w.appendEvent(id, {"info", 1.0, -1, "x"});
    w.addCheckpoint(id, "/tmp/c.pt", 10);
    w.flush();
    QVERIFY_THROWS_EXCEPTION(StoreError, m_store->deleteRuns({id}));  // still recording
    w.finishRun(id, {});
    w.finishRun(keep, {});
    w.flush();
    QVERIFY_THROWS_EXCEPTION(StoreError, m_store->deleteRuns({id, 999999}));  // all or none
    QVERIFY(RunReader(*m_store).run(id).has_value());

    m_store->deleteRuns({id});
    const std::string rid = std::to_string(id);
    for (const char* table :
         {"runs WHERE id", "run_tags WHERE run_id", "stages WHERE run_id", "layers WHERE run_id",
          "series WHERE run_id", "events WHERE run_id", "checkpoints WHERE run_id"}) {
      QCOMPARE(rawInt(m_path, std::string("SELECT count(*) FROM ") + table + " = " + rid), 0LL);
    }
    QCOMPARE(rawInt(m_path,
                    "SELECT count(*) FROM points WHERE series_id NOT IN (SELECT id FROM series)"),
             0LL);
    QCOMPARE(
        rawInt(m_path,
               "SELECT count(*) FROM series_levels WHERE series_id NOT IN (SELECT id FROM series)"),
        0LL);
    RunReader reader(*m_store);
    QCOMPARE(reader.loadSeries(keep, {"loss", 0, -1}).size(), size_t(1));
    QCOMPARE(reader.run(keep)->tags, std::vector<std::string>{"k"});
    m_store->deleteRuns({keep});
  }

  void diffSpecsShowsOnlyDifferences() {
    RunWriter& w = m_store->writer();
    NewRun a = sampleRun("a");
    a.specJson = R"({"name":"x","train":{"lr":0.001,"seed":1},"model":{"hidden":[512,512]}})";
    NewRun b = a;
    b.specJson = R"({"name":"x","train":{"lr":0.01,"seed":1},"model":{"hidden":[512]}})";
    NewRun c = a;
    c.specJson =
        R"({"name":"x","train":{"lr":0.001,"seed":1},"model":{"hidden":[512,512]},"mode":"backprop"})";
    const int64_t ia = w.createRun(a), ib = w.createRun(b), ic = w.createRun(c);
    RunReader reader(*m_store);
    const auto diff = reader.diffSpecs({ia, ib, ic});
    QCOMPARE(diff.size(), size_t(3));
    QCOMPARE(diff[0].key, std::string("mode"));
    QVERIFY(!diff[0].values[0] && !diff[0].values[1]);
    QCOMPARE(*diff[0].values[2], std::string("\"backprop\""));
    QCOMPARE(diff[1].key, std::string("model.hidden"));
    QCOMPARE(*diff[1].values[1], std::string("[512]"));
    QCOMPARE(diff[2].key, std::string("train.lr"));
    QVERIFY(reader.diffSpecs({ia, ia}).empty());
    QVERIFY_THROWS_EXCEPTION(StoreError, reader.diffSpecs({ia, 424242}));
    for (int64_t id : {ia, ib, ic}) w.finishRun(id, {});
    w.flush();
    m_store->deleteRuns({ia, ib, ic});
  }

  void alignsRunsOnStepAndTime() {
    RunWriter& w = m_store->writer();
    const int64_t a = w.createRun(sampleRun("align-a"));
    const int64_t b = w.createRun(sampleRun("align-b"));
    std::vector<PointInput> pa, pb;
    for (int s = 0; s <= 100; s += 10) pa.push_back({"loss", 0, -1, s, s * 0.5, double(s)});
    for (int s = 50; s <= 200; s += 50) pb.push_back({"loss", 0, -1, s, s * 0.1, -double(s)});
    w.appendPoints(a, pa);
    w.appendPoints(b, pb);
    w.flush();
    RunReader reader(*m_store);
    const std::vector<SeriesRef> refs = {
        {a, {"loss", 0, -1}}, {b, {"loss", 0, -1}}, {a, {"missing", 0, -1}}};
    // Grid 0, 28.6, 57.1, ..., 200 over the union of the two runs' steps.
    const auto al = reader.alignSeries(refs, 8, XAxis::Step);
    QCOMPARE(al.x.size(), size_t(8));
    QCOMPARE(al.x.front(), 0.0);
    QCOMPARE(al.x.back(), 200.0);
    QCOMPARE(al.values.size(), size_t(3));
    // run a (steps 0..100): last value at or before each grid point, NaN past its end
    QCOMPARE(al.values[0][0], 0.0);
    QCOMPARE(al.values[0][1], 20.0);
    QCOMPARE(al.values[0][2], 50.0);
    QCOMPARE(al.values[0][4], 100.0);
    QVERIFY(std::isnan(al.values[0][5]));
    // run b (steps 50..200): NaN before it starts, holds across grid points without a point
    QVERIFY(std::isnan(al.values[1][0]));
    QVERIFY(std::isnan(al.values[1][1]));
    QCOMPARE(al.values[1][2], -50.0);
    QCOMPARE(al.values[1][3], -50.0);
    QCOMPARE(al.values[1][5], -100.0);
    QCOMPARE(al.values[1][7], -200.0);
    for (double v : al.values[2]) QVERIFY(std::isnan(v));
    // By time: run a spans 0..50 s, run b 5..20 s; grid 0, 16.7, 33.3, 50.
    const auto byTime = reader.alignSeries(refs, 4, XAxis::Time);
    QCOMPARE(byTime.x.back(), 50.0);
    QCOMPARE(byTime.values[1][1], -150.0);
    QCOMPARE(byTime.values[1][2], -200.0);
    QVERIFY(std::isnan(byTime.values[1][3]));
    QCOMPARE(byTime.values[0][3], 100.0);
    w.finishRun(a, {});
    w.finishRun(b, {});
    w.flush();
  }
};

QTEST_GUILESS_MAIN(TestRunQueries)
#include "test_run_queries.moc"
