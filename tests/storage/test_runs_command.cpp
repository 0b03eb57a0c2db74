// `stagewise-cli runs ...`: every command on a real store, and one clear line for bad input.

#include <QTest>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "stagewise/cli/runs_command.h"
#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"
#include "stagewise/storage/run_writer.h"
#include "store_test_util.h"

using namespace stagewise::storage;
using namespace stagewise::storage::testing;

namespace {

struct Result {
  int rc = 0;
  std::string out;
  std::string err;
};

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

class TestRunsCommand : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir m_dir;
  std::string m_db;
  std::vector<int64_t> m_ids;

  Result run(std::vector<std::string> args, bool withDb = true) {
    if (withDb) args.insert(args.begin(), {"--db", m_db});
    std::ostringstream out, err;
    Result r;
    r.rc = stagewise::cli::runsCommand(args, out, err);
    r.out = out.str();
    r.err = err.str();
    return r;
  }

  // A usage error: code 2, nothing on out, exactly one line on err containing `hint`.
  void expectUsageError(const std::vector<std::string>& args, const std::string& hint) {
    const Result r = run(args);
    QVERIFY2(r.rc == 2, qPrintable(QString("rc %1 for %2")
                                       .arg(r.rc)
                                       .arg(QString::fromStdString(args.empty() ? "" : args[0]))));
    QVERIFY(r.out.empty());
    QCOMPARE(lines(r.err).size(), size_t(1));
    QVERIFY2(r.err.find(hint) != std::string::npos, r.err.c_str());
  }

 private Q_SLOTS:
  void initTestCase() {
    m_db = m_dir.filePath("cli.db").toStdString();
    RunStore store(m_db);
    RunWriter& w = store.writer();
    for (int i = 0; i < 4; ++i) {
      NewRun r = sampleRun(i == 3 ? "a rather long run name that goes on and on and on"
                                  : "run-" + std::to_string(i));
      r.mode = i % 2 ? "backprop" : "local";
      const int64_t id = w.createRun(r);
      m_ids.push_back(id);
      w.appendPoints(id, std::vector<PointInput>{{"loss", 0, -1, 1, 0.1, 2.0 - i},
                                                 {"loss", 0, -1, 2, 0.2, 1.5 - i}});
      if (i == 0) w.addCheckpoint(id, "/ckpt/a.pt", 2);
      RunFinish f;
      f.status = i == 2 ? RunStatus::Failed : RunStatus::Completed;
      f.testAccuracy = 0.6 + 0.1 * i;
      f.samplesPerSec = 1000.0 * (i + 1);
      f.wallSeconds = 10.0 + i;
      if (i == 2) f.error = "stage 0 (fc1): loss is NaN";
      w.finishRun(id, f);
    }
    w.flush();
  }

  void listPrintsAlignedTable() {
    const Result r = run({"list"});
    QCOMPARE(r.rc, 0);
    QVERIFY(r.err.empty());
    const auto ls = lines(r.out);
    QCOMPARE(ls.size(), size_t(5));
    QVERIFY(ls[0].rfind("ID", 0) == 0 || ls[0].find(" ID") != std::string::npos);
    const size_t statusAt = ls[0].find("STATUS");
    const size_t createdAt = ls[0].find("CREATED");
    for (size_t i = 1; i < ls.size(); ++i) {
      const std::string status = ls[i].substr(statusAt, 6);
      QVERIFY2(status == "comple" || status == "failed", ls[i].c_str());
      QCOMPARE(ls[i].substr(createdAt, 2), std::string("20"));  // a date, same column
    }
    QVERIFY(ls[1].find("...") != std::string::npos);  // newest first: the long name, clipped
  }

  void listFiltersSortsAndPages() {
    Result r = run({"list", "--status", "failed"});
    QCOMPARE(lines(r.out).size(), size_t(2));
    QVERIFY(r.out.find("run-2") != std::string::npos);
    r = run({"list", "--mode", "backprop", "--json"});
    auto j = nlohmann::json::parse(r.out);
    QCOMPARE(j.size(), size_t(2));
    for (const auto& e : j) QCOMPARE(e["mode"].get<std::string>(), std::string("backprop"));
    r = run({"list", "--sort", "test_accuracy:asc", "--limit", "2", "--json"});
    j = nlohmann::json::parse(r.out);
    QCOMPARE(j.size(), size_t(2));
    QCOMPARE(j[0]["id"].get<int64_t>(), m_ids[0]);
    QCOMPARE(j[1]["id"].get<int64_t>(), m_ids[1]);
    r = run({"list", "--sort", "samples_per_sec", "--offset", "3", "--json"});
    j = nlohmann::json::parse(r.out);
    QCOMPARE(j.size(), size_t(1));
    QCOMPARE(j[0]["id"].get<int64_t>(), m_ids[0]);
    r = run({"list", "--filter", "'; DROP TABLE runs; --"});
    QCOMPARE(r.rc, 0);
    QCOMPARE(r.out, std::string("No runs.\n"));
    QCOMPARE(nlohmann::json::parse(run({"list", "--json"}).out).size(), size_t(4));
  }

