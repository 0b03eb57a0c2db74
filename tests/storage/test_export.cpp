// Export: long-format CSV and a JSON document that parse back to exactly what was stored.

#include <QTest>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "stagewise/storage/export.h"
#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"
#include "stagewise/storage/run_writer.h"
#include "store_test_util.h"

using namespace stagewise::storage;
using namespace stagewise::storage::testing;

namespace {

// Splits one CSV record (RFC 4180 quoting, no embedded newlines in this test's data).
std::vector<std::string> csvFields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"')
        out.back() += '"', ++i;
      else if (c == '"')
        quoted = false;
      else
        out.back() += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

}  // namespace

class TestExport : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir m_dir;
  std::unique_ptr<RunStore> m_store;
  int64_t m_a = 0;
  int64_t m_b = 0;

 private Q_SLOTS:
  void initTestCase() {
    m_store = std::make_unique<RunStore>(m_dir.filePath("e.db").toStdString());
    RunWriter& w = m_store->writer();
    m_a = w.createRun(sampleRun("plain"));
    NewRun b = sampleRun("with, \"quotes\"");
    b.tags = {"t"};
    m_b = w.createRun(b);
    w.appendPoints(m_a, std::vector<PointInput>{{"loss", 0, -1, 1, 0.5, 2.25},
                                                {"loss", 0, -1, 2, 1.0, NAN},
                                                {"grad_cosine", 1, 3, 100, 9.75, -0.1}});
    w.appendPoints(m_b, std::vector<PointInput>{{"samples_per_sec", -1, -1, 7, 0.1 + 0.2, 1e-7}});
    w.appendEvent(m_a, {"started", 0, -1, "go"});
    w.addCheckpoint(m_a, "/c/1.pt", 1);
    RunFinish f;
    f.summaryJson = R"({"status":"completed","test_accuracy":0.5})";
    f.testAccuracy = 0.5;
    w.finishRun(m_a, f);
    w.flush();
  }

  void csvIsLongFormat() {
    RunReader reader(*m_store);
    std::ostringstream out;
    exportCsv(reader, {m_a, m_b}, out);
    std::istringstream in(out.str());
    std::string line;
    std::getline(in, line);
    QCOMPARE(line, std::string("run_id,run_name,series,stage,layer,step,time_s,value"));
    std::vector<std::vector<std::string>> rows;
    while (std::getline(in, line)) rows.push_back(csvFields(line));
    QCOMPARE(rows.size(), size_t(4));
    for (const auto& r : rows) QCOMPARE(r.size(), size_t(8));
    // run a, series ordered by name: grad_cosine, then loss
    QCOMPARE(rows[0], (std::vector<std::string>{std::to_string(m_a), "plain", "grad_cosine", "1",
                                                "3", "100", "9.75", "-0.1"}));
    QCOMPARE(rows[1][7], std::string("2.25"));
    QCOMPARE(rows[2][7], std::string(""));  // NaN
    QCOMPARE(rows[3][1], std::string("with, \"quotes\""));
    QCOMPARE(std::stod(rows[3][6]), 0.1 + 0.2);  // full precision
    QVERIFY(std::stod(rows[3][6]) == 0.1 + 0.2);
    QCOMPARE(rows[3][7], std::string("1e-07"));
  }

  void jsonHasEverything() {
    RunReader reader(*m_store);
    std::ostringstream out;
    exportJson(reader, {m_a, m_b}, out);
    const auto doc = nlohmann::json::parse(out.str());
    QCOMPARE(doc["format"].get<std::string>(), std::string("stagewise-runs"));
    QCOMPARE(doc["runs"].size(), size_t(2));
    const auto& a = doc["runs"][0];
    QCOMPARE(a["id"].get<int64_t>(), m_a);
    QCOMPARE(a["status"].get<std::string>(), std::string("completed"));
    QCOMPARE(a["spec"]["train"]["lr"].get<double>(), 0.001);
    QCOMPARE(a["summary"]["test_accuracy"].get<double>(), 0.5);
    QCOMPARE(a["test_accuracy"].get<double>(), 0.5);
    QVERIFY(a["test_loss"].is_null());
    QCOMPARE(a["stages"].size(), size_t(2));
    QCOMPARE(a["layers"][0]["out_shape"][0].get<int>(), 512);
    QCOMPARE(a["events"][0]["message"].get<std::string>(), std::string("go"));
    QCOMPARE(a["checkpoints"][0]["path"].get<std::string>(), std::string("/c/1.pt"));
    QCOMPARE(a["series"].size(), size_t(2));
    const auto& loss = a["series"][1];
    QCOMPARE(loss["name"].get<std::string>(), std::string("loss"));
    QCOMPARE(loss["points"][0][2].get<double>(), 2.25);
    QVERIFY(loss["points"][1][2].is_null());
    const auto& b = doc["runs"][1];
    QCOMPARE(b["name"].get<std::string>(), std::string("with, \"quotes\""));
    QCOMPARE(b["tags"][0].get<std::string>(), std::string("t"));
    QVERIFY(b["series"][0]["points"][0][1].get<double>() == 0.1 + 0.2);
  }

  void unknownRunIsAnError() {
    RunReader reader(*m_store);
    std::ostringstream out;
    QVERIFY_THROWS_EXCEPTION(StoreError, exportCsv(reader, {m_a, 9999}, out));
    QVERIFY(out.str().empty());  // checked before writing anything
    QVERIFY_THROWS_EXCEPTION(StoreError, exportJson(reader, {9999}, out));
  }

  void runToJsonIsOneLine() {
    RunReader reader(*m_store);
    const std::string line = runToJson(*reader.run(m_a));
    QVERIFY(line.find('\n') == std::string::npos);
    QCOMPARE(nlohmann::json::parse(line)["name"].get<std::string>(), std::string("plain"));
  }
};

QTEST_GUILESS_MAIN(TestExport)
#include "test_export.moc"
