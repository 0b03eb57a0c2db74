// Invalid designs are shown where they are and block the Run button, whose tooltip says why.

#include <QApplication>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTemporaryDir>
#include <QTableWidget>
#include <QtTest>
#include <cmath>

#include "common/invalid_outline.h"
#include "designer/network_scene.h"
#include "designer/network_view.h"

#include "designer/design_document.h"
#include "designer/design_workspace.h"
#include "designer/estimate_panel.h"
#include "designer/model_panel.h"
#include "designer/stage_inspector.h"

using namespace stagewise;
using namespace stagewise::ui;

class TestDesignValidation : public QObject {
  Q_OBJECT

  static engine::ExperimentSpec validSpec() {
    engine::ExperimentSpec spec;
    spec.name = "validation";
    spec.dataset.kind = "synthetic";
    spec.model.hidden = {64, 64, 64, 64};  // 5 layers
    spec.partition.cuts = {1, 3};
    return spec;
  }

 private Q_SLOTS:
  void missingDeviceBlocksRunUntilFixedInTheInspector() {
    DesignDocument doc{EngineDescription{}};
    DesignWorkspace ws(&doc);
    ws.show();
    auto spec = validSpec();
    spec.stages.resize(3);
    spec.stages[1].device = "cuda:1";
    doc.load(spec);
    QVERIFY(!ws.runButton()->isEnabled());
    QVERIFY2(ws.runButton()->toolTip().contains(QStringLiteral("stages[1].device")),
             qPrintable(ws.runButton()->toolTip()));
    QVERIFY(ws.runButton()->toolTip().contains(QStringLiteral("does not exist")));
    QCOMPARE(doc.problemsForStage(1).size(), size_t(1));

    // The inspector offers only devices that exist: cuda:0 is greyed, with the reason.
    doc.selectStage(1);
    QComboBox* devices = ws.inspector()->deviceCombo();
    auto* model = qobject_cast<QStandardItemModel*>(devices->model());
    const int cuda0 = devices->findData(QStringLiteral("cuda:0"));
    QVERIFY(cuda0 >= 0);
    QVERIFY(!model->item(cuda0)->isEnabled());
    QVERIFY(!model->item(cuda0)->toolTip().isEmpty());
    QCOMPARE(devices->currentData().toString(), QStringLiteral("cuda:1"));

    // Choosing the CPU, as a user would, unblocks the run.
    const int cpu = devices->findData(QStringLiteral("cpu"));
    devices->setCurrentIndex(cpu);
    Q_EMIT devices->activated(cpu);
    QCOMPARE(doc.spec().stageSettings(1).device, std::string("cpu"));
    QVERIFY(ws.runButton()->isEnabled());
    QVERIFY(!ws.runButton()->toolTip().contains(QStringLiteral("Cannot run")));
    doc.undoStack()->undo();
    QVERIFY(!ws.runButton()->isEnabled());
  }

  void shrinkingTheModelInvalidatesACut() {
    DesignDocument doc{EngineDescription{}};
    DesignWorkspace ws(&doc);
    ws.show();
    doc.load(validSpec());
    QVERIFY(ws.runButton()->isEnabled());
    QLineEdit* widths = ws.modelPanel()->widthsEdit();
    widths->setText(QStringLiteral("64, 64"));  // 3 layers: cut at layer 3 no longer fits
    Q_EMIT widths->editingFinished();
    QCOMPARE(doc.layerCount(), 3);
    QVERIFY(!ws.runButton()->isEnabled());
    // One numbering for users: cut 2 (the second), after layer 3 of 3, with no 0-based JSON
    // path beside it; the path is in the item's tooltip.
    QVERIFY2(ws.runButton()->toolTip().contains(QStringLiteral("cut 2 would lie after layer 3")),
             qPrintable(ws.runButton()->toolTip()));
    QVERIFY(!ws.problemList()->item(0)->text().contains(QStringLiteral("cuts[1]")));
    QVERIFY(ws.problemList()->item(0)->toolTip().contains(QStringLiteral("partition.cuts[1]")));
    QVERIFY(!doc.estimate().has_value());
    // Auto-balance makes a valid cut again.
    ws.estimatePanel()->stageCountSpin()->setValue(2);
    QTest::mouseClick(ws.estimatePanel()->balanceButton(), Qt::LeftButton);
    QVERIFY(ws.runButton()->isEnabled());
    QCOMPARE(doc.spec().partition.cuts.size(), size_t(1));
  }

