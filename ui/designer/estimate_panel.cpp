#include "designer/estimate_panel.h"

#include <qcustomplot.h>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>

#include "common/format.h"
#include "common/theme.h"
#include "designer/profile_job.h"
#include "designer/schedule_estimate.h"
#include "designer/spec_edits.h"
#include "stagewise/engine/partition.h"

namespace stagewise::ui {

EstimatePanel::EstimatePanel(DesignDocument* doc, QWidget* parent) : QWidget(parent), m_doc(doc) {
  m_plot = new QCustomPlot(this);
  m_plot->setMinimumHeight(110);
  m_plot->setToolTip(
      tr("Each stage's share of the work of one local step (forward, aux head, "
         "backward), from FLOPs. The slowest stage sets the pace."));
  m_plot->yAxis->setLabel(tr("share of work %"));
  m_plot->yAxis->setRange(0, 100);

  m_speedup = new QLabel(this);
  m_efficiency = new QLabel(this);
  m_note = new QLabel(this);
  m_note->setWordWrap(true);
  QFont big = m_speedup->font();
  big.setPointSizeF(big.pointSizeF() * 1.4);
  big.setBold(true);
  m_speedup->setFont(big);
  m_speedup->setToolTip(
      tr("Predicted steps/s of local-parallel training over end-to-end "
         "backprop at its best thread count, from FLOPs and a measured "
         "thread-scaling model. A run measures the real number."));
  m_efficiency->setToolTip(
      tr("Mean stage work / largest stage work, from FLOPs: 100% when every stage does the "
         "same work. It is a property of the cut, whatever the cores; when the stages share "
         "fewer cores than they have threads, the cores bound the speed and a better balance "
         "pays off only with more cores."));

  m_cores = new QSpinBox(this);
  m_cores->setRange(1, 1024);
  m_cores->setValue(doc->estimateCores());
  m_cores->setToolTip(tr("Cores the estimate assumes (this machine's by default)."));

  m_bytes = new QTableWidget(0, 3, this);
  m_bytes->setHorizontalHeaderLabels({tr("Boundary"), tr("Local / batch"), tr("Pipeline / batch")});
  m_bytes->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  m_bytes->verticalHeader()->hide();
  m_bytes->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_bytes->setSelectionMode(QAbstractItemView::NoSelection);
  m_bytes->setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
  m_bytes->setToolTip(
      tr("Bytes crossing each stage boundary per batch: local training sends "
         "activations and labels forward; pipelined backprop (mode pipeline) also sends "
         "the activations' gradients back."));

  m_stageCount = new QSpinBox(this);
  m_stageCount->setRange(1, 64);
  m_stageCount->setToolTip(tr("How many stages auto-balance makes."));
  m_strategy = new QComboBox(this);
  m_balance = new QPushButton(tr("Auto-balance"), this);
  m_balance->setToolTip(tr("Choose cuts that minimise the most expensive stage."));

  // The right column is ~360 px at 1366 px wide: the predictions and the schedules' lines
  // wrap in it rather than widening it past the window's edge (issue 36 walkthrough).
  m_methods = new QLabel(this);
  m_methods->setWordWrap(true);
  m_methods->setToolTip(
      tr("Samples/s predicted for each method with this cut on this machine: the engine times "
         "each stage's work (local step, pipeline micro-batches and update, the backprop step), "
         "and the schedules are simulated on the cores above. See docs/metrics.md."));
  m_measure = new QPushButton(tr("Measure"), this);
  m_measure->setToolTip(
      tr("Time each method's work on this machine (a few seconds) and predict "
         "samples/s for local, pipelined backprop and backprop."));
  m_measure->setEnabled(false);
  // A widget, not a bare layout, as the form's field: the form then gives the wrapped label
  // the height its lines need at the width it gets.
  auto* methodsField = new QWidget(this);
  auto* methodsRow = new QHBoxLayout(methodsField);
  methodsRow->setContentsMargins(0, 0, 0, 0);
  methodsRow->addWidget(m_methods, 1);
  methodsRow->addWidget(m_measure, 0, Qt::AlignTop);

  m_schedules = new QLabel(this);
  m_schedules->setWordWrap(true);
  m_schedules->setToolTip(
      tr("Pipelined backprop per schedule with this cut: the step's planned idle share (the "
         "bubble) and the most activations a stage holds at once (the largest stage's; with "
         "recompute, its inputs and one micro-batch's). Planned from FLOPs, or from the "
         "measured passes after Measure. ▸ marks the design's schedule. See docs/metrics.md, "
         "\"Bubble: planned against measured\"."));

  auto* summary = new QFormLayout;
  summary->addRow(tr("Speed-up vs backprop"), m_speedup);
  summary->addRow(tr("Samples/s here"), methodsField);
  summary->addRow(tr("Stage balance"), m_efficiency);
  summary->addRow(tr("Pipeline schedules"), m_schedules);
  summary->addRow(tr("Cores"), m_cores);
  m_profileProgress = new QProgressBar(this);
  m_profileProgress->hide();
  m_cancelProfile = new QPushButton(tr("Cancel"), this);
  m_cancelProfile->hide();
  auto* balanceBox = new QGroupBox(tr("Balance"), this);
  auto* balanceLayout = new QVBoxLayout(balanceBox);
  auto* balanceRow = new QHBoxLayout;
  balanceRow->addWidget(new QLabel(tr("Stages"), balanceBox));
  balanceRow->addWidget(m_stageCount);
  balanceRow->addWidget(m_strategy, 1);
  balanceRow->addWidget(m_balance);
  auto* progressRow = new QHBoxLayout;
  progressRow->addWidget(m_profileProgress, 1);
  progressRow->addWidget(m_cancelProfile);
  balanceLayout->addLayout(balanceRow);
  balanceLayout->addLayout(progressRow);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(summary);
  layout->addWidget(m_note);
  layout->addWidget(m_plot, 1);
  layout->addWidget(m_bytes);
  layout->addWidget(balanceBox);

  addBalanceStrategy({tr("by FLOPs"),
                      tr("Balance forward + backward FLOPs of each stage's layers."),
                      [](const engine::ModelPlan& plan) {
                        return std::optional<std::vector<double>>(engine::flopCosts(plan));
                      },
                      {}});
  addBalanceStrategy({tr("by measured time"),
                      {},
                      {},
                      tr("Needs the LibTorch engine to time each layer; not available with "
                         "this engine.")});

  connect(m_cores, &QSpinBox::valueChanged, doc, &DesignDocument::setEstimateCores);
  connect(m_measure, &QPushButton::clicked, this, &EstimatePanel::measureMethods);
  connect(m_balance, &QPushButton::clicked, this, &EstimatePanel::autoBalance);
  connect(m_cancelProfile, &QPushButton::clicked, this, [this] {
    if (m_job) m_job->cancel();
  });
  connect(doc, &DesignDocument::changed, this, &EstimatePanel::refresh);
  refresh();
}

void EstimatePanel::addBalanceStrategy(const BalanceStrategy& strategy) {
  // A measured strategy registered later replaces the greyed placeholder of the same name.
  for (int i = 0; i < int(m_strategies.size()); ++i)
    if (m_strategies[size_t(i)].name == strategy.name) {
      m_strategies.erase(m_strategies.begin() + i);
      m_strategy->removeItem(i);
      break;
    }
  m_strategies.push_back(strategy);
  m_strategy->addItem(strategy.name);
  auto* item =
      qobject_cast<QStandardItemModel*>(m_strategy->model())->item(m_strategy->count() - 1);
  item->setEnabled(bool(strategy.cost));
  item->setToolTip(strategy.cost ? strategy.toolTip : strategy.unavailableReason);
}

void EstimatePanel::setProfiler(LayerProfiler profiler) {
  m_profiler = std::move(profiler);
  for (int i = 0; i < int(m_strategies.size()); ++i)
    if (m_strategies[size_t(i)].name == tr("by measured time")) {
      auto* item = qobject_cast<QStandardItemModel*>(m_strategy->model())->item(i);
      item->setEnabled(bool(m_profiler));
      item->setToolTip(m_profiler ? tr("Time every layer's forward and backward pass on its "
                                       "stage's device, then balance those times (takes a few "
                                       "seconds).")
                                  : m_strategies[size_t(i)].unavailableReason);
    }
}

void EstimatePanel::balanceWith(const std::vector<double>& costs, const QString& how) {
  const auto& plan = m_doc->plan();
  if (plan.layers.empty() || costs.size() != plan.layers.size()) return;
  const int stages = std::min(m_stageCount->value(), int(plan.layers.size()));
  const auto cuts = engine::balanceCuts(costs, stages);
  if (cuts == m_doc->spec().partition.cuts) {
    // Nothing to change: say so, with the largest stage's share of the work as the bars show
    // it (aux heads included), rather than doing nothing.
    double largest = 0;
    if (const auto& e = m_doc->estimate())
      for (double share : e->stageShare) largest = std::max(largest, share);
    const double total = largest > 0 ? 1.0 : 0.0;
    const QString text =
        tr("Auto-balance: the cut is already the most balanced for %n stage(s) %1 (the largest "
           "stage does %2 % of the work).",
           nullptr, stages)
            .arg(how)
            .arg(total > 0 ? QString::number(100.0 * largest / total, 'f', 1) : QStringLiteral("–"));
    Q_EMIT message(text);
    return;
  }
  m_doc->edit(withCuts(m_doc->spec(), cuts), tr("Auto-balance %1 stages %2").arg(stages).arg(how));
}

void EstimatePanel::autoBalance() {
  const int index = m_strategy->currentIndex();
  if (index < 0 || index >= int(m_strategies.size()) || m_job) return;
  const BalanceStrategy& strategy = m_strategies[size_t(index)];
  if (m_doc->plan().layers.empty() || !m_doc->modelError().empty()) return;
  if (strategy.cost) {
    if (const auto costs = strategy.cost(m_doc->plan())) balanceWith(*costs, strategy.name);
    return;
  }
  if (strategy.name == tr("by measured time") && m_profiler) startProfiling();
}

void EstimatePanel::startProfiling() {
  auto seconds = std::make_shared<std::vector<double>>();
  runJob(
      [profiler = m_profiler, spec = m_doc->spec(), seconds](
          const std::function<bool(int, int)>& progress) { *seconds = profiler(spec, progress); },
      tr("timing layers… %v/%m"),
      [this, seconds] {
        if (int(seconds->size()) != m_doc->layerCount()) {
          m_note->setText(tr("The measurement does not match the model (it changed meanwhile)."));
          return;
        }
        balanceWith(*seconds, tr("by measured time"));
      },
      tr("Timing the layers failed: %1"));
}

void EstimatePanel::setMethodProfiler(MethodProfiler profiler) {
  m_methodProfiler = std::move(profiler);
  m_measure->setEnabled(bool(m_methodProfiler) && !m_job);
  refreshMethods();
}

void EstimatePanel::measureMethods() {
  if (!m_methodProfiler || m_job || !m_doc->estimate()) return;
  auto profile = std::make_shared<engine::MethodProfile>();
  const engine::ExperimentSpec spec = m_doc->spec();
  runJob(
      [profiler = m_methodProfiler, spec, profile](const std::function<bool(int, int)>& progress) {
        *profile = profiler(spec, progress);
      },
      tr("measuring methods… %v/%m"),
      [this, profile, spec] {
        m_methodProfile = *profile;
        m_methodSpec = engine::specToJson(spec);
        refreshMethods();
      },
      tr("Measuring the methods failed: %1"));
}

void EstimatePanel::runJob(std::function<void(const std::function<bool(int, int)>&)> work,
                           const QString& format, std::function<void()> done,
                           const QString& failure) {
  m_job = new ProfileJob(std::move(work), this);
  m_profileProgress->setFormat(format);
  m_profileProgress->setRange(0, 0);
  m_profileProgress->show();
  m_cancelProfile->show();
  m_balance->setEnabled(false);
  m_measure->setEnabled(false);
  connect(m_job, &ProfileJob::progress, this, [this](int done, int total) {
    m_profileProgress->setRange(0, total);
    m_profileProgress->setValue(done);
  });
  connect(m_job, &ProfileJob::finished, this, [this, done] {
    profilingDone();
    done();
  });
  connect(m_job, &ProfileJob::failed, this, [this, failure](const QString& message) {
    profilingDone();
    m_note->setText(failure.arg(message));
  });
  m_job->start();
}

std::optional<engine::MethodEstimate> EstimatePanel::methodEstimate() const {
  if (!m_methodProfile || !m_doc->estimate() || m_methodSpec != engine::specToJson(m_doc->spec()))
    return std::nullopt;
  const auto& spec = m_doc->spec();
  return engine::estimateMethods(*m_methodProfile, m_doc->partition(), m_doc->estimateCores(),
                                 spec.pipeline.schedule == "1f1b", spec.train.queueCapacity);
}

void EstimatePanel::refreshMethods() {
  const bool measured =
      m_methodProfile && m_methodSpec == engine::specToJson(m_doc->spec()) && m_doc->estimate();
  m_schedules->setText(m_doc->estimate()
                           ? scheduleEstimateText(m_doc->spec(), m_doc->plan(), m_doc->partition(),
                                                  measured ? &*m_methodProfile : nullptr)
                           : QStringLiteral("—"));
  const auto e = methodEstimate();
  Q_EMIT methodEstimateChanged();
  if (!e) {
    m_methods->setText(!m_methodProfiler ? tr("— (needs the LibTorch engine)")
                       : m_methodProfile ? tr("— (the design changed:\nmeasure again)")
                                         : tr("— (not measured yet)"));
    return;
  }
  const QLocale locale;
  auto rate = [&](double sps) { return locale.toString(sps, 'f', 0); };
  m_methods->setText(tr("local %1\npipeline %2 (bubble %3% on these cores)\nbackprop %4")
                         .arg(rate(e->localSamplesPerSec), rate(e->pipelineSamplesPerSec))
                         .arg(e->bubbleFraction * 100, 0, 'f', 0)
                         .arg(rate(e->backpropSamplesPerSec)));
}

void EstimatePanel::profilingDone() {
  m_job->deleteLater();
  m_job = nullptr;
  m_profileProgress->hide();
  m_cancelProfile->hide();
  m_balance->setEnabled(true);
  m_measure->setEnabled(bool(m_methodProfiler));
}

void EstimatePanel::refresh() {
  stylePlot(m_plot);
  m_plot->clearPlottables();
  m_stageCount->setMaximum(std::max(1, m_doc->layerCount()));
  if (!m_stageCount->hasFocus()) m_stageCount->setValue(m_doc->spec().stageCount());
  m_cores->blockSignals(true);
  m_cores->setValue(m_doc->estimateCores());
  m_cores->blockSignals(false);
  const auto& estimate = m_doc->estimate();
  refreshMethods();
  m_bytes->setRowCount(0);
  if (!estimate) {
    m_speedup->setText(QStringLiteral("—"));
    m_efficiency->setText(QStringLiteral("—"));
    m_note->setText(tr("No estimate: fix the problems listed first."));
    // No stages to show either: the ticks of the last valid cut (S5 after its cut was removed,
    // issue 36 §2.4) would label bars that are not there.
    m_plot->xAxis->setTicker(QSharedPointer<QCPAxisTickerText>(new QCPAxisTickerText));
    m_plot->replot();
    return;
  }
  // Balance from each stage's work alone (FLOPs, its own threads): the cut's property, so it
  // tells a 35/12/12/23 split from an even one also when the cores bound the speed.
  double slowest = 0, mean = 0;
  for (double t : estimate->stageTime) slowest = std::max(slowest, t), mean += t;
  if (!estimate->stageTime.empty()) mean /= double(estimate->stageTime.size());
  const double balance = slowest > 0 ? mean / slowest : 1.0;
  m_efficiency->setText(QStringLiteral("%1%").arg(balance * 100, 0, 'f', 0));
  m_speedup->setText(QStringLiteral("%1×").arg(estimate->speedup, 0, 'f', 2));
  int threads = 0;
  for (const auto& st : m_doc->partition().stages) threads += st.settings.threads;
  if (estimate->coresShared) {
    // What the same cut would give with a core for every stage thread.
    const auto roomy = engine::estimateSpeed(m_doc->partition(), m_doc->plan(),
                                             std::max(1, m_doc->spec().train.batchSize), threads);
    m_note->setText(tr("The %1 stage threads share %2 cores, so the cores bound the speed-up, "
                       "not the cut. With %1 cores (backprop would use them too) this cut would "
                       "give %3×.")
                        .arg(threads)
                        .arg(m_doc->estimateCores())
                        .arg(roomy.speedup, 0, 'f', 2));
  } else {
    m_note->setText(tr("Backprop baseline: %n thread(s).", nullptr, estimate->backpropThreads));
  }
  // Warnings (an aux head larger than the model) follow the note: the design runs, but the
  // user should know (issue 36 §3).
  for (const std::string& w : engine::partitionWarnings(m_doc->partition()))
    m_note->setText(m_note->text() + QStringLiteral("\n⚠ ") + QString::fromStdString(w));

  const int n = int(estimate->stageShare.size());
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  double top = 0;
  for (int k = 0; k < n; ++k) {
    auto* bar = new QCPBars(m_plot->xAxis, m_plot->yAxis);
    bar->setWidth(0.7);
    bar->setPen(QPen(stageColor(k).darker(120)));
    bar->setBrush(stageColor(k));
    const double share = estimate->stageShare[size_t(k)] * 100;
    bar->addData(k + 1, share);
    top = std::max(top, share);
    ticker->addTick(k + 1, tr("S%1").arg(k + 1));
  }
  m_plot->xAxis->setTicker(ticker);
  m_plot->xAxis->setRange(0.4, n + 0.6);
  m_plot->yAxis->setRange(0, std::max(10.0, top * 1.15));
  m_plot->replot();

  m_bytes->setRowCount(int(estimate->boundaryBytes.size()));
  for (int b = 0; b < int(estimate->boundaryBytes.size()); ++b) {
    m_bytes->setItem(b, 0, new QTableWidgetItem(tr("S%1 → S%2").arg(b + 1).arg(b + 2)));
    m_bytes->setItem(b, 1,
                     new QTableWidgetItem(formatBytes(double(estimate->boundaryBytes[size_t(b)]))));
    m_bytes->setItem(
        b, 2,
        new QTableWidgetItem(formatBytes(double(estimate->backpropBoundaryBytes[size_t(b)]))));
  }
  // Up to three boundaries without a scroll bar; more scroll, so the panel's height does not
  // grow with the stage count.
  const int rows = std::clamp(m_bytes->rowCount(), 1, 3);
  m_bytes->setFixedHeight(m_bytes->horizontalHeader()->height() +
                          rows * m_bytes->verticalHeader()->defaultSectionSize() + 4);
}

QWidget* EstimatePanel::chartWidget() const {
  return m_plot;
}

void EstimatePanel::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  // The chart follows the theme like every other plot.
  if (event->type() == QEvent::PaletteChange || event->type() == QEvent::ApplicationPaletteChange)
    refresh();
}

}  // namespace stagewise::ui
