#include "live/steer_panel.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QToolTip>
#include <algorithm>

#include "live/stage_strip.h"
#include "stagewise/engine/spec.h"

namespace stagewise::ui {

SteerPanel::SteerPanel(QWidget* parent) : QWidget(parent) {
  m_strip = new StageStrip(this);
  m_note = new QLabel(this);
  m_note->setMinimumWidth(160);
  // The whole text is in the tooltip; the line shows what fits, elided (a refusal also pops up
  // whole).
  m_note->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  m_note->installEventFilter(this);
  m_stage = new QComboBox(this);
  m_stage->setToolTip(tr("The stage whose settings the row shows and changes"));
  m_delay = new QSpinBox(this);
  m_delay->setRange(0, 600000);
  m_delay->setSuffix(tr(" ms"));
  m_delay->setToolTip(tr("Straggler delay: the stage sleeps this long per step (delay_ms)"));
  m_lrScale = new QDoubleSpinBox(this);
  m_lrScale->setDecimals(3);
  m_lrScale->setRange(0.001, 1000);
  m_lrScale->setSingleStep(0.1);
  m_lrScale->setToolTip(tr("Multiplies train.lr for this stage (lr_scale)"));
  m_threads = new QSpinBox(this);
  m_threads->setRange(1, 1024);
  m_threads->setToolTip(
      tr("The stage's intra-op threads. Another thread count may change the last bits of the "
         "losses after the change (a replay with the same history gives the same ones)."));
  m_apply = new QPushButton(tr("Apply"), this);
  m_pauseStage = new QPushButton(tr("Pause stage"), this);
  m_pauseStage->setCheckable(true);
  m_pauseStage->setToolTip(
      tr("Hold this one stage before its next step: the stages around it fill or empty their "
         "queues (back-pressure). A re-partition waits until it goes on."));

  auto* row = new QHBoxLayout;
  row->setContentsMargins(0, 0, 0, 0);
  auto add = [&](const QString& label, QWidget* w) {
    auto* l = new QLabel(label, this);
    l->setBuddy(w);
    row->addWidget(l);
    row->addWidget(w);
  };
  m_delay->setMaximumWidth(90);
  m_lrScale->setMaximumWidth(80);
  m_threads->setMaximumWidth(60);
  add(tr("Stage"), m_stage);
  add(tr("Delay"), m_delay);
  add(tr("LR scale"), m_lrScale);
  add(tr("Threads"), m_threads);
  row->addWidget(m_apply);
  row->addWidget(m_pauseStage);
  row->addWidget(m_note, 1);

  // One line (the strip, then the settings row): Train must still fit a 1366x768 screen.
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_strip, 3);
  layout->addLayout(row, 2);

  connect(m_strip, &StageStrip::cutsRequested, this, [this](const std::vector<int>& cuts) {
    setNote(tr("Asking for cuts %1…").arg(cutsLabel(cuts)), false);
    Q_EMIT cutsRequested(cuts);
  });
  connect(m_strip, &StageStrip::stageMenuRequested, this, [this](int stage, const QPoint& at) {
    QMenu menu(this);
    menu.addAction(tr("Settings of S%1").arg(stage + 1), this, [this, stage] {
      selectStage(stage);
      m_delay->setFocus();
    });
    const bool paused = size_t(stage) < m_settings.size() && m_settings[size_t(stage)].paused;
    QAction* pause =
        menu.addAction(paused ? tr("Resume S%1").arg(stage + 1) : tr("Pause S%1").arg(stage + 1),
                       this, [this, stage, paused] { Q_EMIT stagePauseRequested(stage, !paused); });
    pause->setEnabled(m_live);
    menu.exec(at);
  });
  connect(m_stage, &QComboBox::currentIndexChanged, this, &SteerPanel::showStage);
  connect(m_apply, &QPushButton::clicked, this, &SteerPanel::applyEdits);
  connect(m_pauseStage, &QPushButton::clicked, this, [this](bool checked) {
    const int stage = m_stage->currentIndex();
    if (stage < 0) return;
    Q_EMIT stagePauseRequested(stage, checked);
    // The engine's event sets the button; until then it shows the last known state.
    const QSignalBlocker block(m_pauseStage);
    m_pauseStage->setChecked(!checked);
  });
  setLive(false);
}