  void anInvalidSpecGetsNoEstimate() {
    // Issue 36 §1.6: batch size 0 is an error, not an estimate as if the batch were 1.
    DesignDocument doc{EngineDescription{}};
    DesignWorkspace ws(&doc);
    auto spec = validSpec();
    doc.load(spec);
    QVERIFY(doc.estimate().has_value());
    QVERIFY(ws.estimatePanel()->speedupLabel()->text().endsWith(QStringLiteral("×")));
    spec.train.batchSize = 0;
    doc.load(spec);
    QVERIFY(!ws.runButton()->isEnabled());
    QVERIFY(!doc.estimate().has_value());
    QCOMPARE(ws.estimatePanel()->speedupLabel()->text(), QStringLiteral("—"));
    QVERIFY(ws.estimatePanel()->noteLabel()->text().startsWith(QStringLiteral("No estimate")));
    QCOMPARE(ws.estimatePanel()->bytesTable()->rowCount(), 0);
  }

  void badValuesAreBlockedWithTheField() {
    DesignDocument doc{EngineDescription{}};
    DesignWorkspace ws(&doc);
    doc.load(validSpec());
    QLineEdit* widths = ws.modelPanel()->widthsEdit();
    widths->setText(QStringLiteral("64, 0, 64, 64"));
    Q_EMIT widths->editingFinished();
    QVERIFY(!ws.runButton()->isEnabled());
    QVERIFY(ws.runButton()->toolTip().contains(QStringLiteral("model.hidden[1]")));
    // Text that is not a width list is refused in place and changes nothing.
    const auto before = doc.spec().model.hidden;
    widths->setText(QStringLiteral("wide"));
    Q_EMIT widths->editingFinished();
    QCOMPARE(doc.spec().model.hidden, before);
    QVERIFY(hasInvalidOutline(widths));

    // From a design that runs: text that does not parse blocks Run (it would train the last good
    // widths) and says why, until it is fixed.
    widths->setText(QStringLiteral("64, 64, 64, 64"));
    Q_EMIT widths->editingFinished();
    QVERIFY2(ws.runButton()->isEnabled(), qPrintable(ws.runButton()->toolTip()));
    widths->setText(QStringLiteral("512, abc, -3, 0"));
    Q_EMIT widths->editingFinished();
    QVERIFY(hasInvalidOutline(widths));
    QVERIFY(!ws.runButton()->isEnabled());
    QVERIFY2(ws.runButton()->toolTip().contains(QStringLiteral("512, abc, -3, 0")),
             qPrintable(ws.runButton()->toolTip()));
    QCOMPARE(widths->text(), QStringLiteral("512, abc, -3, 0"));  // the text stays to fix
    widths->setText(QStringLiteral("64, 32, 64, 64"));
    Q_EMIT widths->editingFinished();
    QVERIFY2(ws.runButton()->isEnabled(), qPrintable(ws.runButton()->toolTip()));
    QVERIFY(!hasInvalidOutline(widths));
    QCOMPARE(doc.spec().model.hidden, std::vector<int>({64, 32, 64, 64}));
  }

