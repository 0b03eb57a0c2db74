// The Design workspace's training, evaluation, probe and checkpoint settings: every
// user-facing spec key has an editor, each edit is one undo step, and a value the spec
// validation rejects is outlined where it is edited and blocks the run.

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QWheelEvent>
#include <QtTest>

#include "common/invalid_outline.h"

#include "common/fake_services.h"
#include "common/u64_spin_box.h"
#include "designer/design_document.h"
#include "designer/design_workspace.h"
#include "designer/model_family_form.h"
#include "designer/model_panel.h"
#include "designer/training_form.h"

using namespace stagewise;
using namespace stagewise::ui;

class TestTrainingForm : public QObject {
  Q_OBJECT

  static engine::ExperimentSpec baseSpec() {
    engine::ExperimentSpec s;
    s.name = "form-test";
    s.dataset.kind = "synthetic";
    s.model.hidden = {32, 32, 32};
    s.partition.cuts = {2};
    s.train.maxSteps = 100;
    return s;
  }

  static void leafKeys(const QJsonObject& object, const QString& prefix, QStringList& out) {
    for (auto it = object.begin(); it != object.end(); ++it) {
      const QString key = prefix.isEmpty() ? it.key() : prefix + QLatin1Char('.') + it.key();
      if (it.value().isObject())
        leafKeys(it.value().toObject(), key, out);
      else
        out << key;
    }
  }

 private Q_SLOTS:
  void everyUserFacingKeyHasAnEditor() {
    DesignDocument doc{fakeEngineServices().engine};
    DesignWorkspace ws(&doc);
    doc.load(baseSpec());
    TrainingForm* form = ws.modelPanel()->trainingForm();
    // Where the keys the training form does not edit are edited (or why they are not).
    const QStringList elsewhere = {
        QStringLiteral("name"),        // model panel
        QStringLiteral("dataset."),    // model panel (kind, folder, sizes, limits)
        QStringLiteral("model."),      // model family form
        QStringLiteral("partition."),  // the canvas and auto-balance
        QStringLiteral("stage_defaults."),
        QStringLiteral("stages"),        // stage inspector
        QStringLiteral("mode"),          // the Train workspace's mode box
        QStringLiteral("debug."),        // fault hooks for tests, not for users
        QStringLiteral("distributed."),  // multi-process runs are launched by the CLI
    };
    engine::ExperimentSpec full = baseSpec();
    full.checkpoint.dir = "/tmp/x";  // every optional group present
    full.measure.budget = 0.1;
    full.dataset.randomLabels = true;
    full.pipeline.chunks = 2;  // written only when not the default
    full.pipeline.recompute = true;
    QStringList keys;
    leafKeys(QJsonDocument::fromJson(QByteArray::fromStdString(engine::specToJson(full))).object(),
             {}, keys);
    QVERIFY(keys.size() > 30);
    QStringList missing;
    for (const QString& key : keys) {
      bool handled = form->editorFor(key.toStdString()) != nullptr;
      for (const QString& prefix : elsewhere) handled |= key.startsWith(prefix);
      if (!handled) missing << key;
    }
    QVERIFY2(missing.isEmpty(),
             qPrintable(QStringLiteral("no editor for: ") + missing.join(QStringLiteral(", "))));
    // The dataset sizes the model panel used to lack.
    auto* panel = ws.modelPanel();
    panel->testLimitSpin()->setValue(500);
    QCOMPARE(doc.spec().dataset.limitTest, int64_t(500));
    panel->syntheticTrainSpin()->setValue(2000);
    panel->syntheticTestSpin()->setValue(300);
    QCOMPARE(doc.spec().dataset.syntheticTrain, int64_t(2000));
    QCOMPARE(doc.spec().dataset.syntheticTest, int64_t(300));
    doc.undoStack()->undo();
    QCOMPARE(doc.spec().dataset.syntheticTest, int64_t(1024));
  }

