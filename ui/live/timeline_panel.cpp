#include "live/timeline_panel.h"

#include <qcustomplot.h>
#include <QAction>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QPainter>
#include <QScrollBar>
#include <QStyle>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/plot_frame.h"
#include "common/theme.h"
#include "live/timeline_plan.h"

namespace stagewise::ui {

namespace {

// Spans kept while paused, per stage: a long pause keeps the window shown, not the whole run.
constexpr size_t kFrozenMax = 16 * LiveData::kMaxSpans;

// Drawn in the palette's text colour: the style's media icons are dark glyphs that vanish on the
// dark theme (issue 36).
QIcon glyph(bool pause, const QColor& color) {
  QPixmap pixmap(24, 24);
  pixmap.fill(Qt::transparent);
  QPainter painter(&pixmap);
  painter.setRenderHint(QPainter::Antialiasing);
  painter.setPen(Qt::NoPen);
  painter.setBrush(color);
  if (pause) {
    painter.drawRect(QRectF(5, 4, 5, 16));
    painter.drawRect(QRectF(14, 4, 5, 16));
  } else {
    painter.drawPolygon(QPolygonF{{QPointF(4, 4), QPointF(16, 12), QPointF(4, 20)}});
    painter.drawRect(QRectF(16, 4, 4, 16));
  }
  return QIcon(pixmap);
}

bool darkPalette(const QPalette& palette) {
  return palette.color(QPalette::Window).lightness() < 128;
}

// Forward passes (and steps) light, backward and weight passes dark; on the dark theme both are
// lighter, as a backward pass darkened from a mid-tone stage colour vanished there.
QColor spanColor(int stage, bool back, bool dark) {
  const QColor color = stageColor(stage);
  if (dark) return back ? color : color.lighter(150);
  return back ? color.darker(170) : color;
}

double barWidth(double rowHeight) {
  return std::max(2.0, rowHeight * 0.5);
}

}  // namespace

TimelinePanel::TimelinePanel(LiveData* data, QWidget* parent) : QWidget(parent), m_data(data) {
  m_frame = new PlotFrame(tr("Timeline (compute spans)"), PlotFrame::NoFeatures, this);
  m_plot = m_frame->plot();
  m_plot->setMinimumSize(220, 150);
  m_frame->setTimeAxis(true);
  // Only the x axis moves: dragging scrolls through time; the wheel is the panel's own zoom.
  m_plot->setInteractions(QCP::iRangeDrag);
  m_plot->axisRect()->setRangeDrag(Qt::Horizontal);
  m_plot->setFocusPolicy(Qt::ClickFocus);
  setFocusPolicy(Qt::ClickFocus);

  // The view controls sit in the title row's left corner; the scroll bar under the plot.
  auto* controls = new QWidget(this);
  auto* row = new QHBoxLayout(controls);
  row->setContentsMargins(0, 0, 0, 0);
  row->setSpacing(2);
  // Small icon buttons: the title row also holds the centred title, on a third of a 1366 px
  // screen.
  auto button = [&](const QString& text, const QString& tip, QStyle::StandardPixmap icon) {
    auto* b = new QToolButton(controls);
    b->setText(text);
    b->setToolTip(tip);
    b->setAutoRaise(true);
    if (icon != QStyle::SP_CustomBase) {
      b->setIcon(style()->standardIcon(icon));
      b->setToolButtonStyle(Qt::ToolButtonIconOnly);
    }
    b->setIconSize(QSize(12, 12));
    row->addWidget(b);
    return b;
  };
  QToolButton* zoomOut = button(QStringLiteral("−"), tr("Show a longer time (-, or the wheel)"),
                                QStyle::SP_CustomBase);
  QToolButton* zoomIn = button(QStringLiteral("+"), tr("Show a shorter time (+, or the wheel)"),
                               QStyle::SP_CustomBase);
  m_pause = button(tr("Pause"),
                   tr("Pause: freeze the view while spans keep arriving (Space); drag, the "
                      "scroll bar or the arrow keys move it back"),
                   QStyle::SP_CustomBase);
  m_pause->setCheckable(true);
  m_followButton =
      button(tr("Follow"), tr("Follow: show the newest spans again (End)"), QStyle::SP_CustomBase);
  for (QToolButton* b : {m_pause, m_followButton}) b->setToolButtonStyle(Qt::ToolButtonIconOnly);
  restyle();
  m_frame->setCornerWidget(controls);
  connect(zoomOut, &QToolButton::clicked, this, [this] { zoom(1.5); });
  connect(zoomIn, &QToolButton::clicked, this, [this] { zoom(1 / 1.5); });
  connect(m_pause, &QToolButton::toggled, this, [this](bool paused) { setFollowing(!paused); });
  connect(m_followButton, &QToolButton::clicked, this, [this] { setFollowing(true); });

  m_scroll = new QScrollBar(Qt::Horizontal, this);
  // The scroll bar comes out of the plot's least height: the panel needs no more than the line
  // plots beside it (Train's minimum fits a 1366x768 screen).
  m_plot->setMinimumSize(220, std::max(100, 150 - m_scroll->sizeHint().height()));
  m_scroll->setToolTip(tr("Scroll back through the spans kept (the last %1 of each stage, and "
                          "while paused every span since)")
                           .arg(LiveData::kMaxSpans));
  connect(m_scroll, &QScrollBar::valueChanged, this, [this](int value) {
    if (m_settingRange) return;
    showView(value / 1000.0 + m_window);
  });
  connect(m_plot->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this,
          [this](const QCPRange& range) {
            if (m_settingRange) return;
            showView(range.upper);  // dragged
          });
  connect(m_plot, &QCustomPlot::mouseWheel, this, [this](QWheelEvent* event) {
    const double notches = event->angleDelta().y() / 120.0;
    if (notches == 0) return;
    if (event->modifiers() & Qt::ShiftModifier) {
      scrollBy(-0.2 * notches);
    } else {
      zoom(std::pow(1.25, -notches), m_plot->xAxis->pixelToCoord(event->position().x()));
    }
    event->accept();
  });
  connect(m_plot, &QCustomPlot::afterLayout, this, [this] {
    // Row thickness and the labels' spacing follow the axis rect's height, known after layout.
    if (m_plot->axisRect()->height() != m_layoutHeight) refresh(true);
  });

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  layout->addWidget(m_frame, 1);
  layout->addWidget(m_scroll);
  // The frame's right-click menu lists its owner's actions before its own Export….
  m_exportTrace = new QAction(tr("Export trace (Perfetto)…"), m_frame);
  m_exportTrace->setStatusTip(
      tr("Write the run's stored spans as a Chrome trace that Perfetto "
         "(ui.perfetto.dev) opens, as `stagewise-cli runs trace` does"));
  m_exportTrace->setEnabled(false);
  m_frame->addAction(m_exportTrace);
  connect(m_exportTrace, &QAction::triggered, this,
          [this] { Q_EMIT exportTraceRequested(shownPhase()); });
  connect(m_data, &LiveData::cleared, this, [this] {
    for (auto* item : m_markers) m_plot->removeItem(item);
    m_markers.clear();
    setFollowing(true);
  });
  // A plan's next run began: a view paused at the last run's times would show little or nothing
  // of it (issue 36), as when another run is chosen (setPhase).
  connect(m_data, &LiveData::phaseBegan, this, [this] {
    if (m_phase < 0 && !m_follow) setFollowing(true);
  });
  m_note = new QCPItemText(m_plot);
  m_note->setPositionAlignment(Qt::AlignTop | Qt::AlignRight);
  m_note->position->setType(QCPItemPosition::ptAxisRectRatio);
  m_note->position->setCoords(0.99, 0.01);
  m_note->setClipToAxisRect(true);
  m_note->setSelectable(false);
  m_note->setVisible(false);
  updateTips();
}

void TimelinePanel::setPhase(int phase) {
  const bool switched = phase != m_phase;
  m_phase = phase;
  // Paused at another run's times the view would be empty (issue 36): follow this run.
  if (switched && !m_follow)
    setFollowing(true);
  else
    refresh(true);
}

QString TimelinePanel::keptNote() const {
  return m_note->visible() ? m_note->text() : QString();
}

void TimelinePanel::restyle() {
  const QColor color = palette().color(QPalette::ButtonText);
  m_pause->setIcon(glyph(true, color));
  m_followButton->setIcon(glyph(false, color));
}

void TimelinePanel::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::PaletteChange || event->type() == QEvent::StyleChange) {
    restyle();
    refresh(true);  // the spans' colours follow the palette
  }
}

