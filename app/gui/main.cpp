// stagewise: the workbench. Parses the command line, chooses the engine (LibTorch, or the fake
// one with --fake), opens the run store and shows the main window.

#include <QApplication>
#include <QComboBox>
#include <QCommandLineParser>
#include <QMessageBox>
#include <QTimer>
#include <QUrl>
#include <iostream>

#include "common/app_settings.h"
#include "common/fake_services.h"
#include "common/spec_io.h"
#include "common/theme.h"
#include "designer/design_document.h"
#include "designer/design_workspace.h"
#include "live/train_workspace.h"
#include "main_window.h"
#include "stagewise/storage/paths.h"
#include "stagewise/storage/run_store.h"
#ifdef STAGEWISE_HAVE_ENGINE
#include "stagewise/engine/engine.h"
#include "stagewise/engine/omp_wait.h"
#endif
#ifdef STAGEWISE_HAVE_RECORDER
#include "stagewise/recorder/recorder.h"
#endif
#ifdef STAGEWISE_HAVE_LOCAL_RANKS
#include "local_ranks.h"
#endif

using namespace stagewise;

static ui::EngineServices engineServices(bool fake) {
#ifdef STAGEWISE_HAVE_ENGINE
  if (!fake) {
    const engine::EngineInfo info = engine::engineInfo();
    ui::EngineServices services;
    services.engine.torchVersion = info.torchVersion;
    services.engine.blas = info.blas;
    services.engine.openmpWait = info.openmpWait;
    services.engine.malloc = info.malloc;
    services.engine.cudaAvailable = info.cudaAvailable;
    services.engine.devices = info.devices;
    services.engine.hardwareCores = info.hardwareCores;
    services.createRun = [](const engine::ExperimentSpec& spec, engine::RunObserver* observer) {
      return engine::createRun(spec, observer);
    };
    services.createRunWithOptions = [](const engine::ExperimentSpec& spec,
                                       engine::RunObserver* observer,
                                       const engine::RunOptions& options) {
      return engine::createRun(spec, observer, options);
    };
    services.resumeRun = [](const engine::ExperimentSpec& spec, engine::RunObserver* observer,
                            const std::string& checkpoint) {
      engine::RunOptions options;
      options.resumeFrom = checkpoint;
      return engine::createRun(spec, observer, options);
    };
    services.profileLayers = [](const engine::ExperimentSpec& spec,
                                const std::function<bool(int, int)>& progress) {
      return engine::profileLayers(spec, 8, progress).seconds;
    };
    services.profileMethods = [](const engine::ExperimentSpec& spec,
                                 const std::function<bool(int, int)>& progress) {
      return engine::profileMethods(spec, 8, progress);
    };
#ifdef STAGEWISE_HAVE_LOCAL_RANKS
    // The other ranks are stagewise-cli children; their stderr lines go to the event log (as
    // warnings) and to this process's stderr, prefixed "[rank r]".
    gui::LocalRanksOptions ranks;
    ranks.createRankZero = [](const engine::ExperimentSpec& spec, engine::RunObserver* observer,
                              const engine::RunOptions& options) {
      return engine::createRun(spec, observer, options);
    };
    ranks.appDir = QCoreApplication::applicationDirPath().toStdString();
    auto launcher = std::make_shared<gui::LocalRankLauncher>(std::move(ranks));
    services.createDistributedRun = [launcher](const engine::ExperimentSpec& spec,
                                               engine::RunObserver* observer, int processes,
                                               const std::function<bool()>& stopRequested) {
      return launcher->createRun(spec, observer, processes, stopRequested);
    };
#endif
    return services;
  }
#else
  (void)fake;
#endif
  engine::FakeScript script;
  script.stepSeconds = 0.004;
  return ui::fakeEngineServices(script);
}

int main(int argc, char** argv) {
#ifdef STAGEWISE_HAVE_ENGINE
  // The workbench trains in this process: idle OpenMP workers spin briefly (may re-execute).
  stagewise::engine::ensureOmpWaitDefault(argv);
#endif
  QGuiApplication::setHighDpiScaleFactorRoundingPolicy(
      Qt::HighDpiScaleFactorRoundingPolicy::PassThrough);
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("Stagewise"));
  QApplication::setApplicationName(QStringLiteral("stagewise"));
  QApplication::setApplicationDisplayName(QStringLiteral("Stagewise"));
  QApplication::setApplicationVersion(QStringLiteral(STAGEWISE_VERSION));
  QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/stagewise.svg")));

  QCommandLineParser parser;
  parser.setApplicationDescription(
      QStringLiteral("Workbench for local-parallel training: design stage cuts, train, compare."));
  parser.addHelpOption();
  parser.addVersionOption();
  const QCommandLineOption specOption(
      QStringLiteral("spec"), QStringLiteral("Experiment to open (default: the default preset)."),
      QStringLiteral("FILE"));
  const QCommandLineOption dbOption(
      QStringLiteral("db"),
      QStringLiteral("Run store file (else $STAGEWISE_DB, the saved setting, or the default)."),
      QStringLiteral("PATH"));
  const QCommandLineOption fakeOption(
      QStringLiteral("fake"),
      QStringLiteral("Use the fake engine (scripted numbers, no training)."));
  const QCommandLineOption themeOption(QStringLiteral("theme"), QStringLiteral("light or dark."),
                                       QStringLiteral("THEME"));
  const QCommandLineOption workspaceOption(QStringLiteral("workspace"),
                                           QStringLiteral("Start in design, train or runs."),
                                           QStringLiteral("NAME"));
  const QCommandLineOption runOption(QStringLiteral("run"),
                                     QStringLiteral("Start training the experiment right away."));
  const QCommandLineOption modeOption(
      QStringLiteral("mode"),
      QStringLiteral("Train mode to start with: local, backprop, both (local then backprop) or "
                     "pipeline."),
      QStringLiteral("MODE"));
  const QCommandLineOption quitOption(
      QStringLiteral("quit-after-run"),
      QStringLiteral("With --run: quit when the run is over (scripts)."));
  const QCommandLineOption reportOption(
      QStringLiteral("report"),
      QStringLiteral("Make the replication report of the experiment right away: quick or full."),
      QStringLiteral("KIND"));
  parser.addOptions({specOption, dbOption, fakeOption, themeOption, workspaceOption, modeOption,
                     runOption, quitOption, reportOption});
  // `stagewise FILE.json`, as the desktop entry and a file manager start it.
  parser.addPositionalArgument(QStringLiteral("file"),
                               QStringLiteral("Experiment to open (the same as --spec)."),
                               QStringLiteral("[FILE]"));
  parser.process(app);

  const ui::Theme theme = parser.isSet(themeOption) ? ui::themeFromString(parser.value(themeOption))
                                                    : ui::AppSettings::theme();
  ui::applyTheme(app, theme);

