// Model families in the designer (MLP, residual CNN, ViT presets and the family switch), the
// family-specific aux heads, and balancing by measured layer times in the background.

#include <QComboBox>
#include <QGraphicsItem>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QLocale>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QtTest>

#include "common/fake_services.h"
#include "common/spec_io.h"
#include "designer/design_document.h"
#include "designer/design_workspace.h"
#include "designer/estimate_panel.h"
#include "designer/layer_list_editor.h"
#include "designer/model_family_form.h"
#include "designer/model_panel.h"
#include "designer/network_items.h"
#include "designer/network_scene.h"
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

  void choosingGptReadsTextWithLmHeads() {
    // Issue 34: the GPT in the model box; it reads text (Debian's fortunes by default) and each
    // stage learns from the lm head; back to an image family, Fashion-MNIST and linear heads.
    DesignDocument doc{fakeEngineServices().engine};
    DesignWorkspace ws(&doc);
    doc.load(readSpecFile(QStringLiteral(":/experiments/mlp-fmnist-4stage.json")));
    QComboBox* kind = ws.modelPanel()->familyForm()->kindCombo();
    const int gpt = kind->findData(QStringLiteral("gpt"));
    QVERIFY(gpt >= 0);
    kind->setCurrentIndex(gpt);
    Q_EMIT kind->activated(gpt);
    QCOMPARE(doc.spec().model.kind, std::string("gpt"));
    QCOMPARE(doc.spec().dataset.kind, std::string("text"));
    QCOMPARE(doc.spec().stageDefaults.auxHead, std::string("lm"));
    // The corpus may be missing on a build machine; the MLP's third cut lies past the GPT's
    // six layers (drawn red, one click removes it, as after any smaller model).
    for (const auto& p : doc.problems())
      QVERIFY2(p.field.rfind("dataset", 0) == 0 || p.field.rfind("partition.cuts", 0) == 0,
               qPrintable(QString::fromStdString(p.field + " " + p.message)));
    const int mlp = kind->findData(QStringLiteral("mlp"));
    kind->setCurrentIndex(mlp);
    Q_EMIT kind->activated(mlp);
    QCOMPARE(doc.spec().dataset.kind, std::string("fashion-mnist"));
    QCOMPARE(doc.spec().stageDefaults.auxHead, std::string("linear"));
    // The GPT preset is among the presets and names itself in the box.
    doc.load(readSpecFile(QStringLiteral(":/experiments/gpt-text-4stage.json")));
    QCOMPARE(ws.modelPanel()->presetCombo()->currentText(), QStringLiteral("gpt-text-4stage"));
    QCOMPARE(kind->currentData().toString(), QStringLiteral("gpt"));
  }

  void editAsLayersKeepsTheNetworkAndItsCuts() {
    // Issue 33 §1: *Edit as layers* turns a family into its layer list: the same layers, the
    // same cuts, one undo step.
    DesignDocument doc{fakeEngineServices().engine};
    DesignWorkspace ws(&doc);
    doc.load(readSpecFile(QStringLiteral(":/experiments/mlp-fmnist-4stage.json")));
    ModelFamilyForm* form = ws.modelPanel()->familyForm();
    const int layers = doc.layerCount();
    const auto params = doc.plan().totalParams();
    const auto cuts = doc.spec().partition.cuts;
    QTest::mouseClick(form->editAsLayersButton(), Qt::LeftButton);
    QCOMPARE(doc.spec().model.kind, std::string("layers"));
    QCOMPARE(doc.layerCount(), layers);
    QCOMPARE(doc.plan().totalParams(), params);
    QCOMPARE(doc.spec().partition.cuts, cuts);
    QVERIFY(doc.canRun());
    QCOMPARE(form->kindCombo()->currentData().toString(), QStringLiteral("layers"));
    QCOMPARE(form->layerEditor()->list()->count(), layers);
    // The preset's name says where the list came from (not "layers-fmnist-4stage").
    QCOMPARE(doc.spec().name, std::string("mlp-layers-fmnist-4stage"));
    {
      // It follows the cuts like a preset's name: a fifth stage makes it "…-5stage".
      engine::ExperimentSpec more = doc.spec();
      more.partition.cuts.push_back(more.partition.cuts.back() + 1);
      doc.edit(more, QStringLiteral("Cut"));
      QCOMPARE(doc.spec().name, std::string("mlp-layers-fmnist-5stage"));
      doc.undoStack()->undo();
      QCOMPARE(doc.spec().name, std::string("mlp-layers-fmnist-4stage"));
    }
    doc.undoStack()->undo();
    QCOMPARE(doc.spec().model.kind, std::string("mlp"));
    QCOMPARE(doc.spec().name, std::string("mlp-fmnist-4stage"));
    // Choosing "Layer list" in the model box does the same.
    QComboBox* kind = form->kindCombo();
    const int list = kind->findData(QStringLiteral("layers"));
    kind->setCurrentIndex(list);
    Q_EMIT kind->activated(list);
    QCOMPARE(doc.spec().model.kind, std::string("layers"));
    QCOMPARE(doc.layerCount(), layers);
  }

  void editAsLayersDropsTheFamilysKeys() {
    // The family's widths and depths are in the entries now; left in the spec they would read
    // as settings that still apply. model.init applies to a layer list too: it stays.
    DesignDocument doc{fakeEngineServices().engine};
    DesignWorkspace ws(&doc);
    doc.load(readSpecFile(QStringLiteral(":/experiments/cnn-fmnist-4stage.json")));
    engine::ExperimentSpec narrow = doc.spec();
    narrow.name = "my-cnn";
    narrow.model.channels = {8, 16};
    narrow.model.blocks = {1, 1};
    narrow.model.activation = "gelu";
    narrow.model.init = "kaiming";
    narrow.partition.cuts = {2};
    narrow.stages.clear();
    doc.edit(narrow, QStringLiteral("Narrow"));
    QVERIFY2(doc.modelError().empty(), doc.modelError().message.c_str());
    const int layers = doc.layerCount();
    const auto params = doc.plan().totalParams();
    QTest::mouseClick(ws.modelPanel()->familyForm()->editAsLayersButton(), Qt::LeftButton);
    const engine::ModelSpec& m = doc.spec().model;
    const engine::ModelSpec defaults;
    QCOMPARE(m.kind, std::string("layers"));
    QCOMPARE(m.channels, defaults.channels);
    QCOMPARE(m.blocks, defaults.blocks);
    QCOMPARE(m.activation, defaults.activation);
    QCOMPARE(m.hidden, defaults.hidden);
    QCOMPARE(m.init, std::string("kaiming"));
    QCOMPARE(doc.layerCount(), layers);
    QCOMPARE(doc.plan().totalParams(), params);
    QCOMPARE(doc.spec().name, std::string("my-cnn"));  // the user's own name is kept
  }

  void aBadLayerLeavesTheLayersBeforeItDrawn() {
    // One invalid layer does not empty the canvas: the layers before it are planned and drawn,
    // it is drawn after them, outlined, with its message; the layers after it are not.
    DesignDocument doc{fakeEngineServices().engine};
    DesignWorkspace ws(&doc);
    doc.load(readSpecFile(QStringLiteral(":/experiments/layers-fmnist-4stage.json")));
    LayerListEditor* editor = ws.modelPanel()->familyForm()->layerEditor();
    const auto badBlocks = [&] {
      QList<BlockItem*> out;
      for (QGraphicsItem* item : ws.scene()->items())
        if (auto* block = dynamic_cast<BlockItem*>(item); block && block->isInvalid()) out << block;
      return out;
    };
    QVERIFY(badBlocks().isEmpty());
    editor->list()->setCurrentRow(13);  // flatten
    editor->addLayer(QStringLiteral("conv2d"));
    QVERIFY(!doc.canRun());
    QCOMPARE(doc.invalidLayer(), 14);
    QCOMPARE(doc.layerCount(), 14);  // the fourteen before it
    QCOMPARE(doc.plan().layers[13].outShape, (std::vector<int64_t>{64 * 7 * 7}));
    QVERIFY(QString::fromStdString(doc.modelError().field).startsWith("model.layers.14"));
    const auto bad = badBlocks();
    QCOMPARE(bad.size(), qsizetype(1));
    QVERIFY2(bad[0]->title().contains(QStringLiteral("conv2d")), qPrintable(bad[0]->title()));
    QVERIFY2(bad[0]->title().contains(QStringLiteral("15")), qPrintable(bad[0]->title()));
    QCOMPARE(bad[0]->lines().value(0), QString::fromStdString(doc.modelError().message));
    int drawn = 0;
    for (QGraphicsItem* item : ws.scene()->items())
      if (auto* block = dynamic_cast<BlockItem*>(item);
          block && block->title() == QString::fromStdString(doc.plan().layers[0].name))
        ++drawn;
    QCOMPARE(drawn, 1);
    // No "model output · classifier" after a partly planned model, and the header does not give
    // the planned part's counts as the network's (walkthrough).
    for (QGraphicsItem* item : ws.scene()->items())
      if (auto* block = dynamic_cast<BlockItem*>(item))
        QVERIFY(block->title() != QStringLiteral("model output"));
    QVERIFY2(ws.summaryLabel()->text().contains(QStringLiteral("layer 15 does not fit")),
             qPrintable(ws.summaryLabel()->text()));
    // The palette shows the planned layers' shapes, and the bad one marked.
    QVERIFY(editor->list()->item(13)->text().contains(QStringLiteral("→ 3136")));
    QVERIFY(editor->list()->item(14)->text().startsWith(QStringLiteral("⚠")));
    // Fixed (undone): the whole network again, nothing marked.
    doc.undoStack()->undo();
    QCOMPARE(doc.invalidLayer(), -1);
    QCOMPARE(doc.layerCount(), 18);
    QVERIFY(badBlocks().isEmpty());
    QVERIFY(doc.canRun());
    // The last layer planned but not giving the classes: every layer drawn, the last marked.
    engine::ExperimentSpec wide = doc.spec();
    wide.model.layers.back().out = 7;
    doc.edit(wide, QStringLiteral("Wrong classes"));
    QCOMPARE(doc.layerCount(), 18);
    QCOMPARE(doc.invalidLayer(), 17);
    QCOMPARE(badBlocks().size(), qsizetype(1));
  }

  void theLayerPaletteEditsWithUndo() {
    // Issue 33 §1: add from a list, reorder, delete, edit a layer's parameters; shapes and
    // parameters follow; an invalid layer is outlined with its message; undo and redo.
    DesignDocument doc{fakeEngineServices().engine};
    DesignWorkspace ws(&doc);
    doc.load(readSpecFile(QStringLiteral(":/experiments/layers-fmnist-4stage.json")));
    ModelFamilyForm* form = ws.modelPanel()->familyForm();
    QCOMPARE(form->kindCombo()->currentData().toString(), QStringLiteral("layers"));
    LayerListEditor* editor = form->layerEditor();
    const int n = doc.layerCount();
    QCOMPARE(editor->list()->count(), n);
    QCOMPARE(doc.spec().partition.cuts, (std::vector<int>{4, 7, 10}));
    QVERIFY(editor->list()->item(0)->text().contains(QStringLiteral("16×28×28")));

    // Add a dropout after layer 4 (the first of stage 2): it joins stage 2, later cuts move.
    editor->list()->setCurrentRow(4);
    editor->addLayer(QStringLiteral("dropout"));
    QCOMPARE(doc.layerCount(), n + 1);
    QCOMPARE(doc.spec().model.layers[5].type, std::string("dropout"));
    QCOMPARE(doc.spec().partition.cuts, (std::vector<int>{4, 8, 11}));
    QCOMPARE(editor->list()->currentRow(), 5);
    QVERIFY(editor->dropoutSpin()->isVisibleTo(editor));
    doc.undoStack()->undo();
    QCOMPARE(doc.layerCount(), n);
    QCOMPARE(doc.spec().partition.cuts, (std::vector<int>{4, 7, 10}));
    doc.undoStack()->redo();
    QCOMPARE(doc.layerCount(), n + 1);
    doc.undoStack()->undo();

    // Edit the hidden linear layer's width: its parameters and the next layer's follow.
    const int hidden = 14;  // linear out 128
    QCOMPARE(doc.spec().model.layers[size_t(hidden)].type, std::string("linear"));
    editor->list()->setCurrentRow(hidden);
    QSpinBox* out = editor->fieldSpin(QStringLiteral("out"));
    QVERIFY(out);
    QCOMPARE(out->value(), 128);
    const auto params = doc.plan().totalParams();
    out->setValue(64);
    QCOMPARE(doc.spec().model.layers[size_t(hidden)].out, int64_t(64));
    QVERIFY(doc.plan().totalParams() < params);
    QVERIFY(editor->list()->item(hidden)->text().contains(QStringLiteral("→ 64")));

    // A conv2d after the flatten cannot take its input: the layer is outlined with the message.
    editor->list()->setCurrentRow(13);  // flatten
    editor->addLayer(QStringLiteral("conv2d"));
    QVERIFY(!doc.canRun());
    QVERIFY2(editor->list()->item(14)->text().startsWith(QStringLiteral("⚠")),
             qPrintable(editor->list()->item(14)->text()));
    QVERIFY2(editor->list()->item(14)->toolTip().contains(QStringLiteral("model.layers.14")),
             qPrintable(editor->list()->item(14)->toolTip()));
    // Delete it: runnable again.
    editor->list()->setCurrentRow(14);
    QTest::mouseClick(editor->removeButton(), Qt::LeftButton);
    QVERIFY(doc.canRun());
    QCOMPARE(doc.layerCount(), n);

    // Move the dropout (16) up before the relu (15), then back down.
    editor->list()->setCurrentRow(16);
    QTest::mouseClick(editor->upButton(), Qt::LeftButton);
    QCOMPARE(doc.spec().model.layers[15].type, std::string("dropout"));
    QCOMPARE(editor->list()->currentRow(), 15);
    QTest::mouseClick(editor->downButton(), Qt::LeftButton);
    QCOMPARE(doc.spec().model.layers[16].type, std::string("dropout"));

    // The JSON field edits any field; bad JSON is outlined and changes nothing.
    editor->list()->setCurrentRow(16);
    const int steps = doc.undoStack()->count();
    editor->jsonEdit()->setText(QStringLiteral("{\"type\": \"dropout\", \"q\": 1}"));
    QTest::keyClick(editor->jsonEdit(), Qt::Key_Return);
    QCOMPARE(doc.undoStack()->count(), steps);
    QVERIFY(!editor->jsonEdit()->toolTip().isEmpty());
    // The error is in sight under the field, not only in its tooltip.
    QVERIFY(editor->jsonErrorLabel()->isVisibleTo(editor));
    QVERIFY2(editor->jsonErrorLabel()->text().contains(QStringLiteral("q")),
             qPrintable(editor->jsonErrorLabel()->text()));
    QCOMPARE(editor->jsonErrorLabel()->text(), editor->jsonEdit()->toolTip());
    editor->jsonEdit()->setText(
        QStringLiteral("{\"type\": \"dropout\", \"p\": 0.25, \"name\": \"drop\"}"));
    QTest::keyClick(editor->jsonEdit(), Qt::Key_Return);
    QCOMPARE(doc.spec().model.layers[16].p, 0.25);
    QCOMPARE(doc.spec().model.layers[16].name, std::string("drop"));
    QVERIFY(!editor->jsonErrorLabel()->isVisibleTo(editor));
  }

  void anAuxHeadLargerThanTheModelIsWarnedOf() {
    // Issue 36 §3: a 6.4 M mlp head on a 0.7 M model got no warning.
    DesignDocument doc{fakeEngineServices().engine};
    DesignWorkspace ws(&doc);
    doc.load(readSpecFile(QStringLiteral(":/experiments/mlp-fmnist-4stage.json")));
    QLabel* note = ws.estimatePanel()->noteLabel();
    QVERIFY2(!note->text().contains(QStringLiteral("aux_head")), qPrintable(note->text()));
    auto spec = doc.spec();
    spec.stages.resize(size_t(spec.stageCount()));
    spec.stages[0].auxHead = "mlp";
    spec.stages[0].auxHidden = 40000;  // 20 M parameters on a 2.2 M model
    doc.edit(spec, QStringLiteral("big head"));
    QVERIFY2(note->text().contains(QStringLiteral("stages.0.aux_head")), qPrintable(note->text()));
    QVERIFY(note->text().contains(QStringLiteral("over 4x the whole model's")));
  }

  // The estimate lists every pipeline schedule's planned bubble and activations, the design's
  // own marked, and follows the design: 4 micro-batches on 4 stages of 2 chunks per worker.
  void theEstimateComparesThePipelineSchedules() {
    DesignDocument doc{fakeEngineServices().engine};
    DesignWorkspace ws(&doc);
    doc.load(readSpecFile(QStringLiteral(":/experiments/mlp-fmnist-4stage.json")));
    QLabel* label = ws.estimatePanel()->schedulesLabel();
    const QStringList lines = label->text().split(QLatin1Char('\n'));
    QCOMPARE(lines.size(), 5);  // four schedules and where the times come from
    QVERIFY2(lines[0].startsWith(QStringLiteral("▸ gpipe: bubble")), qPrintable(lines[0]));
    // The 4 stages are the chunks of 2 workers: the line says so (it plans half the workers).
    QVERIFY2(lines[2].startsWith(QStringLiteral("interleaved (e.g. 2 worker(s) x 2 chunks): bubble")),
             qPrintable(lines[2]));
    QVERIFY2(lines[3].startsWith(QStringLiteral("zb-h1: bubble")), qPrintable(lines[3]));
    QVERIFY(lines[4].contains(QStringLiteral("FLOPs")));
    QVERIFY2(lines[4].startsWith(QStringLiteral("(planned bubble: the schedule alone")),
             qPrintable(lines[4]));
    auto spec = doc.spec();
    spec.pipeline.schedule = "1f1b";
    doc.edit(spec, QStringLiteral("schedule"));
    QVERIFY2(label->text().contains(QStringLiteral("▸ 1f1b")), qPrintable(label->text()));
    QVERIFY(!label->text().contains(QStringLiteral("▸ gpipe")));
    // The design's own chunks (issue 37's walkthrough: 2 chunks were planned whatever it said),
    // and an example marked as one where they do not apply.
    QVERIFY2(lines[2].contains(QStringLiteral("e.g.")), qPrintable(lines[2]));
    spec.pipeline.schedule = "interleaved";
    spec.pipeline.chunks = 4;
    doc.edit(spec, QStringLiteral("chunks"));
    QVERIFY2(label->text().contains(QStringLiteral("▸ interleaved (1 worker(s) x 4 chunks): bubble")),
             qPrintable(label->text()));
    QVERIFY(!label->text().contains(QStringLiteral("e.g.")));
    spec.pipeline.recompute = true;
    doc.edit(spec, QStringLiteral("recompute"));
    QVERIFY2(label->text().contains(QStringLiteral("with recomputation")), qPrintable(label->text()));
    spec.pipeline.schedule = "1f1b";
    spec.pipeline.chunks = 1;
    spec.pipeline.recompute = false;
    // 3 stages cannot make workers of 2 chunks: interleaved has no plan.
    spec.partition.cuts.pop_back();
    doc.edit(spec, QStringLiteral("cut"));
    QVERIFY2(label->text().contains(QStringLiteral("interleaved (e.g. 2 chunks): —")),
             qPrintable(label->text()));
  }

  void theRightColumnIsReadableAt1366x768() {
    // Issue 36 walkthrough: at 1366 px the Design's right column was wider than its room, so
    // the stage inspector's fields and the estimate's lines ("▸ gpipe: bubble 47%, activations
    // 12…") were cut at the window's edge, with no scroll bar to reach them. Every label of the
    // inspector and the estimate shows its whole text inside the column (wrapped, or elided
    // with the whole in its tooltip), and every field ends inside the column.
    DesignDocument doc{fakeEngineServices().engine};
    DesignWorkspace ws(&doc);
    ws.resize(1366, 680);
    ws.show();
    QVERIFY(QTest::qWaitForWindowExposed(&ws));
    for (const char* preset : {":/experiments/mlp-fmnist-4stage.json", ""}) {
      engine::ExperimentSpec spec =
          readSpecFile(QStringLiteral(":/experiments/mlp-fmnist-4stage.json"));
      if (!*preset) {  // the walkthrough's nine stages, 256 wide
        spec.model.hidden = {256, 256, 256, 256, 256, 256, 256, 256};
        spec.partition.cuts = {1, 2, 3, 4, 5, 6, 7, 8};
        spec.stages.clear();
      }
      doc.load(spec);
      // Wrapped labels settle their heights over two layout passes.
      for (int pass = 0; pass < 3; ++pass) QApplication::processEvents();
      auto* inspector = ws.findChild<StageInspector*>();
      QVERIFY(inspector);
      QScrollArea* column = nullptr;
      for (QWidget* w = inspector; w && !column; w = w->parentWidget())
        column = qobject_cast<QScrollArea*>(w);
      QVERIFY(column);
      QWidget* viewport = column->viewport();
      // At 1366 px the column's text wraps: no sideways scrolling to read it.
      QVERIFY(!column->horizontalScrollBar()->isVisible());
      for (QWidget* part :
           {static_cast<QWidget*>(inspector), static_cast<QWidget*>(ws.estimatePanel())}) {
        for (QWidget* w : part->findChildren<QWidget*>()) {
          if (!w->isVisibleTo(&ws) || qobject_cast<QScrollBar*>(w)) continue;
          if (w->parentWidget() && !w->parentWidget()->isVisibleTo(&ws)) continue;
          const QRect at(w->mapTo(viewport, QPoint(0, 0)), w->size());
          QVERIFY2(at.right() <= viewport->width(),
                   qPrintable(
                       QStringLiteral("%1 \"%2\" ends at %3 px of a %4 px column")
                           .arg(QString::fromLatin1(w->metaObject()->className()), w->objectName())
                           .arg(at.right())
                           .arg(viewport->width())));
          auto* label = qobject_cast<QLabel*>(w);
          if (!label || label->text().isEmpty() || label->textFormat() == Qt::RichText) continue;
          const int room = label->contentsRect().width();
          if (label->wordWrap()) {
            QVERIFY2(label->heightForWidth(label->width()) <= label->height() + 1,
                     qPrintable(QStringLiteral("\"%1\" needs %2 px of height, has %3")
                                    .arg(label->text())
                                    .arg(label->heightForWidth(label->width()))
                                    .arg(label->height())));
            // A word longer than the line is cut mid-word by the wrap.
            for (const QString& word :
                 label->text().split(QRegularExpression(QStringLiteral("\\s+"))))
              QVERIFY2(
                  label->fontMetrics().horizontalAdvance(word) <= room,
                  qPrintable(QStringLiteral("\"%1\" is wider than %2 px").arg(word).arg(room)));
            continue;
          }
          for (const QString& line : label->text().split(QLatin1Char('\n'))) {
            const bool fits = label->fontMetrics().horizontalAdvance(line) <= room;
            QVERIFY2(fits || (line.contains(QChar(0x2026)) && !label->toolTip().isEmpty()),
                     qPrintable(QStringLiteral("\"%1\" needs %2 px, its label is %3")
                                    .arg(line)
                                    .arg(label->fontMetrics().horizontalAdvance(line))
                                    .arg(room)));
          }
        }
      }
    }
  }

  void thePresetBoxAndTheNameFollowTheDesign() {
    // Issue 36 §3: the Preset box always said "Choose a preset…", and the name stayed
    // "mlp-fmnist-4stage" after switching to the CNN.
    DesignDocument doc{fakeEngineServices().engine};
    DesignWorkspace ws(&doc);
    QComboBox* preset = ws.modelPanel()->presetCombo();
    doc.load(readSpecFile(QStringLiteral(":/experiments/mlp-fmnist-4stage.json")));
    QCOMPARE(preset->currentText(), QStringLiteral("mlp-fmnist-4stage"));
    QComboBox* kind = ws.modelPanel()->familyForm()->kindCombo();
    const int cnn = kind->findData(QStringLiteral("cnn"));
    kind->setCurrentIndex(cnn);
    Q_EMIT kind->activated(cnn);
    QCOMPARE(doc.spec().name, std::string("cnn-fmnist-4stage"));
    QCOMPARE(preset->currentIndex(), 0);  // the design is no preset now
    QVERIFY(preset->currentText().startsWith(QStringLiteral("Custom")));
    doc.undoStack()->undo();  // the rename was part of the family's undo step
    QCOMPARE(doc.spec().name, std::string("mlp-fmnist-4stage"));
    QCOMPARE(preset->currentText(), QStringLiteral("mlp-fmnist-4stage"));
    // A cut removed: the stage count in the name follows.
    auto spec = doc.spec();
    spec.partition.cuts = {2, 4};
    doc.edit(spec, QStringLiteral("cut"));
    QCOMPARE(doc.spec().name, std::string("mlp-fmnist-3stage"));
    // A name of the user's own is kept.
    spec = doc.spec();
    spec.name = "my baseline";
    doc.edit(spec, QStringLiteral("rename"));
    kind->setCurrentIndex(cnn);
    Q_EMIT kind->activated(cnn);
    QCOMPARE(doc.spec().model.kind, std::string("cnn"));
    QCOMPARE(doc.spec().name, std::string("my baseline"));
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
    // The throughput model's idle share, told apart from the schedules' planned bubble.
    QVERIFY2(
        text.contains(QStringLiteral("bubble")) && text.contains(QStringLiteral("on these cores")),
        qPrintable(text));
    // A new cut: the measurement no longer fits.
    doc.edit(withCuts(doc.spec(), {1}), QStringLiteral("cut"));
    QVERIFY(!panel->methodEstimate());
    QVERIFY(panel->methodsLabel()->text().contains(QStringLiteral("measure again")));
  }
};

QTEST_MAIN(TestDesignModels)
#include "test_design_models.moc"
