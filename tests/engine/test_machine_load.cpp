// The machine's load around a run (issue 36 §1.8), read through an injected source so the
// test never depends on this machine's real load: the 1-minute load average, the steal share
// between two /proc/stat readings, the cores, and the rules that say when throughputs measured
// under two loads may be compared and when the machine is too busy to measure one.
#include <QtTest>
#include <cmath>
#include <deque>

#include "stagewise/engine/machine_load.h"
#include "stagewise/engine/metrics.h"

using namespace stagewise::engine;

namespace {

/// /proc/stat's first line with the given idle and steal jiffies (the rest fixed at 100).
std::string stat(double idle, double steal) {
  return "cpu  100 0 100 " + std::to_string(idle) + " 0 0 0 " + std::to_string(steal) +
         " 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n";
}

LoadSource scripted(std::deque<std::string> loadavgs, std::deque<std::string> stats, int cores,
                    int* pauses) {
  auto la = std::make_shared<std::deque<std::string>>(std::move(loadavgs));
  auto st = std::make_shared<std::deque<std::string>>(std::move(stats));
  LoadSource s;
  s.loadavg = [la] {
    std::string t = la->front();
    if (la->size() > 1) la->pop_front();
    return t;
  };
  s.stat = [st] {
    std::string t = st->front();
    if (st->size() > 1) st->pop_front();
    return t;
  };
  s.cores = [cores] { return cores; };
  s.pause = [pauses] { ++*pauses; };
  return s;
}

}  // namespace

