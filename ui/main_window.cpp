#include "main_window.h"

#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDesktopServices>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPushButton>
#include <QRegularExpression>
#include <QScreen>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTimer>
#include <QUndoStack>
#include <QUrl>

#include "bridge/engine_controller.h"
#include "common/about_dialog.h"
#include "common/app_settings.h"
#include "common/command_palette.h"
#include "common/plot_frame.h"
#include "common/spec_io.h"
#include "common/table_export.h"
#include "common/theme.h"
#include "designer/design_document.h"
#include "designer/design_workspace.h"
#include "designer/estimate_panel.h"
#include "live/plot_export.h"
#include "live/study_queue.h"
#include "live/trace_export.h"
#include "live/train_workspace.h"
#include "runs/compare_panel.h"
#include "runs/report_view.h"
#include "runs/resume_target.h"
#include "runs/runs_workspace.h"
#include "runs/study_groups.h"
#include "stagewise/engine/checkpoint.h"
#include "stagewise/report/report.h"
#include "stagewise/storage/run_store.h"

namespace stagewise::ui {

MainWindow::MainWindow(EngineServices services, std::shared_ptr<storage::RunStore> store,
                       QWidget* parent)
    : QMainWindow(parent), m_services(std::move(services)), m_store(std::move(store)) {
  setObjectName(QStringLiteral("MainWindow"));
  setWindowIcon(QIcon(QStringLiteral(":/icons/stagewise.svg")));
  m_doc = new DesignDocument(m_services.engine, this);
  m_controller = new EngineController(m_services, this);
  m_design = new DesignWorkspace(m_doc, this);
  if (m_services.profileLayers) m_design->estimatePanel()->setProfiler(m_services.profileLayers);
  if (m_services.profileMethods)
    m_design->estimatePanel()->setMethodProfiler(m_services.profileMethods);
  m_train = new TrainWorkspace(m_controller, m_doc, this);
  m_train->setStore(m_store);
  m_tabs = new QTabWidget(this);
  m_tabs->setDocumentMode(true);
  m_tabs->addTab(m_design, tr("Design"));
  m_tabs->addTab(m_train, tr("Train"));
  if (m_store) {
    m_runs = new RunsWorkspace(m_store, this);
    m_tabs->addTab(m_runs, tr("Runs"));
    connect(m_runs, &RunsWorkspace::message, this,
            [this](const QString& m) { statusBar()->showMessage(m, 6000); });
    connect(m_runs, &RunsWorkspace::openSpecRequested, this,
            [this](const engine::ExperimentSpec& spec, const QString& title) {
              if (!m_design->maybeDiscard()) return;
              m_doc->load(spec);
              showWorkspace(kDesign);
              statusBar()->showMessage(tr("Opened the spec of %1").arg(title), 6000);
            });
    connect(m_train, &TrainWorkspace::runFinished, m_runs, &RunsWorkspace::poll);
    connect(m_runs, &RunsWorkspace::resumeRequested, this, &MainWindow::startResume);
    connect(
        m_runs, &RunsWorkspace::replayRequested, this,
        [this](const engine::ExperimentSpec& spec, const std::vector<engine::RunChange>& changes,
               const QString& title) {
          if (m_controller->isBusy()) {
            statusBar()->showMessage(tr("A run is in progress: stop it before running "
                                        "another"),
                                     8000);
            return;
          }
          showWorkspace(kTrain);
          if (m_train->replayRun(spec, changes, title))
            statusBar()->showMessage(
                tr("Running %1 again with %n change(s)", nullptr, int(changes.size())).arg(title),
                8000);
        });
    connect(m_runs, &RunsWorkspace::reportRequested, this, &MainWindow::askReport);
    m_runs->setResumeAvailable(m_controller->canResume());
  } else {
    auto* none = new QLabel(tr("No run store is open, so runs are not kept.\nStart with --db "
                               "PATH or set STAGEWISE_DB."),
                            this);
    none->setAlignment(Qt::AlignCenter);
    m_tabs->addTab(none, tr("Runs"));
  }
  m_tabs->setTabToolTip(kDesign, tr("Design the network and its stages (Ctrl+1)"));
  m_tabs->setTabToolTip(kTrain, tr("Train and watch it live (Ctrl+2)"));
  m_tabs->setTabToolTip(kRuns, tr("Browse and compare past runs (Ctrl+3)"));
  setCentralWidget(m_tabs);

  m_engineLabel = new QLabel(this);
  QStringList devices;
  for (const auto& d : m_services.engine.devices) devices << QString::fromStdString(d);
  m_engineLabel->setText(
      tr("%1 · %2 · store: %3")
          .arg(m_services.engine.fake
                   ? tr("fake engine")
                   : tr("LibTorch %1").arg(QString::fromStdString(m_services.engine.torchVersion)),
               devices.join(QStringLiteral(", ")),
               m_store ? QString::fromStdString(m_store->path()) : tr("none")));
  statusBar()->addPermanentWidget(m_engineLabel);

  buildMenus();
  connect(m_design, &DesignWorkspace::runRequested, this, &MainWindow::startRun);
  connect(m_design, &DesignWorkspace::studyRequested, this, &MainWindow::startStudy);
  connect(m_train->studyQueue(), &StudyQueue::reportReady, this,
          [this](std::shared_ptr<const report::ReportDoc> doc, const QString& error) {
            if (!doc) {
              QMessageBox::warning(this, tr("Replication report"),
                                   tr("The findings could not be judged: %1").arg(error));
              return;
            }
            if (m_reportView) m_reportView->close();
            m_reportView = new ReportView(std::move(doc), this);
            m_reportView->setAttribute(Qt::WA_DeleteOnClose);
            m_reportView->show();
            if (m_runs) m_runs->poll();
          });
  connect(m_design, &DesignWorkspace::message, this,
          [this](const QString& m) { statusBar()->showMessage(m, 5000); });
  connect(m_train, &TrainWorkspace::message, this,
          [this](const QString& m) { statusBar()->showMessage(m, 8000); });
  connect(m_doc, &DesignDocument::changed, this, &MainWindow::updateTitle);
  connect(m_doc, &DesignDocument::changed, this, &MainWindow::updateRunActions);
  connect(m_doc, &DesignDocument::filePathChanged, this, &MainWindow::updateTitle);
  // Opened or saved under a name: first in File → Open Recent.
  connect(m_doc, &DesignDocument::filePathChanged, this, [this] {
    AppSettings::addRecentFile(m_doc->filePath());
    updateRecentMenu();
  });
  setAcceptDrops(true);
  connect(m_doc->undoStack(), &QUndoStack::cleanChanged, this, &MainWindow::updateTitle);
  connect(m_controller, &EngineController::stateChanged, this, &MainWindow::updateRunActions);
  connect(m_train->studyQueue(), &StudyQueue::studyFinished, this, &MainWindow::updateRunActions);

  resize(QSize(1440, 900).boundedTo(availableSize()));
  restoreWindow();
  fitToScreen();  // a size saved on a larger screen (or grown by an older version) is fitted
  restoreSession();
  updateTitle();
  updateRunActions();
}

void MainWindow::restoreSession() {
  const SessionState session = AppSettings::session();
  QString problem;
  bool loaded = false;
  if (!session.specFile.isEmpty()) {
    try {
      study::StudyObject study;
      const auto spec = readExperimentFile(session.specFile, study);
      m_doc->load(spec, session.specFile, study);
      loaded = true;
    } catch (const std::exception& e) {
      problem = QFileInfo::exists(session.specFile)
                    ? tr("The last experiment did not open (%1): the default is open instead")
                          .arg(QString::fromStdString(e.what()))
                    : tr("The last experiment, %1, is gone: the default is open instead")
                          .arg(session.specFile);
    }
  } else if (!session.designJson.isEmpty()) {
    try {
      study::StudyObject study;
      m_doc->load(parseExperimentJson(session.designJson.toStdString(), study), {}, study);
      loaded = true;
    } catch (const std::exception& e) {
      problem = tr("The last session's design did not read (%1): the default is open instead")
                    .arg(QString::fromStdString(e.what()));
    }
  }
  if (!loaded) m_doc->load(defaultSpec());
  const bool known = session.workspace >= kDesign && session.workspace <= kRuns;
  showWorkspace(known ? Workspace(session.workspace) : kDesign);
  if (m_runs && (!session.runsFilter.isEmpty() || session.runsStudy > 0))
    m_runs->restoreFilter(session.runsFilter, session.runsStudy);
  if (m_runs && !session.runs.isEmpty())
    m_runs->selectRuns(std::vector<int64_t>(session.runs.begin(), session.runs.end()));
  if (session.trainModes != 0) {
    const int i = m_train->modeCombo()->findData(session.trainModes);
    if (i >= 0) m_train->modeCombo()->setCurrentIndex(i);
  }
  if (!problem.isEmpty()) statusBar()->showMessage(problem, 15000);
}

void MainWindow::saveSession() {
  SessionState session;
  // A design without a file is kept as JSON; one whose edits were discarded on closing (it
  // is still modified here) reopens as its file holds it, or as the default.
  session.specFile = m_doc->filePath();
  if (session.specFile.isEmpty() && !m_doc->isModified())
    session.designJson = QString::fromStdString(experimentJson(m_doc->spec(), m_doc->study()));
  session.workspace = int(currentWorkspace());
  if (m_runs) {
    for (int64_t id : m_runs->selectedRunIds()) session.runs << id;
    session.runsFilter = m_runs->filterText();
    session.runsStudy = m_runs->studyFilter();
  }
  session.trainModes = m_train->modeCombo()->currentData().toInt();
  // The store this session used (given with --db, say) opens next time, unless one was chosen
  // in File → Choose run store meanwhile ("from its next start").
  session.storePath = !m_chosenStore.isEmpty() ? m_chosenStore
                      : m_store                ? QString::fromStdString(m_store->path())
                                               : QString();
  AppSettings::setSession(session);
}

MainWindow::~MainWindow() = default;

QSize MainWindow::availableSize() const {
  const QScreen* where = screen() ? screen() : QGuiApplication::primaryScreen();
  QSize size = where ? where->availableGeometry().size() : QSize(1366, 768);
  // Leave room for the window frame the window manager adds around the client area.
  return size - QSize(16, 40);
}

void MainWindow::restoreWindow() {
  // The client rectangle as it closed, placed with setGeometry(): exact, where restoreGeometry()
  // checked the saved rectangle against a title bar it assumed (PM_TitleBarHeight) and moved a
  // window at the top of the screen that much lower at each start (issue 36: ~20 px a reopen).
  const QRect saved = AppSettings::windowRect();
  if (saved.isValid()) {
    const QScreen* where = screen() ? screen() : QGuiApplication::primaryScreen();
    const QRect area = where ? where->availableGeometry() : QRect();
    setGeometry(windowRectForScreen(saved, AppSettings::windowScreen(), availableSize(), area));
    if (AppSettings::windowMaximized()) setWindowState(windowState() | Qt::WindowMaximized);
  } else if (restoreGeometry(AppSettings::windowGeometry()) && !isMaximized()) {
    // Settings of a version before the client rectangle was kept.
    resize(windowSizeForScreen(size(), AppSettings::windowScreen(), availableSize()));
  }
  restoreState(AppSettings::windowState());
}

void MainWindow::saveWindow() {
  AppSettings::setWindow(saveGeometry(), saveState(), availableSize());
  AppSettings::setWindowRect(normalGeometry(), isMaximized());
}

void MainWindow::fitToScreen() {
  const QSize room = availableSize();
  if (width() > room.width() || height() > room.height()) resize(size().boundedTo(room));
  if (const QScreen* where = screen()) {
    const QRect area = where->availableGeometry();
    if (!area.contains(frameGeometry().topLeft()))
      move(area.topLeft() + QPoint((area.width() - width()) / 2, (area.height() - height()) / 2));
  }
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&New experiment"), QKeySequence::New, m_design,
                  &DesignWorkspace::newExperiment);
  file->addAction(tr("&Open…"), QKeySequence::Open, m_design, &DesignWorkspace::openWithDialog);
  file->addAction(tr("&Import model…"), this, [this] {
    m_design->importWithDialog();
    showWorkspace(kDesign);
  });
  m_recentMenu = file->addMenu(tr("Open &Recent"));
  m_recentMenu->setObjectName(QStringLiteral("recentMenu"));
  connect(m_recentMenu, &QMenu::aboutToShow, this, &MainWindow::updateRecentMenu);
  updateRecentMenu();
  file->addAction(tr("&Save"), QKeySequence::Save, m_design, &DesignWorkspace::save);
  // QKeySequence::SaveAs is empty on some platforms (X11 without a desktop): a fixed sequence.
  file->addAction(tr("Save &as…"), QKeySequence(tr("Ctrl+Shift+S")), m_design,
                  &DesignWorkspace::saveAs);
  file->addSeparator();
  buildExportMenu(file);
  file->addSeparator();
  file->addAction(tr("Choose run &store…"), this, &MainWindow::chooseStore);
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

