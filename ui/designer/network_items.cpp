#include "designer/network_items.h"

#include <QApplication>
#include <QPainter>
#include <QPalette>

namespace stagewise::ui {

using M = CanvasMetrics;

BlockItem::BlockItem(const QRectF& rect, QString title, QString tag, QStringList lines,
                     QGraphicsItem* parent)
    : QGraphicsItem(parent),
      m_rect(rect),
      m_title(std::move(title)),
      m_tag(std::move(tag)),
      m_lines(std::move(lines)) {}

QRectF BlockItem::boundingRect() const {
  return m_rect.adjusted(-2, -2, 2, 2);
}

void BlockItem::paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) {
  const QPalette pal = QApplication::palette();
  QColor fill = pal.color(QPalette::Base), text = pal.color(QPalette::Text);
  QColor border = m_accent.isValid() ? m_accent : pal.color(QPalette::Mid);
  if (m_dimmed) text.setAlpha(150);
  p->setRenderHint(QPainter::Antialiasing);
  if (m_invalid) border = QColor(0xc0, 0x39, 0x2b);
  p->setPen(QPen(border, m_invalid ? 2.5 : 1.5, m_invalid ? Qt::DashLine : Qt::SolidLine));
  p->setBrush(fill);
  p->drawRoundedRect(m_rect, 7, 7);
  QFont bold = p->font();
  bold.setBold(true);
  const QRectF inner = m_rect.adjusted(10, 6, -10, -6);
  p->setPen(text);
  p->setFont(bold);
  p->drawText(inner, Qt::AlignLeft | Qt::AlignTop, m_title);
  QFont normal = p->font();
  normal.setBold(false);
  p->setFont(normal);
  p->drawText(inner, Qt::AlignRight | Qt::AlignTop, m_tag);
  QColor detail = text;
  detail.setAlpha(m_dimmed ? 120 : 190);
  p->setPen(detail);
  const double lineH = p->fontMetrics().height();
  for (int i = 0; i < m_lines.size(); ++i)
    p->drawText(inner.adjusted(0, lineH * (i + 1), 0, 0), Qt::AlignLeft | Qt::AlignTop,
                p->fontMetrics().elidedText(m_lines[i], Qt::ElideRight, int(inner.width())));
}

StageBandItem::StageBandItem(const QRectF& rect, int stage, QColor color, QStringList lines,
                             bool selected, QString problem)
    : m_rect(rect),
      m_stage(stage),
      m_color(std::move(color)),
      m_lines(std::move(lines)),
      m_selected(selected),
      m_problem(std::move(problem)) {
  setZValue(-10);
  if (!m_problem.isEmpty()) setToolTip(m_problem);
}

QRectF StageBandItem::boundingRect() const {
  return m_rect.adjusted(-3, -3, 3, 3);
}

void StageBandItem::paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) {
  const QPalette pal = QApplication::palette();
  p->setRenderHint(QPainter::Antialiasing);
  QColor fill = m_color;
  fill.setAlpha(m_selected ? 70 : 40);
  const bool bad = !m_problem.isEmpty();
  QPen pen(bad ? QColor(0xd0, 0x30, 0x30) : m_color, m_selected ? 3 : 1.2);
  if (bad) pen.setStyle(Qt::DashLine);
  p->setPen(pen);
  p->setBrush(fill);
  p->drawRoundedRect(m_rect, 10, 10);

  const QRectF label(m_rect.left() + 10, m_rect.top() + 8, M::kLabelWidth - 16,
                     m_rect.height() - 16);
  QFont bold = p->font();
  bold.setBold(true);
  p->setFont(bold);
  p->setPen(pal.color(QPalette::Text));
  p->drawText(label, Qt::AlignLeft | Qt::AlignTop, QStringLiteral("Stage %1").arg(m_stage + 1));
  bold.setBold(false);
  p->setFont(bold);
  const double lineH = p->fontMetrics().height();
  for (int i = 0; i < m_lines.size(); ++i)
    p->drawText(label.adjusted(0, lineH * (i + 1.2), 0, 0), Qt::AlignLeft | Qt::AlignTop,
                m_lines[i]);
  if (bad) {
    p->setPen(QColor(0xd0, 0x30, 0x30));
    const QRectF at = label.adjusted(0, lineH * (m_lines.size() + 1.4), 0, 0);
    p->drawText(at, Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap,
                QStringLiteral("⚠ ") + m_problem);
  }
}

CutLineItem::CutLineItem(Kind kind, QString label) : m_kind(kind), m_label(std::move(label)) {
  setZValue(kind == Kind::HoverAdd ? 5 : 10);
}

QRectF CutLineItem::boundingRect() const {
  return QRectF(M::kBandLeft - 4, -M::kGap / 2, M::kBandRight - M::kBandLeft + 8, M::kGap);
}

void CutLineItem::setLabel(const QString& label) {
  m_label = label;
  update();
}

void CutLineItem::paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) {
  const QPalette pal = QApplication::palette();
  p->setRenderHint(QPainter::Antialiasing);
  QColor color = pal.color(QPalette::Text);
  if (m_kind == Kind::Invalid) color = QColor(0xd0, 0x30, 0x30);
  if (m_kind == Kind::HoverAdd) color = pal.color(QPalette::Highlight);
  QPen pen(color, m_kind == Kind::HoverAdd ? 1.5 : 2.5, Qt::DashLine);
  p->setPen(pen);
  p->drawLine(QPointF(M::kBandLeft, 0), QPointF(M::kBandRight, 0));
  if (m_kind != Kind::HoverAdd) {
    // The grip says "drag me".
    const QRectF grip(M::kBandRight - M::kHandleWidth, -8, M::kHandleWidth, 16);
    p->setPen(QPen(color, 1));
    p->setBrush(pal.color(QPalette::Button));
    p->drawRoundedRect(grip, 4, 4);
    for (int i = -1; i <= 1; ++i)
      p->drawLine(QPointF(grip.left() + 6, i * 3.0), QPointF(grip.right() - 6, i * 3.0));
  }
  if (!m_label.isEmpty()) {
    const QRectF text(M::kBlockLeft, -M::kGap / 2, M::kBlockWidth, M::kGap);
    QRectF bounds = p->fontMetrics().boundingRect(m_label);
    bounds.moveCenter(text.center());
    bounds.adjust(-6, -1, 6, 1);
    p->setPen(Qt::NoPen);
    p->setBrush(pal.color(QPalette::Window));
    p->drawRoundedRect(bounds, 4, 4);
    p->setPen(color);
    p->drawText(text, Qt::AlignCenter, m_label);
  }
}

}  // namespace stagewise::ui
