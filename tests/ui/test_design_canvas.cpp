// Cutting, joining and moving stage boundaries on the canvas with the mouse, and undo/redo.

#include <qcustomplot.h>
#include <QLabel>
#include <QMouseEvent>
#include <QPushButton>
#include <QSpinBox>
#include <QtTest>

#include "designer/design_document.h"
#include "designer/design_workspace.h"
#include "designer/estimate_panel.h"
#include "designer/network_scene.h"
#include "designer/network_view.h"
#include "designer/stage_inspector.h"

using namespace stagewise;
using namespace stagewise::ui;

class TestDesignCanvas : public QObject {
  Q_OBJECT

  static engine::ExperimentSpec smallSpec() {
    engine::ExperimentSpec spec;
    spec.name = "canvas";
    spec.dataset.kind = "synthetic";
    spec.model.hidden = {64, 64, 64, 64, 64};  // 6 layers: fc1..fc5 + classifier
    spec.partition.cuts = {2};
    return spec;
  }

  struct Fixture {
    DesignDocument doc{EngineDescription{}};
    DesignWorkspace workspace{&doc};
    Fixture() {
      doc.load(smallSpec());
      workspace.resize(1400, 900);
      workspace.show();
      QVERIFY(QTest::qWaitForWindowExposed(&workspace));
      workspace.view()->resetZoom();
      workspace.view()->centerOn(workspace.scene()->gapCenter(3));
    }
    QPoint at(const QPointF& scenePos) const { return workspace.view()->mapFromScene(scenePos); }
    QWidget* viewport() const { return workspace.view()->viewport(); }
    void click(const QPointF& scenePos) {
      QTest::mouseClick(viewport(), Qt::LeftButton, {}, at(scenePos));
    }
  };

 private Q_SLOTS:
  void clickingAGapCutsAndClickingACutJoins() {
    Fixture f;
    QCOMPARE(f.doc.spec().partition.cuts, std::vector<int>({2}));
    f.click(f.workspace.scene()->gapCenter(4));
    QCOMPARE(f.doc.spec().partition.cuts, std::vector<int>({2, 4}));
    QCOMPARE(f.doc.spec().stageCount(), 3);
    QCOMPARE(f.doc.partition().stages.size(), size_t(3));
    f.click(f.workspace.scene()->gapCenter(2));
    QCOMPARE(f.doc.spec().partition.cuts, std::vector<int>({4}));
    QCOMPARE(f.doc.undoStack()->count(), 2);
    // A click on a layer block selects its stage instead of cutting.
    f.click(f.workspace.scene()->layerCenter(5));
    QCOMPARE(f.doc.selectedStage(), 1);
    QCOMPARE(f.doc.spec().partition.cuts, std::vector<int>({4}));
  }

  void undoAndRedoRestoreEveryCut() {
    Fixture f;
    f.click(f.workspace.scene()->gapCenter(4));
    f.click(f.workspace.scene()->gapCenter(1));
    QCOMPARE(f.doc.spec().partition.cuts, std::vector<int>({1, 2, 4}));
    QVERIFY(f.doc.isModified());
    f.doc.undoStack()->undo();
    QCOMPARE(f.doc.spec().partition.cuts, std::vector<int>({2, 4}));
    f.doc.undoStack()->undo();
    QCOMPARE(f.doc.spec().partition.cuts, std::vector<int>({2}));
    QVERIFY(!f.doc.isModified());
    f.doc.undoStack()->redo();
    QCOMPARE(f.doc.spec().partition.cuts, std::vector<int>({2, 4}));
    // The canvas follows the document: the band for stage 3 is drawn again.
    QCOMPARE(f.doc.partition().stages.size(), size_t(3));
  }

  void stageSettingsFollowASplit() {
    Fixture f;
    auto spec = f.doc.spec();
    spec.stages = {{}, {}};
    spec.stages[1].threads = 3;
    f.doc.edit(spec, QStringLiteral("threads"));
    f.click(f.workspace.scene()->gapCenter(4));  // splits stage 2 (layers 2..5)
    QCOMPARE(f.doc.spec().stageSettings(1).threads, 3);
    QCOMPARE(f.doc.spec().stageSettings(2).threads, 3);
    QCOMPARE(f.doc.spec().stageSettings(0).threads, 1);
  }

  void stageRanksSurviveEdits() {
    // A spec written for several processes pins stages to ranks; the inspector does not show
    // ranks, so its edits (and Apply to all) must keep them, and a split stage's halves both
    // keep its rank.
    Fixture f;
    auto spec = f.doc.spec();
    spec.stages = {{}, {}};
    spec.stages[0].rank = 1;
    spec.stages[1].rank = 0;
    f.doc.load(spec);
    f.doc.selectStage(1);
    auto* threads = f.workspace.inspector()->findChild<QSpinBox*>();
    QVERIFY(threads);
    threads->setValue(2);
    QCOMPARE(f.doc.spec().stageSettings(1).threads, 2);
    QCOMPARE(f.doc.spec().stageSettings(1).rank, 0);
    QCOMPARE(f.doc.spec().stageSettings(0).rank, 1);
    auto* applyAll = f.workspace.inspector()->findChild<QPushButton*>();
    QVERIFY(applyAll);
    applyAll->click();
    QCOMPARE(f.doc.spec().stageSettings(0).threads, 2);
    QCOMPARE(f.doc.spec().stageSettings(0).rank, 1);
    QCOMPARE(f.doc.spec().stageSettings(1).rank, 0);
    f.click(f.workspace.scene()->gapCenter(4));  // splits stage 2
    QCOMPARE(f.doc.spec().stageCount(), 3);
    QCOMPARE(f.doc.spec().stageSettings(2).rank, 0);
    QCOMPARE(f.doc.spec().stageSettings(0).rank, 1);
  }

