// The Train workspace's panels at 1366x768 with nine stages trained in three modes (issue 36
// §2.3): no plot squeezed below its minimum, no legend entry cut off, no stage label of the
// timeline drawn over its neighbour. Read from the widgets' geometry after a fake run.

#include <qcustomplot.h>
#include <QComboBox>
#include <QHelpEvent>
#include <QSignalSpy>
#include <QToolTip>
#include <QtTest>

#include "bridge/engine_controller.h"
#include "common/fake_services.h"
#include "designer/design_document.h"
#include "live/live_dashboard.h"
#include "live/plot_panel.h"
#include "live/timeline_panel.h"
#include "live/train_workspace.h"

using namespace stagewise;
using namespace stagewise::ui;

class TestTrainLayout : public QObject {
  Q_OBJECT

  static engine::ExperimentSpec nineStages(int64_t steps) {
    engine::ExperimentSpec s;
    s.name = "layout-test";
    s.dataset.kind = "synthetic";
    s.model.hidden = {16, 16, 16, 16, 16, 16, 16, 16, 16, 16};
    s.partition.cuts = {1, 2, 3, 4, 5, 6, 7, 8};  // 9 stages
    s.train.maxSteps = steps;
    s.eval.interval = 20;
    s.probe.interval = 20;
    return s;
  }

  // Every legend entry lies inside the plot's widget, and inside the legend's own box.
  static QString clippedLegend(const PlotPanel* panel) {
    QCustomPlot* plot = panel->plot();
    const QCPLegend* legend = plot->legend;
    if (!legend->visible()) return {};
    const QRect view = plot->viewport();
    for (int i = 0; i < legend->itemCount(); ++i) {
      if (!legend->item(i)) continue;  // an empty cell of a wrapped legend
      const QRect r = legend->item(i)->outerRect();
      if (!view.contains(r) || !legend->outerRect().contains(r))
        return QStringLiteral("%1: entry %2 (%3) at %4,%5 %6x%7 outside %8x%9")
            .arg(panel->title())
            .arg(i)
            .arg(qobject_cast<QCPPlottableLegendItem*>(legend->item(i))->plottable()->name())
            .arg(r.x())
            .arg(r.y())
            .arg(r.width())
            .arg(r.height())
            .arg(view.width())
            .arg(view.height());
    }
    return {};
  }

  // What the screen shows: each entry's text, in the font it is drawn in, fits the room its cell
  // leaves beside the swatch (a squeezed legend column cuts "S1 queue" to "S1 queu" while every
  // cell still lies inside the legend's box).
  static QString cutLegendText(const PlotPanel* panel) {
    const QCPLegend* legend = panel->plot()->legend;
    if (!legend->visible()) return {};
    for (int i = 0; i < legend->itemCount(); ++i) {
      auto* item = qobject_cast<QCPPlottableLegendItem*>(legend->item(i));
      if (!item) continue;
      const QString text = item->plottable()->name();
      const QFontMetrics fm(item->font());
      const int need =
          fm.boundingRect(0, 0, 0, legend->iconSize().height(), Qt::TextDontClip, text).width();
      const int room =
          item->rect().width() - legend->iconSize().width() - legend->iconTextPadding();
      if (need > room)
        return QStringLiteral("%1: \"%2\" needs %3 px, its cell leaves %4")
            .arg(panel->title(), text)
            .arg(need)
            .arg(room);
    }
    return {};
  }

  // No two entries read the same (issue 36: eliding each to its cell made nine "pipe S…").
  static QString duplicateLegend(const PlotPanel* panel) {
    const QCPLegend* legend = panel->plot()->legend;
    if (!legend->visible()) return {};
    QStringList seen;
    for (int i = 0; i < legend->itemCount(); ++i) {
      auto* item = qobject_cast<QCPPlottableLegendItem*>(legend->item(i));
      if (!item) continue;
      const QString text = item->plottable()->name();
      if (seen.contains(text))
        return QStringLiteral("%1: \"%2\" twice in the legend").arg(panel->title(), text);
      seen << text;
    }
    return {};
  }

  // The event lines' labels as drawn: each inside the plot (not cut off at its edge) and clear
  // of every other label (issue 36: three changes on a nine-stage run in the queue panel).
  static QString collidingMarkerLabels(const PlotPanel* panel) {
    QCustomPlot* plot = panel->plot();
    const QRect inside = plot->axisRect()->rect();
    std::vector<std::pair<QRectF, QString>> drawn;
    for (int i = 0; i < panel->markerCount(); ++i) {
      const QCPItemText* text = panel->markerText(i);
      if (!text->visible()) continue;
      // The box QCPItemText draws the text in (from its font's metrics, with its padding).
      const QRectF box =
          QRectF(text->topLeft->pixelPosition(), text->bottomRight->pixelPosition()).normalized();
      if (box.left() < inside.left() - 0.5 || box.right() > inside.right() + 1.5)
        return QStringLiteral("%1: \"%2\" runs over the plot's edge (%3..%4, plot %5..%6)")
            .arg(panel->title(), text->text())
            .arg(box.left())
            .arg(box.right())
            .arg(inside.left())
            .arg(inside.right());
      for (const auto& [other, name] : drawn)
        if (box.intersects(other))
          return QStringLiteral("%1: \"%2\" prints over \"%3\"")
              .arg(panel->title(), text->text(), name);
      drawn.emplace_back(box, text->text());
    }
    return {};
  }