void SteerPanel::begin(const engine::RunInfo& info) {
  m_layers.clear();
  for (const auto& l : info.layers) m_layers << QString::fromStdString(l.name);
  std::vector<std::pair<int, int>> layout;
  for (const auto& s : info.stages) layout.emplace_back(s.firstLayer, s.lastLayer);
  m_settings.clear();
  engine::ExperimentSpec spec;
  try {
    spec = engine::parseSpec(info.specJson);
  } catch (const std::exception&) {
    // The defaults then: the fields show what the run was started with only when it says.
  }
  // What the engine would refuse, said before the user tries (Run::repartition).
  m_cutsFixed.clear();
  if (spec.mode == engine::Mode::Pipeline || spec.mode == engine::Mode::Backprop)
    m_cutsFixed = tr("A %1 run's cuts cannot move while it trains: only a local run re-partitions "
                     "live. Its stages' settings can still change.")
                      .arg(QString::fromStdString(engine::toString(spec.mode)));
  else if (spec.local.overlap > 0)
    m_cutsFixed = tr("A run with overlapping local updates (local.overlap %1) cannot re-partition "
                     "live: the gradients in flight between stages would be lost.")
                      .arg(spec.local.overlap);
  for (size_t k = 0; k < layout.size(); ++k) {
    const engine::StageSettings s = spec.stageSettings(int(k));
    m_settings.push_back({s.delayMs, s.lrScale, info.stages[k].threads, false});
  }
  setNote({}, false);
  QStringList cuts;
  for (size_t k = 1; k < layout.size(); ++k) cuts << QString::number(layout[k].first);
  m_strip->setHistory({tr("from step 0: cuts [%1]").arg(cuts.join(QLatin1Char(',')))});
  layoutChanged(layout);
}

void SteerPanel::clear() {
  m_layers.clear();
  m_settings.clear();
  m_cutsFixed.clear();
  m_strip->setHistory({});
  m_strip->setUtilization({});
  setNote({}, false);
  layoutChanged({});
}

void SteerPanel::layoutChanged(const std::vector<std::pair<int, int>>& layout) {
  m_layout = layout;
  m_strip->setPartition(m_layers, layout);
  const int selected = m_stage->currentIndex();
  {
    const QSignalBlocker block(m_stage);
    m_stage->clear();
    for (size_t k = 0; k < layout.size(); ++k) m_stage->addItem(tr("S%1").arg(k + 1));
    if (!layout.empty()) m_stage->setCurrentIndex(std::clamp(selected, 0, int(layout.size()) - 1));
  }
  showStage();
}

void SteerPanel::setLive(bool live, const QString& why) {
  m_live = live;
  m_strip->setDraggable(live && m_cutsFixed.isEmpty());
  m_strip->setStatusTip(live ? (m_cutsFixed.isEmpty() ? tr("Drag a cut to re-partition the running run")
                                                      : m_cutsFixed)
                             : why);
  if (live) m_strip->setToolTip(m_cutsFixed);
  for (QWidget* w : std::initializer_list<QWidget*>{m_stage, m_delay, m_lrScale, m_threads, m_apply,
                                                    m_pauseStage})
    w->setEnabled(live && !m_layout.empty());
  if (!live && !why.isEmpty()) m_strip->setToolTip(why);
  m_apply->setToolTip(live ? tr("Change the stage's settings from its next step on") : why);
}

void SteerPanel::selectStage(int stage) {
  if (stage >= 0 && stage < m_stage->count()) m_stage->setCurrentIndex(stage);
}

void SteerPanel::showStage() {
  const int k = m_stage->currentIndex();
  if (k < 0 || size_t(k) >= m_settings.size()) return;
  const Settings& s = m_settings[size_t(k)];
  m_delay->setValue(s.delayMs);
  m_lrScale->setValue(s.lrScale);
  m_threads->setValue(s.threads);
  const QSignalBlocker block(m_pauseStage);
  m_pauseStage->setChecked(s.paused);
  m_pauseStage->setText(s.paused ? tr("Resume stage") : tr("Pause stage"));
}