  QMenu* edit = menuBar()->addMenu(tr("&Edit"));
  QAction* undo = m_doc->undoStack()->createUndoAction(this, tr("&Undo"));
  undo->setShortcuts({QKeySequence::Undo});
  QAction* redo = m_doc->undoStack()->createRedoAction(this, tr("&Redo"));
  redo->setShortcuts({QKeySequence(tr("Ctrl+Shift+Z")), QKeySequence(tr("Ctrl+Y"))});
  // Their text names the command to undo ("Undo Study seeds"); the shortcut list names the action.
  undo->setProperty("listedAs", tr("Undo"));
  redo->setProperty("listedAs", tr("Redo"));
  edit->addAction(undo);
  edit->addAction(redo);

  QMenu* run = menuBar()->addMenu(tr("&Run"));
  m_runAction = run->addAction(tr("&Run"), QKeySequence(tr("Ctrl+R")), this, &MainWindow::startRun);
  m_pauseAction = run->addAction(tr("&Pause / resume"), QKeySequence(tr("Ctrl+P")), m_train,
                                 &TrainWorkspace::togglePause);
  m_studyAction = run->addAction(tr("Run s&tudy"), QKeySequence(tr("Ctrl+Shift+R")), this,
                                 &MainWindow::startStudy);
  m_studyAction->setToolTip(tr("Queue the study designed in Design → Study"));
  m_reportAction = run->addAction(tr("Replication &report…"), this, &MainWindow::askReport);
  m_reportAction->setToolTip(
      tr("Check each of the paper's findings against runs of the designed experiment, made here"));
  m_stopAction = run->addAction(tr("&Stop"), m_train, &TrainWorkspace::stopRun);
  // The menu shows the first: Esc, the one people press.
  m_stopAction->setShortcuts({QKeySequence(Qt::Key_Escape), QKeySequence(tr("Ctrl+."))});
  QAction* designSteers = run->addAction(tr("&Design's cuts steer the live run"));
  designSteers->setCheckable(true);
  designSteers->setChecked(m_train->designSteers());
  designSteers->setToolTip(
      tr("While a local run of the designed network and data trains, a cut moved on the Design "
         "canvas moves in the running run too (as a drag in Train's stage strip)"));
  connect(designSteers, &QAction::toggled, m_train, &TrainWorkspace::setDesignSteers);
  run->addSeparator();
  m_resumeAction =
      run->addAction(tr("Resume from &checkpoint…"), this, [this] { resumeFromCheckpoint(); });
  m_resumeAction->setToolTip(
      tr("Continue a stopped run from a checkpoint folder; it goes on in the same record"));