  // The x axis's tick labels, at their drawn widths, leave a gap between neighbours.
  static QString overprintedTicks(const PlotPanel* panel) {
    QCPAxis* x = panel->plot()->xAxis;
    const QVector<double> ticks = x->tickVector();
    const QVector<QString> labels = x->tickVectorLabels();
    const QFontMetrics fm(x->tickLabelFont());
    for (int i = 1; i < ticks.size() && i < labels.size(); ++i) {
      const double gap = std::abs(x->coordToPixel(ticks[i]) - x->coordToPixel(ticks[i - 1]));
      const double need =
          (fm.horizontalAdvance(labels[i - 1]) + fm.horizontalAdvance(labels[i])) / 2.0 + 4;
      if (gap < need)
        return QStringLiteral("%1: tick labels %2 and %3 are %4 px apart, need %5")
            .arg(panel->title(), labels[i - 1], labels[i])
            .arg(gap)
            .arg(need);
    }
    return {};
  }

 private Q_SLOTS:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void nineStagesInThreeModesFit1366x768() {
    engine::FakeScript script{60, 0.001};
    EngineServices services = fakeEngineServices(script);
    DesignDocument doc(services.engine);
    EngineController controller(services);
    TrainWorkspace workspace(&controller, &doc);
    doc.load(nineStages(60));
    // 768 px less the title bar, the menu, the workspace tabs and the status bar.
    workspace.resize(1366, 680);
    workspace.show();
    QVERIFY(QTest::qWaitForWindowExposed(&workspace));
    workspace.modeCombo()->setCurrentIndex(6);  // Local, pipeline, backprop
    QSignalSpy finished(&workspace, &TrainWorkspace::runFinished);
    QVERIFY(workspace.startRun());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
    LiveDashboard* d = workspace.dashboard();
    QVERIFY2(d->queuePanel()->graphCount() >= 2 * 18,
             qPrintable(QString::number(d->queuePanel()->graphCount())));
    // The fake engine reports no bytes or memory: add what a real one would, per phase and
    // stage (pipeline sends gradients back too), so those legends are as full as on a real run.
    namespace s = engine::series;
    LiveData* data = workspace.data();
    QCOMPARE(data->phaseCount(), 3);
    for (int phase = 0; phase < 3; ++phase) {
      const engine::RunInfo* info = data->phaseInfo(phase);
      std::vector<engine::MetricPoint> points;
      for (int k = 0; k < int(info->stages.size()); ++k)
        for (int64_t step = 0; step < 60; step += 10) {
          points.push_back({s::kBytesSent, k, -1, step, step * 0.01, 1e4 * step});
          if (info->mode == engine::Mode::Pipeline)
            points.push_back({s::kGradBytesSent, k, -1, step, step * 0.01, 1e4 * step});
          points.push_back({s::kMemoryBytes, k, -1, step, step * 0.01, 2e6});
          points.push_back({s::kActivationBytes, k, -1, step, step * 0.01, 1e6});
        }
      data->addPoints(phase, points);
    }
    QVERIFY(d->bytesPanel()->graphCount() >= 3 * 9);
    QVERIFY(d->memoryPanel()->graphCount() >= 2 * 18);
    d->refreshAll(true);
    QApplication::processEvents();

    for (PlotPanel* panel : d->linePanels()) {
      panel->plot()->replot();
      const int axisHeight = panel->plot()->axisRect()->height();
      QVERIFY2(axisHeight >= PlotPanel::kMinAxisHeight,
               qPrintable(QStringLiteral("%1: %2 px of plot").arg(panel->title()).arg(axisHeight)));
      // Many series take columns of the width instead; the plot keeps a readable part of it.
      const int axisWidth = panel->plot()->axisRect()->width();
      QVERIFY2(axisWidth >= PlotPanel::kMinAxisWidth,
               qPrintable(QStringLiteral("%1: %2 px wide").arg(panel->title()).arg(axisWidth)));
      const QString clipped = clippedLegend(panel);
      QVERIFY2(clipped.isEmpty(), qPrintable(clipped));
      const QString cut = cutLegendText(panel);
      QVERIFY2(cut.isEmpty(), qPrintable(cut));
      const QString twice = duplicateLegend(panel);
      QVERIFY2(twice.isEmpty(), qPrintable(twice));
      const QString ticks = overprintedTicks(panel);
      QVERIFY2(ticks.isEmpty(), qPrintable(ticks));
    }
    // The queue panel's 38 entries read whole in their short forms ("pS3 q"), none cut to
    // "pS3 qu…" (issue 36: the walkthrough read the queue legend elided).
    const QCPLegend* queueLegend = d->queuePanel()->plot()->legend;
    for (int i = 0; i < queueLegend->itemCount(); ++i)
      if (auto* item = qobject_cast<QCPPlottableLegendItem*>(queueLegend->item(i)))
        QVERIFY2(!item->plottable()->name().contains(QChar(0x2026)),
                 qPrintable(QStringLiteral("queue legend entry \"%1\" is elided")
                                .arg(item->plottable()->name())));

    // The local phase's nine rows: each label drawn at least a text line from the next.
    d->phaseViewCombo()->setCurrentIndex(0);
    Q_EMIT d->phaseViewCombo()->activated(0);
    TimelinePanel* timeline = d->timelinePanel();
    timeline->refresh(true);
    timeline->plot()->replot();
    QCPAxis* y = timeline->plot()->yAxis;
    const auto ticker = y->ticker().dynamicCast<QCPAxisTickerText>();
    QVERIFY(ticker);
    QVERIFY(ticker->ticks().size() >= 3);
    const int lineHeight = QFontMetrics(y->tickLabelFont()).height();
    double last = -1e9;
    for (auto it = ticker->ticks().constBegin(); it != ticker->ticks().constEnd(); ++it) {
      const double pixel = y->coordToPixel(it.key());
      QVERIFY2(std::abs(pixel - last) >= lineHeight,
               qPrintable(QStringLiteral("%1 is %2 px from the label before it")
                              .arg(it.value())
                              .arg(std::abs(pixel - last))));
      last = pixel;
    }
  }

