#pragma once
// The network as a chain of layer blocks on coloured stage bands. Click the gap between two
// layers to cut or join there; drag a cut line to move it; click a stage to inspect it.
// Every change goes through the document's undo stack.

#include <QGraphicsScene>
#include <QPointer>

#include "designer/design_document.h"

namespace stagewise::ui {

class CutLineItem;

class NetworkScene : public QGraphicsScene {
  Q_OBJECT
 public:
  explicit NetworkScene(DesignDocument* doc, QObject* parent = nullptr);

  /// Scene position of gap `gap` (1..layers-1), between layers gap-1 and gap.
  QPointF gapCenter(int gap) const;
  /// Scene position of layer `layer`'s block.
  QPointF layerCenter(int layer) const;
  /// Scene position of cut `cutIndex`'s drag grip.
  QPointF cutGrip(int cutIndex) const;

  /// The gap under a scene position, or 0.
  int gapAt(const QPointF& pos) const;
  /// The layer block under a scene position, or -1.
  int layerAt(const QPointF& pos) const;
  /// The invalid cut (index into partition.cuts) drawn under a scene position, or -1.
  int invalidCutAt(const QPointF& pos) const;
  /// Where invalid cut `cutIndex` is drawn (a click there removes it); null if it is valid.
  QPointF invalidCutPos(int cutIndex) const;
  /// Rows below a gap where invalid cuts are drawn, one each.
  static constexpr double kInvalidRowHeight = 12;

 public Q_SLOTS:
  void rebuild();

 protected:
  void mousePressEvent(QGraphicsSceneMouseEvent* event) override;
  void mouseMoveEvent(QGraphicsSceneMouseEvent* event) override;
  void mouseReleaseEvent(QGraphicsSceneMouseEvent* event) override;

 private:
  int stageOfLayer(int layer) const;
  int cutIndexAt(int gap) const;
  void showHover(int gap);
  void clearDrag();
  QString gapLabel(int gap) const;

  DesignDocument* m_doc;
  CutLineItem* m_hover = nullptr;
  std::vector<CutLineItem*> m_cutItems;
  std::vector<std::pair<int, CutLineItem*>> m_invalidCuts;  ///< (cut index, its line)
  int m_pressInvalid = -1;
  int m_pressGap = 0;
  int m_dragCut = -1;
  int m_dragTarget = 0;
  bool m_dragging = false;
};

}  // namespace stagewise::ui