const std::deque<engine::StepSpan>& TimelinePanel::spansOf(int phase, int stage) const {
  if (phase == m_frozenPhase && stage >= 0 && size_t(stage) < m_frozen.size())
    return m_frozen[size_t(stage)];
  return m_data->spans(phase, stage);
}

void TimelinePanel::syncFrozen(int phase) {
  if (m_follow) {
    m_frozenPhase = -1;
    m_frozen.clear();
    return;
  }
  const size_t stages = size_t(keptStages(phase));
  if (phase != m_frozenPhase || m_frozen.size() != stages) {
    m_frozenPhase = phase;
    m_frozen.assign(stages, {});
    m_frozenDropped = m_data->droppedUntil(phase);
  }
  const double keepFrom = m_viewEnd - m_window;
  for (size_t k = 0; k < stages; ++k) {
    auto& copy = m_frozen[k];
    const auto& live = m_data->spans(phase, int(k));
    // A stage's spans arrive in time order: copy those newer than the copy's newest.
    const double newest =
        copy.empty() ? -std::numeric_limits<double>::infinity() : copy.back().startS;
    auto it = live.end();
    while (it != live.begin() && std::prev(it)->startS > newest) --it;
    for (; it != live.end(); ++it) {
      if (copy.size() >= kFrozenMax) {
        if (copy.front().endS >= keepFrom) break;  // never drop the window shown
        m_frozenDropped = std::max(m_frozenDropped, copy.front().endS);
        copy.pop_front();
      }
      copy.push_back(*it);
    }
  }
}

