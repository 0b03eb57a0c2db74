// Numbers to significant digits (issue 36 §1.5): the one rule every table uses.
#include <QtTest>

#include "stagewise/engine/number_text.h"

using namespace stagewise::engine;

class TestNumberText : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void significantDigits_data() {
    QTest::addColumn<double>("value");
    QTest::addColumn<int>("digits");
    QTest::addColumn<QString>("text");
    QTest::newRow("learning rate") << 0.0031622776601683794 << 3 << "0.00316";
    QTest::newRow("round lr") << 0.1 << 3 << "0.1";
    QTest::newRow("seconds") << 1.8123 << 3 << "1.81";
    QTest::newRow("whole digits kept") << 123456.7 << 3 << "123457";
    QTest::newRow("tiny") << 3.16227e-5 << 3 << "3.16e-05";
    QTest::newRow("negative") << -0.0123456 << 2 << "-0.012";
    QTest::newRow("zero") << 0.0 << 3 << "0";
    QTest::newRow("rounds up a digit") << 9.996 << 3 << "10";
  }
  void significantDigits() {
    QFETCH(double, value);
    QFETCH(int, digits);
    QFETCH(QString, text);
    QCOMPARE(QString::fromStdString(significant(value, digits)), text);
  }

  void meanAndSpread_data() {
    QTest::addColumn<double>("mean");
    QTest::addColumn<double>("spread");
    QTest::addColumn<QString>("text");
    // The case: the Groups table said "2 s ± 0 s" where the runs took 1.8 ± 0.07 s.
    QTest::newRow("wall seconds") << 1.8123 << 0.0712 << "1.81 ± 0.07";
    QTest::newRow("two digits below 355") << 1.8123 << 0.0312 << "1.812 ± 0.031";
    QTest::newRow("accuracy") << 0.91234 << 0.00456 << "0.912 ± 0.005";
    QTest::newRow("throughput in tens") << 12345.0 << 240.0 << "12350 ± 240";
    QTest::newRow("throughput in hundreds") << 12345.0 << 612.0 << "12300 ± 600";
    QTest::newRow("999 rounds to 1000") << 5.0 << 0.0999 << "5.00 ± 0.10";
    QTest::newRow("no spread") << 1.8123 << 0.0 << "1.812 ± 0";
    QTest::newRow("spread unknown") << 1.8123 << std::nan("") << "1.812";
  }
  void meanAndSpread() {
    QFETCH(double, mean);
    QFETCH(double, spread);
    QFETCH(QString, text);
    QCOMPARE(QString::fromStdString(meanPlusMinus(mean, spread)), text);
  }

  void boundsAtTheSpreadsPlace() {
    // A min–max range is written to the place its width supports.
    const int d = spreadDecimals(0.0712);
    QCOMPARE(d, 2);
    QCOMPARE(QString::fromStdString(atDecimals(1.7412, d)), QStringLiteral("1.74"));
    QCOMPARE(spreadDecimals(240), -1);
    QCOMPARE(QString::fromStdString(atDecimals(12345, -1)), QStringLiteral("12350"));
    QCOMPARE(QString::fromStdString(atDecimals(-0.001, 2)), QStringLiteral("0.00"));
  }

  void bytesInIecUnits() {
    // Issue 36 §3: one unit system (IEC) for bytes everywhere; `inspect` wrote "kB".
    QCOMPARE(QString::fromStdString(bytesText(912)), QStringLiteral("912 B"));
    QCOMPARE(QString::fromStdString(bytesText(1536)), QStringLiteral("1.5 KiB"));
    QCOMPARE(QString::fromStdString(bytesText(18.7 * 1024 * 1024)), QStringLiteral("18.7 MiB"));
    QCOMPARE(QString::fromStdString(bytesText(2.0 * 1024 * 1024 * 1024)),
             QStringLiteral("2.0 GiB"));
  }
};

QTEST_APPLESS_MAIN(TestNumberText)
#include "test_number_text.moc"