class TestMachineLoad : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void parsesProcTexts() {
    QCOMPARE(parseLoadAverage("2.58 0.91 0.32 3/176 29194\n"), 2.58);
    QVERIFY(std::isnan(parseLoadAverage("")));
    const CpuJiffies j = parseCpuJiffies("cpu  10 1 5 80 2 0 1 7 3 0\ncpu0 1 1 1 1 1 1 1 1\n");
    QVERIFY(j.valid);
    QCOMPARE(j.steal, 7.0);
    QCOMPARE(j.total, 106.0);  // guest time (3) is already in user: not added twice
    QVERIFY(!parseCpuJiffies("intr 1 2 3").valid);
    QVERIFY(std::isnan(stealShare(parseCpuJiffies(stat(100, 0)), parseCpuJiffies(stat(100, 0)))));
  }

  void meterReadsStartAndEnd() {
    int pauses = 0;
    // Start: 100 jiffies pass during the pause, 20 of them stolen. End: over the run, 1000 more
    // jiffies, 50 stolen.
    LoadMeter meter(scripted({"3.0 1 1 2/100 1\n", "0.5 1 1 1/100 1\n"},
                             {stat(1000, 0), stat(1080, 20), stat(2030, 70)}, 4, &pauses));
    const MachineLoad start = meter.start();
    QCOMPARE(pauses, 1);
    QCOMPARE(start.loadAverage, 3.0);
    QCOMPARE(start.cores, 4);
    QVERIFY(std::abs(start.stealShare - 0.2) < 1e-12);
    const MachineLoad end = meter.end();
    QCOMPARE(end.loadAverage, 0.5);
    QVERIFY(std::abs(end.stealShare - 50.0 / 1000.0) < 1e-12);
    QVERIFY(std::abs(loadPerCore(start) - 0.75) < 1e-12);
  }

  void unreadableSourceLeavesTheLoadUnknown() {
    LoadSource s;
    s.loadavg = [] { return std::string(); };
    s.stat = []() -> std::string { throw std::runtime_error("no /proc"); };
    s.cores = [] { return 0; };
    LoadMeter meter(s);
    const MachineLoad load = meter.start();
    QVERIFY(std::isnan(load.loadAverage) && std::isnan(load.stealShare));
    QVERIFY(std::isnan(loadPerCore(load)));
    QVERIFY(!machineBusy(load));
  }

  void comparesLoadsPerCore_data() {
    QTest::addColumn<double>("a");
    QTest::addColumn<double>("b");
    QTest::addColumn<int>("cores");
    QTest::addColumn<bool>("comparable");
    QTest::newRow("both idle") << 0.1 << 0.3 << 2 << true;
    QTest::newRow("busy vs idle") << 3.8 << 0.2 << 2 << false;  // 1.9 vs 0.1 per core
    QTest::newRow("same load, many cores") << 3.8 << 0.2 << 16 << true;
    QTest::newRow("just within") << 1.0 << 0.0 << 2 << true;  // 0.5 per core apart
  }
  void comparesLoadsPerCore() {
    QFETCH(double, a);
    QFETCH(double, b);
    QFETCH(int, cores);
    QFETCH(bool, comparable);
    const MachineLoad la{a, 0.0, cores}, lb{b, 0.0, cores}, idle{0.0, 0.0, cores};
    const LoadComparison c = compareLoads(idle, la, lb, idle);
    QCOMPARE(c.comparable, comparable);
    QCOMPARE(c.why.empty(), comparable);
  }

  void stealMakesThroughputsIncomparable() {
    const MachineLoad quiet{0.1, 0.0, 4}, stolen{0.1, 0.3, 4};
    const LoadComparison c = compareLoads(quiet, quiet, stolen, quiet);
    QVERIFY(!c.comparable);
    QVERIFY2(QString::fromStdString(c.why).contains(QStringLiteral("steal 0 % vs 30 %")),
             c.why.c_str());
    // Unknown loads (a run recorded before loads were) never warn.
    const MachineLoad unknown;
    QVERIFY(compareLoads(unknown, unknown, stolen, stolen).comparable);
  }

  void busyMachine() {
    std::string why;
    QVERIFY(machineBusy({3.0, 0.0, 2}, &why));
    QVERIFY2(why.find("load average 3.00 on 2 cores") != std::string::npos, why.c_str());
    QVERIFY(!machineBusy({0.6, 0.0, 2}));
    QVERIFY(machineBusy({0.1, 0.25, 2}));
  }

  void waitsWhileBusyThenMeasures() {
    // Busy twice, then quiet: two polls of 5 s, and the lines say so.
    std::deque<MachineLoad> reads = {{3.0, 0.0, 2}, {2.0, 0.0, 2}, {0.4, 0.0, 2}};
    double slept = 0;
    QStringList said;
    const double waited = waitUntilQuiet(
        [&] {
          MachineLoad l = reads.front();
          if (reads.size() > 1) reads.pop_front();
          return l;
        },
        QuietWait{}, [&](double s) { slept += s; },
        [&](const std::string& line) { said << QString::fromStdString(line); });
    QCOMPARE(waited, 10.0);
    QCOMPARE(slept, 10.0);
    QCOMPARE(said.size(), 2);
    QVERIFY2(said[0].contains(QStringLiteral("busy (load average 3.00 on 2 cores")) &&
                 said[0].contains(QStringLiteral("up to 60 s")),
             qPrintable(said[0]));
    QVERIFY2(said[1].contains(QStringLiteral("quiet after 10 s")), qPrintable(said[1]));
  }

  void waitIsBounded() {
    double slept = 0;
    QStringList said;
    QuietWait w;
    w.maxWaitS = 12;
    const double waited = waitUntilQuiet(
        [] {
          return MachineLoad{8.0, 0.0, 2};
        },
        w, [&](double s) { slept += s; },
        [&](const std::string& line) { said << QString::fromStdString(line); });
    QCOMPARE(waited, 12.0);  // 5 + 5 + 2
    QCOMPARE(slept, 12.0);
    QVERIFY2(said.last().contains(QStringLiteral("still busy after 12 s")) &&
                 said.last().contains(QStringLiteral("measuring anyway")),
             qPrintable(said.last()));
    // A quiet machine never waits and says nothing.
    said.clear();
    QCOMPARE(waitUntilQuiet(
                 [] {
                   return MachineLoad{0.2, 0.0, 2};
                 },
                 w, [&](double) { QFAIL("slept"); },
                 [&](const std::string& l) { said << QString::fromStdString(l); }),
             0.0);
    QVERIFY(said.isEmpty());
  }

  void summaryCarriesTheLoads() {
    RunSummary s;
    s.loadStart = {1.5, 0.02, 4};
    s.loadEnd = {3.25, 0.0, 4};
    const RunLoad r = runLoadFromSummary(7, summaryToJson(s));
    QCOMPARE(r.runId, int64_t(7));
    QCOMPARE(r.start.loadAverage, 1.5);
    QCOMPARE(r.start.stealShare, 0.02);
    QCOMPARE(r.start.cores, 4);
    QCOMPARE(r.end.loadAverage, 3.25);
    // An old summary without loads: unknown, never a warning.
    const RunLoad old = runLoadFromSummary(8, R"({"status":"completed"})");
    QVERIFY(std::isnan(old.start.loadAverage) && old.end.cores == 0);
    QVERIFY(loadMismatch({r, old}).empty());
  }

  void mismatchNamesTheRunsFurthestApart() {
    const MachineLoad idle{0.1, 0.0, 2}, busy{3.6, 0.0, 2}, some{0.6, 0.0, 2};
    const std::string text = loadMismatch({{3, idle, idle}, {4, idle, some}, {5, idle, busy}});
    QVERIFY2(text.find("run #5 (load 1.8 per core) vs run #3 (0.05 per core)") != std::string::npos,
             text.c_str());
    QVERIFY(loadMismatch({{3, idle, idle}, {4, idle, some}}).empty());
  }
};

QTEST_APPLESS_MAIN(TestMachineLoad)
#include "test_machine_load.moc"
