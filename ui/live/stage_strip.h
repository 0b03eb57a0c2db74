#pragma once
// A compact strip of the network in Train: one cell per layer, each stage a coloured block over
// its layers with its layer count and utilization, and a handle at each cut. Dragging a handle
// to another layer boundary asks for those cuts; dropping it on a neighbouring cut or off either
// end joins the two stages; a double-click on a boundary inside a stage splits it there.

#include <QWidget>
#include <utility>
#include <vector>

namespace stagewise::ui {

class StageStrip : public QWidget {
  Q_OBJECT
 public:
  explicit StageStrip(QWidget* parent = nullptr);

  /// The network's layer names and each stage's first and last layer.
  void setPartition(const QStringList& layers, const std::vector<std::pair<int, int>>& stages);
  /// Each stage's share of time computing (0..1; NaN: not measured yet).
  void setUtilization(const std::vector<double>& compute);
  /// Whether cuts may be dragged now (a local run training).
  void setDraggable(bool draggable);
  bool isDraggable() const { return m_draggable; }

  int layerCount() const { return int(m_layers.size()); }
  int stageCount() const { return int(m_stages.size()); }
  std::vector<int> cuts() const;
  /// The x position of layer boundary `boundary` (0: left edge, layerCount(): right edge).
  int boundaryX(int boundary) const;
  /// The stage under x, or -1.
  int stageAt(int x) const;
  /// The partition history of the run, shown in the strip's tooltip under the stage's line.
  void setHistory(const QStringList& lines) { m_history = lines; }
  const QStringList& history() const { return m_history; }
  /// The text drawn on stage `stage` ("S2 · 2 layers · 81 %").
  QString stageText(int stage) const;

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 Q_SIGNALS:
  /// The user moved, removed or added a cut: the cuts asked for.
  void cutsRequested(const std::vector<int>& cuts);
  /// Right-click on a stage.
  void stageMenuRequested(int stage, const QPoint& globalPos);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void contextMenuEvent(QContextMenuEvent* event) override;

 private:
  int nearestBoundary(int x) const;
  int cutAt(int x) const;  ///< index into cuts() of the handle under x, or -1

  QStringList m_layers;
  QStringList m_history;
  std::vector<std::pair<int, int>> m_stages;
  std::vector<double> m_compute;
  bool m_draggable = false;
  int m_dragCut = -1;  ///< the cut being dragged (index into cuts())
  int m_dragTo = -1;   ///< the boundary it would land on
};

}  // namespace stagewise::ui
