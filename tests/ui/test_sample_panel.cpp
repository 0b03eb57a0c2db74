// Train's Sample panel on the fake engine: a text run shows the sample of each evaluation, the
// checkbox turns it off (remembered), and an image run has no panel.

#include <QFile>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include "bridge/engine_controller.h"
#include "common/fake_services.h"
#include "designer/design_document.h"
#include "live/sample_panel.h"
#include "stagewise/engine/run.h"
#include "live/train_workspace.h"

using namespace stagewise;
using namespace stagewise::ui;

class TestSamplePanel : public QObject {
  Q_OBJECT

  QTemporaryDir m_dir;

  engine::ExperimentSpec textSpec() {
    const QString path = m_dir.filePath("corpus.txt");
    QFile f(path);
    f.open(QIODevice::WriteOnly);
    for (int i = 0; i < 200; ++i) f.write("the cat sat on the mat.\n");
    f.close();
    engine::ExperimentSpec s;
    s.name = "sample-test";
    s.dataset.kind = "text";
    s.dataset.path = path.toStdString();
    s.dataset.context = 16;
    s.model.kind = "gpt";
    s.model.dim = 16;
    s.model.depth = 2;
    s.model.heads = 2;
    s.partition.cuts = {2};
    s.stageDefaults.auxHead = "lm";
    s.train.maxSteps = 120;
    s.eval.interval = 50;
    return s;
  }

  struct Fixture {
    engine::FakeScript script{120, 0.002};
    EngineServices services;
    DesignDocument doc;
    EngineController controller;
    TrainWorkspace workspace;
    explicit Fixture(const engine::ExperimentSpec& spec)
        : services(fakeEngineServices(script)),
          doc(services.engine),
          controller(services),
          workspace(&controller, &doc) {
      doc.load(spec);
      workspace.resize(1300, 850);
      workspace.show();
    }
    SamplePanel* panel() { return workspace.findChild<SamplePanel*>(); }
    void run() {
      QSignalSpy finished(&workspace, &TrainWorkspace::runFinished);
      QVERIFY2(workspace.runButton()->isEnabled(), qPrintable(workspace.runButton()->toolTip()));
      QTest::mouseClick(workspace.runButton(), Qt::LeftButton);
      QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 15000);
    }
  };

 private Q_SLOTS:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void aTextRunShowsItsSample() {
    Fixture f(textSpec());
    SamplePanel* panel = f.panel();
    QVERIFY(panel);
    panel->setOn(true);
    QVERIFY(panel->isVisible());
    f.run();
    // The fake engine's sample: the prompt, then its made-up continuation at the last evaluation.
    QVERIFY2(panel->text().startsWith(QString::fromStdString(panel->request()->prompt)),
             qPrintable(panel->text()));
    QVERIFY2(panel->text().contains("and so on, at 100"), qPrintable(panel->text()));
  }

  // The panel names the step the engine's event (and the store) gives, not one more.
  void theStepIsTheStoredOne() {
    SamplePanel panel;
    panel.addEvents({{engine::EventKind::Info, 1.0, -1,
                      engine::sampleEventMessage(300, "the sample")}});
    QCOMPARE(panel.text(), QStringLiteral("the sample"));
    QCOMPARE(panel.stepText(), QStringLiteral("step 300"));
  }

  void turnedOffItAsksForNone() {
    {
      Fixture f(textSpec());
      f.panel()->setOn(false);
      QVERIFY(!f.panel()->request());
      f.run();
      QVERIFY(f.panel()->text().isEmpty());
    }
    SamplePanel again;  // the setting is remembered
    QVERIFY(!again.isOn());
    again.setOn(true);
    QVERIFY(SamplePanel().isOn());
  }

  void anImageRunHasNoPanel() {
    engine::ExperimentSpec s;
    s.dataset.kind = "synthetic";
    s.model.hidden = {16};
    s.train.maxSteps = 20;
    Fixture f(s);
    QVERIFY(f.panel());
    QVERIFY(!f.panel()->isVisible());
  }
};

QTEST_MAIN(TestSamplePanel)
#include "test_sample_panel.moc"
