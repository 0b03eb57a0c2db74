// One live panel driven like a user would: hover read-out, legend toggles, zoom and follow,
// smoothing, log scale and export to PNG, SVG and PDF.

#include <qcustomplot.h>
#include <QApplication>
#include <QMouseEvent>
#include <QSlider>
#include <QtTest>
#include <cmath>

#include "live/live_dashboard.h"
#include "live/live_data.h"
#include "live/plot_panel.h"

using namespace stagewise;
using namespace stagewise::ui;

class TestPlotPanel : public QObject {
  Q_OBJECT

  static void fill(LiveData& data, int steps, int from = 0) {
    if (from == 0) {
      engine::RunInfo info;
      info.mode = engine::Mode::Local;
      info.stages.resize(2);
      data.beginPhase(0, info);
    }
    std::vector<engine::MetricPoint> points;
    for (int step = from; step < from + steps; ++step)
      for (int k = 0; k < 2; ++k)
        points.push_back({engine::series::kLoss, k, -1, step, step * 0.01,
                          (k + 1) * std::exp(-step / 300.0) + 0.1 * (step % 2)});
    data.addPoints(0, points);
  }

 private Q_SLOTS:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void hoverLegendZoomAndFollow() {
    LiveData data;
    PlotPanel panel(QStringLiteral("Loss"), QStringLiteral("nats"), &data);
    panel.addRule({engine::series::kLoss, true, {}, Qt::SolidLine, 1.5, {}});
    panel.resize(600, 400);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    fill(data, 5000);
    panel.refresh();
    QCOMPARE(panel.graphCount(), 2);
    QCOMPARE(panel.receivedPoints(0), 5000);
    // Decimated to the pixels: far fewer points than received, ends included.
    QVERIFY(panel.shownPoints(0) < 2 * 600 + 4);
    QCustomPlot* plot = panel.plot();
    plot->replot();  // lay the axes out, so pixel positions are final
    QCOMPARE(plot->xAxis->range().upper, 4999.0);

    // Hover: a read-out of every series at the step under the mouse.
    const QPoint mid(int(plot->xAxis->coordToPixel(2500)), int(plot->yAxis->coordToPixel(0.5)));
    QTest::mouseMove(plot, mid);
    QTRY_VERIFY(panel.readout().startsWith(QStringLiteral("step ")));
    const int step = panel.readout().section(QLatin1Char('\n'), 0, 0).mid(5).toInt();
    QVERIFY2(std::abs(step - 2500) <= 20, qPrintable(panel.readout()));  // a pixel is ~9 steps
    QVERIFY(panel.readout().contains(QStringLiteral("S1:")));
    QVERIFY(panel.readout().contains(QStringLiteral("S2:")));

    // Legend: clicking an entry hides its graph (and the read-out drops it).
    const QPoint entry = plot->legend->item(1)->outerRect().center();
    QTest::mouseClick(plot, Qt::LeftButton, {}, entry);
    QVERIFY(!plot->graph(1)->visible());
    QTest::mouseMove(plot, mid + QPoint(3, 0));
    QTRY_VERIFY(!panel.readout().contains(QStringLiteral("S2:")));
    QTest::mouseClick(plot, Qt::LeftButton, {}, entry);
    QVERIFY(plot->graph(1)->visible());

    // Zooming in stops following and re-decimates for the window; double-click follows again.
    QVERIFY(panel.isFollowing());
    plot->xAxis->setRange(1000, 1100);
    QVERIFY(!panel.isFollowing());
    QVERIFY(panel.shownPoints(0) >= 100);  // every point of the window, not pixel buckets
    fill(data, 10, 5000);                  // new data does not move a zoomed view
    panel.refresh();
    QCOMPARE(plot->xAxis->range().lower, 1000.0);
    QTest::mouseDClick(plot, Qt::LeftButton, {}, mid);
    QVERIFY(panel.isFollowing());
    QCOMPARE(plot->xAxis->range().upper, 5009.0);
  }

