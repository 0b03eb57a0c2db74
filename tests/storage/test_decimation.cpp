// Reading series for plots: min/max per pixel column keeps every spike, long series go through
// the summary levels, and ranges cut the right points.

#include <QTest>
#include <algorithm>
#include <cmath>
#include <random>

#include "stagewise/storage/run_reader.h"
#include "stagewise/storage/run_store.h"
#include "stagewise/storage/run_writer.h"
#include "store_test_util.h"

using namespace stagewise::storage;
using namespace stagewise::storage::testing;

namespace {

const SeriesKey kLoss{"loss", 0, -1};

double maxOf(const DecimatedSeries& d) {
  double m = -INFINITY;
  for (const auto& b : d.buckets) m = std::max(m, b.max);
  return m;
}

double minOf(const DecimatedSeries& d) {
  double m = INFINITY;
  for (const auto& b : d.buckets) m = std::min(m, b.min);
  return m;
}

int64_t countOf(const DecimatedSeries& d) {
  int64_t n = 0;
  for (const auto& b : d.buckets) n += b.count;
  return n;
}

}  // namespace

class TestDecimation : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir m_dir;
  std::unique_ptr<RunStore> m_store;
  int64_t m_big = 0;    // 1,000,000 points: noise in [0, 1), +100 at seq 123457, -100 at 876543
  int64_t m_noise = 0;  // 200,000 random points
  std::vector<double> m_noiseValues;

  int64_t writeSeries(const std::string& name, int64_t n, const std::function<double(int64_t)>& f) {
    RunWriter& w = m_store->writer();
    const int64_t id = w.createRun(sampleRun(name));
    std::vector<PointInput> chunk;
    for (int64_t i = 0; i < n; ++i) {
      chunk.push_back({"loss", 0, -1, i, double(i) * 0.01, f(i)});
      if (chunk.size() == 10000) w.appendPoints(id, std::move(chunk)), chunk.clear();
    }
    w.appendPoints(id, std::move(chunk));
    w.finishRun(id, {});
    w.flush();
    return id;
  }

 private Q_SLOTS:
  void initTestCase() {
    m_store = std::make_unique<RunStore>(m_dir.filePath("d.db").toStdString(), keepEveryPoint());
    m_big = writeSeries("big", 1000000, [](int64_t i) {
      if (i == 123457) return 100.0;
      if (i == 876543) return -100.0;
      return double((i * 7919) % 1000) / 1000.0;
    });
    std::mt19937_64 rng(7);
    std::normal_distribution<double> normal(0.0, 1.0);
    for (int i = 0; i < 200000; ++i) m_noiseValues.push_back(normal(rng));
    m_noise = writeSeries("noise", 200000, [&](int64_t i) { return m_noiseValues[size_t(i)]; });
  }

  void millionPointsUseSummaryLevelAndKeepSpikes() {
    RunReader reader(*m_store);
    const auto d = reader.loadDecimated(m_big, kLoss, 2000);
    QCOMPARE(d.level, 32);  // 31,250 level rows, not a million points
    QCOMPARE(d.pointCount, int64_t(1000000));
    QCOMPARE(countOf(d), int64_t(1000000));
    QVERIFY(d.buckets.size() <= 2000 && d.buckets.size() >= 1990);
    QCOMPARE(maxOf(d), 100.0);
    QCOMPARE(minOf(d), -100.0);
    // The spike lands in the column of its step (width 500 steps), not smeared elsewhere.
    int spikes = 0;
    for (const auto& b : d.buckets) {
      if (b.max == 100.0) {
        ++spikes;
        QVERIFY(b.x <= 123457 && b.xLast >= 123457);
      }
    }
    QCOMPARE(spikes, 1);
    for (size_t i = 1; i < d.buckets.size(); ++i) QVERIFY(d.buckets[i - 1].xLast < d.buckets[i].x);
  }

  void coarseLevelForFewPixels() {
    RunReader reader(*m_store);
    const auto d = reader.loadDecimated(m_big, kLoss, 100);
    QCOMPARE(d.level, 1024);
    QCOMPARE(maxOf(d), 100.0);
    QCOMPARE(minOf(d), -100.0);
    QCOMPARE(reader.loadDecimated(m_big, kLoss, 10).level, 32768);
  }

  void envelopeContainsEveryPoint() {
    RunReader reader(*m_store);
    const auto d = reader.loadDecimated(m_noise, kLoss, 700);
    QVERIFY(d.level > 0);
    QCOMPARE(countOf(d), int64_t(200000));
    QCOMPARE(maxOf(d), *std::max_element(m_noiseValues.begin(), m_noiseValues.end()));
    QCOMPARE(minOf(d), *std::min_element(m_noiseValues.begin(), m_noiseValues.end()));
    size_t b = 0;
    for (size_t i = 0; i < m_noiseValues.size(); ++i) {
      while (d.buckets[b].xLast < double(i)) ++b;
      QVERIFY(d.buckets[b].x <= double(i));
      QVERIFY(m_noiseValues[i] >= d.buckets[b].min && m_noiseValues[i] <= d.buckets[b].max);
      if (d.buckets[b].x == double(i)) QCOMPARE(d.buckets[b].first, m_noiseValues[i]);
      if (d.buckets[b].xLast == double(i)) QCOMPARE(d.buckets[b].last, m_noiseValues[i]);
    }
  }

  void smallSeriesIsExactPerColumn() {
    RunReader reader(*m_store);
    const int pixels = 64;
    const XRange range{1000, 2999};  // 2,000 points: read raw
    const auto d = reader.loadDecimated(m_noise, kLoss, pixels, XAxis::Step, range);
    QCOMPARE(d.level, 0);
    QCOMPARE(d.pointCount, int64_t(2000));
    // brute force: column = floor((x - from) / (to - from) * pixels)
    std::vector<PlotBucket> expect(pixels);
    std::vector<bool> used(pixels, false);
    for (int64_t i = 1000; i <= 2999; ++i) {
      const double v = m_noiseValues[size_t(i)];
      const int c = std::min(pixels - 1, int(std::floor((i - 1000.0) / 1999.0 * pixels)));
      PlotBucket& e = expect[size_t(c)];
      if (!used[size_t(c)]) e = {double(i), double(i), v, v, v, v, 0}, used[size_t(c)] = true;
      e.xLast = double(i);
      e.min = std::min(e.min, v);
      e.max = std::max(e.max, v);
      e.last = v;
      ++e.count;
    }
    QCOMPARE(d.buckets.size(), size_t(pixels));
    for (int c = 0; c < pixels; ++c) {
      const PlotBucket& got = d.buckets[size_t(c)];
      const PlotBucket& want = expect[size_t(c)];
      QCOMPARE(got.x, want.x);
      QCOMPARE(got.xLast, want.xLast);
      QVERIFY(got.min == want.min && got.max == want.max);
      QVERIFY(got.first == want.first && got.last == want.last);
      QCOMPARE(got.count, want.count);
    }
  }

  void rangeReadsOnlyThatRange() {
    RunReader reader(*m_store);
    // 100,000 steps around the positive spike; the negative one is far outside.
    const auto d = reader.loadDecimated(m_big, kLoss, 1000, XAxis::Step, XRange{100000, 199999});
    QVERIFY(d.level > 0);
    QVERIFY(std::llabs(d.pointCount - 100000) <= 64);  // whole level buckets at the edges
    QCOMPARE(maxOf(d), 100.0);
    QVERIFY(minOf(d) >= 0.0);
    QVERIFY(d.buckets.front().x >= 100000 - 32 && d.buckets.back().xLast <= 199999 + 32);
    const auto raw = reader.loadSeries(m_big, kLoss, XAxis::Step, XRange{123450, 123460});
    QCOMPARE(raw.size(), size_t(11));
    QCOMPARE(raw.front().step, int64_t(123450));
    QCOMPARE(raw[7].value, 100.0);
    QVERIFY(reader.loadSeries(m_big, kLoss, XAxis::Step, XRange{2e6, 3e6}).empty());
  }

  void timeAxis() {
    RunReader reader(*m_store);
    // t = step / 100: seconds 1234 .. 1235 hold steps 123400 .. 123500 (margins for rounding)
    const auto raw = reader.loadSeries(m_big, kLoss, XAxis::Time, XRange{1233.995, 1235.005});
    QCOMPARE(raw.size(), size_t(101));
    const auto d = reader.loadDecimated(m_big, kLoss, 2000, XAxis::Time);
    QCOMPARE(maxOf(d), 100.0);
    QCOMPARE(d.buckets.back().xLast, 9999.99);
  }

  void nanValuesAreSkippedInMinMax() {
    RunWriter& w = m_store->writer();
    const int64_t id = w.createRun(sampleRun("nan"));
    std::vector<PointInput> points;
    for (int i = 0; i < 100000; ++i) {
      points.push_back({"loss", 0, -1, i, i * 1.0, i < 50000 ? NAN : (i == 60000 ? 9.0 : 1.0)});
    }
    w.appendPoints(id, std::move(points));
    w.finishRun(id, {});
    w.flush();
    RunReader reader(*m_store);
    const auto d = reader.loadDecimated(id, kLoss, 500);
    QVERIFY(d.level > 0);
    QVERIFY(std::isnan(d.buckets.front().min) && std::isnan(d.buckets.front().first));
    QCOMPARE(maxOf(d), 9.0);
    QCOMPARE(d.buckets.back().max, 1.0);
  }

  void missingSeriesIsEmpty() {
    RunReader reader(*m_store);
    QVERIFY(reader.loadDecimated(m_big, {"nope", 0, -1}, 100).buckets.empty());
    QVERIFY(reader.loadDecimated(m_big, kLoss, 0).buckets.empty());
  }
};

QTEST_GUILESS_MAIN(TestDecimation)
#include "test_decimation.moc"