  QMenu* view = menuBar()->addMenu(tr("&View"));
  const QString names[] = {tr("&Design"), tr("&Train"), tr("R&uns")};
  for (int i = 0; i < 3; ++i)
    view->addAction(names[i], QKeySequence(QStringLiteral("Ctrl+%1").arg(i + 1)), this,
                    [this, i] { showWorkspace(Workspace(i)); });
  view->addSeparator();
  auto* themes = new QActionGroup(this);
  QAction* light = view->addAction(tr("&Light theme"), this, [this] { setTheme(false); });
  QAction* dark = view->addAction(tr("D&ark theme"), this, [this] { setTheme(true); });
  for (QAction* a : {light, dark}) {
    a->setCheckable(true);
    themes->addAction(a);
  }
  (isDarkPalette() ? dark : light)->setChecked(true);
  view->addSeparator();
  view->addAction(tr("Command &palette…"), QKeySequence(tr("Ctrl+Shift+P")), this,
                  &MainWindow::showCommandPalette)
      ->setProperty("paletteSkips", true);

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&Keyboard shortcuts"), QKeySequence(tr("Ctrl+/")), this,
                  &MainWindow::showShortcuts);
  help->addAction(tr("User &guide"), QKeySequence::HelpContents, this, &MainWindow::openGuide);
  help->addSeparator();
  help->addAction(tr("&About Stagewise"), this, &MainWindow::about);
  help->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);
}