  void editsAreUndoSteps() {
    DesignDocument doc{fakeEngineServices().engine};
    DesignWorkspace ws(&doc);
    ws.show();
    doc.load(baseSpec());
    TrainingForm* form = ws.modelPanel()->trainingForm();
    auto spin = [&](const char* key) { return qobject_cast<QSpinBox*>(form->editorFor(key)); };
    auto real = [&](const char* key) {
      return qobject_cast<QDoubleSpinBox*>(form->editorFor(key));
    };

    real("train.weight_decay")->setValue(0.0005);
    QCOMPARE(doc.spec().train.weightDecay, 0.0005);
    spin("train.backprop_threads")->setValue(2);
    QCOMPARE(doc.spec().train.backpropThreads, 2);
    QCOMPARE(spin("train.backprop_threads")->text(), QStringLiteral("2"));
    spin("eval.max_samples")->setValue(2000);
    QCOMPARE(doc.spec().eval.maxSamples, int64_t(2000));
    spin("probe.batch_size")->setValue(128);
    QCOMPARE(doc.spec().probe.batchSize, 128);
    spin("checkpoint.interval")->setValue(50);
    QCOMPARE(doc.spec().checkpoint.interval, int64_t(50));
    // The budget is shown in percent and kept as a share; 0 is "no budget".
    QCOMPARE(real("measure.budget")->value(), 5.0);
    real("measure.budget")->setValue(10);
    QCOMPARE(doc.spec().measure.budget, 0.1);
    real("measure.budget")->setValue(0);
    QCOMPARE(real("measure.budget")->text(), QStringLiteral("no budget"));
    QCOMPARE(doc.spec().measure.budget, 0.0);
    auto* randomLabels = qobject_cast<QCheckBox*>(form->editorFor("dataset.random_labels"));
    QVERIFY(randomLabels);
    randomLabels->setChecked(true);
    QVERIFY(doc.spec().dataset.randomLabels);
    doc.undoStack()->undo();
    QVERIFY(!doc.spec().dataset.randomLabels);

    // Typed, as a user would: "never" is a probe interval of -1, "at the end" is 0.
    QSpinBox* probe = spin("probe.interval");
    probe->selectAll();
    QTest::keyClicks(probe, QStringLiteral("never"));
    QTest::keyClick(probe, Qt::Key_Return);
    QCOMPARE(doc.spec().probe.interval, int64_t(-1));
    QVERIFY(!spin("probe.batch_size")->isEnabled());  // no probes: no probe batch
    probe->setValue(0);
    QCOMPARE(probe->text(), QStringLiteral("at the end"));
    QCOMPARE(doc.spec().probe.interval, int64_t(0));

    auto* dir = qobject_cast<QLineEdit*>(form->editorFor("checkpoint.dir"));
    dir->setText(QStringLiteral("/tmp/stagewise-ckpt"));
    Q_EMIT dir->editingFinished();
    QCOMPARE(doc.spec().checkpoint.dir, std::string("/tmp/stagewise-ckpt"));
    auto* atStop = qobject_cast<QCheckBox*>(form->editorFor("checkpoint.at_stop"));
    QVERIFY(atStop->isEnabled());
    atStop->click();
    QVERIFY(!doc.spec().checkpoint.atStop);

    // Stepping one spin box five times is one undo step.
    auto* seed = qobject_cast<U64SpinBox*>(form->editorFor("train.seed"));
    QVERIFY(seed);
    const int undoBefore = doc.undoStack()->count();
    for (int i = 0; i < 5; ++i) seed->stepUp();
    QCOMPARE(doc.spec().train.seed, uint64_t(6));
    QCOMPARE(doc.undoStack()->count(), undoBefore + 1);
    doc.undoStack()->undo();
    QCOMPARE(doc.spec().train.seed, uint64_t(1));
    QCOMPARE(seed->value(), quint64(1));

    // Undo walks back through every edit above, and the editors follow.
    while (doc.undoStack()->canUndo()) doc.undoStack()->undo();
    QCOMPARE(engine::specToJson(doc.spec()), engine::specToJson(baseSpec()));
    QCOMPARE(real("train.weight_decay")->value(), 0.0);
    QCOMPARE(spin("train.backprop_threads")->text(), QStringLiteral("one per core"));
    QCOMPARE(dir->text(), QString());
    QVERIFY(atStop->isChecked());
    QVERIFY(!atStop->isEnabled());  // checkpointing is off again
  }