  void listWhereTakesAQuery() {
    Result r = run({"list", "--where", "mode = \"backprop\" and min(loss) < 0", "--json"});
    QCOMPARE(r.rc, 0);
    auto j = nlohmann::json::parse(r.out);
    QCOMPARE(j.size(), size_t(1));
    QCOMPARE(j[0]["id"].get<int64_t>(), m_ids[3]);
    r = run({"list", "--where=test_accuracy >= 0.75 or name ~ \"RUN-0\"", "--sort", "id:asc",
             "--json"});
    j = nlohmann::json::parse(r.out);
    QCOMPARE(j.size(), size_t(3));
    QCOMPARE(j[0]["id"].get<int64_t>(), m_ids[0]);
    QCOMPARE(j[1]["id"].get<int64_t>(), m_ids[2]);
    QCOMPARE(j[2]["id"].get<int64_t>(), m_ids[3]);
    // With the other filters: every one must hold.
    r = run({"list", "--where", "train.lr = 0.001", "--status", "failed", "--json"});
    j = nlohmann::json::parse(r.out);
    QCOMPARE(j.size(), size_t(1));
    QCOMPARE(j[0]["id"].get<int64_t>(), m_ids[2]);
  }

  void listWhereSyntaxErrorPointsAtTheColumn() {
    const Result r = run({"list", "--where", "mode = local"});
    QCOMPARE(r.rc, 2);
    QVERIFY(r.out.empty());
    const auto ls = lines(r.err);
    QVERIFY2(ls.size() >= 3, r.err.c_str());
    QVERIFY2(ls[0].find("runs list: --where: column 8: put text values in double quotes") == 0,
             r.err.c_str());
    QCOMPARE(ls[1], std::string("  mode = local"));
    QCOMPARE(ls[2], std::string("         ^"));  // under the 'l' of local
    QVERIFY(r.err.find("docs/query.md") != std::string::npos);
  }

  void listWithoutStoreCreatesNothing() {
    const std::string missing = m_dir.filePath("none/here.db").toStdString();
    const Result r = run({"--db", missing, "list"}, false);
    QCOMPARE(r.rc, 0);
    QVERIFY(r.out.find("No runs") != std::string::npos);
    QVERIFY(!std::filesystem::exists(missing));
    QCOMPARE(run({"--db", missing, "list", "--json"}, false).out, std::string("[]\n"));
  }

  void environmentSelectsTheStore() {
    setenv("STAGEWISE_DB", m_db.c_str(), 1);
    const Result r = run({"list", "--json"}, false);
    unsetenv("STAGEWISE_DB");
    QCOMPARE(nlohmann::json::parse(r.out).size(), size_t(4));
  }

  void showTextAndJson() {
    Result r = run({"show", std::to_string(m_ids[2])});
    QCOMPARE(r.rc, 0);
    QVERIFY(r.out.find("Run " + std::to_string(m_ids[2]) + ": run-2") == 0);
    QVERIFY(r.out.find("failed (stage 0 (fc1): loss is NaN)") != std::string::npos);
    QVERIFY(r.out.find("Stages") != std::string::npos);
    QVERIFY(r.out.find("loss") != std::string::npos);
    r = run({"show", std::to_string(m_ids[0]), "--json"});
    const auto j = nlohmann::json::parse(r.out);
    QCOMPARE(j["id"].get<int64_t>(), m_ids[0]);
    QCOMPARE(j["spec"]["train"]["batch_size"].get<int>(), 32);
    QCOMPARE(j["series"][0]["points"].get<int>(), 2);
    QCOMPARE(j["checkpoints"][0]["path"].get<std::string>(), std::string("/ckpt/a.pt"));
    QCOMPARE(j["stages"].size(), size_t(2));
    // --json keeps the store's 0-based fields that scripts read (docs/stagewise-cli.1).
    QCOMPARE(j["stages"][0]["index"].get<int>(), 0);
    QCOMPARE(j["stages"][0]["first_layer"].get<int>(), 0);
    QCOMPARE(j["stages"][1]["first_layer"].get<int>(), 4);
  }

