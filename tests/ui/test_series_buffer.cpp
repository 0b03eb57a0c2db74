// Decimation keeps every spike and the ends of the range; smoothing is a debiased EMA.

#include <QtTest>
#include <cmath>

#include "live/series_buffer.h"

using namespace stagewise::ui;

class TestSeriesBuffer : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void smallRangesAreNotDecimated() {
    SeriesBuffer s;
    for (int i = 0; i < 100; ++i) s.append(i, i * 0.01, i * 2.0);
    std::vector<PlotPoint> out;
    s.decimate(XAxisKind::Step, 10, 20, 500, out);
    // 10..20 plus one point either side.
    QCOMPARE(out.size(), size_t(13));
    QCOMPARE(out.front().x, 9.0);
    QCOMPARE(out.back().x, 21.0);
    QCOMPARE(out[1].y, 20.0);
  }

  void largeSeriesAreReducedButKeepSpikes() {
    SeriesBuffer s;
    const int n = 200000;
    for (int i = 0; i < n; ++i) s.append(i, i * 1e-3, std::sin(i * 1e-3));
    s.append(n, n * 1e-3, 0);
    // A one-point spike and a one-point dip deep inside a bucket.
    SeriesBuffer spiky;
    for (int i = 0; i < n; ++i)
      spiky.append(i, i * 1e-3, i == 123457 ? 50.0 : (i == 77777 ? -40.0 : 1.0));
    std::vector<PlotPoint> out;
    spiky.decimate(XAxisKind::Step, 0, n, 800, out);
    QVERIFY2(out.size() <= 2 * 800 + 2, qPrintable(QString::number(out.size())));
    QVERIFY(out.size() >= 700);
    double hi = -1e9, lo = 1e9;
    for (const auto& p : out) hi = std::max(hi, p.y), lo = std::min(lo, p.y);
    QCOMPARE(hi, 50.0);
    QCOMPARE(lo, -40.0);
    for (size_t i = 1; i < out.size(); ++i) QVERIFY(out[i].x >= out[i - 1].x);
    QCOMPARE(out.front().x, 0.0);
    QCOMPARE(out.back().x, double(n - 1));
    // The time axis finds the same range.
    out.clear();
    s.decimate(XAxisKind::Time, 50.0, 60.0, 100, out);
    QVERIFY(out.size() <= 2 * 100 + 2);
    QVERIFY(out.front().x <= 50.0 && out.back().x >= 59.99);
  }

  void pyramidMatchesAppendOrderAtEveryLength() {
    // Built incrementally, the pyramid must equal a scan of the raw points.
    SeriesBuffer s;
    for (int i = 0; i < 5000; ++i) {
      s.append(i, i, std::fmod(i * 7919.0, 1013.0));
      if (i % 997 != 0 || i < 100) continue;
      std::vector<PlotPoint> out;
      s.decimate(XAxisKind::Step, 0, i, 10, out);
      double hi = -1, lo = 1e9;
      for (const auto& p : out) hi = std::max(hi, p.y), lo = std::min(lo, p.y);
      double rhi = -1, rlo = 1e9;
      for (size_t j = 0; j < s.size(); ++j)
        rhi = std::max(rhi, s.y(j)), rlo = std::min(rlo, s.y(j));
      QCOMPARE(hi, rhi);
      QCOMPARE(lo, rlo);
    }
  }

  void smoothingIsDebiased() {
    SeriesBuffer s;
    s.setSmoothing(0.9);
    s.append(0, 0, 10.0);
    // Without debiasing the first value would read 1.0.
    QCOMPARE(s.y(0), 10.0);
    s.append(1, 0, 20.0);
    const double expected = (0.9 * 0.1 * 10 + 0.1 * 20) / (1 - 0.81);
    QVERIFY(std::abs(s.y(1) - expected) < 1e-4);
    QCOMPARE(s.rawY(1), 20.0);
    s.setSmoothing(0);
    QCOMPARE(s.y(1), 20.0);
    s.setSmoothing(0.9);
    QVERIFY(std::abs(s.y(1) - expected) < 1e-4);
  }

  void nearestFindsTheClosestPoint() {
    SeriesBuffer s;
    for (int i = 0; i < 10; ++i) s.append(i * 10, i, i);
    QCOMPARE(s.nearest(34, XAxisKind::Step), int64_t(3));
    QCOMPARE(s.nearest(36, XAxisKind::Step), int64_t(4));
    QCOMPARE(s.nearest(1000, XAxisKind::Step), int64_t(9));
    QCOMPARE(s.nearest(-5, XAxisKind::Step), int64_t(0));
  }
};

QTEST_APPLESS_MAIN(TestSeriesBuffer)
#include "test_series_buffer.moc"