  void scrollingTheColumnDoesNotEditIt() {
    DesignDocument doc{fakeEngineServices().engine};
    DesignWorkspace ws(&doc);
    ws.resize(1400, 700);  // short enough for the settings column to scroll
    ws.show();
    QVERIFY(QTest::qWaitForWindowExposed(&ws));
    doc.load(baseSpec());
    auto* seed =
        qobject_cast<U64SpinBox*>(ws.modelPanel()->trainingForm()->editorFor("train.seed"));
    QScrollArea* column = nullptr;
    for (auto* area : ws.findChildren<QScrollArea*>())
      if (area->widget() == ws.modelPanel()) column = area;
    QVERIFY(column);
    QVERIFY(column->verticalScrollBar()->maximum() > 0);
    const int scrolled = column->verticalScrollBar()->value();
    auto wheel = [&](QWidget* target) {
      const QPointF at(target->width() / 2.0, target->height() / 2.0);
      QWheelEvent event(at, target->mapToGlobal(at), QPoint(), QPoint(0, -120), Qt::NoButton,
                        Qt::NoModifier, Qt::NoScrollPhase, false);
      QApplication::sendEvent(target, &event);
    };
    wheel(seed);
    QCOMPARE(doc.spec().train.seed, uint64_t(1));              // not edited ...
    QVERIFY(column->verticalScrollBar()->value() > scrolled);  // ... the column scrolled
    QCOMPARE(doc.undoStack()->count(), 0);
    // Once the field has the focus (clicked or tabbed into), the wheel steps it.
    seed->setFocus();
    QTRY_VERIFY(seed->hasFocus());
    wheel(seed);
    QCOMPARE(doc.spec().train.seed, uint64_t(0));
  }

  // Seeds are 64-bit: a spec's seed above 2^31 is shown and kept as it is, steps from there, and
  // the largest one can be typed; a number past 2^64 - 1 is refused, not wrapped.
  void seedsAreSixtyFourBit() {
    DesignDocument doc{fakeEngineServices().engine};
    TrainingForm form(&doc);
    engine::ExperimentSpec spec = baseSpec();
    spec.train.seed = (uint64_t(1) << 40) + 7;
    doc.load(spec);
    auto* seed = qobject_cast<U64SpinBox*>(form.editorFor("train.seed"));
    QVERIFY(seed);
    QCOMPARE(seed->text(), QStringLiteral("1099511627783"));
    QCOMPARE(doc.undoStack()->count(), 0);  // showing it edited nothing
    seed->stepUp();
    QCOMPARE(doc.spec().train.seed, (uint64_t(1) << 40) + 8);
    // Typed and confirmed with Enter, as a user does.
    seed->selectAll();
    QTest::keyClicks(seed, QStringLiteral("18446744073709551615"));
    QTest::keyClick(seed, Qt::Key_Return);
    QCOMPARE(doc.spec().train.seed, std::numeric_limits<uint64_t>::max());
    QVERIFY(!(seed->stepEnabled() & QAbstractSpinBox::StepUpEnabled));
    seed->stepUp();  // saturates, does not wrap to 0
    QCOMPARE(seed->value(), std::numeric_limits<quint64>::max());
    // A letter typed into it is refused; the value stays.
    QTest::keyClicks(seed, QStringLiteral("x"));
    QTest::keyClick(seed, Qt::Key_Return);
    QCOMPARE(doc.spec().train.seed, std::numeric_limits<uint64_t>::max());
    // Wide enough to show every digit of the largest seed.
    QVERIFY(seed->sizeHint().width() > seed->fontMetrics().horizontalAdvance(seed->text()));
    int pos = 0;
    QString tooBig = QStringLiteral("18446744073709551616");
    QCOMPARE(seed->validate(tooBig, pos), QValidator::Invalid);
    QString letters = QStringLiteral("12a");
    QCOMPARE(seed->validate(letters, pos), QValidator::Invalid);
    // Edits of one field merge into one undo step, back to the seed as loaded.
    doc.undoStack()->undo();
    QCOMPARE(seed->value(), quint64((uint64_t(1) << 40) + 7));
    QCOMPARE(doc.spec().train.seed, (uint64_t(1) << 40) + 7);
  }

