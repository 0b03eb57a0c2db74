// One live panel driven like a user would: hover read-out, legend toggles, zoom and follow,
// smoothing, log scale and export to PNG, SVG, PDF and CSV; and the plot frame every plot
// shares, with the compare overlay's smoothing, log scale and read-out.

#include <qcustomplot.h>
#include <QApplication>
#include <QMouseEvent>
#include <QSet>
#include <QSlider>
#include <QToolButton>
#include <QToolTip>
#include <QtTest>
#include <cmath>

#include "common/plot_frame.h"
#include "live/live_dashboard.h"
#include "live/live_data.h"
#include "live/plot_panel.h"
#include "live/timeline_panel.h"
#include "live/utilization_panel.h"
#include "run_store_fixture.h"
#include "runs/compare_panel.h"
#include "runs/overlay_legend.h"

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

  // Sent straight to the plot: QTest's synthetic moves depend on where an earlier test left
  // the cursor.
  static void moveTo(QCustomPlot* plot, QPoint p) {
    QMouseEvent event(QEvent::MouseMove, QPointF(p), plot->mapToGlobal(QPointF(p)), Qt::NoButton,
                      Qt::NoButton, Qt::NoModifier);
    QApplication::sendEvent(plot, &event);
  }

  static std::vector<double> values(const QCPGraph* graph) {
    std::vector<double> v;
    for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it)
      v.push_back(it->value);
    return v;
  }

 private Q_SLOTS:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
  void init() { ComparePanel::forgetOverlaySettings(); }  // the overlay's kept choices

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

    // The wheel zooms x only, as Runs does (issue 36: zooming y too pushed the data out).
    const QCPRange y = plot->yAxis->range();
    const double width = plot->xAxis->range().size();
    QWheelEvent wheel(QPointF(mid), plot->mapToGlobal(QPointF(mid)), QPoint(), QPoint(0, 120),
                      Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
    QCoreApplication::sendEvent(plot, &wheel);
    QVERIFY(plot->xAxis->range().size() < width * 0.95);
    QCOMPARE(plot->yAxis->range(), y);
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
    const auto move = [plot](QPoint p) { moveTo(plot, p); };
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

  void aDenseLineKeepsItsModesStyle() {
    // Issue 36: a plan's pipeline lines turned solid once the plan ended (dense lines are drawn
    // with a thin solid pen), reading as a local run's; a local run's dense line is solid.
    LiveData data;
    PlotPanel panel(QStringLiteral("Throughput"), QStringLiteral("samples/s"), &data);
    panel.addRule({engine::series::kLoss, true, {}, Qt::SolidLine, 1.5, {}});
    panel.resize(600, 400);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    engine::RunInfo local;
    local.mode = engine::Mode::Local;
    local.stages.resize(1);
    engine::RunInfo pipeline = local;
    pipeline.mode = engine::Mode::Pipeline;
    engine::RunInfo backprop = local;
    backprop.mode = engine::Mode::Backprop;
    data.beginPhase(0, local);
    data.beginPhase(1, pipeline);
    data.beginPhase(2, backprop);
    for (int phase = 0; phase < 3; ++phase) {
      std::vector<engine::MetricPoint> points;
      for (int step = 0; step < 5000; ++step)
        points.push_back({engine::series::kLoss, 0, -1, step, step * 0.01, 1.0 + step % 7});
      data.addPoints(phase, points);
    }
    panel.refresh(true);
    QCOMPARE(panel.graphCount(), 3);
    QMap<int, Qt::PenStyle> styles;
    for (int i = 0; i < panel.plot()->graphCount(); ++i) {
      QCPGraph* g = panel.plot()->graph(i);
      QVERIFY(g->data()->size() > 300);  // dense
      const QString name = g->name();
      styles[name.startsWith(QStringLiteral("pipe"))       ? 1
             : name.startsWith(QStringLiteral("backprop")) ? 2
                                                           : 0] = g->pen().style();
    }
    QCOMPARE(styles.value(0), Qt::SolidLine);
    QCOMPARE(styles.value(1), Qt::DashDotLine);
    QCOMPARE(styles.value(2), Qt::DashLine);
  }

  void clearedPanelForgetsTheAxesOfTheRunBefore() {
    // Issue 36: Train cleared after a stopped report kept the last run's axes (a bytes axis of
    // -1e-9..1e-9, old throughput ranges) over the empty plots.
    LiveData data;
    PlotPanel panel(QStringLiteral("Loss"), QStringLiteral("nats"), &data);
    panel.addRule({engine::series::kLoss, true, {}, Qt::SolidLine, 1.5, {}});
    panel.resize(600, 400);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    engine::RunInfo info;
    info.stages.resize(1);
    data.beginPhase(0, info);
    std::vector<engine::MetricPoint> points;
    for (int step = 0; step < 400; ++step)
      points.push_back({engine::series::kLoss, 0, -1, step, step * 0.01, 5000.0 + step});
    data.addPoints(0, points);
    panel.refresh(true);
    QVERIFY(panel.plot()->yAxis->range().lower > 1000);
    QCOMPARE(panel.plot()->xAxis->range().upper, 399.0);
    data.clear();
    panel.refresh(true);
    QCOMPARE(panel.plot()->yAxis->range(), QCPRange(0, 1));
    QCOMPARE(panel.plot()->xAxis->range(), QCPRange(0, 1));
  }

  void everyReadoutLineIsDrawnAboveTheCurves() {
    // Issue 36: 9 stages x 3 modes in a low panel; the read-out was drawn under the curves and
    // cut at the axis rect, so only S1-S3 of the first mode could be read.
    LiveData data;
    PlotPanel panel(QStringLiteral("Loss"), QStringLiteral("nats"), &data);
    // Long names, as the read-out gives them in full: its columns are wider than the plot.
    panel.addRule({engine::series::kLoss,
                   true,
                   QStringLiteral(" loss of the local head"),
                   Qt::SolidLine,
                   1.5,
                   {}});
    panel.resize(560, 170);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    const engine::Mode modes[] = {engine::Mode::Local, engine::Mode::Pipeline,
                                  engine::Mode::Backprop};
    for (int phase = 0; phase < 3; ++phase) {
      engine::RunInfo info;
      info.mode = modes[phase];
      info.stages.resize(9);
      data.beginPhase(phase, info);
      std::vector<engine::MetricPoint> points;
      for (int step = 0; step < 200; ++step)
        for (int k = 0; k < 9; ++k)
          points.push_back({engine::series::kLoss, k, -1, step, step * 0.01, 1.0 + k + phase});
      data.addPoints(phase, points);
    }
    panel.refresh(true);
    QCustomPlot* plot = panel.plot();
    QCOMPARE(plot->graphCount(), 27);
    plot->replot();
    moveTo(plot, plot->axisRect()->center());
    QTRY_VERIFY(!panel.readout().isEmpty());
    const int lines = int(panel.readout().split(QLatin1Char('\n')).size());
    QCOMPARE(lines, 28);
    QCPLayer* layer = plot->layer(QStringLiteral("readout"));
    QVERIFY(layer);
    QVERIFY(layer->index() > plot->layer(QStringLiteral("main"))->index());
    QVERIFY(layer->index() > plot->layer(QStringLiteral("finals"))->index());
    plot->replot();
    int drawn = 0;
    for (QCPLayerable* child : layer->children()) {
      auto* text = qobject_cast<QCPItemText*>(child);
      if (!text || !text->visible()) continue;
      QVERIFY(!text->clipToAxisRect());
      for (const QString& line : text->text().split(QLatin1Char('\n'))) {
        ++drawn;
        // A name may be shortened to fit, never its value.
        static const QRegularExpression value(QStringLiteral(": \\d+$|^step \\d+$"));
        QVERIFY2(value.match(line).hasMatch(), qPrintable(line));
      }
      // Wholly inside the widget, each line readable.
      const QPointF topLeft = text->topLeft->pixelPosition();
      const QPointF bottomRight = text->bottomRight->pixelPosition();
      QVERIFY2(topLeft.y() >= 0 && bottomRight.y() <= plot->height(),
               qPrintable(QStringLiteral("%1..%2 of %3")
                              .arg(topLeft.y())
                              .arg(bottomRight.y())
                              .arg(plot->height())));
      QVERIFY2(topLeft.x() >= 0 && bottomRight.x() <= plot->width(),
               qPrintable(QStringLiteral("%1..%2 of %3")
                              .arg(topLeft.x())
                              .arg(bottomRight.x())
                              .arg(plot->width())));
    }
    QCOMPARE(drawn, 28);
  }

  void onePipelineStagesLossHasALegend() {
    // Issue 36: a 4-stage pipeline run reports its loss at the last stage only; one graph and
    // no legend left the reader guessing whose loss it was.
    LiveData data;
    PlotPanel panel(QStringLiteral("Loss"), QStringLiteral("nats"), &data);
    panel.addRule({engine::series::kLoss, true, {}, Qt::SolidLine, 1.5, {}});
    engine::RunInfo info;
    info.mode = engine::Mode::Pipeline;
    info.stages.resize(4);
    data.beginPhase(0, info);
    data.addPoints(0, {{engine::series::kLoss, 3, -1, 0, 0.0, 1.0}});
    QCOMPARE(panel.graphCount(), 1);
    QVERIFY(panel.plot()->legend->visible());
    QCOMPARE(panel.plot()->legend->itemCount(), 1);
    QCOMPARE(panel.legendText(0), QStringLiteral("pipe S4"));
    // A run-level series alone (one stage's run) still needs none.
    LiveData one;
    PlotPanel single(QStringLiteral("Loss"), QStringLiteral("nats"), &one);
    single.addRule({engine::series::kLoss, true, {}, Qt::SolidLine, 1.5, {}});
    engine::RunInfo oneStage;
    oneStage.stages.resize(1);
    one.beginPhase(0, oneStage);
    one.addPoints(0, {{engine::series::kLoss, 0, -1, 0, 0.0, 1.0}});
    QVERIFY(!single.plot()->legend->visible());
  }

  void eventLabelsNeverPrintOverEachOther() {
    // Issue 36: a run with 6+ changes close together printed their labels over each other
    // (four rows, then the fifth on the first's). Each drawn label's box is clear of every
    // other's, and most of them are still drawn.
    LiveData data;
    PlotPanel panel(QStringLiteral("Loss"), QStringLiteral("nats"), &data);
    panel.addRule({engine::series::kLoss, true, {}, Qt::SolidLine, 1.5, {}});
    panel.resize(600, 400);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    fill(data, 1000);
    for (int i = 0; i < 8; ++i)
      data.addMarker(
          {0, 100 + 20 * i, 1.0 + 0.2 * i,
           QStringLiteral("train.lr %1 → %2").arg(0.001 * (i + 1)).arg(0.001 * (i + 2))});
    panel.refresh(true);
    panel.plot()->replot();
    QCOMPARE(panel.markerCount(), 8);
    std::vector<QRectF> boxes;
    for (int i = 0; i < panel.plot()->itemCount(); ++i) {
      auto* text = qobject_cast<QCPItemText*>(panel.plot()->item(i));
      if (!text || !text->visible()) continue;
      const QRectF box =
          QRectF(text->topLeft->pixelPosition(), text->bottomRight->pixelPosition()).normalized();
      for (const QRectF& other : boxes)
        QVERIFY2(!box.intersects(other),
                 qPrintable(QStringLiteral("%1 overlaps another label").arg(text->text())));
      boxes.push_back(box);
    }
    QVERIFY2(boxes.size() >= 6, qPrintable(QString::number(boxes.size())));
  }

  void fullLegendFoldsIntoMoreAndKeepsThePlotsWidth() {
    // Issue 36: two 9-stage runs in three modes at 1366x768 grew Train's Local loss legend
    // past its panel and squeezed the plot. The plot keeps 60 % of the width or 200 px; what
    // the legend cannot hold is folded into "+N more", still read out.
    LiveData data;
    PlotPanel panel(QStringLiteral("Local loss"), QStringLiteral("nats"), &data);
    panel.addRule({engine::series::kLoss, true, {}, Qt::SolidLine, 1.5, {}});
    panel.resize(330, 200);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    const engine::Mode modes[] = {engine::Mode::Local, engine::Mode::Pipeline,
                                  engine::Mode::Backprop};
    for (int phase = 0; phase < 6; ++phase) {
      engine::RunInfo info;
      info.mode = modes[phase % 3];
      info.stages.resize(9);
      data.beginPhase(phase, info);
      std::vector<engine::MetricPoint> points;
      for (int step = 0; step < 50; ++step)
        for (int k = 0; k < 9; ++k)
          points.push_back({engine::series::kLoss, k, -1, step, step * 0.01,
                            (k + 1 + phase) * std::exp(-step / 30.0)});
      data.addPoints(phase, points);
    }
    panel.refresh(true);
    QCustomPlot* plot = panel.plot();
    plot->replot();
    plot->replot();
    const int width = plot->width();
    QVERIFY2(plot->axisRect()->width() >= std::min(200, width * 3 / 5) - 2,
             qPrintable(QStringLiteral("%1 of %2 px").arg(plot->axisRect()->width()).arg(width)));
    const QRect legend = plot->legend->outerRect();
    QVERIFY2(legend.right() <= width && legend.bottom() <= plot->height(),
             qPrintable(QStringLiteral("legend to %1, %2 in %3x%4")
                            .arg(legend.right())
                            .arg(legend.bottom())
                            .arg(width)
                            .arg(plot->height())));
    const QStringList folded = panel.foldedLegendEntries();
    QVERIFY(!folded.isEmpty());
    int listed = 0;
    bool more = false;
    for (int i = 0; i < plot->legend->itemCount(); ++i) {
      QCPAbstractLegendItem* item = plot->legend->item(i);
      listed += qobject_cast<QCPPlottableLegendItem*>(item) != nullptr;
      more |= item && foldedLegendText(item).startsWith(QStringLiteral("+%1").arg(folded.size()));
    }
    QVERIFY(more);
    QCOMPARE(listed + int(folded.size()), panel.graphCount());
    // The folded are still read out.
    moveTo(plot, plot->axisRect()->rect().center());
    QTRY_VERIFY(!panel.readout().isEmpty());
    QCOMPARE(int(panel.readout().count(QLatin1Char('\n'))), panel.graphCount());
  }

  void crowdedEventLabelsKeepTheNewest() {
    // Issue 36: with more changes close together than label rows, the newest change's label
    // was the one left out. Older ones give way; the newest always reads.
    LiveData data;
    PlotPanel panel(QStringLiteral("Loss"), QStringLiteral("nats"), &data);
    panel.addRule({engine::series::kLoss, true, {}, Qt::SolidLine, 1.5, {}});
    panel.resize(600, 200);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    fill(data, 1000);
    for (int i = 0; i < 8; ++i)
      data.addMarker(
          {0, 500 + 5 * i, 5.0 + 0.05 * i,
           QStringLiteral("train.lr %1 → %2").arg(0.001 * (i + 1)).arg(0.001 * (i + 2))});
    panel.refresh(true);
    panel.plot()->replot();
    QCOMPARE(panel.markerCount(), 8);
    int hidden = 0;
    for (int i = 0; i < 8; ++i) hidden += !panel.markerText(i)->visible();
    QVERIFY2(hidden > 0, "the test needs more labels than rows");
    QVERIFY(panel.markerText(7)->visible());
    QVERIFY(!panel.markerText(0)->visible());
  }

  void bytesAxesTickInIecUnits() {
    // Issue 36 §3: Train's bytes panels ticked "1·10⁷" under "bytes"; one unit system (IEC)
    // on the axis and in the read-out, linear and logarithmic.
    LiveData data;
    PlotPanel panel(QStringLiteral("Memory"), QStringLiteral("bytes"), &data);
    panel.setYBytes(true);
    panel.addRule({engine::series::kMemoryBytes, true, {}, Qt::SolidLine, 1.3, {}});
    panel.resize(500, 300);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    engine::RunInfo info;
    info.stages.resize(1);
    data.beginPhase(0, info);
    std::vector<engine::MetricPoint> points;
    for (int step = 0; step < 100; ++step)
      points.push_back({engine::series::kMemoryBytes, 0, -1, step, step * 0.01,
                        1.5e6 + step * 2.5e5});  // 1.4 MiB to 25 MiB
    data.addPoints(0, points);
    panel.refresh(true);
    QCustomPlot* plot = panel.plot();
    plot->replot();
    const auto check = [&](const QString& unit) {
      const QStringList labels = plot->yAxis->tickVectorLabels();
      QVERIFY2(labels.size() >= 3, qPrintable(labels.join(QStringLiteral(" | "))));
      for (const QString& label : labels)
        QVERIFY2(label.endsWith(unit) && !label.contains(QChar(0xB7)), qPrintable(label));
    };
    check(QStringLiteral(" MiB"));
    // Whole MiB steps: the ticks are multiples of 1024², not of 10⁶.
    for (double t : plot->yAxis->tickVector())
      QVERIFY2(std::fmod(t, 1024.0 * 1024.0) == 0, qPrintable(QString::number(t)));
    const QRect r = plot->axisRect()->rect();
    moveTo(plot, r.center());
    QVERIFY2(panel.readout().contains(QStringLiteral("MiB")), qPrintable(panel.readout()));
    panel.setLogY(true);
    plot->replot();
    plot->replot();
    const QStringList logLabels = plot->yAxis->tickVectorLabels();
    QVERIFY2(logLabels.size() >= 2, qPrintable(logLabels.join(QStringLiteral(" | "))));
    for (const QString& label : logLabels)
      QVERIFY2(label.endsWith(QStringLiteral("iB")) || label.endsWith(QStringLiteral(" B")),
               qPrintable(label));
    // Small values read in KiB, and a unit name per scale.
    QCOMPARE(iecTickLabel(1536, iecUnit(1536)), QStringLiteral("1.5 KiB"));
    QCOMPARE(iecTickLabel(3.0 * (1 << 30), iecUnit(3.0 * (1 << 30))), QStringLiteral("3 GiB"));
    QCOMPARE(iecTickLabel(0, 1024.0 * 1024), QStringLiteral("0 MiB"));
  }

  void finalWholeTestSetEvaluationIsDrawnApart() {
    // Issue 36: the final evaluation on the whole test set (the summary's value, sent as the
    // test series' last point) was drawn in the same line as the periodic ones on
    // eval.max_samples. It is a marker of its own; the line ends at the last periodic point.
    LiveData data;
    PlotPanel panel(QStringLiteral("Accuracy"), QString(), &data);
    panel.addRule(
        {engine::series::kAccuracy, true, QStringLiteral(" local"), Qt::SolidLine, 1.2, {}});
    panel.addRule({engine::series::kTestAccuracy,
                   false,
                   QStringLiteral("test"),
                   Qt::SolidLine,
                   2.0,
                   {},
                   true,
                   false,
                   true});
    panel.resize(600, 400);
    panel.show();
    engine::RunInfo info;
    info.stages.resize(2);
    data.beginPhase(0, info);
    std::vector<engine::MetricPoint> points;
    for (int step = 0; step <= 100; step += 20) {
      points.push_back({engine::series::kAccuracy, 0, -1, step, step * 0.01, 0.5});
      points.push_back({engine::series::kAccuracy, 1, -1, step, step * 0.01, 0.6});
      if (step > 0)
        points.push_back({engine::series::kTestAccuracy, -1, -1, step, step * 0.01, 0.7});
    }
    points.push_back({engine::series::kTestAccuracy, -1, -1, 100, 1.0, 0.812});  // the final
    data.addPoints(0, points);
    panel.markFinal(0, engine::series::kTestAccuracy, 0.812);
    panel.refresh(true);
    QCPGraph* final = panel.finalGraph(0, engine::series::kTestAccuracy);
    QVERIFY(final);
    QCOMPARE(final->data()->size(), 1);
    QCOMPARE(final->data()->constBegin()->key, 100.0);
    QCOMPARE(float(final->data()->constBegin()->value), 0.812f);
    QCPGraph* line = nullptr;
    for (int i = 0; i < panel.plot()->graphCount(); ++i)
      if (panel.plot()->graph(i)->name() == QStringLiteral("test")) line = panel.plot()->graph(i);
    QVERIFY(line);
    for (auto it = line->data()->constBegin(); it != line->data()->constEnd(); ++it)
      QVERIFY2(float(it->value) != 0.812f, "the final point is still on the periodic line");
    QVERIFY(panel.plot()->legend->itemWithPlottable(final));
    QCOMPARE(final->name(), QStringLiteral("final, whole test set"));
    // A series whose last point is not the summary's value keeps its line whole.
    panel.markFinal(0, engine::series::kTestAccuracy, 0.9);
    QCOMPARE(final->data()->size(), 0);
    QVERIFY(!panel.plot()->legend->hasItemWithPlottable(final));
  }

  void narrowLegendKeepsEntriesDistinctAndReadoutNamesInFull() {
    // Issue 36: eliding the legend's texts to fit its cells turned every entry of a pipeline's
    // bytes panel into "pipe S…" and the read-out said "pipe S1 grad …: 0".
    LiveData data;
    PlotPanel panel(QStringLiteral("Bytes sent"), QStringLiteral("bytes"), &data);
    panel.addRule(
        {engine::series::kBytesSent, true, QStringLiteral(" fwd"), Qt::SolidLine, 1.3, {}});
    panel.addRule({engine::series::kGradBytesSent,
                   true,
                   QStringLiteral(" grad back"),
                   Qt::DashLine,
                   1.3,
                   {}});
    panel.setToolTip(QStringLiteral("fwd: what each stage sent downstream."));
    panel.resize(240, 160);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    engine::RunInfo info;
    info.mode = engine::Mode::Pipeline;
    info.stages.resize(4);
    data.beginPhase(0, info);
    std::vector<engine::MetricPoint> points;
    for (int step = 0; step <= 100; step += 10)
      for (int k = 0; k < 4; ++k) {
        points.push_back({engine::series::kBytesSent, k, -1, step, step * 0.01, 1e4 * step});
        points.push_back({engine::series::kGradBytesSent, k, -1, step, step * 0.01, 2e4 * step});
      }
    data.addPoints(0, points);
    panel.refresh(true);
    QCustomPlot* plot = panel.plot();
    plot->replot();
    panel.refresh(true);
    plot->replot();
    QCOMPARE(panel.graphCount(), 8);
    QSet<QString> drawn;
    bool shortened = false;
    for (int i = 0; i < panel.graphCount(); ++i) {
      const QString name = plot->graph(i)->name();
      QVERIFY2(!drawn.contains(name), qPrintable(name + QStringLiteral(" twice")));
      drawn.insert(name);
      shortened |= name != panel.legendText(i);
    }
    QVERIFY2(shortened, "the legend fits whole at this width: the test tests nothing");
    QVERIFY(drawn.contains(QStringLiteral("pS1 \u2191")));

    // The read-out names each series in full.
    const QPoint mid(int(plot->xAxis->coordToPixel(50)), int(plot->yAxis->coordToPixel(5e5)));
    moveTo(plot, mid);
    QVERIFY2(panel.readout().contains(QStringLiteral("pipe S1 grad back: ")),
             qPrintable(panel.readout()));
    QVERIFY2(!panel.readout().contains(QStringLiteral("\u2026")), qPrintable(panel.readout()));

    // The description opens over the title row, never over the data and its read-out.
    QHelpEvent over(QEvent::ToolTip, mid, plot->mapToGlobal(mid));
    QApplication::sendEvent(plot, &over);
    QVERIFY2(!QToolTip::isVisible() || QToolTip::text() != panel.toolTip(),
             "the description opened over the read-out");
    const QPoint title(plot->width() / 2, 4);
    QHelpEvent top(QEvent::ToolTip, title, plot->mapToGlobal(title));
    QApplication::sendEvent(plot, &top);
    QTRY_COMPARE(QToolTip::text(), panel.toolTip());
    QToolTip::hideText();
  }

  void finalDiamondIsInsideThePlotAndOnTop() {
    // Issue 36: the final evaluation's diamond at the last step was half cut off by the plot's
    // right edge and drawn under the stage lines.
    LiveData data;
    PlotPanel panel(QStringLiteral("Accuracy"), QString(), &data);
    panel.addRule(
        {engine::series::kAccuracy, true, QStringLiteral(" local"), Qt::SolidLine, 1.2, {}});
    panel.addRule({engine::series::kTestAccuracy,
                   false,
                   QStringLiteral("test"),
                   Qt::SolidLine,
                   2.0,
                   {},
                   true,
                   false,
                   true});
    panel.setFixedYRange(0, 1);
    panel.resize(600, 400);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    engine::RunInfo info;
    info.stages.resize(2);
    data.beginPhase(0, info);
    std::vector<engine::MetricPoint> points;
    for (int step = 0; step <= 100; step += 5) {
      points.push_back({engine::series::kAccuracy, 0, -1, step, step * 0.01, 0.5});
      points.push_back({engine::series::kAccuracy, 1, -1, step, step * 0.01, 0.6});
      if (step > 0 && step % 20 == 0)
        points.push_back({engine::series::kTestAccuracy, -1, -1, step, step * 0.01, 0.7});
    }
    points.push_back({engine::series::kTestAccuracy, -1, -1, 100, 1.0, 0.6});  // the final
    data.addPoints(0, points);
    panel.markFinal(0, engine::series::kTestAccuracy, 0.6);
    panel.refresh(true);
    QCustomPlot* plot = panel.plot();
    plot->replot();
    panel.refresh(true);
    plot->replot();
    QCPGraph* final = panel.finalGraph(0, engine::series::kTestAccuracy);
    QVERIFY(final && final->data()->size() == 1);
    const double px = plot->xAxis->coordToPixel(final->data()->constBegin()->key);
    const double half = final->scatterStyle().size() / 2;
    QVERIFY2(px + half <= plot->axisRect()->right() && px - half >= plot->axisRect()->left(),
             qPrintable(QStringLiteral("diamond at %1 px, plot %2..%3")
                            .arg(px)
                            .arg(plot->axisRect()->left())
                            .arg(plot->axisRect()->right())));
    for (int i = 0; i < panel.graphCount(); ++i) {
      QCPGraph* line = plot->graph(i);
      if (line == final) continue;
      QVERIFY2(final->layer()->index() > line->layer()->index(),
               qPrintable(line->name() + QStringLiteral(" is drawn over the final diamond")));
    }
  }

  void logLossAxisLabelsSubDecadesWithoutOverlap() {
    // Issue 36: a log axis over 0.3–5 labelled only "1"; a short one printed "5 4 3 2" over
    // each other.
    for (const int height : {400, 260, 170}) {
      LiveData data;
      PlotPanel panel(QStringLiteral("Loss"), QStringLiteral("nats"), &data);
      panel.addRule({engine::series::kLoss, true, {}, Qt::SolidLine, 1.5, {}});
      panel.resize(500, height);
      panel.show();
      QVERIFY(QTest::qWaitForWindowExposed(&panel));
      engine::RunInfo info;
      info.stages.resize(1);
      data.beginPhase(0, info);
      std::vector<engine::MetricPoint> points;
      for (int step = 0; step < 200; ++step)
        points.push_back(
            {engine::series::kLoss, 0, -1, step, step * 0.01, 0.3 + 4.7 * std::exp(-step / 30.0)});
      data.addPoints(0, points);
      panel.setLogY(true);
      QCustomPlot* plot = panel.plot();
      plot->replot();
      plot->replot();
      QCPAxis* y = plot->yAxis;
      const QVector<double> ticks = y->tickVector();
      int shown = 0;
      for (double t : ticks) shown += y->range().contains(t);
      QVERIFY2(shown >= 3,
               qPrintable(
                   QStringLiteral("%1 px: %2 labels").arg(plot->axisRect()->height()).arg(shown)));
      const int line = QFontMetrics(y->tickLabelFont()).height();
      for (int i = 1; i < ticks.size(); ++i) {
        const double gap = std::abs(y->coordToPixel(ticks[i]) - y->coordToPixel(ticks[i - 1]));
        QVERIFY2(gap >= line, qPrintable(QStringLiteral("%1 and %2 are %3 px apart at %4 px")
                                             .arg(ticks[i - 1])
                                             .arg(ticks[i])
                                             .arg(gap)
                                             .arg(plot->axisRect()->height())));
      }
    }
  }

  void cosinePanelSaysWhyAPipelineRunLeavesItEmpty() {
    LiveData data;
    LiveDashboard dashboard(&data);
    dashboard.resize(1200, 800);
    engine::RunInfo info;
    info.mode = engine::Mode::Pipeline;
    info.stages.resize(2);
    data.beginPhase(0, info);
    dashboard.refreshAll(true);
    QCOMPARE(dashboard.cosinePanel()->shownEmptyText(),
             QStringLiteral("no gradient cosine in pipeline/backprop runs"));
    // A local run's panel says nothing of the sort (its probes are coming).
    data.clear();
    info.mode = engine::Mode::Local;
    data.beginPhase(0, info);
    dashboard.refreshAll(true);
    QCOMPARE(dashboard.cosinePanel()->shownEmptyText(), QString());
  }

  void onePointSitsInAReadableSpan() {
    // Issue 36 §2.5: with one probe the cosine's x axis spanned 369–370, the point on its edge.
    LiveData data;
    PlotPanel panel(QStringLiteral("Gradient cosine"), QString(), &data);
    panel.addRule({engine::series::kGradCosine, true, {}, Qt::SolidLine, 1.5, {}});
    panel.resize(600, 400);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    engine::RunInfo info;
    info.stages.resize(2);
    data.beginPhase(0, info);
    data.addPoints(0, {{engine::series::kGradCosine, 0, -1, 369, 3.69, 0.4}});
    panel.refresh();
    const QCPRange r = panel.plot()->xAxis->range();
    QVERIFY2(r.size() >= 10 && r.lower < 369 - 4 && r.upper > 369 + 4,
             qPrintable(QStringLiteral("%1 .. %2").arg(r.lower).arg(r.upper)));
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

  void cumulativeAndPeakSeriesAreNeverSmoothed() {
    // Issue 36 §1.1: a cumulative counter (bytes sent, reported every 250 ms, so sparser than
    // the loss) and a peak (memory) are drawn as stored whatever the smoothing; the loss is
    // smoothed.
    LiveData data;
    LiveDashboard dashboard(&data);
    dashboard.resize(1200, 800);
    dashboard.show();
    dashboard.smoothingSlider()->setValue(60);
    engine::RunInfo info;
    info.mode = engine::Mode::Local;
    info.stages.resize(2);
    data.beginPhase(0, info);
    std::vector<engine::MetricPoint> points;
    for (int step = 0; step < 2000; ++step) {
      points.push_back({engine::series::kLoss, 0, -1, step, step * 0.01, 1.0 + 0.5 * (step % 2)});
      if (step % 25 == 24) {
        points.push_back(
            {engine::series::kBytesSent, 0, -1, step, step * 0.01, 65792.0 * (step + 1)});
        points.push_back(
            {engine::series::kMemoryBytes, 0, -1, step, step * 0.01, step < 1000 ? 4096.0 : 1e6});
      }
    }
    data.addPoints(0, points);
    for (const char* name : {engine::series::kBytesSent, engine::series::kMemoryBytes}) {
      const SeriesBuffer* s = data.series({0, name, 0, -1});
      QVERIFY(s && s->size() == 80);
      for (size_t i = 0; i < s->size(); ++i) QCOMPARE(s->y(i), s->rawY(i));
    }
    const SeriesBuffer* loss = data.series({0, engine::series::kLoss, 0, -1});
    QVERIFY(std::abs(loss->y(1001) - loss->y(1000)) <
            0.5 * std::abs(loss->rawY(1001) - loss->rawY(1000)));
    // What the Bytes panel draws ends on the stored total.
    PlotPanel* bytes = dashboard.bytesPanel();
    bytes->refresh(true);
    const QCPGraph* g = bytes->plot()->graph(0);
    QVERIFY(g && !g->data()->isEmpty());
    QCOMPARE((g->data()->constEnd() - 1)->value, 65792.0 * 2000);
    // A smoothing change leaves them as they are too.
    dashboard.smoothingSlider()->setValue(95);
    const SeriesBuffer* sent = data.series({0, engine::series::kBytesSent, 0, -1});
    QCOMPARE(sent->y(40), sent->rawY(40));
  }

  void compareOverlaySmoothsFullResolutionOnlyNoisySeries() {
    // Issue 36 §1.1 in Runs: the loss is smoothed on every stored point, then sampled on the
    // overlay's grid (not the grid's samples smoothed: on a long run they alias); sparse
    // evaluations are drawn as stored.
    test::TempStore t;
    auto spec = test::runSpec("long", {2});
    storage::NewRun run;
    run.name = spec.name;
    run.mode = "local";
    run.specJson = engine::specToJson(spec);
    run.modelKind = "mlp";
    run.totalSteps = 20000;
    run.batchSize = 32;
    for (int k = 0; k < 2; ++k) {
      storage::StageRecord s;
      s.index = k;
      s.device = "cpu";
      run.stages.push_back(s);
    }
    auto& writer = t.store->writer();
    const int64_t id = writer.createRun(run);
    std::vector<storage::PointInput> points;
    for (int step = 0; step < 20000; ++step) {
      const double v = 1.0 + 0.5 * (step % 2) + std::exp(-step / 4000.0);
      points.push_back({"loss", 1, -1, step, step * 0.01, v});
      if (step % 2000 == 1999)
        points.push_back({"test_accuracy", -1, -1, step, step * 0.01, 0.5 + step / 50000.0});
    }
    writer.appendPoints(id, std::move(points));
    storage::RunFinish finish;
    finish.status = storage::RunStatus::Completed;
    finish.steps = 20000;
    writer.finishRun(id, finish);
    writer.flush();

    // What the store keeps of it (a long series is thinned past its first points).
    std::vector<storage::SeriesPoint> stored =
        storage::RunReader(*t.store).loadSeries(id, {"loss", 1, -1});
    QVERIFY(stored.size() > 10000);
    StoreExecutor executor(t.store);
    ComparePanel compare(&executor);
    compare.resize(900, 700);
    compare.show();
    QVERIFY(QTest::qWaitForWindowExposed(&compare));
    compare.setRuns({id});
    QTRY_VERIFY_WITH_TIMEOUT(compare.isLoaded(), 5000);
    QCustomPlot* overlay = compare.overlayPlot();
    PlotFrame* frame = compare.overlayFrame();
    QVERIFY(compare.selectMetric(engine::series::kTestAccuracy, -1));
    QTRY_VERIFY_WITH_TIMEOUT(compare.isLoaded(), 5000);
    const std::vector<double> accuracy = values(overlay->graph(0));
    QCOMPARE(accuracy.size(), size_t(10));
    frame->setSmoothing(0.9);
    QTRY_VERIFY_WITH_TIMEOUT(compare.isLoaded(), 5000);
    QCOMPARE(values(overlay->graph(0)), accuracy);

    QVERIFY(compare.selectMetric(engine::series::kLoss, -2));  // the last stage's
    QTRY_VERIFY_WITH_TIMEOUT(compare.isLoaded(), 5000);
    const QCPGraph* g = overlay->graph(0);
    QVERIFY(g->data()->size() >= 100 && g->data()->size() < 5000);
    // The debiased EMA of every stored point, held at each grid x.
    std::vector<double> raw;
    for (const auto& p : stored) raw.push_back(p.value);
    const std::vector<double> ema = PlotFrame::smoothed(raw, 0.9);
    const auto atOrBefore = [&](double x) {
      size_t i = 0;
      while (i + 1 < stored.size() && double(stored[i + 1].step) <= x) ++i;
      return ema[i];
    };
    double worst = 0;
    for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it) {
      double best = 1e9;  // either side of a grid x that rounds onto a step
      for (double nudge : {-1e-6, 1e-6})
        best = std::min(best, std::abs(it->value - atOrBefore(it->key + nudge)));
      worst = std::max(worst, best);
    }
    QVERIFY2(worst < 1e-4, qPrintable(QString::number(worst)));
  }

  void exportsPngSvgPdfAndCsv() {
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
    // CSV: the drawn points of each graph, one row each, headed by the axes' labels.
    const QString csv = dir.filePath(QStringLiteral("loss.csv"));
    QCOMPARE(panel.exportTo(csv), QString());
    QFile file(csv);
    QVERIFY(file.open(QIODevice::ReadOnly | QIODevice::Text));
    const QStringList lines =
        QString::fromUtf8(file.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QCOMPARE(lines.value(0), QStringLiteral("series,step,nats"));
    QCOMPARE(lines.size(), 1 + panel.shownPoints(0) + panel.shownPoints(1));
    QVERIFY2(lines.value(1).startsWith(QStringLiteral("S1,0,")), qPrintable(lines.value(1)));
    QVERIFY(!panel.exportTo(dir.filePath(QStringLiteral("loss.bmpx"))).isEmpty());
  }

  void everyPlotIsInAPlotFrame() {
    // The live panels and both compare plots sit in the one frame: its title, menu and styling.
    LiveData data;
    LiveDashboard dashboard(&data);
    QList<QWidget*> panels;
    for (auto* p : dashboard.linePanels()) panels << p;
    panels << dashboard.utilizationPanel() << dashboard.timelinePanel();
    QList<QCustomPlot*> plots;
    for (auto* p : dashboard.linePanels()) plots << p->plot();
    plots << dashboard.utilizationPanel()->plot() << dashboard.timelinePanel()->plot();
    for (int i = 0; i < panels.size(); ++i) {
      const auto frames = panels[i]->findChildren<PlotFrame*>();
      QCOMPARE(frames.size(), 1);
      QCOMPARE(frames.front()->plot(), plots[i]);
      QVERIFY(!frames.front()->title().isEmpty());
    }
    QCOMPARE(dashboard.lossPanel()->frame()->title(), dashboard.lossPanel()->title());
    test::TempStore t;
    StoreExecutor executor(t.store);
    ComparePanel compare(&executor);
    const auto frames = compare.findChildren<PlotFrame*>();
    QCOMPARE(frames.size(), 2);
    QCOMPARE(compare.overlayFrame()->plot(), compare.overlayPlot());
    QCOMPARE(compare.summaryFrame()->plot(), compare.summaryPlot());
    // The overlay has the live panels' controls, the summary bars do not.
    QVERIFY(compare.overlayFrame()->smoothingSlider() && compare.overlayFrame()->logYButton());
    QVERIFY(!compare.summaryFrame()->smoothingSlider() && !compare.summaryFrame()->logYButton());
  }

  void compareOverlayKeepsItsSettingsAndEmptiesCleanly() {
    // Issue 36 §4: the overlay's smoothing 0.10 came back as 0.00 after a restart; its log
    // scale, grouping and metric are kept with it. An emptied overlay kept the last runs' axes
    // and a "step" label under "x: wall time".
    test::TempStore t;
    const int64_t a = test::addRun(*t.store, test::runSpec("two-stage", {2}), 0.80);
    const int64_t b = test::addRun(*t.store, test::runSpec("three-stage", {1, 3}), 0.90);
    StoreExecutor executor(t.store);
    const auto guard = qScopeGuard([] {
      ComparePanel::forgetOverlaySettings();
      QSettings().remove(QStringLiteral("runs/overlay_x_axis"));
    });
    {
      ComparePanel compare(&executor);
      compare.resize(900, 600);
      compare.show();
      QVERIFY(QTest::qWaitForWindowExposed(&compare));
      compare.setRuns({a, b});
      QTRY_VERIFY_WITH_TIMEOUT(compare.isLoaded(), 5000);
      QCOMPARE(compare.overlayPlot()->yAxis->label(), QStringLiteral("Loss · last stage (nats)"));
      compare.overlayFrame()->smoothingSlider()->setValue(10);
      QTRY_VERIFY_WITH_TIMEOUT(compare.isLoaded(), 5000);
      QTest::mouseClick(compare.overlayFrame()->logYButton(), Qt::LeftButton);
      QVERIFY(compare.selectMetric(engine::series::kTestAccuracy, -1));
      QTRY_VERIFY_WITH_TIMEOUT(compare.isLoaded(), 5000);
      compare.groupCombo()->setCurrentIndex(2);
      QTRY_VERIFY_WITH_TIMEOUT(compare.isLoaded(), 5000);
      compare.alignCombo()->setCurrentIndex(ComparePanel::kXTime);
      QTRY_VERIFY_WITH_TIMEOUT(compare.isLoaded(), 5000);
    }
    ComparePanel again(&executor);
    again.resize(900, 600);
    again.show();
    QVERIFY(QTest::qWaitForWindowExposed(&again));
    QCOMPARE(again.overlayFrame()->smoothing(), 0.10);
    QCOMPARE(again.overlayFrame()->smoothingSlider()->value(), 10);
    QVERIFY(again.overlayFrame()->logY());
    QCOMPARE(again.groupCombo()->currentIndex(), 2);
    QCOMPARE(again.metricCombo()->currentText(), QStringLiteral("Test accuracy"));
    QCOMPARE(again.alignCombo()->currentIndex(), int(ComparePanel::kXTime));
    again.groupCombo()->setCurrentIndex(0);
    again.overlayFrame()->setLogY(false);
    again.setRuns({a, b});
    QTRY_VERIFY_WITH_TIMEOUT(again.isLoaded(), 5000);
    QCustomPlot* overlay = again.overlayPlot();
    QVERIFY(overlay->graphCount() > 0);
    QVERIFY(overlay->xAxis->range().upper > 1.5);
    QCOMPARE(overlay->xAxis->label(), QStringLiteral("time (s)"));
    // Emptied: no graph, the axes reset, the label still the chosen x axis's.
    again.setRuns({});
    QTRY_VERIFY_WITH_TIMEOUT(again.isLoaded(), 5000);
    QCOMPARE(overlay->graphCount(), 0);
    QCOMPARE(overlay->xAxis->range().lower, 0.0);
    QCOMPARE(overlay->xAxis->range().upper, 1.0);
    QCOMPARE(overlay->yAxis->range().upper, 1.0);
    QCOMPARE(overlay->xAxis->label(), QStringLiteral("time (s)"));
  }

  void compareReadoutNamesTheStepOnSamplesAxis() {
    // Issue 36: on samples or FLOPs the read-out's header said only the cursor's x; it names
    // the runs' step there too.
    test::TempStore t;
    const int64_t a = test::addRun(*t.store, test::runSpec("two-stage", {2}), 0.80);
    const int64_t b = test::addRun(*t.store, test::runSpec("three-stage", {1, 3}), 0.90);
    StoreExecutor executor(t.store);
    const auto guard =
        qScopeGuard([] { QSettings().remove(QStringLiteral("runs/overlay_x_axis")); });
    ComparePanel compare(&executor);
    compare.resize(1000, 700);
    compare.show();
    QVERIFY(QTest::qWaitForWindowExposed(&compare));
    compare.alignCombo()->setCurrentIndex(ComparePanel::kXSamples);
    compare.setRuns({a, b});
    QTRY_VERIFY_WITH_TIMEOUT(compare.isLoaded(), 5000);
    QCustomPlot* overlay = compare.overlayPlot();
    overlay->replot();
    const QPoint at(int(overlay->xAxis->coordToPixel(60 * 32)),
                    int(overlay->yAxis->coordToPixel(1)));
    moveTo(overlay, at);
    QTRY_VERIFY(!compare.overlayFrame()->readout().isEmpty());
    const QString header = compare.overlayFrame()->readout().section(QLatin1Char('\n'), 0, 0);
    QVERIFY2(header.startsWith(QStringLiteral("samples ")), qPrintable(header));
    const qsizetype stepAt = header.indexOf(QStringLiteral(" · step "));
    QVERIFY2(stepAt > 0, qPrintable(header));
    const int step = header.mid(stepAt + 8).remove(QLatin1Char(',')).toInt();
    QVERIFY2(std::abs(step - 60) <= 2, qPrintable(header));
    const qint64 samples = header.section(QLatin1Char(' '), 1, 1).toLongLong();
    QCOMPARE(samples, qint64(step) * 32);
  }

  void compareLegendOfManyRunsLeavesThePlotItsRoom() {
    // Issue 36 §2.3: 16 runs of a study's grid got a 2-column legend of full run names that
    // squeezed the plot to ~40 px, its x ticks printed over each other, and the "_" of
    // "train.batch_size" was cut off. The plot keeps 60 % of the width (200 px at least); the
    // legend says "#id" and the keys that differ, in the room left, folding the rest.
    test::TempStore t;
    std::vector<int64_t> ids;
    for (int i = 0; i < 16; ++i) {
      auto spec = test::runSpec("grid-fmnist-mlp-each-run-long-name-" + std::to_string(i),
                                i % 2 ? std::vector<int>{2, 4} : std::vector<int>{1, 3});
      spec.train.lr = i % 4 < 2 ? 0.001 : 0.01;
      spec.train.batchSize = i % 8 < 4 ? 32 : 64;
      spec.train.seed = uint64_t(1 + i / 8);
      ids.push_back(test::addRun(*t.store, spec, 0.5 + 0.02 * i));
    }
    StoreExecutor executor(t.store);
    const auto guard =
        qScopeGuard([] { QSettings().remove(QStringLiteral("runs/overlay_x_axis")); });
    ComparePanel compare(&executor);
    compare.resize(760, 520);
    compare.show();
    QVERIFY(QTest::qWaitForWindowExposed(&compare));
    compare.alignCombo()->setCurrentIndex(ComparePanel::kXFlops);
    compare.alignCombo()->setCurrentIndex(ComparePanel::kXStep);
    compare.setRuns(ids);
    QTRY_VERIFY_WITH_TIMEOUT(compare.isLoaded(), 5000);
    QCustomPlot* overlay = compare.overlayPlot();
    overlay->replot();
    overlay->replot();
    const int width = overlay->width();
    QVERIFY2(overlay->axisRect()->width() >= std::min(width * 3 / 5, 200) - 2,
             qPrintable(
                 QStringLiteral("plot %1 of %2 px").arg(overlay->axisRect()->width()).arg(width)));
    const QRect legend = overlay->legend->outerRect();
    QVERIFY2(legend.right() <= width && legend.bottom() <= overlay->height() &&
                 legend.left() >= overlay->axisRect()->right(),
             qPrintable(QStringLiteral("legend %1,%2 %3x%4 in %5x%6")
                            .arg(legend.x())
                            .arg(legend.y())
                            .arg(legend.width())
                            .arg(legend.height())
                            .arg(width)
                            .arg(overlay->height())));
    // Short entries: the id and the differing keys, never the run's name.
    const int items = overlay->legend->itemCount();
    QVERIFY(items >= 4);
    const QString first = overlayLegendText(overlay, 0);
    QVERIFY2(first.startsWith(QStringLiteral("#%1 ").arg(ids[0])), qPrintable(first));
    QVERIFY2(!first.contains(QStringLiteral("grid-fmnist")), qPrintable(first));
    // Every key's value stays (the seed, the last key, was cut off in "#4 cuts=[2,4,6] bs=3…"):
    // named where the column holds it, else the values only, never elided.
    for (int i = 0; i < items; ++i) {
      const QString text = overlayLegendText(overlay, i);
      if (!text.startsWith(QLatin1Char('#'))) continue;  // "+N more"
      QVERIFY2(!text.endsWith(QChar(0x2026)) &&
                   QRegularExpression(QStringLiteral(" s[12]$")).match(text).hasMatch(),
               qPrintable(text + QStringLiteral(" in a legend %1 wide; plot %2 of %3")
                                     .arg(legend.width())
                                     .arg(overlay->axisRect()->width())
                                     .arg(width)));
      QVERIFY2(text.contains(QStringLiteral("lr=")) == first.contains(QStringLiteral("lr=")),
               qPrintable(text + QStringLiteral(" against ") + first));
    }
    // Every run is in the legend or in "+N more".
    const QStringList folded = compare.foldedLegendEntries();
    int entries = 0;
    for (int i = 0; i < items; ++i)
      entries += overlayLegendText(overlay, i).startsWith(QLatin1Char('#'));
    QCOMPARE(entries + int(folded.size()), 16);
    if (!folded.isEmpty()) {
      int last = items - 1;  // the grid's last cells may be empty
      while (last > 0 && !overlay->legend->item(last)) --last;
      QCOMPARE(overlayLegendText(overlay, last), QStringLiteral("+%1 more").arg(folded.size()));
    }
    // Each row holds its descenders: a row is at least the font's height.
    const int fontHeight = QFontMetrics(overlay->legend->font()).height();
    for (int i = 0; i < items; ++i)
      if (QCPAbstractLegendItem* item = overlay->legend->item(i))
        QVERIFY(item->outerRect().height() >= fontHeight);
    QCOMPARE(shortRunLabel(7, QStringLiteral("x"),
                           {{"train.lr", "0.001"},
                            {"partition.cuts", "[2, 4, 6]"},
                            {"train.batch_size", "32"},
                            {"train.seed", "1"}}),
             QStringLiteral("#7 lr=0.001 cuts=[2,4,6] bs=32 s1"));
    // The x ticks on the compute axis do not print over each other.
    compare.alignCombo()->setCurrentIndex(ComparePanel::kXSamples);
    QTRY_VERIFY_WITH_TIMEOUT(compare.isLoaded(), 5000);
    overlay->replot();
    overlay->replot();
    QCPAxis* x = overlay->xAxis;
    const QFontMetrics fm(x->tickLabelFont());
    const QVector<double> ticks = x->tickVector();
    const QStringList labels = x->tickVectorLabels();
    for (int i = 1; i < ticks.size(); ++i) {
      if (!x->range().contains(ticks[i]) || !x->range().contains(ticks[i - 1])) continue;
      const double gap = x->coordToPixel(ticks[i]) - x->coordToPixel(ticks[i - 1]);
      const double need =
          (fm.horizontalAdvance(labels[i]) + fm.horizontalAdvance(labels[i - 1])) / 2.0;
      QVERIFY2(gap > need, qPrintable(labels.join(QStringLiteral(" | "))));
    }
  }

  void compareOverlaySmoothsLogsAndReadsOut() {
    test::TempStore t;
    const int64_t a = test::addRun(*t.store, test::runSpec("two-stage", {2}), 0.80);
    const int64_t b = test::addRun(*t.store, test::runSpec("three-stage", {1, 3}), 0.90);
    StoreExecutor executor(t.store);
    ComparePanel compare(&executor);
    compare.resize(1000, 700);
    compare.show();
    QVERIFY(QTest::qWaitForWindowExposed(&compare));
    compare.setRuns({a, b});
    QTRY_VERIFY_WITH_TIMEOUT(compare.isLoaded(), 5000);
    QCustomPlot* overlay = compare.overlayPlot();
    PlotFrame* frame = compare.overlayFrame();
    QCOMPARE(overlay->graphCount(), 2);
    QCOMPARE(frame->smoothing(), 0.0);
    const std::vector<double> raw = values(overlay->graph(0));
    QVERIFY(raw.size() > 50);

    // Smoothing reloads the runs as the debiased EMA of each run's stored points (the fixture
    // writes one per step, fewer than the grid's points).
    frame->smoothingSlider()->setValue(90);
    QCOMPARE(frame->smoothing(), 0.9);
    QTRY_VERIFY_WITH_TIMEOUT(compare.isLoaded(), 5000);
    QCOMPARE(overlay->graphCount(), 2);
    const std::vector<double> smooth = values(overlay->graph(0));
    QCOMPARE(smooth.size(), raw.size());
    {
      std::vector<double> stored;  // the fixture's loss of run a, one point per step
      for (int step = 0; step < 200; ++step) stored.push_back(2.0 * std::exp(-step / 40.0) + 0.2);
      const std::vector<double> ema = PlotFrame::smoothed(stored, 0.9);
      const QCPGraph* g = overlay->graph(0);
      for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it) {
        double best = 1e9;  // the point at or before x (either side of x rounding onto a step)
        for (double nudge : {-1e-6, 1e-6}) {
          const size_t at = size_t(std::clamp(std::floor(it->key + nudge), 0.0, 199.0));
          best = std::min(best, std::abs(it->value - ema[at]));
        }
        QVERIFY2(best < 1e-9, qPrintable(QString::number(it->key)));
      }
    }
    double moved = 0;
    for (size_t k = 0; k < raw.size(); ++k) moved = std::max(moved, std::abs(smooth[k] - raw[k]));
    QVERIFY2(moved > 0.05, qPrintable(QString::number(moved)));  // the decay lags behind
    QCOMPARE(smooth.front(), raw.front());                       // debiased: no pull to zero
    // A reload (another alignment and back) keeps the smoothing.
    compare.alignCombo()->setCurrentIndex(1);
    QTRY_VERIFY_WITH_TIMEOUT(compare.isLoaded(), 5000);
    compare.alignCombo()->setCurrentIndex(0);
    QTRY_VERIFY_WITH_TIMEOUT(compare.isLoaded(), 5000);
    QCOMPARE(values(overlay->graph(0)), smooth);
    frame->setSmoothing(0);
    QTRY_VERIFY_WITH_TIMEOUT(compare.isLoaded(), 5000);
    QCOMPARE(values(overlay->graph(0)), raw);

    // Log scale from the title row's button: a log axis and ticker, a positive range around
    // the data.
    QVERIFY(overlay->yAxis->scaleType() == QCPAxis::stLinear);
    QTest::mouseClick(frame->logYButton(), Qt::LeftButton);
    QVERIFY(frame->logY());
    QCOMPARE(overlay->yAxis->scaleType(), QCPAxis::stLogarithmic);
    overlay->replot();
    QVERIFY(overlay->yAxis->tickVector().size() >= 1);
    for (double tick : overlay->yAxis->tickVector()) QVERIFY(tick > 0);
    const auto [lo, hi] = std::minmax_element(raw.begin(), raw.end());
    QVERIFY(overlay->yAxis->range().lower > 0 && overlay->yAxis->range().lower < *lo);
    QVERIFY(overlay->yAxis->range().upper > *hi);
    QCOMPARE(frame->logYButton()->text(), QStringLiteral("log y"));  // still fits the row
    QTest::mouseClick(frame->logYButton(), Qt::LeftButton);
    QCOMPARE(overlay->yAxis->scaleType(), QCPAxis::stLinear);

    // The title row's controls sit above the axis rect, never over the data.
    overlay->replot();
    QToolButton* button = frame->logYButton();
    const int below = button->mapTo(frame, QPoint(0, button->height())).y();
    const int top = overlay->mapTo(frame, overlay->axisRect()->topLeft()).y();
    QVERIFY2(below <= top + 1, qPrintable(QStringLiteral("%1 > %2").arg(below).arg(top)));

    // Hover: the step under the mouse and each run's value there, as drawn.
    const QPoint at(int(overlay->xAxis->coordToPixel(60)), int(overlay->yAxis->coordToPixel(1)));
    moveTo(overlay, at);
    QTRY_VERIFY(frame->readout().startsWith(QStringLiteral("step ")));
    const QString readout = frame->readout();
    const int step = readout.section(QLatin1Char('\n'), 0, 0).mid(5).toInt();
    QVERIFY2(std::abs(step - 60) <= 2, qPrintable(readout));
    for (int g = 0; g < 2; ++g) {
      const QCPGraph* graph = overlay->graph(g);
      const double x = overlay->xAxis->pixelToCoord(at.x());
      auto it = graph->data()->findBegin(x, false);
      if (it == graph->data()->constEnd() ||
          (it != graph->data()->constBegin() && x - (it - 1)->key < it->key - x))
        --it;
      const QString line = QStringLiteral("%1: %2").arg(graph->name()).arg(it->value, 0, 'g', 4);
      QVERIFY2(readout.contains(line), qPrintable(readout + QStringLiteral(" lacks ") + line));
      // the fixture's loss, 2 exp(-step / 40) + 1 - accuracy, near that step
      QVERIFY(std::abs(it->value - (2 * std::exp(-step / 40.0) + (g == 0 ? 0.2 : 0.1))) < 0.06);
    }
    // Off the axis rect the read-out goes.
    moveTo(overlay, QPoint(2, 2));
    QTRY_VERIFY(frame->readout().isEmpty());
  }

  void readoutGoesWithThePointerAndTheSettings() {
    // Issue 36: read-outs stayed on screen after the pointer left, several panels at once,
    // and one kept the unsmoothed values after the smoothing changed.
    LiveData data;
    PlotPanel panel(QStringLiteral("Loss"), QStringLiteral("nats"), &data);
    panel.addRule({engine::series::kLoss, true, {}, Qt::SolidLine, 1.5, {}});
    panel.resize(600, 400);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    fill(data, 300);
    panel.refresh(true);
    QCustomPlot* plot = panel.plot();
    plot->replot();
    const QPoint mid = plot->axisRect()->center();
    moveTo(plot, mid);
    QTRY_VERIFY(!panel.readout().isEmpty());
    QEvent leave(QEvent::Leave);
    QApplication::sendEvent(plot, &leave);
    QVERIFY2(panel.readout().isEmpty(), qPrintable(panel.readout()));
    moveTo(plot, mid);
    QVERIFY(!panel.readout().isEmpty());
    panel.setLogY(true);  // a setting change: the values shown are no longer the plot's
    QVERIFY2(panel.readout().isEmpty(), qPrintable(panel.readout()));
    panel.setLogY(false);
    plot->replot();
    moveTo(plot, mid);
    QVERIFY(!panel.readout().isEmpty());
    data.setSmoothing(0.5);  // Train's smoothing: the panel's next redraw
    panel.refresh();
    QVERIFY2(panel.readout().isEmpty(), qPrintable(panel.readout()));
    moveTo(plot, mid);
    QVERIFY(!panel.readout().isEmpty());
    panel.hide();
    QVERIFY2(panel.readout().isEmpty(), qPrintable(panel.readout()));

    PlotFrame frame(QStringLiteral("Overlay"),
                    PlotFrame::SmoothingControl | PlotFrame::HoverReadout);
    QCPGraph* graph = frame.plot()->addGraph();
    graph->setName(QStringLiteral("run"));
    for (int i = 0; i < 50; ++i) graph->addData(i, i % 3);
    frame.plot()->rescaleAxes();
    frame.resize(500, 300);
    frame.show();
    QVERIFY(QTest::qWaitForWindowExposed(&frame));
    frame.plot()->replot();
    moveTo(frame.plot(), frame.plot()->axisRect()->center());
    QVERIFY(!frame.readout().isEmpty());
    frame.setSmoothing(0.5);
    QVERIFY2(frame.readout().isEmpty(), qPrintable(frame.readout()));
  }

  void sparseReadoutTakesThePointNearestItsStep() {
    // Issue 36: "Bytes at step 286" read a sparse series at 295 though 282 was nearer: each
    // graph was looked up at the mouse, not at the step the header names.
    PlotFrame frame(QStringLiteral("Bytes"), PlotFrame::HoverReadout);
    frame.setTimeAxis(false);
    QCustomPlot* plot = frame.plot();
    QCPGraph* dense = plot->addGraph();
    dense->setName(QStringLiteral("dense"));
    for (double x : {280.0, 286.0, 300.0}) dense->addData(x, 5);
    QCPGraph* sparse = plot->addGraph();
    sparse->setName(QStringLiteral("sparse"));
    sparse->addData(282, 1);
    sparse->addData(295, 2);
    plot->xAxis->setRange(270, 310);
    plot->yAxis->setRange(0, 6);
    plot->legend->setVisible(true);
    frame.resize(600, 300);
    frame.show();
    QVERIFY(QTest::qWaitForWindowExposed(&frame));
    plot->replot();
    // 289.6: the dense point at 286 is nearest (3.6 away; the sparse 295 is 5.4 away).
    moveTo(plot, QPoint(int(plot->xAxis->coordToPixel(289.6)), plot->axisRect()->center().y()));
    const QString readout = frame.readout();
    QVERIFY2(readout.startsWith(QStringLiteral("step 286")), qPrintable(readout));
    QVERIFY2(readout.contains(QStringLiteral("sparse: 1 (step 282)")), qPrintable(readout));
  }

  void byteTicksAreWholeAndDistinct() {
    // Issue 36: an all-zero series ticked five "0 B", an empty panel "0.2 B".
    PlotFrame frame(QStringLiteral("Bytes"), PlotFrame::HoverReadout);
    frame.setYBytes(true);
    frame.resize(500, 300);
    frame.show();
    QVERIFY(QTest::qWaitForWindowExposed(&frame));
    QCustomPlot* plot = frame.plot();
    for (const QCPRange& range : {QCPRange(-1e-9, 1e-9), QCPRange(0, 1), QCPRange(0, 3),
                                  QCPRange(10, 12), QCPRange(0, 3e6)}) {
      plot->yAxis->setRange(range);
      plot->replot();
      const QVector<double> ticks = plot->yAxis->tickVector();
      const QVector<QString> labels = plot->yAxis->tickVectorLabels();
      const QString all = QStringList(labels.begin(), labels.end()).join(QLatin1Char(' '));
      QVERIFY2(!ticks.isEmpty(), qPrintable(all));
      QCOMPARE(QSet<QString>(labels.begin(), labels.end()).size(), labels.size());
      for (double tick : ticks)
        QVERIFY2(tick == std::round(tick), qPrintable(QString::number(tick) + ": " + all));
    }
  }

  void readoutKeepsNamesAndStaysInTheWidget() {
    // Issue 36: 3 modes x 9 stages, the Bytes read-out said ": 17.8 MiB (step 282)" and
    // "pipe …: 0 B", and its fourth column was cut off at the window's edge.
    LiveData data;
    PlotPanel panel(QStringLiteral("Bytes sent"), QStringLiteral("bytes"), &data);
    panel.addRule(
        {engine::series::kBytesSent, true, QStringLiteral(" fwd"), Qt::SolidLine, 1.3, {}});
    panel.addRule({engine::series::kGradBytesSent,
                   true,
                   QStringLiteral(" grad back"),
                   Qt::DashLine,
                   1.3,
                   {}});
    panel.setYBytes(true);
    panel.resize(300, 220);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    const engine::Mode modes[] = {engine::Mode::Local, engine::Mode::Pipeline,
                                  engine::Mode::Backprop};
    for (int phase = 0; phase < 3; ++phase) {
      engine::RunInfo info;
      info.mode = modes[phase];
      const int stages = modes[phase] == engine::Mode::Backprop ? 1 : 9;  // one baseline line
      info.stages.resize(size_t(stages));
      data.beginPhase(phase, info);
      std::vector<engine::MetricPoint> points;
      for (int step = 0; step <= 300; step += 15)
        for (int k = 0; k < stages; ++k) {
          points.push_back(
              {engine::series::kBytesSent, k, -1, step, step * 0.01, 1.87e7 + 1e3 * k});
          points.push_back({engine::series::kGradBytesSent, k, -1, step, step * 0.01, 0});
        }
      data.addPoints(phase, points);
    }
    panel.refresh(true);
    QCustomPlot* plot = panel.plot();
    plot->replot();
    panel.refresh(true);
    plot->replot();
    QCOMPARE(panel.graphCount(), 38);
    moveTo(plot, plot->axisRect()->center());
    QVERIFY(!panel.readout().isEmpty());
    const QStringList columns = panel.frame()->shownReadoutColumns();
    QVERIFY(columns.size() >= 2);
    QStringList drawn;
    for (const QString& column : columns) drawn << column.split(QLatin1Char('\n'));
    QCOMPARE(drawn.size(), int(panel.readout().count(QLatin1Char('\n'))) + 1);
    QVERIFY2(drawn.join(QString()) != panel.readout().remove(QLatin1Char('\n')),
             "the read-out fits whole at this size: the test tests nothing");
    QSet<QString> names;
    for (const QString& line : drawn.mid(1)) {
      const qsizetype colon = line.indexOf(QStringLiteral(": "));
      QVERIFY2(colon >= 2, qPrintable(line));
      const QString name = line.left(colon);
      // The short form whole ("pS3 fwd"), not an elided full name ("pipe …").
      QVERIFY2(!name.contains(QStringLiteral("\u2026")) && name.size() >= 3, qPrintable(line));
      QVERIFY2(!names.contains(name), qPrintable(name + QStringLiteral(" twice")));
      names.insert(name);
    }
    const QRect shown = panel.frame()->shownReadoutRect();
    QVERIFY2(plot->rect().contains(shown), qPrintable(QStringLiteral("%1,%2 %3x%4 outside %5x%6")
                                                          .arg(shown.x())
                                                          .arg(shown.y())
                                                          .arg(shown.width())
                                                          .arg(shown.height())
                                                          .arg(plot->width())
                                                          .arg(plot->height())));
  }
};

QTEST_MAIN(TestPlotPanel)
#include "test_plot_panel.moc"