void MainWindow::buildExportMenu(QMenu* file) {
  // Every export the workbench has, in one place, so the palette finds them all (issue 36:
  // "export" found only the run list). The right-click menus keep theirs.
  m_exportMenu = file->addMenu(tr("&Export"));
  m_exportMenu->setObjectName(QStringLiteral("exportMenu"));
  m_exportTrace = m_exportMenu->addAction(tr("Export the Timeline &trace (Perfetto JSON)…"), this,
                                          &MainWindow::exportTimelineTrace);
  m_exportTrace->setToolTip(
      tr("The spans of the phase the Timeline shows, as a Chrome trace "
         "for Perfetto or chrome://tracing"));
  m_exportPlot = m_exportMenu->addAction(tr("Export a &plot (PNG, SVG, PDF or CSV)…"), this,
                                         &MainWindow::exportPlotOfWorkspace);
  m_exportPlot->setToolTip(tr("One of this workspace's plots, chosen by its title"));
  if (m_runs) {
    // The run list's export, which Runs gives the window: here, with the others.
    for (QAction* a : actions())
      if (a->parent() == m_runs && !a->menu() && a->property("exportMenu").toBool()) {
        removeAction(a);
        m_exportMenu->addAction(a);
      }
    m_exportGroups = m_exportMenu->addAction(tr("Export the &Groups table as CSV…"), this, [this] {
      exportTableCsv(m_runs->groupTable()->table(), QStringLiteral("groups"));
    });
    m_exportTuned = m_exportMenu->addAction(
        tr("Export the t&uned comparison as CSV…"), this,
        [this] { exportTableCsv(m_runs->groupTable()->tunedTable(), QStringLiteral("tuned")); });
    m_exportDiff =
        m_exportMenu->addAction(tr("Export the spec &differences as CSV…"), this, [this] {
          exportTableCsv(m_runs->comparePanel()->diffTable(), QStringLiteral("spec-diff"));
        });
  }
  connect(m_exportMenu, &QMenu::aboutToShow, this, &MainWindow::updateExportActions);
  updateExportActions();
}

void MainWindow::updateExportActions() {
  m_exportTrace->setEnabled(m_train->traceRunId() >= 0);
  m_exportPlot->setEnabled(!exportablePlots().isEmpty());
  // A table hidden itself (the tuned comparison of a grid study) has nothing to export.
  const auto hasRows = [](const QTableView* table) {
    return table && table->model() && table->model()->rowCount() > 0 && !table->isHidden();
  };
  if (m_runs) {
    m_runs->updatePaletteActions();  // the selected run's, one of them in this menu
    m_exportGroups->setEnabled(m_runs->groupTable()->study() > 0 &&
                               hasRows(m_runs->groupTable()->table()));
    m_exportTuned->setEnabled(m_runs->groupTable()->study() > 0 &&
                              hasRows(m_runs->groupTable()->tunedTable()));
    m_exportDiff->setEnabled(hasRows(m_runs->comparePanel()->diffTable()));
  }
}

QStringList MainWindow::exportablePlots() const {
  QStringList titles;
  if (QWidget* shown = m_tabs->currentWidget())
    for (PlotFrame* frame : shown->findChildren<PlotFrame*>())
      if (frame->isVisibleTo(this) && frame->plot()) titles << frame->title();
  return titles;
}

