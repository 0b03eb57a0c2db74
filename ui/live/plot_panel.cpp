#include "live/plot_panel.h"

#include <qcustomplot.h>
#include <QAction>
#include <QHelpEvent>
#include <QSet>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>

#include "common/plot_frame.h"
#include "common/theme.h"

namespace stagewise::ui {

namespace {

/// A rule's legend part as the short legend writes it: "grad back" -> "↑", "allocator" ->
/// "alloc", "activations" -> "act"; others as they are, without the leading space.
QString briefPart(const QString& part) {
  const QString p = part.trimmed();
  if (p == QLatin1String("grad back")) return QStringLiteral("\u2191");
  if (p == QLatin1String("allocator")) return PlotPanel::tr("alloc");
  if (p == QLatin1String("activations")) return PlotPanel::tr("act");
  return p;
}

/// The part shorter still, for a legend of many entries that the short forms overflow: the
/// queue panel's "queue" and "stale" of nine stages in three modes ("pS3 q", "pS3 st").
QString tinyPart(const QString& brief) {
  if (brief == QLatin1String("queue")) return PlotPanel::tr("q");
  if (brief == QLatin1String("stale")) return PlotPanel::tr("st");
  return brief;
}

}  // namespace

PlotPanel::PlotPanel(const QString& title, const QString& yLabel, LiveData* data, QWidget* parent)
    : QWidget(parent), m_data(data) {
  m_frame = new PlotFrame(title, PlotFrame::LogScaleMenu | PlotFrame::HoverReadout, this);
  m_plot = m_frame->plot();
  m_plot->setMinimumSize(220, 150);
  m_plot->yAxis->setLabel(yLabel);
  m_frame->setTimeAxis(false);
  m_plot->legend->setVisible(true);
  m_plot->legend->setRowSpacing(-3);
  // The legend sits in its own column right of the axis rect: with many stages an inset legend
  // covered a third of the data. The column is as narrow as its entries.
  // A sub-grid holds it at the top of that column, an empty element below taking the rest.
  auto* side = new QCPLayoutGrid;
  m_plot->plotLayout()->addElement(1, 1, side);
  m_plot->plotLayout()->setColumnStretchFactor(1, 0.001);
  side->addElement(0, 0, m_plot->legend);
  side->addElement(1, 0, new QCPLayoutElement(m_plot));
  side->setRowStretchFactor(0, 0.001);
  side->setRowStretchFactor(1, 1);
  side->setMargins(QMargins(0, 0, 0, 0));
  m_plot->legend->setMargins(QMargins(4, 2, 4, 2));
  m_plot->legend->setLayer(QStringLiteral("legend"));
  m_plot->addLayer(QStringLiteral("finals"), m_plot->layer(QStringLiteral("main")),
                   QCustomPlot::limAbove);
  m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom | QCP::iSelectLegend);
  // The wheel zooms the steps, not the values, as in Runs: zooming y too pushed the data out of
  // the view (issue 36).
  m_plot->axisRect()->setRangeZoom(Qt::Horizontal);
  m_plot->setNoAntialiasingOnDrag(true);
  // A hint in the status bar, not a tooltip that pops up over the data on every hover.
  m_plot->setStatusTip(
      tr("Drag to pan, wheel to zoom the x axis, double-click to follow the newest data "
         "again. Click a legend entry to hide its graph. Right-click to export."));
  auto* hint = new QAction(tr("Drag to pan · wheel to zoom · click a legend entry to hide"), this);
  hint->setEnabled(false);
  auto* gap = new QAction(this);
  gap->setSeparator(true);
  auto* follow = new QAction(tr("Follow newest data"), this);
  connect(follow, &QAction::triggered, this, &PlotPanel::resetView);
  m_frame->addActions({hint, gap, follow});
  // The read-out gives the value at the step from the series, not a decimated bucket's edge.
  m_frame->setHoverLookup(
      [this](const QCPGraph* graph, double x) -> std::optional<PlotFrame::HoverPoint> {
        for (const auto& b : m_bound) {
          if (b.graph != graph) continue;
          const SeriesBuffer* s = m_data->series(b.key);
          const int64_t i = s ? s->nearest(x, m_axis) : -1;
          if (i < 0) return std::nullopt;
          return PlotFrame::HoverPoint{s->x(size_t(i), m_axis), s->y(size_t(i))};
        }
        return std::nullopt;
      });

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_frame);

  connect(m_data, &LiveData::seriesAdded, this, &PlotPanel::onSeriesAdded);
  connect(m_data, &LiveData::cleared, this, &PlotPanel::onCleared);
  connect(m_frame, &PlotFrame::logYChanged, this, [this] { refresh(true); });
  connect(m_plot->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, [this] {
    if (m_settingRange) return;
    // The user zoomed or panned: stop following, and re-decimate for the new range.
    m_follow = false;
    refresh(true);
  });
  connect(m_plot, &QCustomPlot::afterLayout, this, &PlotPanel::fitTicks);
  connect(m_plot, &QCustomPlot::mouseDoubleClick, this, [this] { resetView(); });
  connect(m_plot, &QCustomPlot::legendClick, this,
          [this](QCPLegend*, QCPAbstractLegendItem* item, QMouseEvent*) {
            auto* pli = qobject_cast<QCPPlottableLegendItem*>(item);
            if (!pli) return;
            QCPAbstractPlottable* graph = pli->plottable();
            graph->setVisible(!graph->visible());
            QColor c = m_plot->legend->textColor();
            if (!graph->visible()) c.setAlpha(90);
            pli->setTextColor(c);
            pli->setSelected(false);
            refresh(true);
          });
}

QString PlotPanel::title() const {
  return m_frame->title();
}

