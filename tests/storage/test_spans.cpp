// Spans in the store: written by the run writer, read back, kept within timeline.max_spans
// (docs/metrics.md, "Spans kept"), and written out as a Chrome trace (storage/trace.h).

#include <QTest>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"
#include "stagewise/storage/run_writer.h"
#include "stagewise/storage/store_error.h"
#include "stagewise/storage/trace.h"
#include "store_test_util.h"

using namespace stagewise::storage;
using namespace stagewise::storage::testing;
using nlohmann::json;

namespace {

/// A pipeline-like step of stage `k`: a wait, two micro-batches' forward and backward, the
/// update (5 + 1 spans), starting at `t`.
std::vector<SpanInput> pipelineStep(int k, int64_t step, double t) {
  std::vector<SpanInput> out;
  out.push_back({k, step, t, t + 0.0001, "wait", 0});
  for (int i = 0; i < 2; ++i)
    out.push_back({k, step, t + 0.001 * i, t + 0.001 * i + 0.0005, "forward", i});
  for (int i = 0; i < 2; ++i)
    out.push_back({k, step, t + 0.002 + 0.001 * i, t + 0.0025 + 0.001 * i, "backward", i});
  out.push_back({k, step, t + 0.004, t + 0.0045, "backward", -1});
  return out;
}

NewRun runWithSpec(const std::string& specJson, int stages) {
  NewRun run = sampleRun("spans");
  run.mode = "pipeline";
  run.specJson = specJson;
  run.stages.resize(size_t(stages));
  for (int k = 0; k < stages; ++k) run.stages[size_t(k)].index = k;
  return run;
}

}  // namespace