  // A pipeline run's text says how it was scheduled and each stage's run-mean bubble, measured
  // and planned (before, only --json had them).
  void showNamesThePipelineScheduleAndBubbles() {
    const std::string db = m_dir.filePath("pipe.db").toStdString();  // the other tests count runs
    RunStore store(db);
    RunWriter& w = store.writer();
    NewRun n = sampleRun("pipe");
    n.mode = "pipeline";
    n.specJson = R"({"name":"pipe","pipeline":{"micro_batches":8,"schedule":"interleaved",)"
                 R"("chunks":2,"recompute":true}})";
    const int64_t id = w.createRun(n);
    RunFinish f;
    f.summaryJson = R"({"stages":[{"index":0,"bubble_measured":0.4321,"bubble_planned":0.1234},)"
                    R"({"index":1,"bubble_measured":0.25,"bubble_planned":null}]})";
    w.finishRun(id, f);
    w.flush();
    const Result r = run({"--db", db, "show", std::to_string(id)}, false);
    QCOMPARE(r.rc, 0);
    QVERIFY2(
        r.out.find("schedule:") != std::string::npos &&
            r.out.find("interleaved, micro-batches 8, chunks 2, recompute on") != std::string::npos,
        r.out.c_str());
    QVERIFY2(r.out.find("BUBBLE MEASURED") != std::string::npos, r.out.c_str());
    const auto ls = lines(r.out);
    auto row = [&](const std::string& start) {
      for (const auto& l : ls)
        if (l.rfind(start, 0) == 0) return l;
      return std::string();
    };
    // Stages and layers numbered from 1, as the workbench shows them (issue 36 §4: STAGE 0,
    // LAYERS 0-3 where Train says S1).
    const std::string s0 = row("   S1  1-4"), s1 = row("   S2  5-9");
    QVERIFY2(s0.size() > 0 && s0.find("0.432") != std::string::npos &&
                 s0.find("0.123") != std::string::npos,
             r.out.c_str());
    QVERIFY2(s1.find("0.250") != std::string::npos && s1.substr(s1.size() - 1) == "-",
             r.out.c_str());
    // A local run has no schedule line.
    const Result local = run({"show", std::to_string(m_ids[0])});
    QVERIFY(local.out.find("schedule:") == std::string::npos);
  }

  void exportCsvAndJson() {
    Result r = run({"export", std::to_string(m_ids[0]), std::to_string(m_ids[1])});
    QCOMPARE(r.rc, 0);
    auto ls = lines(r.out);
    QCOMPARE(ls.size(), size_t(5));
    QCOMPARE(ls[0], std::string("run_id,run_name,series,stage,layer,step,time_s,value"));
    QCOMPARE(ls[1], std::to_string(m_ids[0]) + ",run-0,loss,0,-1,1,0.1,2");
    const std::string file = m_dir.filePath("out.json").toStdString();
    r = run({"export", std::to_string(m_ids[1]), "--out", file});
    QCOMPARE(r.rc, 0);
    QVERIFY(r.out.empty());
    std::ifstream in(file);
    const auto j = nlohmann::json::parse(in);  // .json picked the format
    QCOMPARE(j["runs"][0]["id"].get<int64_t>(), m_ids[1]);
    r = run({"export", std::to_string(m_ids[1]), "--format", "json"});
    QCOMPARE(nlohmann::json::parse(r.out)["runs"].size(), size_t(1));
  }

  void tagsAndNotes() {
    const std::string id = std::to_string(m_ids[1]);
    Result r = run({"tag", id, "sweep", "best"});
    QCOMPARE(r.rc, 0);
    QCOMPARE(r.out, "Run " + id + " tags: best, sweep\n");
    r = run({"tag", id, "best", "--remove"});
    QCOMPARE(r.out, "Run " + id + " tags: sweep\n");
    r = run({"note", id, "looks", "good"});
    QCOMPARE(r.rc, 0);
    r = run({"note", id, "--", "-5% slower"});
    QCOMPARE(r.rc, 0);
    RunStore store(m_db);
    QCOMPARE(RunReader(store).run(m_ids[1])->notes, std::string("-5% slower"));
    QCOMPARE(nlohmann::json::parse(run({"list", "--tag", "sweep", "--json"}).out).size(),
             size_t(1));
  }

  void deleteNeedsConfirmation() {
    const std::string id = std::to_string(m_ids[3]);
    expectUsageError({"delete", id}, "--yes");
    QCOMPARE(nlohmann::json::parse(run({"list", "--json"}).out).size(), size_t(4));
    const Result r = run({"delete", id, "--yes"});
    QCOMPARE(r.rc, 0);
    QCOMPARE(r.out, std::string("Deleted 1 run(s).\n"));
    QCOMPARE(nlohmann::json::parse(run({"list", "--json"}).out).size(), size_t(3));
  }

