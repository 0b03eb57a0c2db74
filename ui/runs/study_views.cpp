#include "runs/study_views.h"

#include <qcustomplot.h>
#include <QComboBox>
#include <QHBoxLayout>
#include <QVBoxLayout>
#include <cmath>
#include <map>

#include "common/plot_frame.h"
#include "common/theme.h"

namespace stagewise::ui {

namespace {

QString unquoted(const std::string& text) {
  QString v = QString::fromStdString(text);
  if (v.size() >= 2 && v.startsWith(QLatin1Char('"')) && v.endsWith(QLatin1Char('"')))
    v = v.mid(1, v.size() - 2);
  return v;
}

QString axisValue(const study::SearchAxis& a, double v) {
  if (a.categorical) {
    const long i = std::lround(v);
    return i >= 0 && size_t(i) < a.labels.size() ? unquoted(a.labels[size_t(i)]) : QString();
  }
  return QString::number(v, 'g', 3);
}

/// A vary point's colour; a pruned trial's the same, faint.
QColor pointColor(int varyPoint, bool faint) {
  QColor c = stageColor(varyPoint);
  if (faint) c.setAlpha(60);
  return c;
}

QString pointName(const study::SearchViews& v, int point) {
  const std::string& label = size_t(point) < v.varyLabels.size() ? v.varyLabels[size_t(point)] : "";
  return label.empty() ? QObject::tr("trials") : QString::fromStdString(label);
}

/// One legend entry per vary point (its colour) and, when some trials were pruned, one for the
/// faint ones (issue 32's walkthrough: the colours were not explained); every other graph stays
/// out of the legend.
void explainColours(QCustomPlot* p) {
  std::map<int, QCPGraph*> first;
  QCPGraph* prunedGraph = nullptr;
  for (int i = 0; i < p->graphCount(); ++i) {
    QCPGraph* g = p->graph(i);
    const int point = g->property("varyPoint").toInt();
    const bool pruned = g->property("pruned").toBool();
    g->removeFromLegend();
    if (pruned) {
      if (!prunedGraph) prunedGraph = g;
      continue;
    }
    if (!first.count(point)) first[point] = g;
  }
  for (const auto& [point, g] : first) g->addToLegend();
  if (prunedGraph) {
    // A grey stand-in, so the entry says "faint" rather than naming one point's colour.
    auto* key = p->addGraph();
    QPen pen = prunedGraph->pen();
    pen.setColor(QColor(128, 128, 128, 60));
    key->setPen(pen);
    key->setLineStyle(prunedGraph->lineStyle());
    QCPScatterStyle style = prunedGraph->scatterStyle();
    if (!style.isNone()) style.setPen(pen);
    key->setScatterStyle(style);
    key->setName(QObject::tr("pruned (faint)"));
  }
  p->legend->setVisible(first.size() > 1 || prunedGraph);
}

}  // namespace

StudyViews::StudyViews(QWidget* parent) : QWidget(parent) {
  m_frame = new PlotFrame(tr("Search"), PlotFrame::NoFeatures, this);
  auto* corner = new QWidget(this);
  auto* row = new QHBoxLayout(corner);
  row->setContentsMargins(0, 0, 0, 0);
  m_view = new QComboBox(corner);
  m_view->addItem(tr("Parallel coordinates"));
  m_view->addItem(tr("Best so far"));
  m_view->addItem(tr("Slice"));
  m_view->addItem(tr("Importance"));
  m_view->setToolTip(
      tr("Parallel coordinates: each trial a line across the searched keys and the metric "
         "(log axes for log-uniform keys; pruned trials faint). Best so far: the best "
         "validation value of the completed trials after each trial. Slice: the metric "
         "against one key. Importance: the share of the metric's variance, within each point "
         "of the vary grid, that the key explains alone (docs/metrics.md)."));
  m_key = new QComboBox(corner);
  m_key->setToolTip(tr("The key the slice plots the metric against."));
  row->addWidget(m_view);
  row->addWidget(m_key);
  m_frame->setCornerWidget(corner);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_frame);
  setMinimumHeight(240);
  connect(m_view, &QComboBox::currentIndexChanged, this, &StudyViews::draw);
  connect(m_key, &QComboBox::currentIndexChanged, this, &StudyViews::draw);
}