void PlotPanel::setYBytes(bool on) {
  m_frame->setYBytes(on);
  refresh(true);
}

bool PlotPanel::logY() const {
  return m_frame->logY();
}

void PlotPanel::recolorForeground() {
  // Graphs drawn in the text colour follow the theme (black on a dark background otherwise).
  for (auto& b : m_bound) {
    const SeriesRule& rule = m_rules[size_t(b.rule)];
    if (!rule.foreground) continue;
    const engine::RunInfo* info = m_data->phaseInfo(b.key.phase);
    if (info && info->mode == engine::Mode::Backprop) continue;  // the baseline's grey
    b.pen.setColor(ruleColor(rule, b.key.stage));
    QPen pen = b.graph->pen();
    pen.setColor(b.pen.color());
    b.graph->setPen(pen);
  }
}

void PlotPanel::addRule(const SeriesRule& rule) {
  m_rules.push_back(rule);
  for (const auto& [key, buffer] : m_data->allSeries()) onSeriesAdded(key);
}

void PlotPanel::setRules(const std::vector<SeriesRule>& rules) {
  for (const auto& b : m_bound) m_plot->removeGraph(b.graph);
  m_bound.clear();
  updateLegendVisibility();
  m_rules.clear();
  for (const auto& rule : rules) addRule(rule);
  m_follow = true;
  m_frame->hideHover();
  refresh(true);
}

void PlotPanel::setCornerWidget(QWidget* widget) {
  m_frame->setCornerWidget(widget);
}

void PlotPanel::setXAxis(XAxisKind axis) {
  if (axis == m_axis) return;
  m_axis = axis;
  m_frame->setTimeAxis(axis == XAxisKind::Time);
  m_follow = true;
  refresh(true);
}

void PlotPanel::setLogY(bool on) {
  m_frame->setLogY(on);  // redraws through logYChanged
}

void PlotPanel::setFixedYRange(double lo, double hi) {
  m_fixedY = true;
  m_yLo = lo;
  m_yHi = hi;
  m_plot->yAxis->setRange(lo, hi);
  m_frame->logYAction()->setEnabled(false);
}

void PlotPanel::setLegendColumns(int columns) {
  auto* side = qobject_cast<QCPLayoutGrid*>(m_plot->legend->layout());
  m_plot->plotLayout()->addElement(2, 0, m_plot->legend);
  if (side && side != m_plot->plotLayout()) m_plot->plotLayout()->remove(side);  // deletes it
  m_plot->plotLayout()->simplify();  // drops the empty legend column
  m_plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  m_plot->legend->setWrap(columns);
  m_plot->legend->setRowSpacing(0);  // rows of a wide legend must not overlap
}

QColor PlotPanel::ruleColor(const SeriesRule& rule, int stage) const {
  if (rule.foreground) return palette().color(QPalette::Text);
  return rule.color.isValid() ? rule.color : stageColor(std::max(0, stage));
}

void PlotPanel::onSeriesAdded(const LiveKey& key) {
  for (const auto& b : m_bound)
    if (b.key == key) return;
  for (int r = 0; r < int(m_rules.size()); ++r) {
    const SeriesRule& rule = m_rules[size_t(r)];
    if (rule.name != key.name || rule.perStage != (key.stage >= 0)) continue;
    if (rule.perLayer != (key.layer >= 0)) continue;
    const engine::RunInfo* info = m_data->phaseInfo(key.phase);
    const bool backprop = info && info->mode == engine::Mode::Backprop;
    const bool pipeline = info && info->mode == engine::Mode::Pipeline;
    auto* graph = m_plot->addGraph();
    QColor color = ruleColor(rule, key.stage);
    QString legend = rule.perStage ? tr("S%1%2").arg(key.stage + 1).arg(rule.legend) : rule.legend;
    // The short form for a narrow legend: a tag naming the mode and stage, and the rule's part.
    QString tag = rule.perStage ? tr("S%1").arg(key.stage + 1) : QString();
    QString what = briefPart(rule.legend);
    Qt::PenStyle style = rule.style;
    if (rule.perLayer) {
      // Layers take their stage's colour, lighter and differently dashed further from the
      // stage's first layer, so a stage's layers read as one family.
      int first = key.layer;
      if (info && size_t(key.stage) < info->stages.size())
        first = info->stages[size_t(key.stage)].firstLayer;
      const int within = std::max(0, key.layer - first);
      color = color.lighter(100 + 22 * (within % 4));
      static const Qt::PenStyle kStyles[] = {Qt::SolidLine, Qt::DashLine, Qt::DotLine,
                                             Qt::DashDotLine};
      style = kStyles[within % 4];
      QString name = tr("L%1").arg(key.layer + 1);
      if (info && size_t(key.layer) < info->layers.size())
        name = QString::fromStdString(info->layers[size_t(key.layer)].name);
      legend = tr("S%1 %2").arg(key.stage + 1).arg(name);
      what = name;
    }
    if (pipeline) {
      // Pipelined backprop beside local stages: the stages' colours, dash-dotted, named.
      legend = tr("pipe ") + legend;
      tag = tr("p") + tag;
      style = Qt::DashDotLine;
    }
    if (backprop) {
      // The baseline run of a "both" plan (or a backprop run) reads as one grey line; dashed
      // where it is sparse enough for dashes to be cheap.
      legend = rule.perStage ? tr("backprop%1").arg(rule.legend) : rule.legend + tr(" (backprop)");
      tag = tr("bp");
      color = QColor(0x8c, 0x8c, 0x8c);
      style = Qt::DashLine;
    }
    const QPen pen(color, rule.width, style);
    graph->setPen(pen);
    graph->setName(legend);
    PlotFrame::setFullName(graph, legend);
    PlotFrame::setShortName(
        graph, tag.isEmpty() || what.isEmpty() ? tag + what : tag + QLatin1Char(' ') + what);
    graph->setAdaptiveSampling(true);
    m_bound.push_back({key, graph, pen, rule.markers, r, legend, tag, what, pipeline || backprop});
    sortLegend();
    m_seenRevision = ~uint64_t(0);
    return;
  }
}

