// Model families in the designer (MLP, residual CNN, ViT presets and the family switch), the
// family-specific aux heads, and balancing by measured layer times in the background.

#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QtTest>

#include "common/fake_services.h"
#include "common/spec_io.h"
#include "designer/design_document.h"
#include "designer/design_workspace.h"
#include "designer/estimate_panel.h"
#include "designer/model_family_form.h"
#include "designer/model_panel.h"
#include "designer/spec_edits.h"
#include "designer/stage_inspector.h"
#include "stagewise/engine/partition.h"

using namespace stagewise;
using namespace stagewise::ui;

class TestDesignModels : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void everyPresetLoadsAndIsRunnable() {
    const auto presets = builtinPresets();
    QVERIFY2(presets.size() >= 3, "the cnn and vit presets are compiled in");
    for (const auto& preset : presets) {
      DesignDocument doc{fakeEngineServices().engine};
      doc.load(readSpecFile(preset.path));
      QVERIFY2(doc.layerCount() > 2, qPrintable(preset.path));
      // The dataset may be missing on a build machine; everything else must be valid.
      for (const auto& p : doc.problems())
        QVERIFY2(p.field == "dataset",
                 qPrintable(preset.path + QStringLiteral(": ") +
                            QString::fromStdString(p.field + " " + p.message)));
      QVERIFY(doc.estimate().has_value() || doc.inputShapeGuessed());
    }
  }

  void switchingFamilyRebuildsTheChainAndFixesAuxHeads() {
    DesignDocument doc{fakeEngineServices().engine};
    DesignWorkspace ws(&doc);
    doc.load(readSpecFile(QStringLiteral(":/experiments/vit-fmnist-4stage.json")));
    QCOMPARE(doc.spec().stageDefaults.auxHead, std::string("token"));
    const int vitLayers = doc.layerCount();
    // The inspector offers the token head for a ViT and greys the conv head.
    auto* heads = ws.inspector()->findChildren<QComboBox*>().at(1);
    auto* model = qobject_cast<QStandardItemModel*>(heads->model());
    QVERIFY(model->item(heads->findData(QStringLiteral("token")))->isEnabled());
    QVERIFY(!model->item(heads->findData(QStringLiteral("conv")))->isEnabled());

    QComboBox* kind = ws.modelPanel()->familyForm()->kindCombo();
    const int cnn = kind->findData(QStringLiteral("cnn"));
    kind->setCurrentIndex(cnn);
    Q_EMIT kind->activated(cnn);
    QCOMPARE(doc.spec().model.kind, std::string("cnn"));
    // The token head does not fit a CNN: it fell back to linear in the same undo step.
    QCOMPARE(doc.spec().stageDefaults.auxHead, std::string("linear"));
    QVERIFY(doc.layerCount() != vitLayers);
    QVERIFY(model->item(heads->findData(QStringLiteral("conv")))->isEnabled());
    QLineEdit* channels = ws.modelPanel()->familyForm()->channelsEdit();
    QVERIFY(channels->isVisibleTo(&ws) || !ws.isVisible());
    doc.undoStack()->undo();
    QCOMPARE(doc.spec().model.kind, std::string("vit"));
    QCOMPARE(doc.spec().stageDefaults.auxHead, std::string("token"));
  }

  void balancesByMeasuredTimeInTheBackground() {
    EngineServices services = fakeEngineServices();
    DesignDocument doc{services.engine};
    DesignWorkspace ws(&doc);
    EstimatePanel* panel = ws.estimatePanel();
    engine::ExperimentSpec spec;
    spec.name = "measured";
    spec.dataset.kind = "synthetic";
    spec.model.hidden = {64, 64, 64, 64, 64, 64};
    spec.partition.cuts = {1};
    doc.load(spec);
    QComboBox* strategies = panel->strategyCombo();
    const int measured = strategies->findText(QStringLiteral("by measured time"));
    auto* model = qobject_cast<QStandardItemModel*>(strategies->model());
    // Without a profiler the choice is greyed with the reason.
    QVERIFY(!model->item(measured)->isEnabled());
    QVERIFY(!model->item(measured)->toolTip().isEmpty());
    panel->setProfiler(services.profileLayers);
    QVERIFY(model->item(measured)->isEnabled());
    strategies->setCurrentIndex(measured);
    panel->stageCountSpin()->setValue(3);
    QTest::mouseClick(panel->balanceButton(), Qt::LeftButton);
    QVERIFY(panel->isProfiling());
    QVERIFY(!panel->balanceButton()->isEnabled());
    QTRY_VERIFY_WITH_TIMEOUT(!panel->isProfiling(), 5000);
    const auto expected = engine::balanceCuts(services.profileLayers(doc.spec(), {}), 3);
    QCOMPARE(doc.spec().partition.cuts, expected);
    // The measured times differ from FLOPs, and so does the cut.
    QVERIFY(expected != engine::balanceCuts(engine::flopCosts(doc.plan()), 3));
    QVERIFY(doc.undoStack()->undoText().contains(QStringLiteral("measured")));
  }

  /// "Measure" times each method in the background and shows the predicted samples/s, which
  /// equal engine::estimateMethods on that profile; editing the design makes them stale.
  void measuresTheMethodsInTheBackground() {
    EngineServices services = fakeEngineServices();
    DesignDocument doc{services.engine};
    DesignWorkspace ws(&doc);
    EstimatePanel* panel = ws.estimatePanel();
    engine::ExperimentSpec spec;
    spec.dataset.kind = "synthetic";
    spec.model.hidden = {64, 64, 64};
    spec.partition.cuts = {2};
    doc.load(spec);
    QVERIFY(!panel->measureButton()->isEnabled());  // no profiler: nothing to measure with
    QVERIFY(panel->methodsLabel()->text().contains(QStringLiteral("needs")));
    panel->setMethodProfiler(services.profileMethods);
    QVERIFY(panel->measureButton()->isEnabled());
    QTest::mouseClick(panel->measureButton(), Qt::LeftButton);
    QVERIFY(panel->isProfiling());
    QTRY_VERIFY_WITH_TIMEOUT(!panel->isProfiling(), 5000);
    const auto shown = panel->methodEstimate();
    QVERIFY(shown);
    const auto expected = engine::estimateMethods(services.profileMethods(doc.spec(), {}),
                                                  doc.partition(), doc.estimateCores());
    QCOMPARE(shown->localSamplesPerSec, expected.localSamplesPerSec);
    QCOMPARE(shown->pipelineSamplesPerSec, expected.pipelineSamplesPerSec);
    QVERIFY(expected.localSamplesPerSec > 0);
    const QString text = panel->methodsLabel()->text();
    QVERIFY2(text.contains(QLocale().toString(expected.backpropSamplesPerSec, 'f', 0)),
             qPrintable(text));
    QVERIFY(text.contains(QStringLiteral("bubble")));
    // A new cut: the measurement no longer fits.
    doc.edit(withCuts(doc.spec(), {1}), QStringLiteral("cut"));
    QVERIFY(!panel->methodEstimate());
    QVERIFY(panel->methodsLabel()->text().contains(QStringLiteral("measure again")));
  }
};

QTEST_MAIN(TestDesignModels)
#include "test_design_models.moc"