void SteerPanel::applyEdits() {
  const int k = m_stage->currentIndex();
  if (k < 0 || size_t(k) >= m_settings.size()) return;
  const Settings& s = m_settings[size_t(k)];
  bool any = false;
  if (m_delay->value() != s.delayMs) {
    Q_EMIT stageChangeRequested(k, "delay_ms", m_delay->value());
    any = true;
  }
  if (std::abs(m_lrScale->value() - s.lrScale) > 1e-12) {
    Q_EMIT stageChangeRequested(k, "lr_scale", m_lrScale->value());
    any = true;
  }
  if (m_threads->value() != s.threads) {
    Q_EMIT stageChangeRequested(k, "threads", m_threads->value());
    any = true;
  }
  setNote(any ? tr("Asking S%1 for its new settings…").arg(k + 1)
              : tr("S%1 already has these settings").arg(k + 1),
          false);
}

void SteerPanel::setNote(const QString& text, bool error) {
  m_noteText = text;
  m_note->setToolTip(text);
  m_note->setStyleSheet(error ? QStringLiteral("QLabel { color: #c03030; }") : QString());
  showNote();
  // A refusal is read whole, however narrow the line: it pops up under the note.
  if (error && isVisible())
    QToolTip::showText(m_note->mapToGlobal(QPoint(0, m_note->height())), text, m_note);
}

void SteerPanel::showNote() {
  m_note->setText(m_note->fontMetrics().elidedText(m_noteText, Qt::ElideRight,
                                                   std::max(0, m_note->width())));
}

bool SteerPanel::eventFilter(QObject* watched, QEvent* event) {
  if (watched == m_note && event->type() == QEvent::Resize) showNote();
  return QWidget::eventFilter(watched, event);
}

void SteerPanel::setUtilization(const std::vector<double>& compute) {
  m_strip->setUtilization(compute);
}

void SteerPanel::showAnswer(const QString& what, bool accepted, const QString& reason) {
  if (accepted)
    setNote(tr("%1: accepted, applies at the next step boundary").arg(what), false);
  else
    setNote(tr("%1 refused: %2").arg(what, reason), true);
}

void SteerPanel::applyEvent(const SteerEvent& e) {
  using Kind = SteerEvent::Kind;
  switch (e.kind) {
    case Kind::Repartition: {
      // New stages take the settings of the stage their first layer came from.
      std::vector<Settings> next;
      for (const auto& [first, last] : e.layout) {
        Settings s;
        for (size_t k = 0; k < m_layout.size() && k < m_settings.size(); ++k)
          if (first >= m_layout[k].first && first <= m_layout[k].second) s = m_settings[k];
        s.paused = false;
        next.push_back(s);
      }
      m_settings = std::move(next);
      {
        QStringList history = m_strip->history();
        history << tr("from step %1: cuts %2")
                       .arg(e.change.step)
                       .arg(QString::fromStdString(e.change.value));
        m_strip->setHistory(history);
      }
      if (!e.layout.empty()) layoutChanged(e.layout);
      setNote(tr("%1 at step %2 (training paused %3 s)")
                  .arg(e.label())
                  .arg(e.change.step)
                  .arg(e.change.pauseS, 0, 'f', 3),
              false);
      break;
    }
    case Kind::Setting: {
      if (e.stage < 0 || size_t(e.stage) >= m_settings.size()) break;
      Settings& s = m_settings[size_t(e.stage)];
      const std::string setting = e.change.key.substr(e.change.key.rfind('.') + 1);
      const double v = QString::fromStdString(e.change.value).toDouble();
      if (setting == "delay_ms") s.delayMs = int(v);
      if (setting == "lr_scale") s.lrScale = v;
      if (setting == "threads") s.threads = int(v);
      setNote(tr("%1 from step %2").arg(e.label()).arg(e.change.step), false);
      if (e.stage == m_stage->currentIndex()) showStage();
      break;
    }
    case Kind::StagePause:
    case Kind::StageResume:
      if (e.stage >= 0 && size_t(e.stage) < m_settings.size()) {
        m_settings[size_t(e.stage)].paused = e.kind == Kind::StagePause;
        if (e.stage == m_stage->currentIndex()) showStage();
      }
      setNote(e.label(), false);
      break;
    case Kind::Refused:
      setNote(tr("Refused: %1").arg(e.reason), true);
      break;
  }
}

}  // namespace stagewise::ui
