#include "live/live_dashboard.h"

#include <QCheckBox>
#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QVBoxLayout>

#include <cmath>

#include "common/app_settings.h"
#include "live/plot_panel.h"
#include "live/timeline_panel.h"
#include "live/utilization_panel.h"

namespace stagewise::ui {

namespace s = engine::series;

LiveDashboard::LiveDashboard(LiveData* data, QWidget* parent) : QWidget(parent), m_data(data) {
  m_loss = new PlotPanel(tr("Local loss"), tr("nats"), data, this);
  m_loss->addRule({s::kLoss, true, {}, Qt::SolidLine, 1.3, {}});
  m_loss->addRule({s::kTestLoss, false, tr("test"), Qt::SolidLine, 2.0, {}, true, false, true});
  m_loss->addRule({s::kValLoss, false, tr("val"), Qt::DashLine, 2.0, {}, true, false, true});
  m_accuracy = new PlotPanel(tr("Accuracy"), tr("fraction correct"), data, this);
  m_accuracy->addRule({s::kAccuracy, true, tr(" local"), Qt::SolidLine, 1.2, {}});
  m_accuracy->addRule(
      {s::kTestAccuracy, false, tr("test"), Qt::SolidLine, 2.0, {}, true, false, true});
  m_accuracy->addRule(
      {s::kValAccuracy, false, tr("val"), Qt::DashLine, 2.0, {}, true, false, true});
  m_accuracy->setFixedYRange(0, 1);
  m_cosine = new PlotPanel(tr("Gradient cosine (local vs true)"), tr("cosine"), data, this);
  m_cosine->addRule({s::kGradCosine, true, {}, Qt::SolidLine, 1.8, {}, true});
  m_cosine->setFixedYRange(-1, 1.05);
  m_cosineScope = new QComboBox(this);
  m_cosineScope->addItem(tr("per stage"));
  m_cosineScope->addItem(tr("per layer"));
  m_cosineScope->setToolTip(
      tr("Per stage: the cosine over all of a stage's parameters. Per layer: one curve per "
         "layer (its own parameters only), in its stage's colour; shows which layers of a "
         "stage the local loss steers away from the end-to-end gradient."));
  m_cosine->setCornerWidget(m_cosineScope);
  m_throughput = new PlotPanel(tr("Throughput"), tr("samples/s"), data, this);
  m_throughput->addRule(
      {s::kSamplesPerSec, false, tr("samples/s"), Qt::SolidLine, 1.8, {}, false, false, true});
  m_queue = new PlotPanel(tr("Queue depth and staleness"), tr("items / steps"), data, this);
  m_queue->addRule({s::kQueueDepth, true, tr(" queue"), Qt::SolidLine, 1.2, {}});
  m_queue->addRule({s::kStaleness, true, tr(" stale"), Qt::DashLine, 1.2, {}});
  // What the methods measure and the paper compares: bytes across each boundary (forward;
  // gradients back in pipeline mode and with overlap) and each stage's memory.
  m_bytes = new PlotPanel(tr("Bytes sent (measured, cumulative)"), tr("bytes"), data, this);
  m_bytes->setYBytes(true);
  m_bytes->addRule({s::kBytesSent, true, tr(" fwd"), Qt::SolidLine, 1.3, {}});
  m_bytes->addRule({s::kGradBytesSent, true, tr(" grad back"), Qt::DashLine, 1.3, {}});
  m_bytes->setToolTip(
      tr("fwd: activations and labels each stage sent downstream; grad back: the boundary "
         "gradients it sent upstream (pipeline mode, overlapping updates). Both measured."));
  m_memory = new PlotPanel(tr("Memory per stage (peak)"), tr("bytes"), data, this);
  m_memory->setYBytes(true);
  m_memory->addRule({s::kMemoryBytes, true, tr(" allocator"), Qt::SolidLine, 1.3, {}});
  m_memory->addRule({s::kActivationBytes, true, tr(" activations"), Qt::DotLine, 1.3, {}});
  m_memory->setToolTip(
      tr("allocator: the most bytes the CPU allocator held for the stage's thread at once "
         "(activations, gradients, optimizer state, temporaries; the weights are created "
         "before the run). activations: the tensors the stage kept for its backward pass."));
  m_utilization = new UtilizationPanel(data, this);
  m_timeline = new TimelinePanel(data, this);

  m_smoothing = new QSlider(Qt::Horizontal, this);
  m_smoothing->setRange(0, 99);
  m_smoothing->setMaximumWidth(200);
  m_smoothing->setToolTip(
      tr("Smoothing: exponential moving average weight, debiased so the "
         "first points are not pulled towards zero."));
  m_smoothingValue = new QLabel(QStringLiteral("0.00"), this);
  m_smoothingValue->setMinimumWidth(
      m_smoothingValue->fontMetrics().horizontalAdvance(QStringLiteral("0.000")));
  m_xAxis = new QComboBox(this);
  m_xAxis->addItem(tr("x: step"));
  m_xAxis->addItem(tr("x: wall time"));
  m_xAxis->setToolTip(
      tr("Plot against each stage's own step, or against time since the start "
         "(in local mode stages are at different steps at the same moment)."));
  m_logLoss = new QCheckBox(tr("Log-scale loss"), this);
  m_phaseView = new QComboBox(this);
  m_phaseView->setToolTip(
      tr("Which run of the plan the utilization and timeline panels show: each mode has its "
         "own stages (backprop has one, the whole model)."));
  m_phaseView->setVisible(false);
  auto* follow = new QPushButton(tr("Follow all"), this);
  follow->setToolTip(tr("Zoom every panel back out to the newest data (or double-click one)."));

  auto* controls = new QHBoxLayout;
  controls->addWidget(new QLabel(tr("Smoothing"), this));
  controls->addWidget(m_smoothing);
  controls->addWidget(m_smoothingValue);
  controls->addSpacing(16);
  controls->addWidget(m_xAxis);
  controls->addWidget(m_logLoss);
  controls->addWidget(m_phaseView);
  controls->addWidget(follow);
  controls->addStretch();

  auto* grid = new QGridLayout;
  grid->setSpacing(6);
  grid->addWidget(m_loss, 0, 0);
  grid->addWidget(m_accuracy, 0, 1);
  grid->addWidget(m_cosine, 0, 2);
  grid->addWidget(m_utilization, 1, 0);
  grid->addWidget(m_timeline, 1, 1);
  grid->addWidget(m_throughput, 1, 2);
  grid->addWidget(m_queue, 2, 0);
  grid->addWidget(m_bytes, 2, 1);
  grid->addWidget(m_memory, 2, 2);
  grid->setRowStretch(0, 3);
  grid->setRowStretch(1, 3);
  grid->setRowStretch(2, 2);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(controls);
  layout->addLayout(grid, 1);

  // At most 4 redraws a second while training: the UI thread shares the cores with the engine's
  // compute threads (OpenMP regions stall while any of their threads is descheduled), so every
  // redraw costs training throughput. Pause, stop and finish redraw at once (setLive(false),
  // TrainWorkspace), so the final curves never wait for the timer.
  m_replot.setInterval(kLiveRedrawMs);
  connect(&m_replot, &QTimer::timeout, this, [this] { refreshAll(); });
  connect(m_smoothing, &QSlider::valueChanged, this, [this](int v) {
    m_smoothingValue->setText(QString::number(v / 100.0, 'f', 2));
    m_data->setSmoothing(v / 100.0);
    refreshAll(true);
  });
  m_smoothing->setValue(int(std::lround(AppSettings::smoothing() * 100)));
  connect(m_smoothing, &QSlider::valueChanged, this,
          [](int v) { AppSettings::setSmoothing(v / 100.0); });
  connect(m_xAxis, &QComboBox::currentIndexChanged, this, [this](int index) {
    for (auto* p : linePanels()) p->setXAxis(index == 0 ? XAxisKind::Step : XAxisKind::Time);
  });
  connect(m_logLoss, &QCheckBox::toggled, m_loss, &PlotPanel::setLogY);
  // The x axis and the log scale reopen as they were left (session restore).
  m_xAxis->setCurrentIndex(AppSettings::trainXAxis());
  m_logLoss->setChecked(AppSettings::trainLogLoss());
  connect(m_xAxis, &QComboBox::currentIndexChanged, this, &AppSettings::setTrainXAxis);
  connect(m_logLoss, &QCheckBox::toggled, this, &AppSettings::setTrainLogLoss);
  connect(m_cosineScope, &QComboBox::currentIndexChanged, this, [this](int index) {
    const bool perLayer = index == 1;
    m_cosine->setRules(
        {{s::kGradCosine, true, {}, Qt::SolidLine, perLayer ? 1.4 : 1.8, {}, true, perLayer}});
  });
  connect(m_data, &LiveData::phaseBegan, this, [this](int phase) {
    const QSignalBlocker block(m_phaseView);
    if (phase == 0) m_phaseView->clear();
    const engine::RunInfo* info = m_data->phaseInfo(phase);
    const QString mode =
        info ? QString::fromStdString(engine::toString(info->mode)) : tr("phase %1").arg(phase + 1);
    m_phaseView->addItem(tr("Stages of: %1").arg(mode), phase);
    m_phaseView->setCurrentIndex(m_phaseView->count() - 1);
    m_phaseView->setVisible(m_phaseView->count() > 1);
    m_utilization->setPhase(-1);
    m_timeline->setPhase(-1);
    // The probes compare local gradients with the true ones: a pipeline or backprop run has
    // no local gradients, and its empty panel says so instead of staying blank (issue 36).
    bool local = false;
    for (int p = 0; p < m_data->phaseCount(); ++p)
      if (const engine::RunInfo* i = m_data->phaseInfo(p))
        local |= i->mode != engine::Mode::Pipeline && i->mode != engine::Mode::Backprop;
    m_cosine->setEmptyText(local ? QString() : tr("no gradient cosine in pipeline/backprop runs"));
  });
  connect(m_data, &LiveData::cleared, this, [this] {
    m_phaseView->clear();
    m_phaseView->setVisible(false);
    m_cosine->setEmptyText({});
  });
  connect(m_phaseView, &QComboBox::activated, this, [this](int index) {
    const int phase = m_phaseView->itemData(index).toInt();
    const bool latest = index == m_phaseView->count() - 1;
    m_utilization->setPhase(latest ? -1 : phase);
    m_timeline->setPhase(latest ? -1 : phase);
  });
  connect(follow, &QPushButton::clicked, this, [this] {
    for (auto* p : linePanels()) p->resetView();
  });
}

QList<PlotPanel*> LiveDashboard::linePanels() const {
  return {m_loss, m_accuracy, m_cosine, m_throughput, m_queue, m_bytes, m_memory};
}

void LiveDashboard::setLive(bool live) {
  if (live) {
    m_replot.start();
  } else {
    m_replot.stop();
    refreshAll(true);
  }
}

void LiveDashboard::refreshAll(bool force) {
  for (auto* p : linePanels()) p->refresh(force);
  m_utilization->refresh(force);
  m_timeline->refresh(force);
  ++m_redraws;
}

void LiveDashboard::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  refreshAll(true);
}

}  // namespace stagewise::ui
