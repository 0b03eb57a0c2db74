// The workbench on the real engine with a PyTorch model: a TorchScript file (made in C++, no
// Python) imported in Design, cut, and trained with local updates and the backprop baseline.
#include <QApplication>
#include <QComboBox>
#include <QFile>
#include <QMessageBox>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

#include "bridge/engine_controller.h"
#include "designer/design_document.h"
#include "designer/design_workspace.h"
#include "designer/model_family_form.h"
#include "designer/model_panel.h"
#include "script_models.h"
#include "stagewise/engine/engine.h"

using namespace stagewise;
using namespace stagewise::ui;

namespace {

EngineServices realServices() {
  const engine::EngineInfo info = engine::engineInfo();
  EngineServices services;
  services.engine.torchVersion = info.torchVersion;
  services.engine.blas = info.blas;
  services.engine.devices = info.devices;
  services.engine.hardwareCores = info.hardwareCores;
  services.createRun = [](const engine::ExperimentSpec& spec, engine::RunObserver* observer) {
    return engine::createRun(spec, observer);
  };
  return services;
}

}  // namespace

class TestImportGui : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void importCutAndTrainAPyTorchModel() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("net.pt"));
    script_models::sequential(32, 4, 1).save(path.toStdString());
    EngineServices services = realServices();
    DesignDocument doc{services.engine};
    engine::ExperimentSpec base;
    base.dataset.kind = "synthetic";  // 32 features, 4 classes
    base.train.maxSteps = 60;
    base.train.backpropThreads = 1;
    base.eval.interval = 0;
    base.probe.interval = -1;
    base.checkpoint.dir = dir.filePath(QStringLiteral("ckpt")).toStdString();
    doc.load(base);
    DesignWorkspace workspace(&doc);
    // File → Import model… (and a dropped .pt) come here.
    QVERIFY(workspace.importModel(path));
    QCOMPARE(doc.spec().model.kind, std::string("torchscript"));
    QCOMPARE(doc.spec().dataset.kind, std::string("synthetic"));  // the open experiment's data
    QCOMPARE(doc.layerCount(), 6);
    QCOMPARE(doc.plan().layers[2].name, std::string("fc2"));
    QVERIFY2(doc.canRun(), doc.problems().empty() ? "" : doc.problems().front().message.c_str());
    // Cut it where we like: after the first ReLU and after the norm.
    engine::ExperimentSpec cut = doc.spec();
    cut.partition.cuts = {2, 4};
    doc.edit(cut, QStringLiteral("Cut"));
    QVERIFY(doc.canRun());
    QCOMPARE(doc.partition().stages.size(), size_t{3});
    // Train it: local updates, then the backprop baseline.
    EngineController controller(services);
    std::vector<engine::RunSummary> summaries;
    connect(&controller, &EngineController::batchArrived, this, [&](const PhaseBatch& b) {
      if (b.summary) summaries.push_back(*b.summary);
      QVERIFY2(b.startError.empty(), b.startError.c_str());
    });
    QSignalSpy finished(&controller, &EngineController::planFinished);
    QVERIFY(controller.start(doc.spec(), {engine::Mode::Local, engine::Mode::Backprop}));
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 180000);
    QCOMPARE(summaries.size(), size_t{2});
    for (const auto& s : summaries) {
      QVERIFY2(s.status == engine::RunStatus::Completed, s.error.c_str());
      QVERIFY(s.testAccuracy > 0.4);  // 4 classes: chance is 0.25
    }
    QCOMPARE(summaries[0].stages.size(), size_t{3});
  }

  // Walkthrough: a .pt imported while a ViT design (token aux heads) is open fits a head that
  // takes its output; choosing "Layer list" with a TorchScript model goes back and says why
  // (it used to read "Layer list" and train the TorchScript model).
  void importingIntoAViTDesignAndAskingForALayerList() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("net.pt"));
    script_models::sequential(32, 4, 1).save(path.toStdString());
    EngineServices services = realServices();
    DesignDocument doc{services.engine};
    engine::ExperimentSpec base;
    base.dataset.kind = "synthetic";
    base.model.kind = "vit";
    base.stageDefaults.auxHead = "token";
    doc.load(base);
    DesignWorkspace workspace(&doc);
    QVERIFY(workspace.importModel(path));
    QCOMPARE(doc.spec().model.kind, std::string("torchscript"));
    QCOMPARE(doc.spec().stageDefaults.auxHead, std::string("linear"));
    QVERIFY2(doc.canRun(), doc.problems().empty() ? "" : doc.problems().front().message.c_str());
    QComboBox* kind = workspace.modelPanel()->familyForm()->kindCombo();
    const int layers = kind->findData(QStringLiteral("layers"));
    QVERIFY(layers >= 0);
    kind->setCurrentIndex(layers);
    Q_EMIT kind->activated(layers);
    QCOMPARE(doc.spec().model.kind, std::string("torchscript"));
    QCOMPARE(kind->currentData().toString(), QStringLiteral("torchscript"));
    QVERIFY(kind->statusTip().contains(QStringLiteral("cannot become a layer list")));
  }

  void aBadFileIsRefusedBeforeUnsavedChangesAreAskedAbout() {
    // Asking "Save them first?" about a file that cannot be imported anyway asks for nothing:
    // the file is checked first, its error is one line, the edits stay.
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("broken.pt"));
    {
      QFile f(path);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write("this is not a model\n\x01\x02");
    }
    EngineServices services = realServices();
    DesignDocument doc{services.engine};
    engine::ExperimentSpec base;
    base.dataset.kind = "synthetic";
    doc.load(base);
    engine::ExperimentSpec edited = doc.spec();
    edited.train.lr = 0.01;
    doc.edit(edited, QStringLiteral("Learning rate"));
    QVERIFY(doc.isModified());
    DesignWorkspace workspace(&doc);
    // Every message box that comes up: its title and text, then it is cancelled.
    QStringList seen;
    QTimer closer;
    connect(&closer, &QTimer::timeout, this, [&] {
      if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget())) {
        seen << box->windowTitle() + QStringLiteral(" | ") + box->text();
        box->reject();
      }
    });
    closer.start(20);
    QVERIFY(!workspace.importModel(path));
    closer.stop();
    QCOMPARE(seen.size(), 1);
    QVERIFY2(seen[0].startsWith(QStringLiteral("Cannot import model | ")), qPrintable(seen[0]));
    QVERIFY2(seen[0].contains(path), qPrintable(seen[0]));
    QVERIFY2(!seen[0].contains(QLatin1Char('\n')), qPrintable(seen[0]));
    QVERIFY(doc.isModified());
    QCOMPARE(doc.spec().train.lr, 0.01);
    // A good file still asks (and Cancel keeps the edits).
    seen.clear();
    const QString good = dir.filePath(QStringLiteral("net.pt"));
    script_models::sequential(32, 4, 1).save(good.toStdString());
    closer.start(20);
    QVERIFY(!workspace.importModel(good));
    closer.stop();
    QCOMPARE(seen.size(), 1);
    QVERIFY2(seen[0].startsWith(QStringLiteral("Unsaved changes | ")), qPrintable(seen[0]));
    QCOMPARE(doc.spec().model.kind, std::string("mlp"));
  }
};

QTEST_MAIN(TestImportGui)
#include "test_import_gui.moc"
