#include "live/stage_strip.h"

#include <QContextMenuEvent>
#include <QMouseEvent>
#include <QPainter>
#include <algorithm>
#include <cmath>

#include "common/theme.h"

namespace stagewise::ui {

namespace {
constexpr int kMargin = 6;
constexpr int kGrab = 6;  // pixels either side of a handle that pick it up
}  // namespace

StageStrip::StageStrip(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

QSize StageStrip::sizeHint() const {
  return {360, 30};
}

QSize StageStrip::minimumSizeHint() const {
  return {160, 30};
}

void StageStrip::setPartition(const QStringList& layers,
                              const std::vector<std::pair<int, int>>& stages) {
  m_layers = layers;
  m_stages = stages;
  m_dragCut = -1;
  update();
}

void StageStrip::setUtilization(const std::vector<double>& compute) {
  if (compute == m_compute) return;
  m_compute = compute;
  update();
}

void StageStrip::setDraggable(bool draggable) {
  m_draggable = draggable;
  if (!draggable) m_dragCut = -1;
  setCursor(Qt::ArrowCursor);
  update();
}

std::vector<int> StageStrip::cuts() const {
  std::vector<int> out;
  for (size_t k = 1; k < m_stages.size(); ++k) out.push_back(m_stages[k].first);
  return out;
}

int StageStrip::boundaryX(int boundary) const {
  const int n = std::max(1, layerCount());
  const double w = double(width() - 2 * kMargin) / n;
  return kMargin + int(std::lround(w * boundary));
}

int StageStrip::nearestBoundary(int x) const {
  const int n = std::max(1, layerCount());
  const double w = double(width() - 2 * kMargin) / n;
  return std::clamp(int(std::lround((x - kMargin) / w)), 0, n);
}

int StageStrip::cutAt(int x) const {
  const std::vector<int> c = cuts();
  for (size_t i = 0; i < c.size(); ++i)
    if (std::abs(boundaryX(c[i]) - x) <= kGrab) return int(i);
  return -1;
}

int StageStrip::stageAt(int x) const {
  for (size_t k = 0; k < m_stages.size(); ++k)
    if (x >= boundaryX(m_stages[k].first) && x < boundaryX(m_stages[k].second + 1)) return int(k);
  return -1;
}

QString StageStrip::stageText(int stage) const {
  if (stage < 0 || size_t(stage) >= m_stages.size()) return {};
  const auto [first, last] = m_stages[size_t(stage)];
  const int n = last - first + 1;
  QString text = (n == 1 ? tr("S%1 · 1 layer") : tr("S%1 · %2 layers").arg(stage + 1).arg(n));
  if (n == 1) text = text.arg(stage + 1);
  if (size_t(stage) < m_compute.size() && std::isfinite(m_compute[size_t(stage)]))
    text += tr(" · %1 %").arg(m_compute[size_t(stage)] * 100, 0, 'f', 0);
  return text;
}

void StageStrip::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  const int top = 3, h = height() - 6;
  const QColor text = palette().color(QPalette::Text);
  for (size_t k = 0; k < m_stages.size(); ++k) {
    const int x0 = boundaryX(m_stages[k].first), x1 = boundaryX(m_stages[k].second + 1);
    QColor fill = stageColor(int(k));
    fill.setAlpha(60);
    p.setPen(QPen(stageColor(int(k)), 1));
    p.setBrush(fill);
    p.drawRoundedRect(QRectF(x0 + 1, top, x1 - x0 - 2, h), 4, 4);
    // The compute share as a bar along the bottom of the block.
    if (k < m_compute.size() && std::isfinite(m_compute[k])) {
      const double share = std::clamp(m_compute[k], 0.0, 1.0);
      p.setPen(Qt::NoPen);
      p.setBrush(stageColor(int(k)));
      p.drawRect(QRectF(x0 + 3, top + h - 5, (x1 - x0 - 6) * share, 3));
    }
    // The whole text where it fits, else the stage and its share, else what fits of that.
    QString label = stageText(int(k));
    if (fontMetrics().horizontalAdvance(label) > x1 - x0 - 8) {
      label = tr("S%1").arg(k + 1);
      if (k < m_compute.size() && std::isfinite(m_compute[k]))
        label += tr(" · %1 %").arg(m_compute[k] * 100, 0, 'f', 0);
    }
    p.setPen(text);
    p.drawText(QRect(x0 + 4, top, x1 - x0 - 8, h - 4), Qt::AlignCenter | Qt::TextSingleLine,
               fontMetrics().elidedText(label, Qt::ElideRight, x1 - x0 - 8));
  }
  // Layer ticks, then the handles.
  QColor tick = text;
  tick.setAlpha(50);
  p.setPen(QPen(tick, 1));
  for (int b = 1; b < layerCount(); ++b)
    p.drawLine(boundaryX(b), top + h - 8, boundaryX(b), top + h);
  const std::vector<int> c = cuts();
  for (size_t i = 0; i < c.size(); ++i) {
    const int x = boundaryX(c[i]);
    QColor handle = text;
    if (!m_draggable) handle.setAlpha(90);
    p.setPen(QPen(handle, int(i) == m_dragCut ? 1 : 3));
    p.drawLine(x, top - 2, x, top + h + 2);
  }
  if (m_dragCut >= 0 && m_dragTo >= 0) {
    p.setPen(QPen(palette().color(QPalette::Highlight), 3));
    const int x = boundaryX(m_dragTo);
    p.drawLine(x, top - 2, x, top + h + 2);
  }
}

void StageStrip::mousePressEvent(QMouseEvent* event) {
  if (!m_draggable || event->button() != Qt::LeftButton) return QWidget::mousePressEvent(event);
  m_dragCut = cutAt(int(event->position().x()));
  m_dragTo = m_dragCut >= 0 ? cuts()[size_t(m_dragCut)] : -1;
  update();
}

void StageStrip::mouseMoveEvent(QMouseEvent* event) {
  const int x = int(event->position().x());
  if (m_dragCut >= 0) {
    m_dragTo = nearestBoundary(x);
    update();
  } else if (m_draggable) {
    setCursor(cutAt(x) >= 0 ? Qt::SplitHCursor : Qt::ArrowCursor);
  }
  const int stage = stageAt(x);
  const QString history = m_history.size() > 1
                              ? tr("\n\nPartition:\n%1").arg(m_history.join(QLatin1Char('\n')))
                              : QString();
  setToolTip(stage < 0 ? QString()
                       : tr("%1\nlayers %2 to %3 (%4 to %5)%6%7")
                             .arg(stageText(stage))
                             .arg(m_stages[size_t(stage)].first + 1)
                             .arg(m_stages[size_t(stage)].second + 1)
                             .arg(m_layers.value(m_stages[size_t(stage)].first),
                                  m_layers.value(m_stages[size_t(stage)].second),
                                  m_draggable ? tr("\nDrag a cut to move it; drop it on another "
                                                   "cut or off an end to join two stages; "
                                                   "double-click a layer boundary to split a "
                                                   "stage. Right-click for the stage's settings.")
                                              : QString(),
                                  history));
}

void StageStrip::mouseReleaseEvent(QMouseEvent* event) {
  if (m_dragCut < 0) return QWidget::mouseReleaseEvent(event);
  std::vector<int> c = cuts();
  const int to = nearestBoundary(int(event->position().x()));
  const auto dragged = c.begin() + m_dragCut;
  const int from = *dragged;
  m_dragCut = -1;
  m_dragTo = -1;
  update();
  if (to == from) return;
  c.erase(dragged);
  // Off an end or onto another cut: the stages either side join.
  if (to > 0 && to < layerCount() && std::find(c.begin(), c.end(), to) == c.end()) c.push_back(to);
  std::sort(c.begin(), c.end());
  Q_EMIT cutsRequested(c);
}

void StageStrip::mouseDoubleClickEvent(QMouseEvent* event) {
  if (!m_draggable) return;
  const int b = nearestBoundary(int(event->position().x()));
  std::vector<int> c = cuts();
  if (b <= 0 || b >= layerCount() || std::find(c.begin(), c.end(), b) != c.end()) return;
  c.push_back(b);
  std::sort(c.begin(), c.end());
  Q_EMIT cutsRequested(c);
}

void StageStrip::contextMenuEvent(QContextMenuEvent* event) {
  const int stage = stageAt(event->pos().x());
  if (stage >= 0) Q_EMIT stageMenuRequested(stage, event->globalPos());
}

}  // namespace stagewise::ui