QCustomPlot* StudyViews::plot() const {
  return m_frame->plot();
}

void StudyViews::setViews(study::SearchViews views) {
  m_views = std::move(views);
  const QString key = m_key->currentText();
  {
    const QSignalBlocker block(m_key);
    m_key->clear();
    for (size_t k = 0; k + 1 < m_views.axes.size(); ++k)
      m_key->addItem(QString::fromStdString(m_views.axes[k].key));
    if (const int i = m_key->findText(key); i >= 0) m_key->setCurrentIndex(i);
  }
  draw();
}

void StudyViews::draw() {
  QCustomPlot* p = plot();
  p->clearPlottables();
  p->clearItems();
  p->legend->setVisible(false);
  p->xAxis->setScaleType(QCPAxis::stLinear);
  p->xAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
  p->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
  p->xAxis->setLabel(QString());
  p->yAxis->setLabel(QString());
  m_key->setVisible(m_view->currentIndex() == Slice);
  if (!m_views.axes.empty()) {
    switch (m_view->currentIndex()) {
      case Parallel:
        drawParallel();
        break;
      case BestSoFar:
        drawBestSoFar();
        break;
      case Slice:
        drawSlice();
        break;
      default:
        drawImportance();
        break;
    }
  }
  m_frame->restyle();
}

void StudyViews::drawParallel() {
  QCustomPlot* p = plot();
  m_frame->setTitle(tr("Search: parallel coordinates"));
  const auto& axes = m_views.axes;
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  for (size_t a = 0; a < axes.size(); ++a) {
    // Each axis is labelled with its key and its ends (a log axis says so).
    const auto& ax = axes[a];
    const QString ends =
        ax.categorical
            ? QStringLiteral("%1 … %2").arg(axisValue(ax, 0),
                                            axisValue(ax, double(ax.labels.size()) - 1))
            : QStringLiteral("%1 … %2").arg(axisValue(ax, ax.low), axisValue(ax, ax.high));
    ticker->addTick(double(a), QString::fromStdString(ax.key) +
                                   (ax.log ? tr(" (log)") : QString()) + QLatin1Char('\n') + ends);
    auto* line = new QCPItemStraightLine(p);
    line->point1->setCoords(double(a), 0);
    line->point2->setCoords(double(a), 1);
    line->setPen(QPen(palette().color(QPalette::Mid), 1));
  }
  // Pruned trials first, so the completed ones are drawn over them.
  for (int pass = 0; pass < 2; ++pass)
    for (const auto& t : m_views.trials) {
      if (t.pruned != (pass == 0)) continue;
      const auto y = study::parallelLine(m_views, t);
      auto* g = p->addGraph();
      for (size_t a = 0; a < y.size(); ++a)
        if (std::isfinite(y[a])) g->addData(double(a), y[a]);
      QPen pen(pointColor(t.varyPoint, t.pruned), t.pruned ? 1.0 : 1.6);
      if (!t.completed && !t.pruned) pen.setStyle(Qt::DotLine);
      g->setPen(pen);
      g->setName(pointName(m_views, t.varyPoint));
      g->setProperty("varyPoint", t.varyPoint);
      g->setProperty("pruned", t.pruned);
    }
  explainColours(p);
  p->xAxis->setTicker(ticker);
  p->xAxis->setRange(-0.2, double(axes.size()) - 0.8);
  QSharedPointer<QCPAxisTickerText> yTicks(new QCPAxisTickerText);
  yTicks->addTick(0, tr("low"));
  yTicks->addTick(1, tr("high"));
  p->yAxis->setTicker(yTicks);
  p->yAxis->setRange(-0.05, 1.05);
  p->replot();
}