int TimelinePanel::drawnSpans(int stage) const {
  if (stage < 0 || size_t(stage) >= m_drawn.size()) return 0;
  int sum = 0;
  for (int n : m_drawn[size_t(stage)]) sum += n;
  return sum;
}

int TimelinePanel::drawnSpans(int stage, engine::SpanKind kind) const {
  const auto k = size_t(kind);
  return stage >= 0 && size_t(stage) < m_drawn.size() && k < kSpanKinds ? m_drawn[size_t(stage)][k]
                                                                        : 0;
}

void TimelinePanel::setTraceAvailable(bool available) {
  m_exportTrace->setEnabled(available);
}

int TimelinePanel::shownPhase() const {
  return m_phase >= 0 && m_phase < m_data->phaseCount() ? m_phase : m_data->currentPhase();
}

std::pair<double, double> TimelinePanel::extent() const {
  const int phase =
      m_phase >= 0 && m_phase < m_data->phaseCount() ? m_phase : m_data->currentPhase();
  double first = std::numeric_limits<double>::infinity(), last = 0;
  for (int k = 0; k < keptStages(phase); ++k) {
    const auto& spans = spansOf(phase, k);
    if (spans.empty()) continue;
    first = std::min(first, spans.front().startS);
    last = std::max(last, spans.back().endS);
  }
  return {std::isfinite(first) ? first : 0.0, last};
}

int TimelinePanel::keptStages(int phase) const {
  const engine::RunInfo* info = m_data->phaseInfo(phase);
  return std::max(info ? int(info->stages.size()) : 0, m_data->spanStages(phase));
}

double TimelinePanel::maxWindow() const {
  const auto [first, last] = extent();
  return std::max(kMaxWindow, last - first);
}

void TimelinePanel::setWindowSeconds(double seconds) {
  if (!std::isfinite(seconds)) return;
  m_window = std::clamp(seconds, kMinWindow, maxWindow());
  updateTips();
  refresh(true);
}

double TimelinePanel::viewBegin() const {
  return m_plot->xAxis->range().lower;
}