QString MainWindow::askExportPath(const QString& caption, const QString& proposed,
                                  const QString& filter) {
  const QString path = m_exportAnswers.savePath
                           ? m_exportAnswers.savePath(caption, proposed)
                           : QFileDialog::getSaveFileName(this, caption, proposed, filter);
  if (!path.isEmpty()) AppSettings::setLastExportDir(QFileInfo(path).absolutePath());
  return path;
}

void MainWindow::exportTimelineTrace() {
  const int64_t run = m_train->traceRunId();
  if (run < 0 || !m_store) {
    statusBar()->showMessage(tr("The Timeline has no stored run to export: run one first"), 8000);
    return;
  }
  const QString path =
      askExportPath(tr("Export trace"), defaultTracePath(run), tr("Chrome trace (*.json)"));
  if (path.isEmpty()) return;
  const QString error = exportTrace(*m_store, run, path);
  if (!error.isEmpty())
    QMessageBox::warning(this, tr("Export trace failed"), error);
  else
    statusBar()->showMessage(tr("Wrote the trace of run %1 to %2").arg(run).arg(path), 8000);
}

void MainWindow::exportPlotOfWorkspace() {
  std::vector<PlotFrame*> frames;
  QStringList titles;
  if (QWidget* shown = m_tabs->currentWidget())
    for (PlotFrame* frame : shown->findChildren<PlotFrame*>())
      if (frame->isVisibleTo(this) && frame->plot()) {
        frames.push_back(frame);
        titles << frame->title();
      }
  if (frames.empty()) {
    statusBar()->showMessage(tr("This workspace shows no plot to export"), 8000);
    return;
  }
  int chosen = 0;
  if (frames.size() > 1) {
    if (m_exportAnswers.plot) {
      chosen = m_exportAnswers.plot(titles);
    } else {
      bool ok = false;
      const QString title =
          QInputDialog::getItem(this, tr("Export a plot"), tr("Plot:"), titles, 0, false, &ok);
      chosen = ok ? int(titles.indexOf(title)) : -1;
    }
  }
  if (chosen < 0 || chosen >= int(frames.size())) return;
  PlotFrame* frame = frames[size_t(chosen)];
  QString name = frame->title().toLower();
  name.replace(QRegularExpression(QStringLiteral("[^a-z0-9]+")), QStringLiteral("-"));
  while (name.endsWith(QLatin1Char('-'))) name.chop(1);
  if (name.startsWith(QLatin1Char('-'))) name.remove(0, 1);
  QString path = askExportPath(
      tr("Export %1").arg(frame->title()),
      QDir(AppSettings::lastExportDir())
          .filePath((name.isEmpty() ? QStringLiteral("plot") : name) + QStringLiteral(".png")),
      tr("PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf);;CSV data (*.csv)"));
  if (path.isEmpty()) return;
  if (QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".png");
  const QString error = exportPlot(frame->plot(), path, 0, 0, frame->title());
  if (!error.isEmpty())
    QMessageBox::warning(this, tr("Export failed"), error);
  else
    statusBar()->showMessage(tr("Wrote %1 to %2").arg(frame->title(), path), 8000);
}

void MainWindow::exportTableCsv(const QTableView* table, const QString& baseName) {
  if (!table || !table->model()) return;
  const QString path =
      askExportPath(tr("Export CSV"),
                    QDir(AppSettings::lastExportDir()).filePath(baseName + QStringLiteral(".csv")),
                    tr("CSV files (*.csv)"));
  if (path.isEmpty()) return;
  const QString error = writeTableCsv(table->model(), path, table);
  if (!error.isEmpty())
    QMessageBox::warning(this, tr("Export CSV"), error);
  else
    statusBar()->showMessage(tr("Wrote %1").arg(path), 8000);
}

void MainWindow::showWorkspace(Workspace workspace) {
  m_tabs->setCurrentIndex(int(workspace));
}

MainWindow::Workspace MainWindow::currentWorkspace() const {
  return Workspace(m_tabs->currentIndex());
}

void MainWindow::startRun() {
  if (!m_doc->canRun()) {
    showWorkspace(kDesign);
    statusBar()->showMessage(
        tr("Cannot run: %1").arg(m_doc->blockReason().section(QLatin1Char('\n'), 0, 0)), 8000);
    return;
  }
  showWorkspace(kTrain);
  m_train->startRun();
}

void MainWindow::startStudy() {
  showWorkspace(kTrain);
  if (m_train->startStudy() && m_runs) m_runs->poll();
}

ReportView* MainWindow::reportView() const {
  return m_reportView.data();
}