void PlotPanel::updateLegendVisibility() {
  // One graph needs no legend: the title and the axis say what it is, and the column it would
  // take is the plot's. Unless it is one stage's of several (a pipeline reports its loss at
  // the last stage only): then the legend says which stage it is (issue 36).
  bool show = m_bound.size() >= 2;
  if (m_bound.size() == 1 && m_bound.front().key.stage >= 0) {
    const engine::RunInfo* info = m_data->phaseInfo(m_bound.front().key.phase);
    show = info && info->stages.size() > 1;
  }
  if (m_plot->legend->visible() == show) return;
  m_plot->legend->setVisible(show);
  if (auto* side = qobject_cast<QCPLayoutGrid*>(m_plot->legend->layout()))
    if (side != m_plot->plotLayout()) side->setVisible(show);
}

void PlotPanel::sortLegend() {
  // Series arrive in whatever order the engine reports them; the legend reads S1 (each of its
  // series), S2, ..., then the run-level series, then the same for the next phase.
  auto order = [](const Bound& b) {
    return std::make_tuple(b.key.phase, b.key.stage < 0, b.key.stage, b.key.layer, b.rule);
  };
  std::stable_sort(m_bound.begin(), m_bound.end(),
                   [&](const Bound& a, const Bound& b) { return order(a) < order(b); });
  unfoldLegend();
  m_plot->legend->clearItems();
  updateLegendVisibility();
  for (const auto& b : m_bound) {
    b.graph->addToLegend();
    if (!b.graph->visible())
      if (auto* item = m_plot->legend->itemWithPlottable(b.graph)) {
        QColor c = m_plot->legend->textColor();
        c.setAlpha(90);
        item->setTextColor(c);
      }
  }
  for (const auto& f : m_finals) f.graph->addToLegend();  // after the lines
}

void PlotPanel::markFinal(int phase, const std::string& series, double value) {
  if (!std::isfinite(value)) return;
  if (Final* f = finalOf(phase, series)) {
    f->value = value;
    refresh(true);
  }
}

void PlotPanel::markWholeSet(int phase, const std::string& series, int64_t step, double timeS,
                             double value) {
  if (!std::isfinite(value)) return;
  if (Final* f = finalOf(phase, series)) {
    if (f->earlier.empty()) {
      // Not only the final one: "whole test set" says what every diamond is.
      f->name = f->name == tr("final, whole test set")
                    ? tr("whole test set")
                    : f->name.chopped(tr(" final").size()) + tr(" whole set");
      f->brief = f->brief.chopped(tr(" final").size()) + tr(" whole");
      f->graph->setName(f->name);
      PlotFrame::setFullName(f->graph, f->name);
    }
    f->earlier.push_back({step, timeS, value});
    refresh(true);
  }
}

PlotPanel::Final* PlotPanel::finalOf(int phase, const std::string& series) {
  for (auto& f : m_finals)
    if (f.phase == phase && f.series == series) return &f;
  const Bound* line = nullptr;
  for (const auto& b : m_bound)
    if (b.key.phase == phase && b.key.name == series && b.key.stage < 0) line = &b;
  if (!line) return nullptr;  // this panel does not draw the series
  auto* graph = m_plot->addGraph();
  QColor color = line->pen.color();
  graph->setPen(QPen(color, 1.5));
  graph->setLineStyle(QCPGraph::lsNone);
  graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDiamond, QPen(color, 1.5),
                                         QBrush(m_plot->palette().color(QPalette::Base)), 10));
  // Short, as the legend column is narrow: "final, whole test set" beside a plain "test", the
  // line's own name and "final" beside a pipeline's or a baseline's.
  const QString name =
      line->name == tr("test") ? tr("final, whole test set") : line->name + tr(" final");
  graph->setName(name);
  PlotFrame::setFullName(graph, name);
  // Over every line, the stages' included (issue 36: the diamond was buried under them).
  graph->setLayer(QStringLiteral("finals"));
  const QString lineBrief =
      line->tag.isEmpty()
          ? line->what
          : (line->what.isEmpty() ? line->tag : line->tag + QLatin1Char(' ') + line->what);
  m_finals.push_back({phase,
                      series,
                      std::numeric_limits<double>::quiet_NaN(),
                      graph,
                      name,
                      lineBrief + tr(" final"),
                      {}});
  sortLegend();
  return &m_finals.back();
}

QCPGraph* PlotPanel::finalGraph(int phase, const std::string& series) const {
  for (const auto& f : m_finals)
    if (f.phase == phase && f.series == series) return f.graph;
  return nullptr;
}