  void editsOfDifferentFormsStaySeparateUndoSteps() {
    DesignDocument doc{fakeEngineServices().engine};
    DesignWorkspace ws(&doc);
    auto spec = baseSpec();
    spec.checkpoint.dir = "/tmp/x";  // the checkbox is enabled
    doc.load(spec);
    // A model family change, then a training setting: two steps, each undone on its own.
    QComboBox* kind = ws.modelPanel()->familyForm()->kindCombo();
    const int cnn = kind->findData(QStringLiteral("cnn"));
    kind->setCurrentIndex(cnn);
    Q_EMIT kind->activated(cnn);
    auto* atStop =
        qobject_cast<QCheckBox*>(ws.modelPanel()->trainingForm()->editorFor("checkpoint.at_stop"));
    atStop->click();
    QCOMPARE(doc.undoStack()->count(), 2);
    doc.undoStack()->undo();
    QVERIFY(doc.spec().checkpoint.atStop);
    QCOMPARE(doc.spec().model.kind, std::string("cnn"));
  }

  void momentumIsForSgdOnly() {
    DesignDocument doc{fakeEngineServices().engine};
    DesignWorkspace ws(&doc);
    doc.load(baseSpec());
    TrainingForm* form = ws.modelPanel()->trainingForm();
    auto* momentum = qobject_cast<QDoubleSpinBox*>(form->editorFor("train.momentum"));
    auto* optimizer = qobject_cast<QComboBox*>(form->editorFor("train.optimizer"));
    QVERIFY(!momentum->isEnabled());
    const int sgd = optimizer->findData(QStringLiteral("sgd"));
    optimizer->setCurrentIndex(sgd);
    Q_EMIT optimizer->activated(sgd);
    QCOMPARE(doc.spec().train.optimizer, std::string("sgd"));
    QVERIFY(momentum->isEnabled());
    momentum->setValue(0.5);
    QCOMPARE(doc.spec().train.momentum, 0.5);
    // The editor cannot go outside [0, 1): the engine's limit.
    momentum->setValue(1.5);
    QVERIFY(doc.spec().train.momentum < 1.0);
  }

  // The four schedules are offered; chunks per worker only matter to interleaved.
  void chunksAreForInterleavedOnly() {
    DesignDocument doc{fakeEngineServices().engine};
    DesignWorkspace ws(&doc);
    doc.load(baseSpec());
    TrainingForm* form = ws.modelPanel()->trainingForm();
    auto* schedule = qobject_cast<QComboBox*>(form->editorFor("pipeline.schedule"));
    auto* chunks = qobject_cast<QSpinBox*>(form->editorFor("pipeline.chunks"));
    auto* recompute = qobject_cast<QCheckBox*>(form->editorFor("pipeline.recompute"));
    QVERIFY(schedule && chunks && recompute);
    QVERIFY(schedule->findData(QStringLiteral("zb-h1")) >= 0);
    const int interleaved = schedule->findData(QStringLiteral("interleaved"));
    QVERIFY(interleaved >= 0);
    QVERIFY(!chunks->isEnabled());
    schedule->setCurrentIndex(interleaved);
    Q_EMIT schedule->activated(interleaved);
    QCOMPARE(doc.spec().pipeline.schedule, std::string("interleaved"));
    QVERIFY(chunks->isEnabled());
    chunks->setValue(2);
    QCOMPARE(doc.spec().pipeline.chunks, 2);
    recompute->setChecked(true);
    QVERIFY(doc.spec().pipeline.recompute);
    // Leaving interleaved sets chunks back to 1 in the same undoable edit, and disables them.
    const int gpipe = schedule->findData(QStringLiteral("gpipe"));
    schedule->setCurrentIndex(gpipe);
    Q_EMIT schedule->activated(gpipe);
    QCOMPARE(doc.spec().pipeline.schedule, std::string("gpipe"));
    QCOMPARE(doc.spec().pipeline.chunks, 1);
    QVERIFY(!chunks->isEnabled());
    QVERIFY(doc.canRun());
    doc.undoStack()->undo();
    QCOMPARE(doc.spec().pipeline.schedule, std::string("interleaved"));
    QCOMPARE(doc.spec().pipeline.chunks, 2);
    QVERIFY(chunks->isEnabled());
  }