  void anInvalidCutIsRemovedByClickingIt() {
    // Widths 512, 256 leave cuts [2, 4, 6] on a 3-layer model: cut 1 is valid, 2 and 3 are not.
    DesignDocument doc{EngineDescription{}};
    DesignWorkspace ws(&doc);
    auto spec = validSpec();
    spec.model.hidden = {64, 64, 64, 64, 64, 64};
    spec.partition.cuts = {2, 4, 6};
    doc.load(spec);
    ws.resize(1400, 900);
    ws.show();
    QVERIFY(QTest::qWaitForWindowExposed(&ws));
    QLineEdit* widths = ws.modelPanel()->widthsEdit();
    widths->setText(QStringLiteral("512, 256"));
    Q_EMIT widths->editingFinished();
    QCOMPARE(doc.layerCount(), 3);
    NetworkScene* scene = ws.scene();
    QVERIFY(scene->invalidCutPos(0).isNull());
    const QPointF second = scene->invalidCutPos(1), third = scene->invalidCutPos(2);
    QVERIFY(!second.isNull() && !third.isNull());
    // Drawn apart from the valid cut and from each other.
    QVERIFY(std::abs(second.y() - scene->gapCenter(2).y()) >= NetworkScene::kInvalidRowHeight - 1);
    QVERIFY(std::abs(third.y() - second.y()) >= NetworkScene::kInvalidRowHeight - 1);
    ws.view()->resetZoom();
    ws.view()->centerOn(second);
    QTest::mouseClick(ws.view()->viewport(), Qt::LeftButton, {}, ws.view()->mapFromScene(third));
    QCOMPARE(doc.spec().partition.cuts, std::vector<int>({2, 4}));
    ws.view()->centerOn(scene->invalidCutPos(1));
    QTest::mouseClick(ws.view()->viewport(), Qt::LeftButton, {},
                      ws.view()->mapFromScene(scene->invalidCutPos(1)));
    QCOMPARE(doc.spec().partition.cuts, std::vector<int>({2}));  // the valid cut stays
    QVERIFY(ws.runButton()->isEnabled());
    QVERIFY(doc.undoStack()->undoText().contains(QStringLiteral("invalid cut 2")));
  }

  void aMissingDatasetFolderIsOutlined() {
    DesignDocument doc{EngineDescription{}};
    DesignWorkspace ws(&doc);
    ws.show();
    auto spec = validSpec();
    spec.dataset.kind = "idx";
    spec.dataset.path = "/nonexistent/stagewise-data";
    doc.load(spec);
    QLineEdit* path = ws.modelPanel()->pathEdit();
    QVERIFY(hasInvalidOutline(path));
    QVERIFY2(path->toolTip().contains(QStringLiteral("dataset folder does not exist")),
             qPrintable(path->toolTip()));
    // An empty folder is named once, as the field to fill in, with no ": :" message.
    spec.dataset.path.clear();
    doc.load(spec);
    QVERIFY(hasInvalidOutline(path));
    int pathProblems = 0;
    for (const auto& p : doc.problems()) {
      QVERIFY2(p.message.find(": :") == std::string::npos && p.message.rfind(": ", 0) != 0,
               p.message.c_str());
      pathProblems += p.field == "dataset.path";
    }
    QCOMPARE(pathProblems, 1);
    spec.dataset.kind = "synthetic";
    doc.load(spec);
    QVERIFY(!hasInvalidOutline(path));
  }

  void anUnusableImageFolderIsOutlinedWithItsFix() {
    QTemporaryDir dir;
    QDir(dir.path()).mkpath(QStringLiteral("train/cat"));
    QDir(dir.path()).mkpath(QStringLiteral("test/cat"));
    DesignDocument doc{EngineDescription{}};
    DesignWorkspace ws(&doc);
    ws.show();
    auto spec = validSpec();
    spec.dataset.kind = "image_folder";
    spec.dataset.path = dir.path().toStdString();
    doc.load(spec);
    QLineEdit* path = ws.modelPanel()->pathEdit();
    QVERIFY(path->isEnabled());
    QVERIFY(hasInvalidOutline(path));
    QVERIFY2(path->toolTip().contains(QStringLiteral("no images at all")), qPrintable(path->toolTip()));
    spec.dataset.path.clear();  // an empty folder field is named once, by validation
    doc.load(spec);
    int pathProblems = 0;
    for (const auto& p : doc.problems()) pathProblems += p.field == "dataset.path";
    QCOMPARE(pathProblems, 1);
  }

  void theWidthsFieldKeepsItsWidth() {
    DesignDocument doc{EngineDescription{}};
    DesignWorkspace ws(&doc);
    doc.load(validSpec());
    ws.resize(1400, 900);
    ws.show();
    QVERIFY(QTest::qWaitForWindowExposed(&ws));
    QLineEdit* widths = ws.modelPanel()->widthsEdit();
    QApplication::processEvents();
    const int before = widths->width();
    QVERIFY(before > 100);
    auto spec = doc.spec();
    spec.partition.cuts = {1, 2, 3};  // a cut, as on the canvas
    doc.edit(spec, QStringLiteral("cut"));
    QApplication::processEvents();
    QCOMPARE(widths->width(), before);
  }
};

QTEST_MAIN(TestDesignValidation)
#include "test_design_validation.moc"
