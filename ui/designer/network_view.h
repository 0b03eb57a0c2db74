#pragma once
// A zoomable, scrollable view of the network canvas: Ctrl+wheel or the buttons zoom around the
// cursor, the wheel scrolls, "Fit" shows the whole network.

#include <QGraphicsView>

namespace stagewise::ui {

class NetworkView : public QGraphicsView {
  Q_OBJECT
 public:
  explicit NetworkView(QGraphicsScene* scene, QWidget* parent = nullptr);
  double zoom() const { return transform().m11(); }

 public Q_SLOTS:
  void zoomIn();
  void zoomOut();
  void zoomToFit();
  void resetZoom();

 protected:
  void wheelEvent(QWheelEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  void setZoom(double zoom);
  bool m_autoFit = true;  // keep fitting on resize until the user zooms
};

}  // namespace stagewise::ui