void MainWindow::askReport() {
  QMessageBox box(QMessageBox::Question, tr("Replication report"),
                  tr("Check each of the paper's findings (gradient similarity, communication, "
                     "memory, throughput over stages, accuracy, overlapping updates, the "
                     "compute/time front, random labels) against runs of “%1”, made on this "
                     "machine, one study per finding. Runs already in the store with the same "
                     "spec and seed are reused; throughput is measured anew.")
                      .arg(QString::fromStdString(m_doc->spec().name)),
                  QMessageBox::Cancel, this);
  // The plan each would queue, timed by this store's runs (issue 36: "about 10 minutes" was
  // said of a full report that queued 131 runs and took 2 h 17 min).
  const std::string base = engine::specToJson(m_doc->spec());
  const QDateTime now = QDateTime::currentDateTime();
  box.setInformativeText(
      TrainWorkspace::describeEstimate(m_train->estimateReport(base, true), true, now) +
      QStringLiteral("\n\n") +
      TrainWorkspace::describeEstimate(m_train->estimateReport(base, false), false, now) +
      QStringLiteral("\n\n") +
      tr("Quick: 2 seeds; full: 3 seeds. Each choice's lengths are given above."));
  QPushButton* quick = box.addButton(tr("Quick report"), QMessageBox::AcceptRole);
  QPushButton* full = box.addButton(tr("Full report"), QMessageBox::AcceptRole);
  box.setDefaultButton(quick);
  box.exec();
  if (box.clickedButton() == quick || box.clickedButton() == full)
    startReport(box.clickedButton() == quick);
}

QStringList MainWindow::unsavedEditsNote() const {
  // issue 36 §1.7: the report's base is the design as shown, unsaved edits included; say so,
  // and which of the keys that set its lengths they changed, so it is not mistaken for the
  // saved file's (the CLI reads the file).
  if (!m_doc->isModified()) return {};
  const engine::ExperimentSpec& now = m_doc->spec();
  QStringList changed;
  if (!m_doc->filePath().isEmpty()) {
    try {
      const engine::ExperimentSpec saved = readSpecFile(m_doc->filePath());
      const auto differs = [&](const char* key, long long was, long long is) {
        if (was != is)
          changed << QStringLiteral("%1=%2 (saved: %3)").arg(QLatin1String(key)).arg(is).arg(was);
      };
      differs("train.max_steps", saved.train.maxSteps, now.train.maxSteps);
      differs("train.epochs", saved.train.epochs, now.train.epochs);
      differs("train.batch_size", saved.train.batchSize, now.train.batchSize);
    } catch (const std::exception&) {
      // the saved file cannot be read: the note below still says the edits were used
    }
  }
  const QString where =
      m_doc->filePath().isEmpty() ? tr("the design (never saved)") : m_doc->filePath();
  return {changed.isEmpty()
              ? tr("the base is %1 with its unsaved edits, as shown in Design").arg(where)
              : tr("the base is %1 with its unsaved edits, which change the lengths: %2")
                    .arg(where, changed.join(QStringLiteral(", ")))};
}

bool MainWindow::startReport(bool quick) {
  if (!m_doc->canRun()) {
    showWorkspace(kDesign);
    statusBar()->showMessage(
        tr("Cannot make the report: %1").arg(m_doc->blockReason().section(QLatin1Char('\n'), 0, 0)),
        8000);
    return false;
  }
  showWorkspace(kTrain);
  if (!m_train->startReport(engine::specToJson(m_doc->spec()), quick, unsavedEditsNote()).isEmpty())
    return false;
  if (m_runs) m_runs->poll();
  return true;
}

void MainWindow::resumeFromCheckpoint(const QString& chosen) {
  QString path = chosen;
  if (path.isEmpty())
    path = QFileDialog::getExistingDirectory(
        this, tr("Checkpoint to resume (a step-N folder, or the folder holding them)"),
        QString::fromStdString(engine::defaultCheckpointDir("x")).section(QLatin1Char('/'), 0, -2));
  if (path.isEmpty()) return;
  if (m_runs) {
    m_runs->resumeCheckpoint(path);  // finds the stored run it belongs to, off this thread
    return;
  }
  try {
    startResume(resumeTargetForCheckpoint(nullptr, path.toStdString()));
  } catch (const std::exception& e) {
    QMessageBox::warning(this, tr("Cannot resume"), QString::fromStdString(e.what()));
  }
}

void MainWindow::startResume(const ResumeTarget& target) {
  if (m_controller->isBusy()) {
    statusBar()->showMessage(tr("A run is in progress: stop it before resuming another"), 8000);
    return;
  }
  showWorkspace(kTrain);
  const QString title = QString::fromStdString(target.title);
  if (m_train->resumeRun(target.spec, {target.checkpoint, target.runId}, title))
    statusBar()->showMessage(tr("Resuming %1 from step %2").arg(title).arg(target.step), 8000);
}

void MainWindow::chooseStore() {
  const QString current =
      m_store ? QString::fromStdString(m_store->path()) : AppSettings::storePath();
  const QString path = QFileDialog::getSaveFileName(this, tr("Run store"), current,
                                                    tr("Run store (*.db);;All files (*)"), nullptr,
                                                    QFileDialog::DontConfirmOverwrite);
  if (path.isEmpty()) return;
  AppSettings::setStorePath(path);
  m_chosenStore = path;
  QMessageBox::information(this, tr("Run store"),
                           tr("Stagewise will keep runs in %1 from its next start (unless --db or "
                              "STAGEWISE_DB says otherwise).")
                               .arg(path));
}

