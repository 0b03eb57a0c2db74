// The pipeline schedules' per-worker orders (pipeline_schedule.h) against orders worked out by
// hand, and the properties every order must have: one forward and one backward per stage and
// micro-batch, W after its B, and a run that cannot deadlock on its dependencies.
#include <QtTest>

#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "stagewise/engine/pipeline_schedule.h"

using namespace stagewise::engine::schedule;

namespace {

/// "F0 BW1 W2:3": op, then the micro-batch, or stage:micro where a worker runs several stages.
std::vector<Action> row(int stage, const std::string& text) {
  std::vector<Action> out;
  std::istringstream in(text);
  std::string tok;
  while (in >> tok) {
    size_t i = 0;
    while (i < tok.size() && std::isalpha(static_cast<unsigned char>(tok[i]))) ++i;
    const std::string op = tok.substr(0, i);
    const std::string rest = tok.substr(i);
    Action a;
    a.op = op == "F" ? Op::F : op == "B" ? Op::B : op == "W" ? Op::W : Op::BW;
    const size_t colon = rest.find(':');
    if (colon == std::string::npos) {
      a.stage = stage;
      a.micro = std::stoi(rest);
    } else {
      a.stage = std::stoi(rest.substr(0, colon));
      a.micro = std::stoi(rest.substr(colon + 1));
    }
    out.push_back(a);
  }
  return out;
}

std::string text(const std::vector<Action>& order) {
  std::string s;
  for (const auto& a : order)
    s += std::string(s.empty() ? "" : " ") + opName(a.op) + std::to_string(a.stage) + ":" +
         std::to_string(a.micro);
  return s;
}

/// Runs the orders with every pass taking one tick, each worker one pass at a time in its order,
/// honouring the dependencies; false if some worker can never go on (a deadlock).
bool runsToTheEnd(const std::vector<std::vector<Action>>& orders, int stages) {
  std::set<std::tuple<int, int, int>> done;  // (stage, op, micro); BW counts as B and W
  auto finished = [&](int s, Op op, int i) { return done.count({s, int(op), i}) > 0; };
  std::vector<size_t> next(orders.size(), 0);
  for (bool moved = true; moved;) {
    moved = false;
    std::vector<Action> ready;
    for (size_t w = 0; w < orders.size(); ++w) {
      if (next[w] == orders[w].size()) continue;
      const Action& a = orders[w][next[w]];
      bool ok = true;
      if (a.op == Op::F) ok = a.stage == 0 || finished(a.stage - 1, Op::F, a.micro);
      if (a.op == Op::B || a.op == Op::BW)
        ok = finished(a.stage, Op::F, a.micro) &&
             (a.stage == stages - 1 || finished(a.stage + 1, Op::B, a.micro));
      if (a.op == Op::W) ok = finished(a.stage, Op::B, a.micro);
      if (ok) ready.push_back(a);
    }
    for (const auto& a : ready) {
      const int w = workerOf(a.stage, stages, int(stages / orders.size()));
      ++next[static_cast<size_t>(w)];
      if (a.op == Op::BW) {
        done.insert({a.stage, int(Op::B), a.micro});
        done.insert({a.stage, int(Op::W), a.micro});
      } else {
        done.insert({a.stage, int(a.op), a.micro});
      }
      moved = true;
    }
  }
  for (size_t w = 0; w < orders.size(); ++w)
    if (next[w] != orders[w].size()) return false;
  return true;
}

}  // namespace