  void badInputGetsOneLine() {
    expectUsageError({}, "give a command");
    expectUsageError({"frobnicate"}, "unknown command 'frobnicate'");
    expectUsageError({"list", "--colour"}, "unknown option '--colour'");
    expectUsageError({"list", "--status", "done"}, "unknown status 'done'");
    expectUsageError({"list", "--mode", "fast"}, "unknown mode 'fast'");
    expectUsageError({"list", "--sort", "speed"}, "cannot sort by 'speed'");
    expectUsageError({"list", "--limit", "ten"}, "--limit wants a whole number");
    expectUsageError({"list", "--limit"}, "--limit needs a value");
    expectUsageError({"list", "extra"}, "takes no arguments");
    expectUsageError({"show"}, "exactly one run id");
    expectUsageError({"show", "abc"}, "'abc' is not a run id");
    expectUsageError({"show", "0"}, "'0' is not a run id");
    expectUsageError({"show", "999"}, "there is no run 999");
    expectUsageError({"export"}, "one or more run ids");
    expectUsageError({"export", std::to_string(m_ids[0]), "--format", "xml"},
                     "unknown format 'xml'");
    expectUsageError({"tag", std::to_string(m_ids[0])}, "one or more tags");
    expectUsageError({"note", std::to_string(m_ids[0])}, "the note");
    expectUsageError({"delete", "12", "x"}, "'x' is not a run id");
    const Result noDb = run({"show", "1", "--db"}, false);
    QCOMPARE(noDb.rc, 2);
    QVERIFY(noDb.err.find("--db needs a path") != std::string::npos);
    const Result missing =
        run({"--db", m_dir.filePath("nope.db").toStdString(), "show", "1"}, false);
    QCOMPARE(missing.rc, 2);
    QVERIFY(missing.err.find("no run store at") != std::string::npos);
  }

  void brokenStoreIsAnError() {
    const std::string bad = m_dir.filePath("bad.db").toStdString();
    std::ofstream(bad) << std::string(200, 'z');
    const Result r = run({"--db", bad, "list"}, false);
    QCOMPARE(r.rc, 1);
    QCOMPARE(lines(r.err).size(), size_t(1));
    QVERIFY(r.err.find("not a SQLite database") != std::string::npos);
  }

  void helpGoesToOut() {
    const Result r = run({"--help"}, false);
    QCOMPARE(r.rc, 0);
    QCOMPARE(r.out, stagewise::cli::runsUsage());
  }

  // Last: it adds a run with spans.
  void traceWritesTheStoredSpans() {
    int64_t id = 0;
    {
      RunStore store(m_db);
      RunWriter& w = store.writer();
      id = w.createRun(sampleRun("traced"));
      w.appendSpans(id, {{0, 0, 0.5, 0.75, "step", -1}, {1, 0, 0.25, 0.5, "wait", -1}});
      w.finishRun(id, RunFinish{});
      w.flush();
    }
    const std::string file = m_dir.filePath("run.trace.json").toStdString();
    const Result r = run({"trace", std::to_string(id), "--out", file});
    QCOMPARE(r.rc, 0);
    QVERIFY2(r.out.find("Wrote 2 spans") != std::string::npos, r.out.c_str());
    std::ifstream in(file);
    const auto doc = nlohmann::json::parse(in);
    int complete = 0;
    for (const auto& e : doc.at("traceEvents")) complete += e.at("ph") == "X";
    QCOMPARE(complete, 2);

    expectUsageError({"trace", std::to_string(id)}, "runs trace ID --out FILE.json");
    expectUsageError({"trace", "999", "--out", file}, "there is no run 999");
    // Not a usage error, still one line: a run recorded without spans, a file not writable.
    for (const auto& [args, hint] : std::vector<std::pair<std::vector<std::string>, std::string>>{
             {{"trace", std::to_string(m_ids[1]), "--out", file}, "has no spans stored"},
             {{"trace", std::to_string(id), "--out", m_dir.filePath("no/dir/t.json").toStdString()},
              "cannot write"}}) {
      const Result bad = run(args);
      QCOMPARE(bad.rc, 1);
      QCOMPARE(lines(bad.err).size(), size_t(1));
      QVERIFY2(bad.err.find(hint) != std::string::npos, bad.err.c_str());
    }
  }
};

QTEST_GUILESS_MAIN(TestRunsCommand)
#include "test_runs_command.moc"