double TimelinePanel::viewEnd() const {
  return m_plot->xAxis->range().upper;
}

void TimelinePanel::zoom(double factor, double anchor) {
  if (!(factor > 0)) return;
  const double end = viewEnd(), begin = end - m_window;
  const double window = std::clamp(m_window * factor, kMinWindow, maxWindow());
  if (m_follow || !std::isfinite(anchor)) {
    // Following keeps the live end; otherwise the centre stays put.
    const double newEnd = m_follow ? end : (begin + end) / 2 + window / 2;
    m_window = window;
    if (!m_follow) m_viewEnd = newEnd;
  } else {
    // The time under the cursor stays under the cursor.
    const double share = m_window > 0 ? (anchor - begin) / m_window : 1.0;
    m_viewEnd = anchor - share * window + window;
    m_window = window;
  }
  updateTips();
  refresh(true);
}

void TimelinePanel::scrollBy(double fraction) {
  showView(viewEnd() + fraction * m_window);
}

void TimelinePanel::showView(double end) {
  const auto [first, last] = extent();
  m_viewEnd = std::clamp(end, first + std::min(m_window, last - first), std::max(first, last));
  if (m_follow) {
    m_follow = false;
    const QSignalBlocker block(m_pause);
    m_pause->setChecked(true);
    Q_EMIT followingChanged(false);
  }
  refresh(true);
}

void TimelinePanel::setFollowing(bool follow) {
  if (!follow) m_viewEnd = viewEnd();
  const bool changed = follow != m_follow;
  m_follow = follow;
  {
    const QSignalBlocker block(m_pause);
    m_pause->setChecked(!follow);
  }
  if (changed) Q_EMIT followingChanged(follow);
  refresh(true);
}

void TimelinePanel::keyPressEvent(QKeyEvent* event) {
  switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
      zoom(1 / 1.5);
      break;
    case Qt::Key_Minus:
      zoom(1.5);
      break;
    case Qt::Key_Left:
      scrollBy(-0.25);
      break;
    case Qt::Key_Right:
      scrollBy(0.25);
      break;
    case Qt::Key_Space:
      setFollowing(!m_follow);
      break;
    case Qt::Key_End:
      setFollowing(true);
      break;
    default:
      QWidget::keyPressEvent(event);
      return;
  }
  event->accept();
}

void TimelinePanel::updateTips() {
  const QString window = m_window < 1 ? tr("%1 ms").arg(std::lround(m_window * 1000))
                                      : tr("%1 s").arg(m_window, 0, 'g', 3);
  m_plot->setStatusTip(tr("Each bar is one step's compute on that stage; gaps are waiting or "
                          "blocked time. Pipeline runs show each micro-batch's forward pass "
                          "light and its backward pass dark. Shows %1: wheel or +/- to zoom, "
                          "drag or Shift+wheel to scroll, Space to pause, End to follow. "
                          "Right-click to export the plot, or the run's trace for Perfetto.")
                           .arg(window));
}

void TimelinePanel::syncScrollBar(double first, double last, double begin) {
  const QSignalBlocker block(m_scroll);
  const int lo = int(std::lround(first * 1000));
  m_scroll->setRange(lo, std::max(lo, int(std::lround((last - m_window) * 1000))));
  m_scroll->setPageStep(std::max(1, int(std::lround(m_window * 1000))));
  m_scroll->setSingleStep(std::max(1, int(std::lround(m_window * 100))));
  m_scroll->setValue(int(std::lround(begin * 1000)));
}