  // The spec's mode is local (Train picks the mode): what a pipeline run of it would refuse
  // shows on the pipeline fields and in Design's list, which then does not say "Ready to run".
  void pipelineRefusalsShowWhileTheModeIsLocal() {
    DesignDocument doc{fakeEngineServices().engine};
    DesignWorkspace ws(&doc);
    auto spec = baseSpec();
    spec.partition.cuts = {1, 2, 3};  // 4 stages
    spec.pipeline.schedule = "interleaved";
    spec.pipeline.chunks = 3;  // 4 stages do not split into workers of 3 chunks
    QVERIFY(spec.mode == engine::Mode::Local);
    doc.load(spec);
    QVERIFY(doc.canRun());  // a local run does not read it
    QCOMPARE(int(doc.pipelineWarnings().size()), 1);
    QCOMPARE(doc.pipelineWarnings()[0].field, std::string("pipeline.chunks"));
    QStringList items;
    for (int i = 0; i < ws.problemList()->count(); ++i) items << ws.problemList()->item(i)->text();
    QVERIFY2(!items.contains(QStringLiteral("✓ Ready to run")), qPrintable(items.join('\n')));
    QVERIFY2(items.join('\n').contains(QStringLiteral("Pipelined backprop only: pipeline.chunks")),
             qPrintable(items.join('\n')));
    QWidget* chunks = ws.modelPanel()->trainingForm()->editorFor("pipeline.chunks");
    QVERIFY(chunks->toolTip().contains(QStringLiteral("pipelined backprop only")));
    // Fixed: ready again.
    auto fixed = doc.spec();
    fixed.pipeline.chunks = 2;
    doc.edit(fixed, QStringLiteral("chunks"));
    QVERIFY(doc.pipelineWarnings().empty());
    QCOMPARE(ws.problemList()->item(0)->text(), QStringLiteral("✓ Ready to run"));
    // In pipeline mode it is a problem that blocks the run, as before.
    spec.mode = engine::Mode::Pipeline;
    doc.load(spec);
    QVERIFY(!doc.canRun());
    QVERIFY(doc.pipelineWarnings().empty());
  }

  void invalidValuesAreShownWhereTheyAreEdited() {
    DesignDocument doc{fakeEngineServices().engine};
    DesignWorkspace ws(&doc);
    // A spec file may hold values the editors cannot: they are outlined, and Run is blocked.
    auto spec = baseSpec();
    spec.train.momentum = 1.5;
    spec.probe.batchSize = 0;
    doc.load(spec);
    TrainingForm* form = ws.modelPanel()->trainingForm();
    QWidget* momentum = form->editorFor("train.momentum");
    QWidget* probeBatch = form->editorFor("probe.batch_size");
    QVERIFY(hasInvalidOutline(momentum));
    QVERIFY2(momentum->toolTip().startsWith(QStringLiteral("train.momentum: must be in [0, 1)")),
             qPrintable(momentum->toolTip()));
    QVERIFY(hasInvalidOutline(probeBatch));
    QVERIFY(!hasInvalidOutline(form->editorFor("train.lr")));
    QVERIFY(!ws.runButton()->isEnabled());
    QVERIFY(ws.runButton()->toolTip().contains(QStringLiteral("probe.batch_size")));

    qobject_cast<QDoubleSpinBox*>(momentum)->setValue(0.9);
    QCOMPARE(doc.spec().train.momentum, 0.9);
    QVERIFY(!hasInvalidOutline(momentum));
    QVERIFY(!momentum->toolTip().contains(QStringLiteral("train.momentum:")));
    // The probe batch shows the spec's 0, not its usual minimum: the value to fix is visible.
    QCOMPARE(qobject_cast<QSpinBox*>(probeBatch)->value(), 0);
    qobject_cast<QSpinBox*>(probeBatch)->setValue(64);
    QCOMPARE(doc.spec().probe.batchSize, 64);
    QVERIFY(!hasInvalidOutline(probeBatch));
    QVERIFY(ws.runButton()->isEnabled());
  }