class TestSpans : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir m_dir;
  int m_count = 0;
  std::string freshPath() { return m_dir.filePath(QString("s%1.db").arg(++m_count)).toStdString(); }

  /// Records `steps` steps of `stages` stages, handed over a step at a time; returns the run id.
  int64_t record(RunStore& store, const std::string& spec, int stages, int64_t steps) {
    RunWriter& w = store.writer();
    const int64_t id = w.createRun(runWithSpec(spec, stages));
    for (int64_t s = 0; s < steps; ++s)
      for (int k = 0; k < stages; ++k) w.appendSpans(id, pipelineStep(k, s, s * 0.01));
    w.finishRun(id, RunFinish{});
    w.flush();
    return id;
  }

 private Q_SLOTS:
  void spansReadBackAsWritten() {
    RunStore store(freshPath());
    const int64_t id = record(store, "{}", 2, 3);
    RunReader reader(store);
    const auto spans = reader.spans(id);
    QCOMPARE(spans.size(), size_t(2 * 3 * 6));
    // By stage, then start.
    QCOMPARE(spans.front().stage, 0);
    QCOMPARE(spans.back().stage, 1);
    const SpanRecord& f = spans[1];  // stage 0, step 0, the first forward
    QCOMPARE(f.kind, std::string("forward"));
    QCOMPARE(f.step, int64_t(0));
    QCOMPARE(f.micro, 0);
    QCOMPARE(f.startS, 0.0);
    QCOMPARE(f.endS, 0.0005);
    QCOMPARE(spans[0].kind, std::string("wait"));
    QVERIFY(reader.spans(id + 1).empty());
  }

  void defaultKeepsRecentStepsAndASample() {
    RunStore store(freshPath());
    const int64_t steps = 3000;
    const int64_t id = record(store, "{}", 2, steps);
    RunReader reader(store);
    const auto spans = reader.spans(id);
    // At most 200 recent steps and 200 sampled steps per stage, 6 spans each.
    QVERIFY2(spans.size() <= size_t(2 * 400 * 6), std::to_string(spans.size()).c_str());
    std::map<int, std::set<int64_t>> stepsOf;
    std::map<std::pair<int, int64_t>, int> perStep;
    for (const auto& s : spans) {
      stepsOf[s.stage].insert(s.step);
      ++perStep[{s.stage, s.step}];
    }
    for (int k = 0; k < 2; ++k) {
      // The last 200 steps are all there, whole.
      for (int64_t s = steps - 200; s < steps; ++s) QVERIFY(stepsOf[k].count(s));
      // A sample reaches back to the start, spread evenly (a power-of-two stride).
      QVERIFY(stepsOf[k].count(0));
      QVERIFY(stepsOf[k].size() > 300);
      std::vector<int64_t> old(stepsOf[k].begin(), stepsOf[k].end());
      old.resize(old.size() - 200);
      const int64_t stride = old[1] - old[0];
      QVERIFY(stride > 1 && (stride & (stride - 1)) == 0);
      for (size_t i = 1; i < old.size(); ++i) QCOMPARE(old[i] % stride, int64_t(0));
    }
    for (const auto& [key, n] : perStep) QCOMPARE(n, 6);  // a kept step keeps every span
  }

  void maxSpansBoundsALongRun() {
    RunStore store(freshPath());
    const int64_t id = record(store, R"({"timeline":{"max_spans":600}})", 3, 4000);
    RunReader reader(store);
    const auto spans = reader.spans(id);
    QVERIFY2(spans.size() <= 600, std::to_string(spans.size()).c_str());
    QVERIFY(spans.size() >= 300);
    std::map<int, int64_t> newest;
    std::map<int, int64_t> oldest;
    for (const auto& s : spans) {
      newest[s.stage] = std::max(newest[s.stage], s.step);
      oldest[s.stage] = oldest.count(s.stage) ? std::min(oldest[s.stage], s.step) : s.step;
    }
    for (int k = 0; k < 3; ++k) {
      QCOMPARE(newest[k], int64_t(3999));
      QCOMPARE(oldest[k], int64_t(0));
    }
  }

  void boundHoldsAcrossAResume() {
    const std::string path = freshPath();
    int64_t id = 0;
    {
      RunStore store(path);
      id = record(store, R"({"timeline":{"max_spans":240}})", 1, 1000);
    }
    RunStore store(path);
    RunWriter& w = store.writer();
    w.resumeRun(id);
    for (int64_t s = 1000; s < 2000; ++s) w.appendSpans(id, pipelineStep(0, s, s * 0.01));
    w.finishRun(id, RunFinish{});
    w.flush();
    RunReader reader(store);
    const auto spans = reader.spans(id);
    QVERIFY2(spans.size() <= 240, std::to_string(spans.size()).c_str());
    QCOMPARE(spans.back().step, int64_t(1999));
    QCOMPARE(spans.front().step, int64_t(0));
  }

  void deletingARunDeletesItsSpans() {
    const std::string path = freshPath();
    RunStore store(path);
    const int64_t id = record(store, "{}", 1, 5);
    store.deleteRuns({id});
    QCOMPARE(rawInt(path, "SELECT count(*) FROM spans"), 0LL);
  }

  // ---- the trace file

  void traceEventNames_data() {
    QTest::addColumn<QString>("kind");
    QTest::addColumn<int>("stage");
    QTest::addColumn<int>("micro");
    QTest::addColumn<QString>("mode");
    QTest::addColumn<QString>("name");
    QTest::newRow("forward") << "forward" << 0 << 3 << "pipeline"
                             << "PP:0F3";
    QTest::newRow("backward") << "backward" << 2 << 0 << "pipeline"
                              << "PP:2B0";
    QTest::newRow("weight") << "weight" << 1 << 2 << "pipeline"
                            << "PP:1W2";
    QTest::newRow("recompute") << "recompute" << 1 << 2 << "pipeline"
                               << "PP:1R2";
    QTest::newRow("update") << "backward" << 1 << -1 << "pipeline"
                            << "PP:1update";
    QTest::newRow("local step") << "step" << 0 << -1 << "local"
                                << "PP:0local";
    QTest::newRow("backprop step") << "step" << 0 << -1 << "backprop"
                                   << "PP:0step";
    QTest::newRow("aux") << "aux" << 0 << -1 << "local"
                         << "PP:0aux";
    QTest::newRow("wait") << "wait" << 1 << 0 << "pipeline"
                          << "wait";
    QTest::newRow("blocked") << "blocked" << 1 << 0 << "local"
                             << "blocked";
  }
  void traceEventNames() {
    QFETCH(QString, kind);
    QFETCH(int, stage);
    QFETCH(int, micro);
    QFETCH(QString, mode);
    QFETCH(QString, name);
    const SpanRecord span{stage, 7, 1.0, 2.0, kind.toStdString(), micro};
    QCOMPARE(QString::fromStdString(traceEventName(span, mode.toStdString())), name);
  }

  void traceMatchesStoredSpans() {
    RunStore store(freshPath());
    RunWriter& w = store.writer();
    const int64_t id = w.createRun(runWithSpec("{}", 2));
    for (int64_t s = 0; s < 4; ++s)
      for (int k = 0; k < 2; ++k) w.appendSpans(id, pipelineStep(k, s, 1.5 + s * 0.01));
    // Stage 1 ran on rank 1; counters for stage 0.
    w.appendPoints(id, {{"rank", 1, -1, 0, 0.0, 1.0},
                        {"bytes_sent", 0, -1, 1, 1.51, 4096},
                        {"bytes_sent", 0, -1, 2, 1.52, 8192},
                        {"memory_bytes", 0, -1, 2, 1.52, 1e6}});
    w.finishRun(id, RunFinish{});
    w.flush();
    RunReader reader(store);
    std::ostringstream text;
    const int64_t written = writeTrace(reader, id, text);
    const json doc = json::parse(text.str());  // throws on invalid JSON
    QVERIFY(doc.is_object());
    QVERIFY(doc.at("traceEvents").is_array());

    const auto stored = reader.spans(id);
    QCOMPARE(written, int64_t(stored.size()));
    std::vector<json> complete, counters;
    std::map<std::pair<int, int>, std::string> threadNames;
    std::map<int, std::string> processNames;
    for (const json& e : doc["traceEvents"]) {
      // Perfetto's JSON importer: every event has a ph and a pid; X needs ts, dur and tid.
      QVERIFY(e.at("ph").is_string());
      QVERIFY(e.at("pid").is_number_integer());
      const std::string ph = e["ph"];
      if (ph == "X") {
        QVERIFY(e.at("ts").is_number());
        QVERIFY(e.at("dur").is_number() && e["dur"].get<double>() >= 0);
        QVERIFY(e.at("tid").is_number_integer());
        complete.push_back(e);
      } else if (ph == "C") {
        QVERIFY(e.at("ts").is_number());
        QVERIFY(e.at("args").is_object() && !e["args"].empty());
        counters.push_back(e);
      } else if (ph == "M") {
        const std::string name = e.at("name");
        if (name == "thread_name")
          threadNames[{e["pid"].get<int>(), e["tid"].get<int>()}] = e["args"]["name"];
        if (name == "process_name") processNames[e["pid"].get<int>()] = e["args"]["name"];
      } else {
        QFAIL(("unexpected ph " + ph).c_str());
      }
    }
    // One complete event per stored span, in the same order, with the same numbers.
    QCOMPARE(complete.size(), stored.size());
    for (size_t i = 0; i < stored.size(); ++i) {
      const SpanRecord& s = stored[i];
      const json& e = complete[i];
      QCOMPARE(e["name"].get<std::string>(), traceEventName(s, "pipeline"));
      QCOMPARE(e["tid"].get<int>(), s.stage);
      QCOMPARE(e["pid"].get<int>(), s.stage == 1 ? 1 : 0);
      QVERIFY(std::abs(e["ts"].get<double>() - s.startS * 1e6) < 1e-3);
      QVERIFY(std::abs(e["dur"].get<double>() - (s.endS - s.startS) * 1e6) < 2e-3);
      QCOMPARE(e["args"]["stage"].get<int>(), s.stage);  // 0-based, as in "PP:0F0"
      QCOMPARE(e["args"]["step"].get<int64_t>(), s.step);
      QCOMPARE(e["args"]["micro"].get<int>(), s.micro);
      QCOMPARE(e["cat"].get<std::string>(), s.kind);
    }
    QCOMPARE(threadNames[std::make_pair(0, 0)], std::string("S1"));
    QCOMPARE(threadNames[std::make_pair(1, 1)], std::string("S2"));
    QCOMPARE(processNames[0], std::string("rank 0"));
    QCOMPARE(processNames[1], std::string("rank 1"));
    QCOMPARE(counters.size(), size_t(3));
    QCOMPARE(counters[0]["name"].get<std::string>(), std::string("S1 bytes_sent"));
    QCOMPARE(counters[1]["args"]["bytes"].get<double>(), 8192.0);
    QVERIFY(std::abs(counters[1]["ts"].get<double>() - 1.52e6) < 1e-3);
  }

  void traceRefusesWhatItCannotWrite() {
    const std::string path = freshPath();
    RunStore store(path);
    RunWriter& w = store.writer();
    const int64_t noSpans = w.createRun(runWithSpec("{}", 1));
    w.finishRun(noSpans, RunFinish{});
    w.flush();
    const int64_t withSpans = record(store, "{}", 1, 2);
    RunReader reader(store);
    const std::string out = m_dir.filePath("t.json").toStdString();
    auto refusal = [&](int64_t id, const std::string& file) {
      try {
        writeTraceFile(reader, id, file);
      } catch (const StoreError& e) {
        return std::string(e.what());
      }
      return std::string();
    };
    QVERIFY(refusal(999, out).find("there is no run 999") != std::string::npos);
    QVERIFY(refusal(noSpans, out).find("has no spans stored") != std::string::npos);
    QVERIFY(!std::filesystem::exists(out));  // a refusal leaves no file
    QVERIFY(refusal(withSpans, m_dir.filePath("no/such/dir/t.json").toStdString())
                .find("cannot write") != std::string::npos);
    QCOMPARE(writeTraceFile(reader, withSpans, out), int64_t(12));
    std::ifstream in(out);
    QCOMPARE(json::parse(in)["traceEvents"].size() > 12, true);
  }
};

QTEST_GUILESS_MAIN(TestSpans)
#include "test_spans.moc"