void TimelinePanel::refresh(bool force) {
  if (!force && m_data->revision() == m_seenRevision) return;
  m_seenRevision = m_data->revision();
  // Hidden while paused, the copy still takes the spans the live data is about to drop.
  if (!m_follow) syncFrozen(shownPhase());
  if (!isVisible() && !force) return;  // the dashboard redraws everything when it is shown
  const int phase =
      m_phase >= 0 && m_phase < m_data->phaseCount() ? m_phase : m_data->currentPhase();
  const engine::RunInfo* info = m_data->phaseInfo(phase);
  const int kept = keptStages(phase);
  syncFrozen(phase);
  double ends = phase * 1e9 + kept * 1e7;
  for (int k = 0; k < kept; ++k)
    if (!spansOf(phase, k).empty()) ends += spansOf(phase, k).back().endS;
  const auto [first, last] = extent();
  if (!force && ends == m_seenEnd) return;  // no new span
  m_seenEnd = ends;
  // Paused or scrolled back, the view stays put while spans keep arriving.
  if (!force && !m_follow) {
    syncScrollBar(first, last, viewBegin());
    return;
  }
  const double end = m_follow ? last : m_viewEnd;
  const double begin = m_follow ? std::max(0.0, end - m_window) : end - m_window;
  // A row per stage of the partition, and per stage with spans in the window: scrolled back to
  // before a re-partition joined a stage away, its spans keep their row (issue 36).
  int stages = info ? int(info->stages.size()) : 0;
  for (int k = stages; k < kept; ++k)
    for (const auto& s : spansOf(phase, k)) {
      if (s.startS > end) break;
      if (s.endS >= begin) {
        stages = k + 1;
        break;
      }
    }
  // Graph k draws stage k's steps and forward passes, graph stages + k its backward passes.
  while (m_plot->graphCount() < 2 * stages) m_plot->addGraph();
  while (m_plot->graphCount() > 2 * stages) m_plot->removeGraph(m_plot->graphCount() - 1);
  m_layoutHeight = m_plot->axisRect()->height();
  const double rowHeight = m_layoutHeight / std::max(1.0, stages + 0.2);  // the y range's unit
  // Nine stages on a small screen: label every n-th row rather than print labels over each
  // other.
  const int lineHeight = QFontMetrics(m_plot->yAxis->tickLabelFont()).height();
  m_stride = rowHeight > 0 ? std::max(1, int(std::ceil(lineHeight / rowHeight))) : 1;
  m_drawn.assign(size_t(stages), {});
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  for (int k = 0; k < stages; ++k) {
    const double row = stages - k;  // stage 1 on top
    QVector<QCPGraphData> ahead, back;
    for (const auto& s : spansOf(phase, k)) {
      if (s.endS < begin) continue;
      if (s.startS > end) break;
      // Waits and blocked sends are the gaps between the bars, not bars.
      if (s.kind == engine::SpanKind::Wait || s.kind == engine::SpanKind::Blocked ||
          size_t(s.kind) >= kSpanKinds)
        continue;
      // Each span is a thick segment; a NaN after it keeps segments apart.
      const bool dark = s.kind == engine::SpanKind::Backward || s.kind == engine::SpanKind::Weight;
      auto& data = dark ? back : ahead;
      data << QCPGraphData(s.startS, row) << QCPGraphData(s.endS, row)
           << QCPGraphData(s.endS + 1e-9, std::nan(""));
      ++m_drawn[size_t(k)][size_t(s.kind)];
    }
    for (int part = 0; part < 2; ++part) {
      QCPGraph* graph = m_plot->graph(part * stages + k);
      graph->data()->set(part == 0 ? ahead : back, true);
      QPen pen(spanColor(k, part == 1, darkPalette(palette())), barWidth(rowHeight));
      pen.setCapStyle(Qt::FlatCap);
      graph->setPen(pen);
      graph->setAdaptiveSampling(false);
    }
    if (k % m_stride == 0)
      ticker->addTick(
          row, info && info->mode == engine::Mode::Backprop ? tr("model") : tr("S%1").arg(k + 1));
  }
  drawPlan(phase, stages, begin, end, rowHeight);
  const bool pipeline = info && info->mode == engine::Mode::Pipeline;
  m_frame->setTitle(pipeline ? tr("Timeline (fwd light, bwd dark)")
                             : tr("Timeline (compute spans)"));
  m_plot->yAxis->setTicker(ticker);
  m_plot->yAxis->setRange(0.4, stages + 0.6);
  m_settingRange = true;
  m_plot->xAxis->setRange(begin, std::max(begin + 1e-3, end));
  syncScrollBar(first, last, begin);
  m_settingRange = false;
  // The changes applied within the window, as in the line plots (at their time).
  for (auto* item : m_markers) m_plot->removeItem(item);
  m_markers.clear();
  QColor color = palette().color(QPalette::Text);
  color.setAlpha(150);
  for (const LiveMarker& m : m_data->markers()) {
    if (m.phase != phase || m.timeS < begin || m.timeS > end) continue;
    auto* line = new QCPItemStraightLine(m_plot);
    line->setPen(QPen(color, 1, Qt::DashLine));
    line->point1->setCoords(m.timeS, 0);
    line->point2->setCoords(m.timeS, 1);
    line->setSelectable(false);
    m_markers.push_back(line);
  }
  // Spans dropped before the window (LiveData keeps the last kMaxSpans of a stage): say so rather
  // than show the window emptier than the run was.
  const double dropped = m_frozenPhase == phase ? m_frozenDropped : m_data->droppedUntil(phase);
  const bool older = dropped > 0 && begin < dropped;
  if (older) {
    m_note->setText(tr("No spans kept before %1 s (the last %2 of each stage are kept)")
                        .arg(dropped, 0, 'f', 1)
                        .arg(LiveData::kMaxSpans));
    m_note->setColor(palette().color(QPalette::Text));
  }
  m_note->setVisible(older);
  m_plot->replot(QCustomPlot::rpQueuedReplot);
}