void PlotPanel::drawFinals() {
  // The engine sends the final evaluation as the series' last point, at the final step, like
  // the periodic ones on eval.max_samples: the line would join a different measurement.
  for (const auto& f : m_finals) {
    f.graph->data()->clear();
    // A stop's whole-set evaluation before a resume: never on the line (showEarlierPart keeps it
    // out of the series), a diamond like the final one (issue 36).
    for (const auto& e : f.earlier)
      f.graph->data()->add(
          QCPGraphData(m_axis == XAxisKind::Step ? double(e.step) : e.timeS, e.value));
    for (const auto& b : m_bound) {
      if (b.key.phase != f.phase || b.key.name != f.series || b.key.stage >= 0) continue;
      const SeriesBuffer* s = m_data->series(b.key);
      if (!s || s->empty() || float(s->y(s->size() - 1)) != float(f.value))
        continue;  // kept as float
      const double x = s->x(s->size() - 1, m_axis);
      auto data = b.graph->data();
      // Off the line: the final point (and the decimated columns at its x).
      if (!data->isEmpty() && (data->constEnd() - 1)->key >= x - 1e-12)
        data->removeAfter(x - 1e-12);
      f.graph->data()->add(QCPGraphData(x, s->y(s->size() - 1)));
      f.graph->setVisible(b.graph->visible());
    }
    // No final point on this series (yet): no legend entry without a marker.
    if (f.graph->data()->isEmpty())
      f.graph->removeFromLegend();
    else if (!m_plot->legend->hasItemWithPlottable(f.graph))
      f.graph->addToLegend();
  }
}

int PlotPanel::legendRows() const {
  return m_plot->legend->rowCount();
}

void PlotPanel::unfoldLegend() {
  if (m_moreItem) {
    m_plot->legend->removeItem(m_moreItem);  // deletes it
    m_moreItem = nullptr;
  }
  // The folded were the legend's last entries: appended, they are back in their order.
  for (QCPGraph* g : m_folded) {
    PlotFrame::setReadOutUnlisted(g, false);
    g->addToLegend();
  }
  m_folded.clear();
}

QStringList PlotPanel::foldedLegendEntries() const {
  QStringList names;
  for (const QCPGraph* g : m_folded) names << PlotFrame::fullName(g);
  return names;
}

int PlotPanel::minAxisWidth() const {
  return std::max(kMinAxisWidth, std::min(200, m_plot->viewport().width() * 3 / 5));
}

void PlotPanel::fitLegend() {
  unfoldLegend();
  // Nine stages in three modes list 24 entries or more: one column was taller than the panel
  // and its lower entries were cut off. As many rows as the plot's height holds, then a new
  // column, in a smaller font once there are several.
  QCPLegend* legend = m_plot->legend;
  auto* side = qobject_cast<QCPLayoutGrid*>(legend->layout());
  if (!side || side == m_plot->plotLayout()) return;
  int entries = 0;  // itemCount() counts the grid's cells, empty ones included
  for (int i = 0; i < legend->itemCount(); ++i) entries += legend->item(i) != nullptr;
  if (entries == 0) return;
  int heading = 0;
  if (QCPLayoutElement* title = m_plot->plotLayout()->element(0, 0))
    heading = title->minimumOuterSizeHint().height();
  const QMargins margins = legend->margins();
  // The title row, the spacing below it and the same again at the foot (as QCPLayoutGrid lays
  // the rows out), then the legend's own margins.
  const int height = m_plot->viewport().height() - heading -
                     2 * m_plot->plotLayout()->rowSpacing() - margins.top() - margins.bottom();
  const auto rowsFor = [&](int pointSize) {
    legend->setFont(QFont(font().family(), pointSize));
    for (int i = 0; i < legend->itemCount(); ++i)
      if (QCPAbstractLegendItem* item = legend->item(i)) item->setFont(legend->font());
    int entry = 1;
    for (int i = 0; i < legend->itemCount(); ++i)
      if (QCPAbstractLegendItem* item = legend->item(i))
        entry = std::max(entry, item->minimumOuterSizeHint().height());
    // n rows take n entries less (n - 1) overlaps of the (negative) row spacing.
    const int step = std::max(1, entry + legend->rowSpacing());
    return std::max(1, (height - entry) / step + 1);
  };
  int rows = rowsFor(8);
  if (rows < entries) rows = rowsFor(7);
  const int wrap = rows >= entries ? 0 : rows;
  // Several columns: narrower swatches and gaps leave the plot more of the width.
  legend->setIconSize(wrap > 0 ? QSize(10, 8) : QSize(14, 8));
  legend->setIconTextPadding(wrap > 0 ? 3 : 7);
  if (legend->wrap() != wrap || legend->fillOrder() != QCPLayoutGrid::foRowsFirst) {
    legend->setWrap(wrap);
    legend->setColumnSpacing(4);
    legend->setFillOrder(QCPLayoutGrid::foRowsFirst, /*rearrange=*/true);
  }
  fitLegendWidth();
}