void MainWindow::updateRecentMenu() {
  m_recentMenu->clear();
  const QStringList files = AppSettings::recentFiles();
  for (int i = 0; i < int(files.size()); ++i) {
    const QString& path = files[i];
    QAction* a =
        m_recentMenu->addAction(QStringLiteral("&%1 %2").arg(i + 1).arg(QFileInfo(path).fileName()),
                                this, [this, path] { m_design->openFile(path); });
    a->setToolTip(path);
    a->setStatusTip(path);
  }
  if (files.isEmpty()) m_recentMenu->addAction(tr("No recent experiments"))->setEnabled(false);
  m_recentMenu->addSeparator();
  QAction* clear = m_recentMenu->addAction(tr("&Clear the list"), this, [this] {
    AppSettings::clearRecentFiles();
    updateRecentMenu();
  });
  clear->setEnabled(!files.isEmpty());
}

QString MainWindow::droppedSpec(const QMimeData* mime) {
  if (!mime || !mime->hasUrls() || mime->urls().size() != 1) return {};
  const QUrl url = mime->urls().front();
  if (!url.isLocalFile()) return {};
  const QString path = url.toLocalFile();
  const bool model = path.endsWith(QStringLiteral(".pt"), Qt::CaseInsensitive) ||
                     path.endsWith(QStringLiteral(".pth"), Qt::CaseInsensitive);
  return path.endsWith(QStringLiteral(".json"), Qt::CaseInsensitive) || model ? path : QString();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (!droppedSpec(event->mimeData()).isEmpty()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  if (openDropped(event->mimeData())) event->acceptProposedAction();
}

bool MainWindow::openDropped(const QMimeData* mime) {
  const QString path = droppedSpec(mime);
  if (path.isEmpty()) return false;
  // Opened after the drop returns: the unsaved-changes question must not run inside it.
  QTimer::singleShot(0, this, [this, path] {
    const bool model = !path.endsWith(QStringLiteral(".json"), Qt::CaseInsensitive);
    if (model ? m_design->importModel(path) : m_design->openFile(path)) showWorkspace(kDesign);
  });
  return true;
}

QString MainWindow::shortcutsText() const {
  // Read from the menus themselves, so the list is never out of date.
  QString html = QStringLiteral("<table cellspacing='4'>");
  for (QAction* menuAction : menuBar()->actions()) {
    QMenu* menu = menuAction->menu();
    if (!menu) continue;
    for (QAction* a : menu->actions()) {
      if (a->isSeparator() || a->shortcuts().isEmpty()) continue;
      // The keys a keyboard has: a standard key's extra bindings (F14, the Sun Undo key) are
      // left out of the list, as the menus leave them out.
      static const QRegularExpression kExtraKey(QStringLiteral("(^|\\+)F(1[3-9]|2\\d|3[0-5])$"));
      QStringList keys;
      for (const QKeySequence& k : a->shortcuts()) {
        const QString text = k.toString(QKeySequence::NativeText);
        if (!kExtraKey.match(text).hasMatch()) keys << text;
      }
      if (keys.isEmpty()) continue;
      const QString listed = a->property("listedAs").toString();
      html +=
          QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>")
              .arg(
                  keys.join(QStringLiteral(" or ")).toHtmlEscaped(),
                  QString(listed.isEmpty() ? a->text() : listed)
                      .remove(QLatin1Char('&'))
                      .toHtmlEscaped());
    }
  }
  html += QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>")
              .arg(tr("Click a gap / a cut"), tr("Cut there / join the stages (Design canvas)"));
  html +=
      QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>")
          .arg(tr("Wheel, drag, double-click"), tr("Zoom, pan, follow the newest data (plots)"));
  html += QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>")
              .arg(tr("+ / −, ← / →, Space, End").toHtmlEscaped(),
                   tr("Zoom, scroll back, pause, follow (the Timeline, once clicked)"));
  return html + QStringLiteral("</table>");
}

void MainWindow::showCommandPalette() {
  updateExportActions();  // the palette lists what is enabled now
  if (!m_palette) m_palette = new CommandPalette(menuBar(), this);
  m_palette->popup();
}

void MainWindow::showShortcuts() {
  QMessageBox box(QMessageBox::Information, tr("Keyboard shortcuts"), shortcutsText(),
                  QMessageBox::Close, this);
  box.setObjectName(QStringLiteral("shortcutsBox"));
  box.setTextFormat(Qt::RichText);
  box.exec();
}

void MainWindow::openGuide() {
  const QString path = userGuidePath();
  if (path.isEmpty() || !QDesktopServices::openUrl(QUrl::fromLocalFile(path)))
    QMessageBox::information(this, tr("User guide"),
                             path.isEmpty()
                                 ? tr("The user guide is docs/user-guide.md in Stagewise's source.")
                                 : tr("The user guide is %1.").arg(path));
}

QString MainWindow::userGuidePath() {
  // Next to the build (bin/../docs), installed (share/doc/stagewise), or the source tree.
  const QString app = QCoreApplication::applicationDirPath();
  for (const QString& candidate : {app + QStringLiteral("/../../docs/user-guide.md"),
                                   app + QStringLiteral("/../../../docs/user-guide.md"),
                                   app + QStringLiteral("/../share/doc/stagewise/user-guide.md"),
                                   QString::fromUtf8(STAGEWISE_SOURCE_DIR "/docs/user-guide.md")})
    if (QFileInfo::exists(candidate)) return QFileInfo(candidate).canonicalFilePath();
  return {};
}

void MainWindow::about() {
  showAboutDialog(this, m_services.engine,
                  m_store ? QString::fromStdString(m_store->path()) : QString());
}

void MainWindow::setTheme(bool dark) {
  const Theme theme = dark ? Theme::Dark : Theme::Light;
  applyTheme(*qApp, theme);
  AppSettings::setTheme(theme);
}

void MainWindow::updateTitle() {
  QString name = QString::fromStdString(m_doc->spec().name);
  if (name.isEmpty()) name = tr("untitled");
  setWindowTitle(tr("%1[*] — Stagewise").arg(name));
  setWindowModified(m_doc->isModified());
}

void MainWindow::updateRunActions() {
  const bool idle = !m_controller->isBusy();
  m_runAction->setEnabled(idle && m_doc->canRun());
  m_runAction->setToolTip(m_doc->canRun() ? tr("Train the experiment (Ctrl+R)")
                                          : tr("Cannot run:\n%1").arg(m_doc->blockReason()));
  m_pauseAction->setEnabled(!idle);
  m_resumeAction->setEnabled(idle && m_controller->canResume());
  m_stopAction->setEnabled(!idle);
  m_studyAction->setEnabled(idle && !m_train->studyQueue()->isRunning());
  m_reportAction->setEnabled(idle && m_store && !m_train->studyQueue()->isRunning());
}

MainWindow::QuitAnswer MainWindow::askStopAndQuit(bool designModified) {
  QMessageBox box(QMessageBox::Question, tr("A run is in progress"),
                  designModified ? tr("Stop the run and quit? The experiment also has unsaved "
                                      "changes.")
                                 : tr("Stop the run and quit?"),
                  QMessageBox::NoButton, this);
  box.setObjectName(QStringLiteral("stopAndQuitBox"));
  box.setInformativeText(
      tr("The run is paused while you decide. Stopping keeps it in the run store as stopped, "
         "with every point it has reported (and a checkpoint, if checkpointing is on). Cancel "
         "lets it train on."));
  QPushButton* save = nullptr;
  if (designModified) save = box.addButton(tr("Save, stop and quit"), QMessageBox::AcceptRole);
  QPushButton* stop =
      box.addButton(designModified ? tr("Stop and quit without saving") : tr("Stop and quit"),
                    designModified ? QMessageBox::DestructiveRole : QMessageBox::AcceptRole);
  box.addButton(QMessageBox::Cancel);
  box.setDefaultButton(QMessageBox::Cancel);
  box.exec();
  if (save && box.clickedButton() == save) return QuitAnswer::SaveStopAndQuit;
  if (box.clickedButton() == stop) return QuitAnswer::StopAndQuit;
  return QuitAnswer::Cancel;
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (m_quitWhenStopped) {
    // Closing again while the run stops changes nothing; the close that planFinished queues
    // finds the controller idle and goes through.
    if (m_controller->isBusy()) {
      event->ignore();
      return;
    }
    saveRunsMeta();
    saveSession();
    saveWindow();
    event->accept();
    return;
  }
  if (m_controller->isBusy()) {
    // Ask everything first, with the run paused so the answer decides how it ends (it cannot
    // complete behind the question); then stop; then quit once the store has the run.
    const bool wasPaused = m_controller->state() == EngineController::State::Paused;
    if (!wasPaused) m_controller->pause();
    const QuitAnswer answer = askStopAndQuit(m_doc->isModified());
    const bool saved = answer != QuitAnswer::SaveStopAndQuit || m_design->save();
    if (answer == QuitAnswer::Cancel || !saved) {
      if (!wasPaused) m_controller->resume();
      event->ignore();
      return;
    }
    if (!m_controller->isBusy()) {  // it ended meanwhile (a failure): nothing to stop
      saveSession();
      saveWindow();
      event->accept();
      return;
    }
    // The window stays until the run has stopped and the store has its final status and
    // points: quitting at once would leave the joining to the destructor, after the window is
    // gone, with nothing to say why the process is still there.
    m_quitWhenStopped = true;
    m_train->studyQueue()->stopStudy();  // no next run: the study stays resumable
    m_controller->stop();
    centralWidget()->setEnabled(false);
    menuBar()->setEnabled(false);
    statusBar()->showMessage(tr("Stopping the run and saving it, then quitting…"));
    connect(m_controller, &EngineController::planFinished, this, &QWidget::close,
            Qt::QueuedConnection);
    event->ignore();
    return;
  }
  if (!m_design->maybeDiscard()) {
    event->ignore();
    return;
  }
  saveRunsMeta();
  saveSession();
  saveWindow();
  event->accept();
}

void MainWindow::saveRunsMeta() {
  // Tags and notes typed in Runs and not saved yet are saved, not dropped, when the window
  // closes; the store's thread finishes the write before the window goes.
  if (!m_runs || !m_runs->hasUnsavedMeta()) return;
  m_runs->saveNotesAndTags();
  m_runs->executor()->waitIdle();
}

}  // namespace stagewise::ui
