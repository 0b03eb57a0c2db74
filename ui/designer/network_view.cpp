#include "designer/network_view.h"

#include <QWheelEvent>
#include <algorithm>
#include <cmath>

namespace stagewise::ui {

NetworkView::NetworkView(QGraphicsScene* scene, QWidget* parent) : QGraphicsView(scene, parent) {
  setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
  setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
  setResizeAnchor(QGraphicsView::AnchorViewCenter);
  setDragMode(QGraphicsView::NoDrag);
  setMouseTracking(true);
  setAlignment(Qt::AlignHCenter | Qt::AlignTop);
  setToolTip(QString());
  connect(scene, &QGraphicsScene::sceneRectChanged, this, [this] {
    if (m_autoFit) zoomToFit();
  });
}

void NetworkView::setZoom(double zoom) {
  zoom = std::clamp(zoom, 0.2, 4.0);
  setTransform(QTransform::fromScale(zoom, zoom));
}

void NetworkView::zoomIn() {
  m_autoFit = false;
  setZoom(zoom() * 1.2);
}

void NetworkView::zoomOut() {
  m_autoFit = false;
  setZoom(zoom() / 1.2);
}

void NetworkView::resetZoom() {
  m_autoFit = false;
  setZoom(1.0);
}

void NetworkView::zoomToFit() {
  m_autoFit = true;
  if (!scene()) return;
  const QRectF rect = scene()->sceneRect();
  const QSize area = viewport()->size();
  if (rect.isEmpty() || area.isEmpty()) return;
  // Fit the width; a tall network scrolls rather than shrinking its text to nothing.
  const double byWidth = area.width() / rect.width();
  const double byHeight = area.height() / rect.height();
  setZoom(std::min(std::max(byHeight, 0.75 * byWidth), byWidth) * 0.98);
}

void NetworkView::wheelEvent(QWheelEvent* event) {
  if (event->modifiers() & Qt::ControlModifier) {
    m_autoFit = false;
    const double steps = event->angleDelta().y() / 120.0;
    setZoom(zoom() * std::pow(1.15, steps));
    event->accept();
    return;
  }
  QGraphicsView::wheelEvent(event);
}

void NetworkView::resizeEvent(QResizeEvent* event) {
  QGraphicsView::resizeEvent(event);
  if (m_autoFit) zoomToFit();
}

}  // namespace stagewise::ui