void StudyViews::drawBestSoFar() {
  QCustomPlot* p = plot();
  m_frame->setTitle(tr("Search: best %1 so far").arg(QString::fromStdString(m_views.metric)));
  double lo = INFINITY, hi = -INFINITY;
  size_t most = 1;
  for (size_t v = 0; v < m_views.bestSoFar.size(); ++v) {
    auto* g = p->addGraph();
    g->setLineStyle(QCPGraph::lsStepLeft);
    g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
    g->setPen(QPen(pointColor(int(v), false), 1.6));
    g->setName(pointName(m_views, int(v)));
    const auto& curve = m_views.bestSoFar[v];
    most = std::max(most, curve.size());
    for (size_t t = 0; t < curve.size(); ++t)
      if (std::isfinite(curve[t])) {
        g->addData(double(t + 1), curve[t]);
        lo = std::min(lo, curve[t]);
        hi = std::max(hi, curve[t]);
      }
  }
  p->legend->setVisible(m_views.bestSoFar.size() > 1);
  p->xAxis->setLabel(tr("trials ended"));
  // Whole trials only: no tick at 1.5 trials (issue 32's walkthrough).
  QSharedPointer<QCPAxisTickerFixed> whole(new QCPAxisTickerFixed);
  whole->setTickStep(1.0);
  whole->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
  p->xAxis->setTicker(whole);
  p->yAxis->setLabel(QString::fromStdString(m_views.metric));
  p->xAxis->setRange(0.5, double(most) + 0.5);
  if (std::isfinite(lo)) m_frame->setYRange(lo, hi, std::max(1e-3, (hi - lo) * 0.1));
  p->replot();
}

void StudyViews::drawSlice() {
  QCustomPlot* p = plot();
  const int k = std::max(0, m_key->currentIndex());
  if (size_t(k) + 1 >= m_views.axes.size()) return;
  const auto& ax = m_views.axes[size_t(k)];
  m_frame->setTitle(
      tr("Search: %1 against %2")
          .arg(QString::fromStdString(m_views.metric), QString::fromStdString(ax.key)));
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& t : m_views.trials) {
    if (!std::isfinite(t.metric) || size_t(k) >= t.coords.size()) continue;
    auto* g = p->addGraph();
    g->setLineStyle(QCPGraph::lsNone);
    g->setScatterStyle(
        QCPScatterStyle(t.pruned ? QCPScatterStyle::ssCircle : QCPScatterStyle::ssDisc,
                        pointColor(t.varyPoint, t.pruned), 7));
    g->setName(pointName(m_views, t.varyPoint));
    g->setProperty("varyPoint", t.varyPoint);
    g->setProperty("pruned", t.pruned);
    g->addData(t.coords[size_t(k)], t.metric);
    lo = std::min(lo, t.metric);
    hi = std::max(hi, t.metric);
  }
  explainColours(p);
  if (ax.categorical) {
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    for (size_t i = 0; i < ax.labels.size(); ++i)
      ticker->addTick(double(i), unquoted(ax.labels[i]));
    p->xAxis->setTicker(ticker);
    p->xAxis->setRange(-0.5, double(ax.labels.size()) - 0.5);
  } else if (ax.log) {
    p->xAxis->setScaleType(QCPAxis::stLogarithmic);
    p->xAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    p->xAxis->setRange(ax.low / 1.3, ax.high * 1.3);
  } else {
    const double pad = std::max(1e-9, (ax.high - ax.low) * 0.05);
    p->xAxis->setRange(ax.low - pad, ax.high + pad);
  }
  p->xAxis->setLabel(QString::fromStdString(ax.key) + (ax.log ? tr(" (log)") : QString()));
  p->yAxis->setLabel(QString::fromStdString(m_views.metric));
  if (std::isfinite(lo)) m_frame->setYRange(lo, hi, std::max(1e-3, (hi - lo) * 0.1));
  p->replot();
}

void StudyViews::drawImportance() {
  QCustomPlot* p = plot();
  m_frame->setTitle(tr("Search: importance (share of %1's variance)")
                        .arg(QString::fromStdString(m_views.metric)));
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  auto* bars = new QCPBars(p->xAxis, p->yAxis);
  bars->setWidth(0.6);
  bars->setBrush(stageColor(0));
  bars->setPen(QPen(stageColor(0).darker(130)));
  for (size_t k = 0; k < m_views.importance.size(); ++k) {
    ticker->addTick(double(k + 1), QString::fromStdString(m_views.axes[k].key));
    const double v = m_views.importance[k];
    if (std::isfinite(v)) bars->addData(double(k + 1), v);
  }
  p->xAxis->setTicker(ticker);
  p->xAxis->setRange(0.4, double(m_views.importance.size()) + 0.6);
  p->yAxis->setRange(0, 1);
  p->yAxis->setLabel(tr("η² (0 to 1)"));
  p->replot();
}

}  // namespace stagewise::ui