int TimelinePanel::plannedSpans(int stage) const {
  return stage >= 0 && size_t(stage) < m_planned.size() ? m_planned[size_t(stage)] : 0;
}

void TimelinePanel::drawPlan(int phase, int stages, double begin, double end, double rowHeight) {
  if (!m_plot->layer(QStringLiteral("plan"))) {
    m_plot->addLayer(QStringLiteral("plan"), m_plot->layer(QStringLiteral("main")),
                     QCustomPlot::limBelow);
  }
  while (int(m_plan.size()) > stages) {
    m_plot->removePlottable(m_plan.back());
    m_plan.pop_back();
  }
  while (int(m_plan.size()) < stages) {
    auto* curve = new QCPCurve(m_plot->xAxis, m_plot->yAxis);
    curve->setLayer(QStringLiteral("plan"));
    curve->setSelectable(QCP::stNone);
    m_plan.push_back(curve);
  }
  m_planned.assign(size_t(stages), 0);
  // Nine rows of a few pixels each hid a line drawn under the bars (issue 36): the plan's line
  // lies below the bar, clear of it, at most a third of the gap to the next row.
  const bool dark = darkPalette(palette());
  const double planWidth = std::max(1.5, rowHeight * 0.15);
  const double planOffset =
      rowHeight > 0 ? (barWidth(rowHeight) / 2 + planWidth / 2 + 0.5) / rowHeight : 0.4;
  std::vector<QVector<QCPCurveData>> rows(static_cast<size_t>(stages));
  const engine::RunInfo* info = m_data->phaseInfo(phase);
  if (info) {
    const auto segments = planUnderSpans(
        *info, [&](int k) -> const std::deque<engine::StepSpan>& { return spansOf(phase, k); },
        begin, end);
    for (const PlannedSegment& p : segments) {
      if (p.stage < 0 || p.stage >= stages || p.end < begin || p.start > end) continue;
      // Just under the stage's bar, a thin line clear of it: where the schedule would have it.
      const double row = stages - p.stage - planOffset;
      auto& data = rows[size_t(p.stage)];
      const double t = double(data.size());
      data << QCPCurveData(t, p.start, row) << QCPCurveData(t + 1, p.end, row)
           << QCPCurveData(t + 2, p.end, std::nan(""));
      ++m_planned[size_t(p.stage)];
    }
  }
  for (int k = 0; k < stages; ++k) {
    m_plan[size_t(k)]->data()->set(rows[size_t(k)], true);
    QColor color = spanColor(k, false, dark);
    color.setAlpha(200);
    QPen pen(color, planWidth);
    pen.setCapStyle(Qt::FlatCap);
    m_plan[size_t(k)]->setPen(pen);
  }
}

void TimelinePanel::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  refresh(true);  // bar thickness follows the row height
}

}  // namespace stagewise::ui
