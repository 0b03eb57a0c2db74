#include "designer/network_scene.h"

#include <QApplication>
#include <QGraphicsSceneMouseEvent>
#include <QPalette>
#include <cmath>
#include <map>

#include "common/format.h"
#include "common/theme.h"
#include "designer/network_items.h"
#include "designer/spec_edits.h"

namespace stagewise::ui {

using M = CanvasMetrics;

NetworkScene::NetworkScene(DesignDocument* doc, QObject* parent)
    : QGraphicsScene(parent), m_doc(doc) {
  connect(doc, &DesignDocument::changed, this, &NetworkScene::rebuild);
  connect(doc, &DesignDocument::selectedStageChanged, this, &NetworkScene::rebuild);
  rebuild();
}

QPointF NetworkScene::gapCenter(int gap) const {
  return {M::kBlockLeft + M::kBlockWidth / 2, M::gapY(gap)};
}

QPointF NetworkScene::layerCenter(int layer) const {
  return {M::kBlockLeft + M::kBlockWidth / 2, M::layerTop(layer) + M::kBlockHeight / 2};
}

QPointF NetworkScene::cutGrip(int cutIndex) const {
  const auto& cuts = m_doc->spec().partition.cuts;
  const int gap = cutIndex >= 0 && cutIndex < int(cuts.size()) ? cuts[size_t(cutIndex)] : 0;
  return {M::kBandRight - M::kHandleWidth / 2, M::gapY(gap)};
}

int NetworkScene::gapAt(const QPointF& pos) const {
  const int n = m_doc->layerCount();
  if (pos.x() < M::kBandLeft || pos.x() > M::kBandRight) return 0;
  for (int gap = 1; gap < n; ++gap)
    if (std::abs(pos.y() - M::gapY(gap)) <= M::kGap / 2) return gap;
  return 0;
}

int NetworkScene::layerAt(const QPointF& pos) const {
  for (int layer = 0; layer < m_doc->layerCount(); ++layer) {
    const double top = M::layerTop(layer);
    if (pos.y() >= top && pos.y() <= top + M::kBlockHeight && pos.x() >= M::kBandLeft &&
        pos.x() <= M::kBandRight)
      return layer;
  }
  return -1;
}

int NetworkScene::stageOfLayer(int layer) const {
  int stage = 0;
  for (int c : m_doc->spec().partition.cuts)
    if (layer >= c) ++stage;
  return stage;
}

int NetworkScene::cutIndexAt(int gap) const {
  const auto& cuts = m_doc->spec().partition.cuts;
  for (size_t i = 0; i < cuts.size(); ++i)
    if (cuts[i] == gap) return int(i);
  return -1;
}

QString NetworkScene::gapLabel(int gap) const {
  const auto& layers = m_doc->plan().layers;
  if (gap <= 0 || gap >= int(layers.size())) return {};
  return QString::fromStdString(layers[size_t(gap - 1)].name + " | " + layers[size_t(gap)].name);
}

void NetworkScene::rebuild() {
  clearDrag();
  clear();
  m_hover = nullptr;
  m_cutItems.clear();
  const auto& spec = m_doc->spec();
  const auto& plan = m_doc->plan();
  const int n = m_doc->layerCount();
  const QPalette pal = QApplication::palette();

  // Input block.
  const QRectF inputRect(M::kBlockLeft, M::layerTop(-1), M::kBlockWidth, M::kBlockHeight);
  QStringList inputLines{QString::fromStdString(spec.dataset.kind) +
                         QStringLiteral(" · %1 classes").arg(plan.input.numClasses)};
  if (m_doc->inputShapeGuessed()) inputLines << tr("dataset not found: shape assumed");
  auto* input = new BlockItem(inputRect, tr("input"), formatShape(plan.input.dims), inputLines);
  input->setDimmed(true);
  addItem(input);

  // Stage bands. With an invalid cut list the bands follow the cuts that can be drawn (sorted,
  // clamped), so per-stage problems still show where they are.
  struct Band {
    int index, first, last;
    bool isLast;
    const engine::StagePlan* plan;
  };
  std::vector<Band> bands;
  const auto& stages = m_doc->partition().stages;
  if (!stages.empty()) {
    for (const auto& sp : stages)
      bands.push_back({sp.index, sp.firstLayer, sp.lastLayer, sp.isLast, &sp});
  } else if (n > 0) {
    std::vector<int> starts{0};
    for (int c : spec.partition.cuts) starts.push_back(std::clamp(c, 1, std::max(1, n - 1)));
    std::sort(starts.begin(), starts.end());
    starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
    for (size_t k = 0; k < starts.size(); ++k) {
      const int last = (k + 1 < starts.size() ? starts[k + 1] : n) - 1;
      if (last >= starts[k])
        bands.push_back({int(k), starts[k], last, k + 1 == starts.size(), nullptr});
    }
  }
  const auto& estimate = m_doc->estimate();
  for (const auto& s : bands) {
    const engine::StageSettings settings = spec.stageSettings(s.index);
    const QRectF rect(M::kBandLeft, M::layerTop(s.first) - M::kGap / 2 + 3,
                      M::kBandRight - M::kBandLeft,
                      M::layerTop(s.last) + M::kBlockHeight - M::layerTop(s.first) + M::kGap - 6);
    QStringList lines;
    lines << QString::fromStdString(settings.device) +
                 tr(" · %n thread(s)", nullptr, settings.threads);
    if (estimate && size_t(s.index) < estimate->stageShare.size())
      lines << tr("%1% of the work").arg(estimate->stageShare[size_t(s.index)] * 100, 0, 'f', 1);
    if (s.plan)
      lines << tr("%1 params").arg(formatCount(double(s.plan->params + s.plan->auxParams)));
    if (settings.delayMs > 0) lines << tr("straggler +%1 ms").arg(settings.delayMs);
    QString problem;
    for (const auto& p : m_doc->problemsForStage(s.index))
      problem = QString::fromStdString(p.message);
    addItem(new StageBandItem(rect, s.index, stageColor(s.index), lines,
                              s.index == m_doc->selectedStage(), problem));
    // The aux head that gives this stage its local loss.
    const double y = M::layerTop(s.last);
    const QRectF auxRect(M::kAuxLeft, y + 4, M::kAuxWidth, M::kBlockHeight - 8);
    if (!s.isLast) {
      QStringList auxLines;
      if (s.plan) auxLines << tr("%1 params").arg(formatCount(double(s.plan->auxParams)));
      auxLines << tr("→ local loss");
      auto* aux = new BlockItem(auxRect, tr("aux head"), QString::fromStdString(settings.auxHead),
                                auxLines);
      aux->setAccent(stageColor(s.index));
      addItem(aux);
    } else if (m_doc->invalidLayer() < 0) {  // a partly planned model has no output yet
      auto* head = new BlockItem(auxRect, tr("model output"), QString(),
                                 {tr("classifier"), tr("→ final loss")});
      head->setAccent(stageColor(s.index));
      head->setDimmed(true);
      addItem(head);
    }
    auto* link = addLine(M::kBlockLeft + M::kBlockWidth, y + M::kBlockHeight / 2, M::kAuxLeft,
                         y + M::kBlockHeight / 2, QPen(stageColor(s.index), 1.5, Qt::DotLine));
    link->setZValue(-1);
  }

  // Layer blocks and the arrows between them.
  QPen arrow(pal.color(QPalette::Mid), 1.5);
  for (int i = -1; i < n - 1; ++i)
    addLine(M::kBlockLeft + M::kBlockWidth / 2, M::layerTop(i) + M::kBlockHeight,
            M::kBlockLeft + M::kBlockWidth / 2, M::layerTop(i + 1), arrow)
        ->setZValue(-2);
  for (const auto& l : plan.layers) {
    const QRectF rect(M::kBlockLeft, M::layerTop(l.index), M::kBlockWidth, M::kBlockHeight);
    auto* block =
        new BlockItem(rect, QString::fromStdString(l.name), formatShape(l.outShape),
                      {QString::fromStdString(l.description),
                       tr("%1 params · %2 FLOPs")
                           .arg(formatCount(double(l.params)), formatCount(double(l.flops)))});
    const int stage = stageOfLayer(l.index);
    if (!bands.empty()) block->setAccent(stageColor(stage));
    block->setToolTip(tr("%1: %2\nOutput %3 per sample, %4 activation bytes\nClick to inspect "
                         "stage %5")
                          .arg(QString::fromStdString(l.name),
                               QString::fromStdString(l.description), formatShape(l.outShape),
                               formatBytes(double(l.activationBytes)))
                          .arg(stage + 1));
    if (l.index == m_doc->invalidLayer()) {  // every layer planned but the last one's output
      block->setInvalid(true);
      block->setToolTip(
          DesignDocument::problemText({m_doc->modelError().field, m_doc->modelError().message}));
    }
    addItem(block);
  }
  // The first layer that does not plan, after the ones that do: outlined, with its message.
  int drawn = n;
  if (const int bad = m_doc->invalidLayer(); bad >= n) {
    const auto& entries = spec.model.layers;
    const QString type = spec.model.kind == "layers" && bad < int(entries.size())
                             ? QString::fromStdString(entries[size_t(bad)].type)
                             : tr("layer");
    const QString message = QString::fromStdString(m_doc->modelError().message);
    const QRectF rect(M::kBlockLeft, M::layerTop(n), M::kBlockWidth, M::kBlockHeight);
    auto* block = new BlockItem(rect, tr("%1 · layer %2").arg(type).arg(bad + 1), tr("invalid"),
                                {message, tr("the layers after it are not drawn")});
    block->setInvalid(true);
    block->setToolTip(
        DesignDocument::problemText({m_doc->modelError().field, message.toStdString()}));
    addLine(M::kBlockLeft + M::kBlockWidth / 2, M::layerTop(n - 1) + M::kBlockHeight,
            M::kBlockLeft + M::kBlockWidth / 2, M::layerTop(n), arrow)
        ->setZValue(-2);
    addItem(block);
    drawn = n + 1;
  }

  // Cuts; those the model cannot have are drawn red at the nearest place they could be.
  const auto& cuts = spec.partition.cuts;
  std::map<int, int> invalidAt;  // invalid cuts already drawn at a gap: stack the next lower
  m_invalidCuts.clear();
  for (size_t i = 0; i < cuts.size(); ++i) {
    bool bad = false;
    QString message;
    for (const auto& p : m_doc->problems())
      if (p.cut == int(i)) bad = true, message = QString::fromStdString(p.message);
    const int gap = std::clamp(cuts[i], 1, std::max(1, n - 1));
    auto* line =
        new CutLineItem(bad ? CutLineItem::Kind::Invalid : CutLineItem::Kind::Cut,
                        bad ? tr("invalid cut %1 · click to remove").arg(i + 1) : QString());
    // An invalid cut never sits on a valid one (clicking it toggled the valid cut): each is
    // drawn in its own row below the gap, and clicking it removes that cut only.
    const int row = bad ? ++invalidAt[gap] : 0;
    line->setPos(0, M::gapY(gap) + row * kInvalidRowHeight);
    line->setZValue(bad ? 2 : 1);
    line->setToolTip(bad ? message + tr("\nClick to remove this cut.")
                         : tr("Cut %1 between %2.\nClick to join the stages, drag the grip to "
                              "move it.")
                               .arg(i + 1)
                               .arg(gapLabel(gap)));
    addItem(line);
    m_cutItems.push_back(line);
    if (bad) m_invalidCuts.push_back({int(i), line});
  }
  const double bottom = M::layerTop(drawn) + 10;
  setSceneRect(QRectF(-20, -20, M::kBandRight + 40, bottom + 20));
}

void NetworkScene::showHover(int gap) {
  if (gap <= 0 || cutIndexAt(gap) >= 0) {
    if (m_hover) m_hover->hide();
    return;
  }
  if (!m_hover) {
    m_hover = new CutLineItem(CutLineItem::Kind::HoverAdd, {});
    addItem(m_hover);
  }
  m_hover->setLabel(tr("click to cut: %1").arg(gapLabel(gap)));
  m_hover->setPos(0, M::gapY(gap));
  m_hover->show();
}

void NetworkScene::clearDrag() {
  m_pressInvalid = -1;
  m_pressGap = 0;
  m_dragCut = -1;
  m_dragTarget = 0;
  m_dragging = false;
}

QPointF NetworkScene::invalidCutPos(int cutIndex) const {
  for (const auto& [index, item] : m_invalidCuts)
    if (index == cutIndex) return {gapCenter(1).x(), item->pos().y()};
  return {};
}

int NetworkScene::invalidCutAt(const QPointF& pos) const {
  for (const auto& [index, item] : m_invalidCuts)
    if (std::abs(pos.y() - item->pos().y()) <= kInvalidRowHeight / 2 && pos.x() >= M::kBandLeft &&
        pos.x() <= M::kBandRight)
      return index;
  return -1;
}

void NetworkScene::mousePressEvent(QGraphicsSceneMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return QGraphicsScene::mousePressEvent(event);
  const QPointF pos = event->scenePos();
  if (const int cut = invalidCutAt(pos); cut >= 0) {
    m_pressInvalid = cut;
    event->accept();
    return;
  }
  if (const int gap = gapAt(pos); gap > 0) {
    m_pressGap = gap;
    m_dragCut = cutIndexAt(gap);
    m_dragTarget = gap;
    event->accept();
    return;
  }
  if (const int layer = layerAt(pos); layer >= 0) {
    m_doc->selectStage(stageOfLayer(layer));
    event->accept();
    return;
  }
  QGraphicsScene::mousePressEvent(event);
}

void NetworkScene::mouseMoveEvent(QGraphicsSceneMouseEvent* event) {
  const QPointF pos = event->scenePos();
  if (m_pressGap > 0 && (event->buttons() & Qt::LeftButton)) {
    if (m_dragCut < 0) return;
    const int n = m_doc->layerCount();
    const auto [lo, hi] = cutRange(m_doc->spec().partition.cuts, m_dragCut, n);
    const int nearest = int(std::lround((pos.y() - M::gapY(1)) / (M::kBlockHeight + M::kGap))) + 1;
    const int target = std::clamp(nearest, lo, hi);
    if (target != m_dragTarget || m_dragging) {
      m_dragging = m_dragging || target != m_pressGap;
      m_dragTarget = target;
      auto* line = m_cutItems[size_t(m_dragCut)];
      line->setPos(0, M::gapY(target));
      line->setLabel(tr("move to %1").arg(gapLabel(target)));
      if (m_hover) m_hover->hide();
    }
    return;
  }
  showHover(gapAt(pos));
  QGraphicsScene::mouseMoveEvent(event);
}

void NetworkScene::mouseReleaseEvent(QGraphicsSceneMouseEvent* event) {
  if (m_pressInvalid >= 0 && event->button() == Qt::LeftButton) {
    const int cut = m_pressInvalid;
    m_pressInvalid = -1;
    if (invalidCutAt(event->scenePos()) == cut) {
      std::vector<int> cuts = m_doc->spec().partition.cuts;
      if (cut < int(cuts.size())) {
        const int value = cuts[size_t(cut)];
        cuts.erase(cuts.begin() + cut);
        m_doc->edit(withCuts(m_doc->spec(), cuts),
                    tr("Remove invalid cut %1 (after layer %2)").arg(cut + 1).arg(value));
      }
    }
    event->accept();
    return;
  }
  if (m_pressGap <= 0 || event->button() != Qt::LeftButton)
    return QGraphicsScene::mouseReleaseEvent(event);
  const int pressGap = m_pressGap, dragCut = m_dragCut, target = m_dragTarget;
  const bool dragging = m_dragging;
  clearDrag();
  const auto& spec = m_doc->spec();
  if (dragging && target != pressGap) {
    m_doc->edit(moveCut(spec, dragCut, target, m_doc->layerCount()),
                tr("Move cut %1 to %2").arg(dragCut + 1).arg(gapLabel(target)));
  } else if (dragging) {
    rebuild();  // dragged back to where it was: nothing to change
  } else if (gapAt(event->scenePos()) == pressGap) {
    const bool join = cutIndexAt(pressGap) >= 0;
    m_doc->edit(toggleCut(spec, pressGap), join ? tr("Join stages at %1").arg(gapLabel(pressGap))
                                                : tr("Cut at %1").arg(gapLabel(pressGap)));
  }
  event->accept();
}

}  // namespace stagewise::ui
