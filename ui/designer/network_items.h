#pragma once
// The shapes the network canvas is drawn with: layer blocks, stage bands, cut lines and aux
// heads. They only paint; the scene handles the mouse.

#include <QColor>
#include <QGraphicsItem>
#include <QStringList>

namespace stagewise::ui {

/// Canvas geometry shared by the items and the scene.
struct CanvasMetrics {
  static constexpr double kBandLeft = 0;
  static constexpr double kLabelWidth = 170;
  static constexpr double kBlockLeft = 185;
  static constexpr double kBlockWidth = 300;
  static constexpr double kBlockHeight = 60;
  static constexpr double kGap = 34;
  static constexpr double kAuxLeft = 520;
  static constexpr double kAuxWidth = 170;
  static constexpr double kBandRight = 705;
  static constexpr double kHandleWidth = 26;
  /// Top of layer block `layer` (the input block sits at layer -1).
  static double layerTop(int layer) { return (layer + 1) * (kBlockHeight + kGap); }
  /// Centre line of gap `gap` (between layers gap-1 and gap).
  static double gapY(int gap) { return layerTop(gap) - kGap / 2; }
};

/// A rounded box with a bold title, a right-aligned tag and detail lines.
class BlockItem : public QGraphicsItem {
 public:
  BlockItem(const QRectF& rect, QString title, QString tag, QStringList lines,
            QGraphicsItem* parent = nullptr);
  QRectF boundingRect() const override;
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;
  void setAccent(const QColor& color) { m_accent = color; }
  void setDimmed(bool dimmed) { m_dimmed = dimmed; }
  /// Outlined red: the layer the model cannot have (its message is the tooltip).
  void setInvalid(bool invalid) { m_invalid = invalid; }
  bool isInvalid() const { return m_invalid; }
  const QString& title() const { return m_title; }
  const QStringList& lines() const { return m_lines; }

 private:
  QRectF m_rect;
  QString m_title;
  QString m_tag;
  QStringList m_lines;
  QColor m_accent;
  bool m_dimmed = false;
  bool m_invalid = false;
};

/// The coloured band behind a stage's layers, with the stage's summary on its left.
class StageBandItem : public QGraphicsItem {
 public:
  StageBandItem(const QRectF& rect, int stage, QColor color, QStringList lines, bool selected,
                QString problem);
  QRectF boundingRect() const override;
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;
  int stage() const { return m_stage; }

 private:
  QRectF m_rect;
  int m_stage;
  QColor m_color;
  QStringList m_lines;
  bool m_selected;
  QString m_problem;
};

/// A cut between two stages (or the hover/drag preview of one): a line with a grip.
class CutLineItem : public QGraphicsItem {
 public:
  enum class Kind { Cut, Invalid, HoverAdd, HoverCut };
  CutLineItem(Kind kind, QString label);
  QRectF boundingRect() const override;
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;
  void setLabel(const QString& label);

 private:
  Kind m_kind;
  QString m_label;
};

}  // namespace stagewise::ui