class TestPipelineSchedule : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void ordersWorkedOutByHand_data() {
    QTest::addColumn<QString>("schedule");
    QTest::addColumn<int>("stages");
    QTest::addColumn<int>("chunks");
    QTest::addColumn<QStringList>("expected");  // one row per worker
    QTest::newRow("gpipe p2") << "gpipe" << 2 << 1
                              << QStringList{"F0 F1 F2 F3 BW0 BW1 BW2 BW3",
                                             "F0 F1 F2 F3 BW0 BW1 BW2 BW3"};
    QTest::newRow("gpipe p3") << "gpipe" << 3 << 1
                              << QStringList{"F0 F1 F2 F3 BW0 BW1 BW2 BW3",
                                             "F0 F1 F2 F3 BW0 BW1 BW2 BW3",
                                             "F0 F1 F2 F3 BW0 BW1 BW2 BW3"};
    QTest::newRow("1f1b p2") << "1f1b" << 2 << 1
                             << QStringList{"F0 F1 BW0 F2 BW1 F3 BW2 BW3",
                                            "F0 BW0 F1 BW1 F2 BW2 F3 BW3"};
    QTest::newRow("1f1b p3") << "1f1b" << 3 << 1
                             << QStringList{"F0 F1 F2 BW0 F3 BW1 BW2 BW3",
                                            "F0 F1 BW0 F2 BW1 F3 BW2 BW3",
                                            "F0 BW0 F1 BW1 F2 BW2 F3 BW3"};
    QTest::newRow("zb-h1 p2") << "zb-h1" << 2 << 1
                              << QStringList{"F0 F1 B0 W0 F2 B1 W1 F3 B2 W2 B3 W3",
                                             "F0 B0 F1 B1 W0 F2 B2 W1 F3 B3 W2 W3"};
    QTest::newRow("zb-h1 p3") << "zb-h1" << 3 << 1
                              << QStringList{"F0 F1 F2 B0 W0 F3 B1 W1 B2 W2 B3 W3",
                                             "F0 F1 B0 F2 B1 W0 F3 B2 W1 B3 W2 W3",
                                             "F0 B0 F1 B1 F2 B2 W0 F3 B3 W1 W2 W3"};
    // Interleaved, v = 2: worker r runs stages r and r + P. Two workers: rounds of 2, worker 0
    // warms up with (v-1) 2 + 2 (P-1-0) = 4 forwards, worker 1 with 2.
    QTest::newRow("interleaved P2 v2")
        << "interleaved" << 4 << 2
        << QStringList{
               "F0:0 F0:1 F2:0 F2:1 F0:2 BW2:0 F0:3 BW2:1 F2:2 BW0:0 F2:3 BW0:1 "
               "BW2:2 BW2:3 BW0:2 BW0:3",
               "F1:0 F1:1 F3:0 BW3:0 F3:1 BW3:1 F1:2 BW1:0 F1:3 BW1:1 F3:2 BW3:2 "
               "F3:3 BW3:3 BW1:2 BW1:3"};
    // Three workers, m = 4: one round of 4; warm-ups 4 + 2 (2 - r) = 8, 6, 4.
    QTest::newRow("interleaved P3 v2")
        << "interleaved" << 6 << 2
        << QStringList{
               "F0:0 F0:1 F0:2 F0:3 F3:0 F3:1 F3:2 F3:3 BW3:0 BW3:1 BW3:2 BW3:3 "
               "BW0:0 BW0:1 BW0:2 BW0:3",
               "F1:0 F1:1 F1:2 F1:3 F4:0 F4:1 F4:2 BW4:0 F4:3 BW4:1 BW4:2 BW4:3 "
               "BW1:0 BW1:1 BW1:2 BW1:3",
               "F2:0 F2:1 F2:2 F2:3 F5:0 BW5:0 F5:1 BW5:1 F5:2 BW5:2 F5:3 BW5:3 "
               "BW2:0 BW2:1 BW2:2 BW2:3"};
  }
  void ordersWorkedOutByHand() {
    QFETCH(QString, schedule);
    QFETCH(int, stages);
    QFETCH(int, chunks);
    QFETCH(QStringList, expected);
    const auto orders = workerOrders(schedule.toStdString(), stages, 4, chunks);
    QCOMPARE(int(orders.size()), int(expected.size()));
    for (int w = 0; w < int(orders.size()); ++w)
      QCOMPARE(QString::fromStdString(text(orders[w])),
               QString::fromStdString(text(row(w, expected[w].toStdString()))));
  }

  // Every (stage, micro) gets one F and one backward (BW, or B and W) on the stage's worker; W
  // comes after its B; zb-h1 defers up to k W's at stage k; and the orders run to the end
  // when every worker waits for its inputs.
  void everyOrderIsCompleteAndRunsToTheEnd() {
    for (const std::string& s : scheduleNames())
      for (int p = 1; p <= 6; ++p)
        for (int v = 1; v <= (s == "interleaved" ? 3 : 1); ++v)
          for (int m = 1; m <= 12; ++m) {
            const int stages = p * v;
            std::vector<std::vector<Action>> orders;
            try {
              orders = workerOrders(s, stages, m, v);
            } catch (const std::invalid_argument&) {
              QVERIFY2(s == "interleaved" && v > 1 && m > p && m % p != 0, s.c_str());
              continue;
            }
            const std::string where =
                s + " p" + std::to_string(p) + " v" + std::to_string(v) + " m" + std::to_string(m);
            QCOMPARE(int(orders.size()), p);
            std::map<std::tuple<int, int, int>, int> count;  // (stage, op, micro)
            for (int w = 0; w < p; ++w) {
              std::map<std::pair<int, int>, size_t> bAt;
              for (size_t i = 0; i < orders[w].size(); ++i) {
                const Action& a = orders[w][i];
                QVERIFY2(workerOf(a.stage, stages, v) == w, where.c_str());
                ++count[{a.stage, int(a.op), a.micro}];
                if (a.op == Op::B) bAt[{a.stage, a.micro}] = i;
                if (a.op == Op::W) QVERIFY2(bAt.count({a.stage, a.micro}), where.c_str());
              }
            }
            for (int st = 0; st < stages; ++st)
              for (int i = 0; i < m; ++i) {
                QVERIFY2((count[{st, int(Op::F), i}]) == 1, where.c_str());
                const bool split = s == "zb-h1";
                QVERIFY2((count[{st, int(Op::BW), i}]) == (split ? 0 : 1), where.c_str());
                QVERIFY2((count[{st, int(Op::B), i}]) == (split ? 1 : 0), where.c_str());
                QVERIFY2((count[{st, int(Op::W), i}]) == (split ? 1 : 0), where.c_str());
              }
            QVERIFY2(runsToTheEnd(orders, stages), where.c_str());
            if (s == "zb-h1") {
              // Stage k keeps at most k W's back (its B's whose W has not run), and stage 0
              // runs each W right after its B.
              for (int k = 0; k < p; ++k) {
                int behind = 0;
                int most = 0;
                for (const auto& a : orders[k]) {
                  if (a.op == Op::B) most = std::max(most, ++behind);
                  if (a.op == Op::W) --behind;
                }
                QVERIFY2(most - 1 <= k, where.c_str());
              }
              for (size_t i = 0; i < orders[0].size(); ++i)
                if (orders[0][i].op == Op::B) QCOMPARE(orders[0][i + 1].op, Op::W);
            }
          }
  }

  // 1F1B holds at most p - k micro-batches' activations at stage k (forwards whose backward has
  // not run), GPipe all m; zb-h1 holds them until W, at most p at every stage (1F1B's most).
  void theActivationsHeldAreBounded() {
    for (const std::string s : {"1f1b", "zb-h1", "gpipe"}) {
      const int p = 4;
      const int m = 8;
      const auto orders = workerOrders(s, p, m);
      for (int k = 0; k < p; ++k) {
        int held = 0;
        int most = 0;
        for (const auto& a : orders[k]) {
          if (a.op == Op::F) most = std::max(most, ++held);
          if (a.op == Op::W || a.op == Op::BW) --held;
        }
        QCOMPARE(most, s == "gpipe" ? m : s == "zb-h1" ? p : p - k);
      }
    }
  }

  void refusesWhatCannotBeScheduled_data() {
    QTest::addColumn<QString>("schedule");
    QTest::addColumn<int>("stages");
    QTest::addColumn<int>("micro");
    QTest::addColumn<int>("chunks");
    QTest::addColumn<QString>("field");
    QTest::newRow("unknown") << "pipedream" << 2 << 4 << 1 << "pipeline.schedule";
    QTest::newRow("no micro-batches") << "gpipe" << 2 << 0 << 1 << "pipeline.micro_batches";
    QTest::newRow("chunks without interleaved") << "1f1b" << 4 << 4 << 2 << "pipeline.chunks";
    QTest::newRow("stages not a multiple of chunks")
        << "interleaved" << 5 << 4 << 2 << "pipeline.chunks";
    QTest::newRow("m not in rounds") << "interleaved" << 4 << 5 << 2 << "pipeline.micro_batches";
  }
  void refusesWhatCannotBeScheduled() {
    QFETCH(QString, schedule);
    QFETCH(int, stages);
    QFETCH(int, micro);
    QFETCH(int, chunks);
    QFETCH(QString, field);
    try {
      workerOrders(schedule.toStdString(), stages, micro, chunks);
      QFAIL("accepted");
    } catch (const std::invalid_argument& e) {
      QVERIFY2(QString(e.what()).startsWith(field), e.what());
    }
  }

  void interleavedMicroBatchesAsDocumented() {
    // docs/experiment-format.md: M splits into floor(M / workers) equal rounds of at least one
    // per worker: any multiple of the workers, and any M below twice the workers (one round).
    // Two workers (4 stages, v = 2): 2, 3, 4, 6, 8 run; 5, 7 and 9 are refused, by name.
    for (int m : {2, 3, 4, 6, 8}) QCOMPARE(int(workerOrders("interleaved", 4, m, 2).size()), 2);
    for (int m : {5, 7, 9}) {
      try {
        workerOrders("interleaved", 4, m, 2);
        QFAIL(qPrintable(QStringLiteral("M = %1 accepted").arg(m)));
      } catch (const std::invalid_argument& e) {
        QVERIFY2(QString(e.what()).contains(QStringLiteral("use a multiple of 2 (or fewer than 4)")),
                 e.what());
      }
    }
  }

  void workerOfFollowsMegatron() {
    QCOMPARE(workerOf(0, 6, 2), 0);
    QCOMPARE(workerOf(3, 6, 2), 0);
    QCOMPARE(workerOf(4, 6, 2), 1);
    QCOMPARE(workerOf(5, 6, 1), 5);
  }
};

QTEST_GUILESS_MAIN(TestPipelineSchedule)
#include "test_pipeline_schedule.moc"