  void legendIsInStageOrder() {
    LiveData data;
    PlotPanel panel(QStringLiteral("Loss"), QStringLiteral("nats"), &data);
    panel.addRule({engine::series::kLoss, true, {}, Qt::SolidLine, 1.5, {}});
    engine::RunInfo info;
    info.stages.resize(3);
    data.beginPhase(0, info);
    // The engine reports stages in any order.
    for (int k : {2, 0, 1}) data.addPoints(0, {{engine::series::kLoss, k, -1, 0, 0.0, 1.0}});
    QCOMPARE(panel.graphCount(), 3);
    auto* legend = panel.plot()->legend;
    QStringList order;
    for (int i = 0; i < legend->itemCount(); ++i)
      order << qobject_cast<QCPPlottableLegendItem*>(legend->item(i))->plottable()->name();
    QCOMPARE(order,
             QStringList({QStringLiteral("S1"), QStringLiteral("S2"), QStringLiteral("S3")}));
  }

  void hoverSnapsToTheCursorNotTheLastSeries() {
    // A dense loss and a sparse test series (every 100 steps, ending at 499): the read-out is
    // at the step under the cursor, the sparse series says where its nearest point is, and a
    // series hidden from the legend is not listed.
    LiveData data;
    PlotPanel panel(QStringLiteral("Loss"), QStringLiteral("nats"), &data);
    panel.addRule({engine::series::kLoss, true, {}, Qt::SolidLine, 1.5, {}});
    panel.addRule({engine::series::kTestLoss,
                   false,
                   QStringLiteral("test"),
                   Qt::SolidLine,
                   2.0,
                   {},
                   true,
                   false,
                   true});
    panel.resize(700, 400);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    fill(data, 500);
    std::vector<engine::MetricPoint> test;
    for (int step : {99, 199, 299, 399, 499})
      test.push_back({engine::series::kTestLoss, -1, -1, step, step * 0.01, 0.5});
    data.addPoints(0, test);
    panel.refresh(true);
    QCOMPARE(panel.graphCount(), 3);
    QCustomPlot* plot = panel.plot();
    plot->replot();
    const QPoint at(int(plot->xAxis->coordToPixel(150)), int(plot->yAxis->coordToPixel(0.5)));
    // Sent straight to the plot: QTest's synthetic moves depend on where an earlier test left
    // the cursor.
    const auto move = [plot](QPoint p) {
      QMouseEvent event(QEvent::MouseMove, QPointF(p), plot->mapToGlobal(QPointF(p)), Qt::NoButton,
                        Qt::NoButton, Qt::NoModifier);
      QApplication::sendEvent(plot, &event);
    };
    move(at);
    QTRY_VERIFY(!panel.readout().isEmpty());
    const int step = panel.readout().section(QLatin1Char('\n'), 0, 0).mid(5).toInt();
    QVERIFY2(std::abs(step - 150) <= 3, qPrintable(panel.readout()));
    QVERIFY2(panel.readout().contains(QStringLiteral("test: 0.5 (step 199)")) ||
                 panel.readout().contains(QStringLiteral("test: 0.5 (step 99)")),
             qPrintable(panel.readout()));
    plot->graph(0)->removeFromLegend();  // as a panel does with a series it hides
    move(at + QPoint(2, 0));
    QTRY_VERIFY(!panel.readout().contains(QStringLiteral("S1:")));
  }

  void legendNeverCoversTheData() {
    // Nine stages: the legend is a column beside the axis rect, and no two stages share a
    // colour.
    LiveData data;
    PlotPanel panel(QStringLiteral("Loss"), QStringLiteral("nats"), &data);
    panel.addRule({engine::series::kLoss, true, {}, Qt::SolidLine, 1.5, {}});
    engine::RunInfo info;
    info.stages.resize(9);
    data.beginPhase(0, info);
    for (int k = 0; k < 9; ++k) data.addPoints(0, {{engine::series::kLoss, k, -1, 0, 0.0, 1.0}});
    panel.resize(600, 400);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    panel.refresh(true);
    panel.plot()->replot();
    const QRect axis = panel.plot()->axisRect()->outerRect();
    const QRect legend = panel.plot()->legend->outerRect();
    QVERIFY2(!axis.intersects(legend), qPrintable(QStringLiteral("axis %1,%2 %3x%4 legend %5,%6")
                                                      .arg(axis.x())
                                                      .arg(axis.y())
                                                      .arg(axis.width())
                                                      .arg(axis.height())
                                                      .arg(legend.x())
                                                      .arg(legend.y())));
    QSet<QRgb> colours;
    for (int i = 0; i < panel.graphCount(); ++i)
      colours.insert(panel.plot()->graph(i)->pen().color().rgb());
    QCOMPARE(colours.size(), 9);
    // No tooltip pops up over the data; the hint is in the status bar.
    QVERIFY(panel.plot()->toolTip().isEmpty());
    QVERIFY(!panel.plot()->statusTip().isEmpty());
  }

