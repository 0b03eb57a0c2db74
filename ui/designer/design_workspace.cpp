#include "designer/design_workspace.h"

#include <QFileDialog>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QMessageBox>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QStyle>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include "common/format.h"
#include "common/spec_io.h"
#include "common/wheel_guard.h"
#include "designer/estimate_panel.h"
#include "designer/model_family_form.h"
#include "designer/model_panel.h"
#include "designer/network_scene.h"
#include "designer/network_view.h"
#include "designer/stage_inspector.h"
#include "designer/study_panel.h"
#include "stagewise/engine/torchscript.h"

namespace stagewise::ui {

static QToolButton* toolButton(const QString& text, const QString& tip, QWidget* parent) {
  auto* b = new QToolButton(parent);
  b->setText(text);
  b->setToolTip(tip);
  b->setAutoRaise(true);
  return b;
}

DesignWorkspace::DesignWorkspace(DesignDocument* doc, QWidget* parent)
    : QWidget(parent), m_doc(doc) {
  m_model = new ModelPanel(doc, this);
  auto* modelScroll = new QScrollArea(this);
  modelScroll->setWidget(m_model);
  modelScroll->setWidgetResizable(true);
  modelScroll->setFrameShape(QFrame::NoFrame);
  modelScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  // Never narrower than the forms (no horizontal scroll bar to reach a clipped field), with
  // room for the vertical scroll bar the training settings need on smaller screens.
  const int modelWidth = m_model->minimumSizeHint().width() +
                         style()->pixelMetric(QStyle::PM_ScrollBarExtent) +
                         2 * modelScroll->frameWidth() + 4;
  modelScroll->setMinimumWidth(std::max(330, modelWidth));
  guardWheel(modelScroll, m_model);

  m_scene = new NetworkScene(doc, this);
  m_view = new NetworkView(m_scene, this);
  m_view->setToolTip(
      tr("Click between two layers to cut or join stages; drag a cut's grip to "
         "move it; click a layer to inspect its stage. Ctrl+wheel zooms."));
  auto* zoomIn = toolButton(QStringLiteral("+"), tr("Zoom in (Ctrl+wheel)"), this);
  auto* zoomOut = toolButton(QStringLiteral("−"), tr("Zoom out"), this);
  auto* fit = toolButton(tr("Fit"), tr("Fit the network to the view"), this);
  m_summary = new QLabel(this);
  // Wraps in a narrow canvas: on one line its width was the canvas's least and made Design
  // wider than a 1200-px window (issue 36: opening Design widened the window to 1273 px).
  m_summary->setWordWrap(true);
  auto* canvasBar = new QHBoxLayout;
  canvasBar->addWidget(m_summary, 1);
  canvasBar->addWidget(zoomOut);
  canvasBar->addWidget(zoomIn);
  canvasBar->addWidget(fit);
  auto* canvas = new QWidget(this);
  auto* canvasLayout = new QVBoxLayout(canvas);
  canvasLayout->setContentsMargins(0, 0, 0, 0);
  canvasLayout->addLayout(canvasBar);
  canvasLayout->addWidget(m_view, 1);

  m_inspector = new StageInspector(doc, this);
  m_estimate = new EstimatePanel(doc, this);
  auto* inspectorBox = new QGroupBox(tr("Stage"), this);
  (new QVBoxLayout(inspectorBox))->addWidget(m_inspector);
  // The estimate and the study share the space below the stage: tabs.
  m_study = new StudyPanel(doc, this);
  m_study->setRateSource([this] { return m_estimate->methodEstimate(); });
  m_sideTabs = new QTabWidget(this);
  m_sideTabs->setDocumentMode(true);
  auto* estimatePage = new QWidget(this);
  (new QVBoxLayout(estimatePage))->addWidget(m_estimate);
  auto* studyPage = new QWidget(this);
  auto* studyLayout = new QVBoxLayout(studyPage);
  studyLayout->addWidget(m_study);
  studyLayout->addStretch(1);
  m_sideTabs->addTab(estimatePage, tr("Estimate"));
  m_sideTabs->addTab(studyPage, tr("Study"));
  m_sideTabs->setTabToolTip(1, tr("Sweep settings over values and seeds, or search them (each "
                                  "method at its own best settings); the runs queue in Train and "
                                  "are grouped in Runs (right-click a field → Vary…)"));
  connect(m_estimate, &EstimatePanel::methodEstimateChanged, m_study, &StudyPanel::refresh);
  connect(m_estimate, &EstimatePanel::message, this, &DesignWorkspace::message);
  connect(m_model, &ModelPanel::varyRequested, this, [this, studyPage](const QString& key) {
    m_sideTabs->setCurrentWidget(studyPage);
    m_study->vary(key);
  });
  connect(m_study, &StudyPanel::runsChanged, this, [this](int runs) {
    m_sideTabs->setTabText(1, runs > 0 ? tr("Study (%1 runs)").arg(runs) : tr("Study"));
  });
  connect(m_study, &StudyPanel::runStudyRequested, this, &DesignWorkspace::studyRequested);
  connect(m_study, &StudyPanel::message, this, &DesignWorkspace::message);
  auto* rightPanel = new QWidget(this);
  auto* rightLayout = new QVBoxLayout(rightPanel);
  rightLayout->setContentsMargins(0, 0, 0, 0);
  rightLayout->addWidget(inspectorBox);
  rightLayout->addWidget(m_sideTabs, 1);
  // Scrolls rather than forcing the window taller than the screen: the estimate's boundary
  // table grows with the stage count, and at 1366x768 it was drawn over the chart.
  auto* right = new QScrollArea(this);
  right->setWidget(rightPanel);
  right->setWidgetResizable(true);
  right->setFrameShape(QFrame::NoFrame);
  // Its labels wrap to the column; a column dragged narrower than its fields scrolls to them
  // instead of cutting them off at the window's edge (issue 36 walkthrough, 1366 px).
  right->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
  right->setMinimumWidth(320 + style()->pixelMetric(QStyle::PM_ScrollBarExtent));
  guardWheel(right, rightPanel);

  auto* splitter = new QSplitter(Qt::Horizontal, this);
  splitter->addWidget(modelScroll);
  splitter->addWidget(canvas);
  splitter->addWidget(right);
  splitter->setStretchFactor(0, 0);
  splitter->setStretchFactor(1, 1);
  splitter->setStretchFactor(2, 0);
  splitter->setSizes({std::max(340, modelWidth), 640, 380});

  m_problems = new QListWidget(this);
  m_problems->setMaximumHeight(72);
  m_problems->setToolTip(tr("What blocks the run. Fix these, or undo (Ctrl+Z)."));
  m_run = new QPushButton(tr("Run ▶"), this);
  m_run->setMinimumHeight(40);
  m_run->setMinimumWidth(120);
  auto* bottom = new QHBoxLayout;
  bottom->addWidget(m_problems, 1);
  bottom->addWidget(m_run, 0, Qt::AlignBottom);

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(splitter, 1);
  layout->addLayout(bottom);

  connect(zoomIn, &QToolButton::clicked, m_view, &NetworkView::zoomIn);
  connect(zoomOut, &QToolButton::clicked, m_view, &NetworkView::zoomOut);
  connect(fit, &QToolButton::clicked, m_view, &NetworkView::zoomToFit);
  connect(m_run, &QPushButton::clicked, this, &DesignWorkspace::runRequested);
  connect(m_model, &ModelPanel::presetChosen, this, &DesignWorkspace::openFile);
  connect(m_model->familyForm(), &ModelFamilyForm::importRequested, this,
          &DesignWorkspace::importWithDialog);
  connect(doc, &DesignDocument::changed, this, &DesignWorkspace::refresh);
  refresh();
}

void DesignWorkspace::refresh() {
  const auto& plan = m_doc->plan();
  if (m_doc->invalidLayer() >= 0) {
    // Only the layers before the bad one are planned: say so, not a smaller network's counts.
    m_summary->setText(tr("layers 1–%1 planned; layer %2 does not fit (see below): no totals yet")
                           .arg(plan.layers.size())
                           .arg(m_doc->invalidLayer() + 1));
  } else {
    m_summary->setText(
        tr("%1 layers · %2 stages · %3 params · %4 FLOPs/sample")
            .arg(plan.layers.size())
            .arg(m_doc->spec().stageCount())
            .arg(formatCount(double(plan.totalParams())), formatCount(double(plan.totalFlops()))));
  }
  m_problems->clear();
  for (const auto& p : m_doc->problems()) {
    auto* item =
        new QListWidgetItem(QStringLiteral("⚠ ") + DesignDocument::problemText(p), m_problems);
    if (!p.field.empty()) item->setToolTip(tr("Spec key: %1").arg(QString::fromStdString(p.field)));
    item->setForeground(QColor(0xd0, 0x30, 0x30));
  }
  // The spec's mode is not pipeline, but Train may run it so: what that run would refuse.
  for (const auto& p : m_doc->pipelineWarnings()) {
    auto* item = new QListWidgetItem(
        tr("⚠ Pipelined backprop only: %1").arg(DesignDocument::problemText(p)), m_problems);
    item->setToolTip(tr("Spec key: %1\nA pipelined backprop run of this spec is refused until "
                        "this is fixed; local and backprop runs do not read it.")
                         .arg(QString::fromStdString(p.field)));
    item->setForeground(QColor(0xb0, 0x70, 0x00));
  }
  if (m_doc->problems().empty())
    (new QListWidgetItem(m_doc->pipelineWarnings().empty()
                             ? tr("✓ Ready to run")
                             : tr("✓ Ready to run in local and backprop mode"),
                         m_problems))
        ->setForeground(QColor(0x2e, 0x8b, 0x3e));
  m_run->setEnabled(m_doc->canRun());
  m_run->setToolTip(m_doc->canRun() ? tr("Train this experiment (Ctrl+R)")
                                    : tr("Cannot run:\n%1").arg(m_doc->blockReason()));
}

bool DesignWorkspace::maybeDiscard() {
  if (!m_doc->isModified()) return true;
  const auto answer = QMessageBox::question(
      this, tr("Unsaved changes"), tr("The experiment has unsaved changes. Save them first?"),
      QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
  if (answer == QMessageBox::Save) return save();
  return answer == QMessageBox::Discard;
}

bool DesignWorkspace::openFile(const QString& path) {
  if (!maybeDiscard()) return false;
  try {
    study::StudyObject study;
    const auto spec = readExperimentFile(path, study);
    // Presets live in the resources: saving one must ask for a real file.
    m_doc->load(spec, path.startsWith(QLatin1Char(':')) ? QString() : path, study);
    Q_EMIT message(tr("Opened %1").arg(path));
    return true;
  } catch (const engine::SpecError& e) {
    QMessageBox::warning(this, tr("Cannot open experiment"), QString::fromStdString(e.what()));
    return false;
  }
}

void DesignWorkspace::openWithDialog() {
  const QString path =
      QFileDialog::getOpenFileName(this, tr("Open experiment"), m_doc->filePath(),
                                   tr("Experiments (*.stagewise.json *.json);;All files (*)"));
  if (!path.isEmpty()) openFile(path);
}

bool DesignWorkspace::importModel(const QString& path) {
  // The file first: a corrupt or foreign one is refused before unsaved edits are asked about.
  engine::ExperimentSpec spec;
  try {
    engine::ExperimentSpec base = m_doc->spec();
    base.name.clear();
    base.partition = engine::PartitionSpec{};
    base.stages.clear();  // per-stage settings of the old cut: the model is cut anew
    // A head that only fits the open experiment's family (a ViT's token head, a CNN's conv head,
    // a GPT's lm head) would refuse the new model: the linear head fits any output.
    for (std::string* head : {&base.stageDefaults.auxHead})
      if (*head == "token" || *head == "conv" || *head == "lm") *head = "linear";
    spec = engine::importTorchScript(base, path.toStdString());
  } catch (const std::exception& e) {
    // The engine's refusal is one line naming the file; anything else is cut to its first.
    QMessageBox::warning(this, tr("Cannot import model"),
                         QString::fromStdString(e.what()).section(QLatin1Char('\n'), 0, 0));
    return false;
  }
  if (!maybeDiscard()) return false;
  m_doc->load(spec);  // unsaved: Save asks where
  Q_EMIT message(tr("Imported %1: %2 stage(s); cut it by clicking between layers")
                     .arg(path)
                     .arg(spec.stageCount()));
  return true;
}

void DesignWorkspace::importWithDialog() {
  const QString path = QFileDialog::getOpenFileName(
      this, tr("Import a TorchScript model (torch.jit.script(model).save(path))"), QString(),
      tr("TorchScript models (*.pt *.pth *.ts);;All files (*)"));
  if (!path.isEmpty()) importModel(path);
}

void DesignWorkspace::newExperiment() {
  if (!maybeDiscard()) return;
  m_doc->load(defaultSpec());
}

bool DesignWorkspace::save() {
  if (m_doc->filePath().isEmpty()) return saveAs();
  const QString error = writeSpecFile(m_doc->filePath(), m_doc->spec(), m_doc->study());
  if (!error.isEmpty()) {
    QMessageBox::warning(this, tr("Cannot save experiment"),
                         tr("%1: %2").arg(m_doc->filePath(), error));
    return false;
  }
  m_doc->markSaved();
  Q_EMIT message(tr("Saved %1").arg(m_doc->filePath()));
  return true;
}

bool DesignWorkspace::saveAs() {
  QString suggested = m_doc->filePath();
  // New files get the experiment suffix the desktop knows Stagewise by (*.stagewise.json);
  // any .json name the user types is kept as it is.
  if (suggested.isEmpty())
    suggested =
        QString::fromStdString(m_doc->spec().name.empty() ? "experiment" : m_doc->spec().name) +
        QLatin1String(kExperimentSuffix);
  QString path = QFileDialog::getSaveFileName(
      this, tr("Save experiment"), suggested,
      tr("Stagewise experiments (*%1);;JSON (*.json)").arg(QLatin1String(kExperimentSuffix)));
  if (path.isEmpty()) return false;
  if (!path.endsWith(QStringLiteral(".json"), Qt::CaseInsensitive))
    path += QLatin1String(kExperimentSuffix);
  m_doc->setFilePath(path);
  return save();
}

}  // namespace stagewise::ui