#ifdef STAGEWISE_HAVE_ENGINE
  const bool fake = parser.isSet(fakeOption);
#else
  const bool fake = true;
#endif
  ui::EngineServices services = engineServices(fake);

  std::shared_ptr<storage::RunStore> store;
  try {
    std::optional<std::string> explicitDb;
    if (parser.isSet(dbOption)) explicitDb = parser.value(dbOption).toStdString();
    std::optional<std::string> saved;
    if (!ui::AppSettings::storePath().isEmpty()) saved = ui::AppSettings::storePath().toStdString();
    store = std::make_shared<storage::RunStore>(storage::resolveDbPath(explicitDb, saved));
  } catch (const std::exception& e) {
    QMessageBox::warning(nullptr, QStringLiteral("Stagewise"),
                         QStringLiteral("The run store could not be opened, so runs will not be "
                                        "kept:\n%1")
                             .arg(QString::fromStdString(e.what())));
  }
#ifdef STAGEWISE_HAVE_RECORDER
  if (store)
    services.createRecorder =
        [store](ui::RecordRequest request) -> std::unique_ptr<engine::RunObserver> {
      recorder::RecorderOptions options;
      options.resumeRunId = request.continueRunId;
      options.tags = request.tags;
      options.onRecordCreated = request.onRecorded;
      options.stageRanks = request.stageRanks;
      // Disk full, store locked by another process, recovered, points lost: shown in the
      // event log while the run goes on (a recovery as info, the rest as warnings).
      if (request.onNotice)
        options.onStoreNotice = [onNotice = request.onNotice](const storage::WriterNotice& n) {
          onNotice({n.kind != storage::WriterNotice::Kind::Recovered, n.message});
        };
      return std::make_unique<recorder::Recorder>(*store, options);
    };
#endif

  ui::MainWindow window(services, store);
  QString specFile = parser.isSet(specOption) ? parser.value(specOption) : QString();
  if (specFile.isEmpty() && !parser.positionalArguments().isEmpty()) {
    specFile = parser.positionalArguments().front();
    if (specFile.startsWith(QStringLiteral("file://")))  // some launchers pass a URL for %f
      specFile = QUrl(specFile).toLocalFile();
  }
  if (!specFile.isEmpty()) window.designWorkspace()->openFile(specFile);
  if (parser.isSet(modeOption)) {
    // The mode box's first four plans.
    static const QStringList kModes{QStringLiteral("local"), QStringLiteral("backprop"),
                                    QStringLiteral("both"), QStringLiteral("pipeline")};
    const int mode = int(kModes.indexOf(parser.value(modeOption).toLower()));
    if (mode < 0) {
      std::cerr << "stagewise: --mode must be local, backprop, both or pipeline\n";
      return 2;
    }
    window.trainWorkspace()->modeCombo()->setCurrentIndex(mode);
  }
  const QString workspace = parser.value(workspaceOption).toLower();
  if (!workspace.isEmpty() && workspace != QLatin1String("design") &&
      workspace != QLatin1String("train") && workspace != QLatin1String("runs")) {
    std::cerr << "stagewise: --workspace must be design, train or runs\n";
    return 2;
  }
  if (workspace == QLatin1String("train")) window.showWorkspace(ui::MainWindow::kTrain);
  if (workspace == QLatin1String("runs")) window.showWorkspace(ui::MainWindow::kRuns);
  // Asked for on the command line, it wins over the workspace the last session restored.
  if (workspace == QLatin1String("design")) window.showWorkspace(ui::MainWindow::kDesign);
  window.show();
  if (parser.isSet(reportOption)) {
    const QString kind = parser.value(reportOption).toLower();
    if (kind != QLatin1String("quick") && kind != QLatin1String("full")) {
      std::cerr << "stagewise: --report must be quick or full\n";
      return 2;
    }
    QTimer::singleShot(0, &window, [&window, quick = kind == QLatin1String("quick")] {
      window.startReport(quick);
    });
  }
  if (parser.isSet(runOption)) {
    QTimer::singleShot(0, &window, &ui::MainWindow::startRun);
    if (parser.isSet(quitOption))
      QObject::connect(window.trainWorkspace(), &ui::TrainWorkspace::runFinished, &app,
                       &QApplication::quit, Qt::QueuedConnection);
  }
  return app.exec();
}