  void eventLabelsFitTheirPlotsAt1366x768() {
    // The walkthrough's nine-stage run with three changes close together, as its Train showed
    // them at 1366x768: two re-partitions and a stage's delay, close together.
    engine::FakeScript script{60, 0.001};
    EngineServices services = fakeEngineServices(script);
    DesignDocument doc(services.engine);
    EngineController controller(services);
    TrainWorkspace workspace(&controller, &doc);
    doc.load(nineStages(60));
    workspace.resize(1366, 680);
    workspace.show();
    QVERIFY(QTest::qWaitForWindowExposed(&workspace));
    workspace.modeCombo()->setCurrentIndex(0);  // Local
    QSignalSpy finished(&workspace, &TrainWorkspace::runFinished);
    QVERIFY(workspace.startRun());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
    LiveData* data = workspace.data();
    const QStringList labels = {QStringLiteral("cuts [1,2,3,4,5,6,7,8] → [1,3,4,5,6,7,8]"),
                                QStringLiteral("S1 delay_ms = 3"),
                                QStringLiteral("cuts [1,3,4,5,6,7,8] → [1,3,4,5,7,8]")};
    // Past the middle of the queue panel's 60 steps, near the end of the cosine panel's probes
    // (every 20 steps): the walkthrough's lines stood there in each.
    const int64_t steps[] = {31, 34, 38};
    for (int i = 0; i < 3; ++i) data->addMarker({0, steps[i], 0.05 * double(steps[i]), labels[i]});
    LiveDashboard* d = workspace.dashboard();
    d->refreshAll(true);
    QApplication::processEvents();
    for (PlotPanel* panel : d->linePanels()) {
      panel->plot()->replot();
      QCOMPARE(panel->markerCount(), 3);
      const QString collision = collidingMarkerLabels(panel);
      QVERIFY2(collision.isEmpty(), qPrintable(collision));
    }
    // What a label cannot show whole, its tooltip does: over its line, every panel names the
    // change in full.
    for (PlotPanel* panel : {d->queuePanel(), d->cosinePanel()}) {
      QCustomPlot* plot = panel->plot();
      int lines = 0;
      for (int i = 0; i < 3; ++i) {
        if (!plot->xAxis->range().contains(panel->markerX(i))) continue;  // no line drawn
        ++lines;
        QToolTip::hideText();
        QTRY_VERIFY(!QToolTip::isVisible());
        const QPoint at(int(std::lround(plot->xAxis->coordToPixel(panel->markerX(i)))),
                        plot->axisRect()->center().y());
        QHelpEvent help(QEvent::ToolTip, plot->mapTo(panel, at), plot->mapToGlobal(at));
        QApplication::sendEvent(panel, &help);
        QVERIFY2(QToolTip::text().contains(labels[i]),
                 qPrintable(QStringLiteral("%1: tooltip at %2 reads \"%3\"")
                                .arg(panel->title(), labels[i], QToolTip::text())));
      }
      QVERIFY2(lines > 0, qPrintable(QStringLiteral("%1: no line in %2..%3")
                                         .arg(panel->title())
                                         .arg(plot->xAxis->range().lower)
                                         .arg(plot->xAxis->range().upper)));
    }
  }
};

QTEST_MAIN(TestTrainLayout)
#include "test_train_layout.moc"
