// Invalid designs are shown where they are and block the Run button, whose tooltip says why.

#include <QComboBox>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QtTest>

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
    QVERIFY2(ws.runButton()->toolTip().contains(QStringLiteral("partition.cuts[1]")),
             qPrintable(ws.runButton()->toolTip()));
    QVERIFY(ws.problemList()->item(0)->text().contains(QStringLiteral("cuts[1]")));
    QVERIFY(!doc.estimate().has_value());
    // Auto-balance makes a valid cut again.
    ws.estimatePanel()->stageCountSpin()->setValue(2);
    QTest::mouseClick(ws.estimatePanel()->balanceButton(), Qt::LeftButton);
    QVERIFY(ws.runButton()->isEnabled());
    QCOMPARE(doc.spec().partition.cuts.size(), size_t(1));
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
    QVERIFY(widths->styleSheet().contains(QStringLiteral("border")));
  }
};

QTEST_MAIN(TestDesignValidation)
#include "test_design_validation.moc"