void PlotPanel::fitLegendWidth() {
  QCPLegend* legend = m_plot->legend;
  for (const auto& b : m_bound)
    if (b.graph->name() != b.name) b.graph->setName(b.name);
  for (const auto& f : m_finals)
    if (f.graph->name() != f.name) f.graph->setName(f.name);
  if (!legend->visible() || legend->columnCount() == 0) return;
  // The plot's column needs the axis rect's margins (the y axis's labels, as the last layout
  // made them) and kMinAxisWidth, and at least the title's width (the title is in the same
  // column): what is left is the legend's. More than that and QCustomPlot squeezes both.
  const QCPAxisRect* rect = m_plot->axisRect();
  const int axisMargins = rect->outerRect().width() - rect->width();
  int plotColumn = minAxisWidth() + std::max(0, axisMargins);
  if (QCPLayoutElement* title = m_plot->plotLayout()->element(0, 0))
    if (title != rect) plotColumn = std::max(plotColumn, title->minimumOuterSizeHint().width());
  const int room = m_plot->viewport().width() - plotColumn - m_plot->plotLayout()->columnSpacing();
  if (legend->minimumOuterSizeHint().width() <= room) return;
  // Too wide: the short forms ("pS1 ↑" for "pipe S1 grad back"), which keep every entry
  // distinct where cutting the whole texts off left nine "pipe S…" (issue 36).
  bool tiny = false;
  const auto brief = [&tiny](const Bound& b) {
    const QString what = tiny ? tinyPart(b.what) : b.what;
    if (b.tag.isEmpty()) return what;
    return what.isEmpty() ? b.tag : b.tag + QLatin1Char(' ') + what;
  };
  for (const auto& b : m_bound) b.graph->setName(brief(b));
  for (const auto& f : m_finals) f.graph->setName(f.brief);
  if (legend->minimumOuterSizeHint().width() <= room) return;
  // Still too wide: the parts that have one in their tiniest form ("pS3 q" for "pipe S3
  // queue"), whole, before anything is elided (the walkthrough read "pS3 qu…").
  if (std::any_of(m_bound.begin(), m_bound.end(),
                  [](const Bound& b) { return tinyPart(b.what) != b.what; })) {
    tiny = true;
    for (const auto& b : m_bound) b.graph->setName(brief(b));
    if (legend->minimumOuterSizeHint().width() <= room) return;
  }
  // Still too wide: every column gets the same share of the room; each text is cut to what its
  // share leaves beside the swatch, with an ellipsis, so none is cut off mid-letter by the
  // cell's edge. The tag stays whole and the part is cut, so stages never merge into one.
  const int columns = legend->columnCount();
  const QMargins lm = legend->margins();
  int itemMargins = 0;
  for (int i = 0; i < legend->itemCount(); ++i)
    if (QCPAbstractLegendItem* item = legend->item(i)) {
      itemMargins = item->margins().left() + item->margins().right();
      break;
    }
  const int share =
      (room - lm.left() - lm.right() - (columns - 1) * legend->columnSpacing()) / columns;
  const int text = std::max(
      12, share - itemMargins - legend->iconSize().width() - legend->iconTextPadding() - 1);
  const QFontMetrics fm(legend->font());
  const auto cut = [&](const QString& tag, const QString& what) {
    const QString whole =
        tag.isEmpty() ? what : (what.isEmpty() ? tag : tag + QLatin1Char(' ') + what);
    if (fm.horizontalAdvance(whole) <= text) return whole;
    if (tag.isEmpty() || what.isEmpty()) return fm.elidedText(whole, Qt::ElideMiddle, text);
    const QString head = tag + QLatin1Char(' ');
    const int left = text - fm.horizontalAdvance(head);
    if (left < fm.horizontalAdvance(QStringLiteral("\u2026")) + fm.averageCharWidth())
      return fm.elidedText(whole, Qt::ElideRight, text);
    return head + fm.elidedText(what, Qt::ElideRight, left);
  };
  QSet<QString> names;
  bool distinct = true;
  for (const auto& b : m_bound) {
    const QString name = cut(b.tag, tiny ? tinyPart(b.what) : b.what);
    distinct &= !names.contains(name);
    names.insert(name);
    b.graph->setName(name);
  }
  for (const auto& f : m_finals) {
    const QString name = fm.elidedText(f.brief, Qt::ElideMiddle, text);
    distinct &= !names.contains(name);
    names.insert(name);
    f.graph->setName(name);
  }
  if (distinct) return;
  // Cells too narrow even for the tags: the short forms whole, rather than two entries that
  // read the same, in as many columns as the room holds; the last entries folded into
  // "+N more" (their names in the tooltip, their values still read out), so the legend never
  // grows past its panel (issue 36: two 9-stage runs in three modes).
  for (const auto& b : m_bound) b.graph->setName(brief(b));
  for (const auto& f : m_finals) f.graph->setName(f.brief);
  std::vector<QCPPlottableLegendItem*> items;
  int entry = 1;
  for (int i = 0; i < legend->itemCount(); ++i)
    if (auto* item = qobject_cast<QCPPlottableLegendItem*>(legend->item(i))) {
      items.push_back(item);
      entry = std::max(entry, static_cast<QCPLayoutElement*>(item)->minimumOuterSizeHint().width());
    }
  const int rows = legend->wrap() > 0 ? legend->wrap() : int(items.size());
  const int spacing = legend->columnSpacing();
  // A few pixels spare: the y axis's labels may widen a little at the next layout.
  const int fits = std::max(1, (room - lm.left() - lm.right() - 8 + spacing) / (entry + spacing));
  const int capacity = fits * rows;
  if (capacity >= int(items.size())) return;
  const int keep = std::max(1, capacity - 1);
  for (size_t i = size_t(keep); i < items.size(); ++i)
    if (auto* g = qobject_cast<QCPGraph*>(items[i]->plottable())) m_folded.push_back(g);
  for (QCPGraph* g : m_folded) {
    g->removeFromLegend();
    PlotFrame::setReadOutUnlisted(g, true);
  }
  legend->setFillOrder(QCPLayoutGrid::foRowsFirst, /*rearrange=*/true);
  m_moreItem = addFoldedLegendItem(legend, int(m_folded.size()), entry);
}