  void validationInitAndNormHaveEditors() {
    DesignDocument doc{fakeEngineServices().engine};
    DesignWorkspace ws(&doc);
    doc.load(baseSpec());
    TrainingForm* form = ws.modelPanel()->trainingForm();
    auto* validation = qobject_cast<QDoubleSpinBox*>(form->editorFor("dataset.validation"));
    auto* init = qobject_cast<QComboBox*>(form->editorFor("model.init"));
    auto* norm = qobject_cast<QComboBox*>(form->editorFor("model.norm"));
    QVERIFY(validation && init && norm);
    for (QWidget* w : {static_cast<QWidget*>(validation), static_cast<QWidget*>(init),
                       static_cast<QWidget*>(norm)})
      QVERIFY(!w->toolTip().isEmpty());
    QCOMPARE(validation->text(), QStringLiteral("none"));
    validation->setValue(0.1);
    QCOMPARE(doc.spec().dataset.validation, 0.1);
    QCOMPARE(validation->maximum(), 0.5);
    init->setCurrentIndex(init->findData(QStringLiteral("kaiming")));
    Q_EMIT init->activated(init->currentIndex());
    QCOMPARE(doc.spec().model.init, std::string("kaiming"));
    norm->setCurrentIndex(norm->findData(QStringLiteral("layernorm")));
    Q_EMIT norm->activated(norm->currentIndex());
    QCOMPARE(doc.spec().model.norm, std::string("layernorm"));
    doc.undoStack()->undo();
    QCOMPARE(doc.spec().model.norm, std::string("none"));
    QCOMPARE(norm->currentData().toString(), QStringLiteral("none"));

    // Values the spec refuses are outlined where they are edited, with the reason.
    auto spec = baseSpec();
    spec.model.init = "he";
    spec.model.kind = "cnn";
    spec.model.norm = "layernorm";
    spec.dataset.validation = 0.7;
    doc.load(spec);
    for (const char* key : {"model.init", "model.norm", "dataset.validation"}) {
      QVERIFY2(hasInvalidOutline(form->editorFor(key)), key);
      QVERIFY2(form->editorFor(key)->toolTip().startsWith(QString::fromLatin1(key) + ": "), key);
    }
    QVERIFY(norm->isEnabled());  // to set it back to none
    QVERIFY(!ws.runButton()->isEnabled());
  }

  void aBatchSizeOfZeroCanBeTypedAway() {
    // A spec with batch size 0: the box shows 0 (not a clamped 1), typing 1 fixes it, and
    // typing 0 again is an edit the validation names, not a silent revert.
    DesignDocument doc{fakeEngineServices().engine};
    DesignWorkspace ws(&doc);
    ws.show();
    auto spec = baseSpec();
    spec.train.batchSize = 0;
    doc.load(spec);
    TrainingForm* form = ws.modelPanel()->trainingForm();
    auto* batch = qobject_cast<QSpinBox*>(form->editorFor("train.batch_size"));
    QVERIFY(batch);
    QCOMPARE(batch->value(), 0);
    QVERIFY(hasInvalidOutline(batch));
    QVERIFY(!ws.runButton()->isEnabled());
    batch->setFocus();
    batch->selectAll();
    QTest::keyClicks(batch, QStringLiteral("1"));
    QTest::keyClick(batch, Qt::Key_Return);
    QCOMPARE(doc.spec().train.batchSize, 1);
    QVERIFY(!hasInvalidOutline(batch));
    QVERIFY(ws.runButton()->isEnabled());
    batch->selectAll();
    QTest::keyClicks(batch, QStringLiteral("0"));
    QTest::keyClick(batch, Qt::Key_Return);
    QCOMPARE(doc.spec().train.batchSize, 0);
    QVERIFY(hasInvalidOutline(batch));
    QVERIFY(batch->toolTip().startsWith(QStringLiteral("train.batch_size:")));
  }
};

QTEST_MAIN(TestTrainingForm)
#include "test_training_form.moc"