  void foregroundSeriesFollowTheTheme() {
    LiveData data;
    PlotPanel panel(QStringLiteral("Throughput"), QStringLiteral("samples/s"), &data);
    panel.addRule({engine::series::kSamplesPerSec,
                   false,
                   QStringLiteral("samples/s"),
                   Qt::SolidLine,
                   1.8,
                   {},
                   false,
                   false,
                   true});
    fill(data, 10);
    data.addPoints(0, {{engine::series::kSamplesPerSec, -1, -1, 5, 0.05, 100.0}});
    QCOMPARE(panel.graphCount(), 1);
    QPalette dark = panel.palette();
    dark.setColor(QPalette::Text, QColor(0xe6, 0xe6, 0xe6));
    dark.setColor(QPalette::Base, QColor(0x1e, 0x1f, 0x22));
    panel.setPalette(dark);  // a palette change, as a theme switch makes
    QCOMPARE(panel.plot()->graph(0)->pen().color(), QColor(0xe6, 0xe6, 0xe6));
    QPalette light = dark;
    light.setColor(QPalette::Text, Qt::black);
    panel.setPalette(light);
    QCOMPARE(panel.plot()->graph(0)->pen().color(), QColor(Qt::black));
  }

  void smoothingAndLogScale() {
    LiveData data;
    LiveDashboard dashboard(&data);
    dashboard.resize(1200, 800);
    dashboard.show();
    fill(data, 2000);
    dashboard.smoothingSlider()->setValue(0);
    PlotPanel* loss = dashboard.lossPanel();
    loss->refresh(true);
    auto spread = [&] {
      // Raw values alternate by 0.1 every step; smoothing flattens that.
      const auto* s = data.series({0, engine::series::kLoss, 0, -1});
      return std::abs(s->y(1001) - s->y(1000));
    };
    QVERIFY(spread() > 0.09);
    dashboard.smoothingSlider()->setValue(90);
    QVERIFY(spread() < 0.02);
    loss->setLogY(true);
    QCOMPARE(loss->plot()->yAxis->scaleType(), QCPAxis::stLogarithmic);
    QVERIFY(loss->plot()->yAxis->range().lower > 0);
  }

  void exportsPngSvgAndPdf() {
    LiveData data;
    PlotPanel panel(QStringLiteral("Loss"), QStringLiteral("nats"), &data);
    panel.addRule({engine::series::kLoss, true, {}, Qt::SolidLine, 1.5, {}});
    panel.resize(500, 300);
    fill(data, 500);
    QTemporaryDir dir;
    for (const char* suffix : {"png", "svg", "pdf"}) {
      const QString path = dir.filePath(QStringLiteral("loss.") + QLatin1String(suffix));
      QCOMPARE(panel.exportTo(path, 500, 300), QString());
      QFile file(path);
      QVERIFY2(file.size() > 500, suffix);
      QVERIFY(file.open(QIODevice::ReadOnly));
      const QByteArray head = file.read(64);
      if (QLatin1String(suffix) == QLatin1String("png")) QVERIFY(head.startsWith("\x89PNG"));
      if (QLatin1String(suffix) == QLatin1String("pdf")) QVERIFY(head.startsWith("%PDF"));
      if (QLatin1String(suffix) == QLatin1String("svg")) QVERIFY(head.contains("<?xml"));
    }
    QVERIFY(!panel.exportTo(dir.filePath(QStringLiteral("loss.bmpx"))).isEmpty());
  }
};

QTEST_MAIN(TestPlotPanel)
#include "test_plot_panel.moc"