void PlotPanel::fitTicks() {
  placeMarkerLabels();  // the axis rect's width as this layout made it
  // The default five ticks on a plot squeezed beside a wide legend printed "10000" over
  // "20000" (issue 36). Fewer ticks, each label a label's width and a half apart at least;
  // QCustomPlot picks readable steps that can be up to a third closer than asked, which this
  // margin covers. Within one width the count only goes down, so two layouts cannot swap
  // counts back and forth.
  QCPAxis* x = m_plot->xAxis;
  const QFontMetrics fm(x->tickLabelFont());
  int widest = 0;
  for (const QString& label : x->tickVectorLabels())
    widest = std::max(widest, fm.horizontalAdvance(label));
  if (widest == 0) return;
  const int room = m_plot->axisRect()->width();
  const int wanted = std::clamp(room / (widest * 3 / 2 + 12), 1, 5);
  const int now = x->ticker()->tickCount();
  if (wanted == now || (room == m_tickRoom && wanted > now)) return;
  m_tickRoom = room;
  x->ticker()->setTickCount(wanted);
  m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void PlotPanel::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  fitLegend();
  m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void PlotPanel::onCleared() {
  unfoldLegend();
  for (const auto& b : m_bound) m_plot->removeGraph(b.graph);
  m_bound.clear();
  for (const auto& f : m_finals) m_plot->removeGraph(f.graph);
  m_finals.clear();
  for (auto* item : m_markerItems) m_plot->removeItem(item);
  m_markerItems.clear();
  m_markerLabels.clear();
  updateLegendVisibility();
  updateEmptyText();
  m_tickRoom = -1;
  m_follow = true;
  // The axes as before any run: a cleared panel kept the last run's ranges (issue 36).
  m_settingRange = true;
  m_plot->xAxis->setRange(0, 1);
  m_plot->yAxis->setRange(m_fixedY ? QCPRange(m_yLo, m_yHi) : QCPRange(0, 1));
  m_settingRange = false;
  m_frame->hideHover();
  m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void PlotPanel::resetView() {
  m_follow = true;
  refresh(true);
}

int PlotPanel::shownPoints(int index) const {
  return index >= 0 && index < graphCount() ? m_bound[size_t(index)].graph->data()->size() : 0;
}

int PlotPanel::receivedPoints(int index) const {
  if (index < 0 || index >= graphCount()) return 0;
  const SeriesBuffer* s = m_data->series(m_bound[size_t(index)].key);
  return s ? int(s->size()) : 0;
}

QString PlotPanel::legendText(int index) const {
  return index >= 0 && index < graphCount() ? m_bound[size_t(index)].name : QString();
}

QString PlotPanel::readout() const {
  return m_frame->readout();
}

void PlotPanel::refresh(bool force) {
  if (!force && m_data->revision() == m_seenRevision) return;
  m_seenRevision = m_data->revision();
  if (m_data->smoothing() != m_seenSmoothing) {
    // The read-out's values were the old smoothing's (issue 36: a stuck Accuracy read-out).
    m_seenSmoothing = m_data->smoothing();
    m_frame->hideHover();
  }
  if (!isVisible() && !force) return;
  // Series only grow between clears: when none of this panel's grew, nothing it draws changed
  // (a panel whose series the run does not report costs no redraw at all).
  uint64_t points = m_bound.size();
  for (const auto& b : m_bound)
    if (const SeriesBuffer* s = m_data->series(b.key)) points += s->size() << 8;
  if (!force && points == m_seenPoints && m_markerItems.size() == 2 * m_data->markers().size())
    return;
  m_seenPoints = points;
  const int columns = std::max(50, m_plot->axisRect()->width());
  double xLo = m_plot->xAxis->range().lower, xHi = m_plot->xAxis->range().upper;
  if (m_follow) {
    xLo = std::numeric_limits<double>::infinity();
    xHi = -xLo;
    for (const auto& b : m_bound) {
      const SeriesBuffer* s = m_data->series(b.key);
      if (!s || s->empty() || !b.graph->visible()) continue;
      xLo = std::min(xLo, s->x(0, m_axis));
      xHi = std::max(xHi, s->x(s->size() - 1, m_axis));
    }
    if (!(xLo <= xHi)) xLo = 0, xHi = 1;
    if (xHi - xLo < 1e-9) {
      // One point (a single probe at step 369): centred in a readable span, not at the left
      // edge of 369–370 (issue 36 §2.5); steps and times never go below 0.
      const double pad = std::max(1.0, std::abs(xLo) * 0.05);
      const double at = xLo;
      xLo = at >= 0 ? std::max(0.0, at - pad) : at - pad;
      xHi = at + pad;
    } else {
      // Dots and the final evaluation's diamond at the first or last x sat half outside the
      // plot (issue 36): a margin of half a diamond and a bit either side when any are drawn.
      bool dots = !m_finals.empty();
      for (const auto& b : m_bound) dots |= b.markers && b.graph->visible();
      if (dots) {
        const double pad = (xHi - xLo) * 8.0 / std::max(50, m_plot->axisRect()->width());
        xLo -= pad;
        xHi += pad;
      }
    }
  }
  double yLo = std::numeric_limits<double>::infinity(), yHi = -yLo;
  QVector<QCPGraphData> data;
  for (const auto& b : m_bound) {
    const SeriesBuffer* s = m_data->series(b.key);
    m_scratch.clear();
    if (s) s->decimate(m_axis, xLo, xHi, columns, m_scratch);
    data.resize(qsizetype(m_scratch.size()));
    for (size_t i = 0; i < m_scratch.size(); ++i) {
      data[qsizetype(i)] = QCPGraphData(m_scratch[i].x, m_scratch[i].y);
      const double y = m_scratch[i].y;
      if (b.graph->visible() && m_frame->onYAxis(y)) {
        yLo = std::min(yLo, y);
        yHi = std::max(yHi, y);
      }
    }
    b.graph->data()->set(data, true);
    // A dense graph is a min/max band a pixel apart: thick, dashed or antialiased pens only
    // cost time there (a wide pen makes the raster engine stroke every segment). Sparse
    // graphs (evaluations, probes) keep their style and get dots.
    const bool dense = data.size() > columns / 3;
    // The dashes that name a pipeline or a baseline run stay on a dense graph too (issue 36:
    // its lines turned solid, as a local run's, once a plan ended).
    QPen pen = b.pen;
    if (dense) {
      pen.setWidthF(1.0);
      if (!b.modeStyle) pen.setStyle(Qt::SolidLine);
    }
    b.graph->setPen(pen);
    b.graph->setAntialiased(!dense);
    b.graph->setScatterStyle(!dense && b.markers ? QCPScatterStyle(QCPScatterStyle::ssDisc, 6)
                                                 : QCPScatterStyle());
  }
  // markWholeSet's points are in no series: the y range holds them too.
  for (const auto& f : m_finals)
    for (const auto& e : f.earlier)
      if (f.graph->visible() && m_frame->onYAxis(e.value)) {
        yLo = std::min(yLo, e.value);
        yHi = std::max(yHi, e.value);
      }
  drawFinals();
  if (m_follow) {
    m_settingRange = true;
    m_plot->xAxis->setRange(xLo, xHi);
    if (m_fixedY) {
      m_plot->yAxis->setRange(m_yLo, m_yHi);
    } else if (yLo <= yHi) {
      // A flat series still gets a readable axis around its value.
      m_frame->setYRange(yLo, yHi, std::max({1e-9, (yHi - yLo) * 0.06, std::abs(yHi) * 0.02}));
    }
    m_settingRange = false;
  }
  syncMarkers();
  updateEmptyText();
  fitLegend();
  m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void PlotPanel::setEmptyText(const QString& text) {
  if (!m_emptyText) {
    m_emptyText = new QCPItemText(m_plot);
    m_emptyText->position->setType(QCPItemPosition::ptAxisRectRatio);
    m_emptyText->position->setCoords(0.5, 0.5);
    m_emptyText->setPositionAlignment(Qt::AlignCenter);
    m_emptyText->setSelectable(false);
    m_emptyText->setClipToAxisRect(true);
  }
  m_emptyText->setText(text);
  updateEmptyText();
  m_plot->replot(QCustomPlot::rpQueuedReplot);
}

QString PlotPanel::shownEmptyText() const {
  return m_emptyText && m_emptyText->visible() ? m_emptyText->text() : QString();
}

void PlotPanel::updateEmptyText() {
  if (!m_emptyText) return;
  bool empty = true;
  for (const auto& b : m_bound)
    if (const SeriesBuffer* s = m_data->series(b.key); s && !s->empty()) empty = false;
  QColor color = palette().color(QPalette::Text);
  color.setAlpha(160);
  m_emptyText->setColor(color);
  m_emptyText->setVisible(empty && !m_emptyText->text().isEmpty());
}

bool PlotPanel::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    const auto* help = static_cast<QHelpEvent*>(event);
    const QPoint at = m_plot->mapFromGlobal(help->globalPos());
    const bool overData = m_plot->rect().contains(at) && m_plot->axisRect()->rect().contains(at);
    if (m_moreItem && m_moreItem->outerRect().contains(at)) {  // "+N more": their names
      QToolTip::showText(help->globalPos(), foldedLegendEntries().join(QLatin1Char('\n')), this);
      return true;
    }
    if (const QString tip = overData ? markerTip(at) : QString(); !tip.isEmpty()) {
      QToolTip::showText(help->globalPos(), tip, this);
      return true;
    }
    if (overData && !toolTip().isEmpty()) {
      QToolTip::hideText();
      event->ignore();
      return true;
    }
  }
  return QWidget::event(event);
}

void PlotPanel::syncMarkers() {
  const auto& markers = m_data->markers();
  if (m_markerAxis != m_axis) {
    for (auto* item : m_markerItems) m_plot->removeItem(item);
    m_markerItems.clear();
    m_markerLabels.clear();
    m_markerAxis = m_axis;
  }
  if (markers.size() < m_markerItems.size() / 2) {
    for (auto* item : m_markerItems) m_plot->removeItem(item);
    m_markerItems.clear();
    m_markerLabels.clear();
  }
  QColor color = palette().color(QPalette::Text);
  color.setAlpha(150);
  for (size_t i = m_markerItems.size() / 2; i < markers.size(); ++i) {
    const LiveMarker& m = markers[i];
    const double x = m_axis == XAxisKind::Step ? double(m.step) : m.timeS;
    auto* line = new QCPItemStraightLine(m_plot);
    line->setPen(QPen(color, 1, Qt::DashLine));
    // The y ends in the axis rect's own units: a log axis has no 0.
    for (QCPItemPosition* end : {line->point1, line->point2}) {
      end->setTypeX(QCPItemPosition::ptPlotCoords);
      end->setTypeY(QCPItemPosition::ptAxisRectRatio);
    }
    line->point1->setCoords(x, 0);
    line->point2->setCoords(x, 1);
    line->setSelectable(false);
    auto* text = new QCPItemText(m_plot);
    text->position->setTypeX(QCPItemPosition::ptPlotCoords);
    text->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    text->position->setCoords(x, 0.02);  // its row: placeMarkerLabels()
    text->setText(m.label);
    text->setColor(color);
    // Over a dense plot (nine stages' queues) the text needs a ground to be read on.
    text->setBrush(labelGround());
    QFont font = m_plot->font();
    font.setPointSizeF(font.pointSizeF() * 0.85);
    text->setFont(font);
    text->setSelectable(false);
    text->setClipToAxisRect(true);
    m_markerItems.push_back(line);
    m_markerItems.push_back(text);
    m_markerLabels.push_back(m.label);
  }
  placeMarkerLabels();
}

void PlotPanel::placeMarkerLabels() {
  // A label in the right half of the view reads leftwards from its line, in the left half
  // rightwards, unless only the other side has room for it whole. One too wide for either side
  // is elided in the middle to the wider side's room, so it ends at the plot's edge instead of
  // being cut off mid-word there (issue 36: "ts [1,2,3…" in the queue panel at 1366 px); its
  // line's tooltip gives it whole. Each label takes the highest row where it overlaps no label
  // already placed (by its width as drawn); with more changes close together than rows, the
  // older labels are left out (their lines and tooltips stay, and the event log lists them)
  // instead of printing over each other: the newest are placed first, so the change just made
  // is the one that reads (issue 36). A label whose line is off the view is hidden.
  const QCPRange range = m_plot->xAxis->range();
  const QCPAxisRect* rect = m_plot->axisRect();
  const int height = std::max(1, rect->height());
  const double left = rect->left(), right = rect->right();
  std::vector<std::vector<std::pair<double, double>>> rows;  // per row: the pixel spans taken
  for (size_t k = m_markerItems.size() / 2; k-- > 0;) {
    const size_t i = 2 * k + 1;
    auto* text = static_cast<QCPItemText*>(m_markerItems[i]);
    const QString& full = m_markerLabels[qsizetype(k)];
    const double x = text->position->coords().x();
    if (!range.contains(x)) {  // its line is off the view too
      text->setVisible(false);
      continue;
    }
    const QFontMetrics fm(text->font());
    const int line = fm.height() + 1;
    const int maxRows = std::max(1, int(0.6 * height) / line);
    const double px = m_plot->xAxis->coordToPixel(x);
    constexpr int kPad = 3;  // between the line and the text
    const double roomLeft = px - left - kPad - 1, roomRight = right - px - kPad - 1;
    const int whole = fm.horizontalAdvance(full);
    bool leftwards = x > range.center();
    if (whole > (leftwards ? roomLeft : roomRight) && whole <= (leftwards ? roomRight : roomLeft))
      leftwards = !leftwards;
    if (whole > (leftwards ? roomLeft : roomRight)) leftwards = roomLeft > roomRight;
    const int room = int(std::floor(leftwards ? roomLeft : roomRight));
    const QString shown = whole <= room ? full : fm.elidedText(full, Qt::ElideMiddle, room);
    // Less than a few letters and the ellipsis says nothing: the line and its tooltip do.
    if (shown.size() < 4) {
      text->setVisible(false);
      continue;
    }
    text->setText(shown);
    text->setPositionAlignment((leftwards ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignTop);
    text->setPadding(leftwards ? QMargins(0, 0, kPad, 0) : QMargins(kPad, 0, 0, 0));
    const double w = fm.horizontalAdvance(shown) + kPad;
    const std::pair<double, double> span =
        leftwards ? std::make_pair(px - w - 2, px + 2) : std::make_pair(px - 2, px + w + 2);
    int row = 0;
    for (; row < maxRows; ++row) {
      if (size_t(row) >= rows.size()) rows.emplace_back();
      bool free = true;
      for (const auto& [lo, hi] : rows[size_t(row)])
        if (span.first < hi && lo < span.second) free = false;
      if (free) break;
    }
    text->setVisible(row < maxRows);
    if (row >= maxRows) continue;
    rows[size_t(row)].push_back(span);
    text->position->setCoords(x, 0.02 + double(row * line) / height);
  }
}

QBrush PlotPanel::labelGround() const {
  QColor ground = palette().color(QPalette::Base);
  ground.setAlpha(190);
  return ground;
}

QString PlotPanel::markerTip(const QPoint& at) const {
  // Over a label, or within a few pixels of its line: the changes there, whole.
  QStringList tips;
  const QCPRange range = m_plot->xAxis->range();
  for (int i = 0; i < markerCount(); ++i) {
    const auto* text = static_cast<const QCPItemText*>(m_markerItems[size_t(2 * i + 1)]);
    const double x = markerX(i);
    if (!range.contains(x)) continue;
    const bool nearLine = std::abs(m_plot->xAxis->coordToPixel(x) - at.x()) <= 4;
    const bool onLabel = text->visible() &&
                         QRectF(text->topLeft->pixelPosition(), text->bottomRight->pixelPosition())
                             .normalized()
                             .contains(at);
    if (nearLine || onLabel) tips << m_markerLabels[i];
  }
  return tips.join(QLatin1Char('\n'));
}

QString PlotPanel::markerLabel(int index) const {
  if (index < 0 || index >= markerCount()) return {};
  return m_markerLabels[index];
}

QCPItemText* PlotPanel::markerText(int index) const {
  if (index < 0 || index >= markerCount()) return nullptr;
  return static_cast<QCPItemText*>(m_markerItems[size_t(2 * index + 1)]);
}

double PlotPanel::markerX(int index) const {
  if (index < 0 || index >= markerCount()) return std::nan("");
  return static_cast<QCPItemStraightLine*>(m_markerItems[size_t(2 * index)])->point1->coords().x();
}

void PlotPanel::exportWithDialog() {
  refresh(true);
  m_frame->exportWithDialog();
}

QString PlotPanel::exportTo(const QString& path, int width, int height) {
  refresh(true);
  return m_frame->exportTo(path, width, height);
}

void PlotPanel::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::PaletteChange || event->type() == QEvent::ApplicationPaletteChange) {
    recolorForeground();  // the frame restyles the axes, legend and read-out itself
    QColor color = palette().color(QPalette::Text);
    color.setAlpha(150);
    for (size_t i = 0; i < m_markerItems.size(); i += 2) {
      static_cast<QCPItemStraightLine*>(m_markerItems[i])->setPen(QPen(color, 1, Qt::DashLine));
      auto* text = static_cast<QCPItemText*>(m_markerItems[i + 1]);
      text->setColor(color);
      text->setBrush(labelGround());
    }
    m_plot->replot(QCustomPlot::rpQueuedReplot);
  }
}

}  // namespace stagewise::ui