  void draggingACutMovesIt() {
    Fixture f;
    f.click(f.workspace.scene()->gapCenter(4));  // cuts {2, 4}
    auto* scene = f.workspace.scene();
    const QPoint from = f.at(scene->cutGrip(0));
    const QPoint to = f.at(scene->gapCenter(3));
    QTest::mousePress(f.viewport(), Qt::LeftButton, {}, from);
    // Past the next cut: the move is clamped so no stage gets empty.
    QTest::mouseMove(f.viewport(), f.at(scene->gapCenter(5)));
    QTest::mouseMove(f.viewport(), to);
    QTest::mouseRelease(f.viewport(), Qt::LeftButton, {}, to);
    QCOMPARE(f.doc.spec().partition.cuts, std::vector<int>({3, 4}));
    f.doc.undoStack()->undo();
    QCOMPARE(f.doc.spec().partition.cuts, std::vector<int>({2, 4}));
  }

  void estimateFollowsTheCut() {
    Fixture f;
    const double before = f.doc.estimate()->speedup;
    f.click(f.workspace.scene()->gapCenter(4));
    QVERIFY(f.doc.estimate().has_value());
    QCOMPARE(f.doc.estimate()->stageShare.size(), size_t(3));
    QCOMPARE(f.doc.estimate()->boundaryBytes.size(), size_t(2));
    QVERIFY(f.doc.estimate()->speedup != before);
    // Auto-balance re-cuts into the requested number of stages as one undo step.
    f.workspace.estimatePanel()->stageCountSpin()->setValue(2);
    const int steps = f.doc.undoStack()->count();
    QTest::mouseClick(f.workspace.estimatePanel()->balanceButton(), Qt::LeftButton);
    QCOMPARE(f.doc.spec().partition.cuts.size(), size_t(1));
    QCOMPARE(f.doc.undoStack()->count(), steps + 1);
    // Issue 36 §3: pressed again on the cut it chose, it says the cut is already balanced (and
    // adds no undo step) instead of doing nothing.
    QSignalSpy said(f.workspace.estimatePanel(), &EstimatePanel::message);
    QTest::mouseClick(f.workspace.estimatePanel()->balanceButton(), Qt::LeftButton);
    QCOMPARE(f.doc.undoStack()->count(), steps + 1);
    QCOMPARE(said.count(), 1);
    QVERIFY2(said.at(0).at(0).toString().contains(QStringLiteral("already the most balanced")),
             qPrintable(said.at(0).at(0).toString()));
    QVERIFY(said.at(0).at(0).toString().contains(QStringLiteral("% of the work")));
  }

  void workShareChartShowsTheStagesThereAre() {
    // Issue 36 §2.4: the work-share chart kept S5 after a cut was removed.
    Fixture f;
    EstimatePanel* panel = f.workspace.estimatePanel();
    auto* plot = qobject_cast<QCustomPlot*>(panel->chartWidget());
    QVERIFY(plot);
    const auto labels = [plot] {
      QStringList out;
      if (auto text = plot->xAxis->ticker().dynamicCast<QCPAxisTickerText>())
        for (const QString& l : text->ticks()) out << l;
      return out;
    };
    auto spec = f.doc.spec();
    spec.model.hidden = {64, 64, 64, 64, 64, 64, 64};
    spec.partition.cuts = {2, 3, 4, 6};
    f.doc.edit(spec, QStringLiteral("five stages"));
    QCOMPARE(labels().size(), 5);
    QCOMPARE(plot->plottableCount(), 5);
    spec.partition.cuts = {2, 3, 4};
    f.doc.edit(spec, QStringLiteral("remove a cut"));
    QCOMPARE(labels(), (QStringList{"S1", "S2", "S3", "S4"}));
    QCOMPARE(plot->plottableCount(), 4);
    spec.train.batchSize = 0;  // invalid: no estimate, and no stage labels without bars
    f.doc.edit(spec, QStringLiteral("invalid"));
    QCOMPARE(plot->plottableCount(), 0);
    QVERIFY2(labels().isEmpty(), qPrintable(labels().join(QLatin1Char(' '))));
  }

  void coreBoundEstimateStillTellsCutsApart() {
    // Four one-thread stages on 2 cores: the cores bound the speed-up, so it is the same for
    // an even and an uneven cut, but the stage balance is the cut's and differs, and the note
    // says what bounds it and what more cores would give, with no warning sign.
    Fixture f;
    f.doc.setEstimateCores(2);
    auto spec = f.doc.spec();
    spec.model.hidden = {64, 64, 64, 64, 64, 64, 64};  // 8 layers of equal work (but the last)
    spec.partition.cuts = {2, 4, 6};
    f.doc.edit(spec, QStringLiteral("even"));
    EstimatePanel* panel = f.workspace.estimatePanel();
    const QString even = panel->balanceLabel()->text();
    QVERIFY2(panel->noteLabel()->text().contains(QStringLiteral("cores bound the speed-up")),
             qPrintable(panel->noteLabel()->text()));
    QVERIFY(!panel->noteLabel()->text().contains(QStringLiteral("⚠")));
    QVERIFY(panel->noteLabel()->text().contains(QStringLiteral("With 4 cores")));
    spec.partition.cuts = {4, 5, 6};
    f.doc.edit(spec, QStringLiteral("uneven"));
    const QString uneven = panel->balanceLabel()->text();
    QVERIFY2(even != uneven, qPrintable(even + QStringLiteral(" vs ") + uneven));
    QVERIFY(uneven.chopped(1).toInt() < even.chopped(1).toInt());
    QVERIFY(uneven.chopped(1).toInt() < 100);
  }
};

QTEST_MAIN(TestDesignCanvas)
#include "test_design_canvas.moc"
