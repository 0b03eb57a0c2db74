#include "common/plot_frame.h"

#include <qcustomplot.h>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QSlider>
#include <QToolButton>
#include <QVBoxLayout>
#include <cmath>
#include <limits>
#include <set>

#include "common/format.h"
#include "common/theme.h"
#include "live/plot_export.h"

namespace stagewise::ui {

namespace {

const char* const kFullNameProperty = "stagewiseFullName";
const char* const kShortNameProperty = "stagewiseShortName";
const char* const kUnlistedProperty = "stagewiseReadOutUnlisted";

/// Linear ticks for bytes (issue 36 §3: one unit system, IEC): the unit chosen from the
/// visible range, steps of 1, 2, 2.5 or 5 ×10ⁿ of it (1024 B is 1 KiB, not 1000 B), each
/// label with its unit ("0 MiB", "2 MiB", "4 MiB"), never "1·10⁷".
class BytesTicker : public QCPAxisTicker {
 public:
  BytesTicker() { setTickCount(5); }
  QVector<double> ticksFor(const QCPRange& range) {
    return createTickVector(getTickStep(range), range);
  }

 protected:
  double getTickStep(const QCPRange& range) override {
    m_unit = iecUnit(std::max(std::abs(range.lower), std::abs(range.upper)));
    const double step = cleanMantissa(range.size() / m_unit / (tickCount() + 1e-10)) * m_unit;
    // Whole bytes at least (issue 36: an empty panel ticked "0.2 B", an all-zero series five
    // "0 B"): a range under a byte shows its one whole byte, 2.5 B steps become 2 B.
    if (m_unit == 1) return step < 1 ? 1 : step == 2.5 ? 2 : step;
    return step;
  }
  QString getTickLabel(double tick, const QLocale&, QChar, int) override {
    return iecTickLabel(std::abs(tick) < m_unit * 1e-9 ? 0 : tick, m_unit);
  }

 private:
  double m_unit = 1;
};

/// Log-axis ticks at 1, 2, 5 (or 1..9, or 1 and 3, or decades only) of each decade: the densest
/// set whose closest two labels are still a line and a third apart at the axis's height. With
/// fewer than two such ticks in the range (within one decade) it falls back to linear steps.
class LogTicker : public QCPAxisTicker {
 public:
  LogTicker(QCPAxis* axis, bool bytes) : m_axis(axis), m_bytes(bytes) { setTickCount(5); }

 protected:
  int getSubTickCount(double) override { return 0; }
  QString getTickLabel(double tick, const QLocale& locale, QChar formatChar,
                       int precision) override {
    return m_bytes ? iecTickLabel(tick, iecUnit(tick))
                   : QCPAxisTicker::getTickLabel(tick, locale, formatChar, precision);
  }
  QVector<double> createTickVector(double tickStep, const QCPRange& range) override {
    if (range.lower <= 0 || range.upper <= range.lower)
      return QCPAxisTicker::createTickVector(tickStep, range);
    const double decades = std::log10(range.upper / range.lower);
    int pixels = 200;
    int line = 12;
    if (m_axis && m_axis->axisRect()) {
      pixels = std::max(20, m_axis->orientation() == Qt::Vertical ? m_axis->axisRect()->height()
                                                                  : m_axis->axisRect()->width());
      line = QFontMetrics(m_axis->tickLabelFont()).height();
      if (m_axis->orientation() == Qt::Horizontal) line *= 3;  // labels side by side
    }
    const double minGap = decades * (line * 4 / 3.0) / pixels;  // in decades
    if (m_bytes) {
      // Bytes: powers of two, every 1st, 2nd, 5th or 10th (1 KiB, 1 MiB ...) as room allows,
      // so each label is a whole number of its IEC unit.
      QVector<double> ticks;
      for (int every : {1, 2, 5, 10}) {
        if (every * std::log10(2.0) < minGap && every < 10) continue;
        ticks.clear();
        for (int e = int(std::floor(std::log2(range.lower))) - every;
             e <= int(std::ceil(std::log2(range.upper))); ++e) {
          if (e % every != 0) continue;
          const double v = std::ldexp(1.0, e);
          if (v >= range.lower * (1 - 1e-9) && v <= range.upper * (1 + 1e-9)) ticks << v;
        }
        if (ticks.size() >= 2 || every == 10) break;
      }
      if (ticks.size() >= 2) return ticks;
      BytesTicker linear;
      linear.setTickCount(std::clamp(int(pixels / (line * 4 / 3.0)), 2, 6));
      return linear.ticksFor(range);
    }
    // Each set with the least gap (in decades) between neighbouring ticks, densest first.
    static const std::vector<std::pair<std::vector<double>, double>> kSets = {
        {{1, 2, 3, 4, 5, 6, 7, 8, 9}, std::log10(10.0 / 9)},
        {{1, 2, 3, 5}, std::log10(1.5)},
        {{1, 2, 5}, std::log10(2.0)},
        {{1, 3}, std::log10(3.0)},
        {{1}, 1.0},
    };
    QVector<double> ticks;
    for (const auto& [mantissas, gap] : kSets) {
      if (gap < minGap && mantissas.size() > 1) continue;
      ticks.clear();
      for (int e = int(std::floor(std::log10(range.lower))) - 1;
           e <= int(std::ceil(std::log10(range.upper))); ++e)
        for (double m : mantissas) {
          const double v = m * std::pow(10.0, e);
          if (v >= range.lower * (1 - 1e-9) && v <= range.upper * (1 + 1e-9)) ticks << v;
        }
      if (ticks.size() >= 2 || mantissas.size() == 1) break;
    }
    if (ticks.size() >= 2) return ticks;
    // Within a decade (2.1 to 3.4): plain steps, as many as fit.
    setTickCount(std::clamp(int(pixels / (line * 4 / 3.0)), 2, 6));
    return QCPAxisTicker::createTickVector(getTickStep(range), range);
  }

 private:
  QCPAxis* m_axis;
  bool m_bytes;
};

/// "+N more": the entries a legend has no room for.
class MoreLegendItem : public QCPAbstractLegendItem {
 public:
  MoreLegendItem(QCPLegend* legend, QString text)
      : QCPAbstractLegendItem(legend), m_text(std::move(text)) {}
  QString text() const { return m_text; }

  QSize minimumOuterSizeHint() const override {
    const QFontMetrics fm(mFont);
    return QSize(fm.horizontalAdvance(m_text) + 2 + mMargins.left() + mMargins.right(),
                 fm.height() + 2 + mMargins.top() + mMargins.bottom());
  }

 protected:
  void draw(QCPPainter* painter) override {
    QFont font = mFont;
    font.setItalic(true);
    painter->setFont(font);
    painter->setPen(QPen(mTextColor));
    painter->drawText(mRect, Qt::AlignLeft | Qt::AlignTop, m_text);
  }

 private:
  QString m_text;
};

}  // namespace

QCPAbstractLegendItem* addFoldedLegendItem(QCPLegend* legend, int count, int maxWidth) {
  QString text = PlotFrame::tr("+%1 more").arg(count);
  QFont font = legend->font();
  font.setItalic(true);
  if (maxWidth > 0 && QFontMetrics(font).horizontalAdvance(text) + 2 > maxWidth)
    text = QStringLiteral("+%1").arg(count);
  auto* item = new MoreLegendItem(legend, text);
  legend->addItem(item);
  return item;
}

bool isFoldedLegendItem(const QCPAbstractLegendItem* item) {
  return dynamic_cast<const MoreLegendItem*>(item) != nullptr;
}

QString foldedLegendText(const QCPAbstractLegendItem* item) {
  const auto* more = dynamic_cast<const MoreLegendItem*>(item);
  return more ? more->text() : QString();
}

double iecUnit(double bytes) {
  double unit = 1;
  const double a = std::abs(bytes);
  for (int k = 0; k < 5 && a >= unit * 1024; ++k) unit *= 1024;
  return unit;
}

QString iecUnitName(double unit) {
  static const char* const kNames[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  const int k = std::clamp(int(std::lround(std::log2(unit) / 10)), 0, 5);
  return QString::fromLatin1(kNames[k]);
}

QString iecTickLabel(double bytes, double unit) {
  // Up to three decimals, none trailing: 1.5 MiB, 2 MiB, 0.25 KiB.
  const double v = std::round(bytes / unit * 1000) / 1000;
  return QStringLiteral("%1 %2").arg(QString::number(v, 'g', 7), iecUnitName(unit));
}

void PlotFrame::setFullName(QCPGraph* graph, const QString& name) {
  graph->setProperty(kFullNameProperty, name);
}

void PlotFrame::setShortName(QCPGraph* graph, const QString& name) {
  graph->setProperty(kShortNameProperty, name);
}

void PlotFrame::setReadOutUnlisted(QCPGraph* graph, bool on) {
  graph->setProperty(kUnlistedProperty, on);
}

QString PlotFrame::fullName(const QCPGraph* graph) {
  const QString full = graph->property(kFullNameProperty).toString();
  return full.isEmpty() ? graph->name() : full;
}

PlotFrame::PlotFrame(const QString& title, Features features, QWidget* parent)
    : QWidget(parent), m_features(features), m_title(title) {
  m_plot = new QCustomPlot(this);
  m_plot->plotLayout()->insertRow(0);
  m_heading = new QCPTextElement(m_plot, title, QFont(font().family(), -1, QFont::Bold));
  m_plot->plotLayout()->addElement(0, 0, m_heading);
  m_plot->legend->setFont(QFont(font().family(), 8));
  m_plot->legend->setIconSize(14, 8);
  m_plot->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(m_plot, &QCustomPlot::customContextMenuRequested, this, &PlotFrame::showMenu);

  m_logAction = new QAction(tr("Logarithmic y axis"), this);
  m_logAction->setIconText(tr("log y"));  // what the title-row button shows
  m_logAction->setCheckable(true);
  m_logAction->setToolTip(tr("Logarithmic y axis (values at or below zero are not drawn)"));
  connect(m_logAction, &QAction::toggled, this, &PlotFrame::setLogY);

  if (m_features.testFlag(HoverReadout)) {
    m_hoverLine = new QCPItemStraightLine(m_plot);
    m_hoverLine->setVisible(false);
    // Above the curves, the final diamonds and the event labels, not cut at the axis rect: with
    // 27 series in a low plot only the first lines could be read (issue 36).
    m_plot->addLayer(QStringLiteral("readout"), nullptr, QCustomPlot::limAbove);
    m_hoverText = new QCPItemText(m_plot);
    m_hoverText->setLayer(QStringLiteral("readout"));
    m_hoverText->setPositionAlignment(Qt::AlignTop | Qt::AlignLeft);
    m_hoverText->setTextAlignment(Qt::AlignLeft);
    m_hoverText->position->setType(QCPItemPosition::ptAbsolute);
    m_hoverText->setPadding(QMargins(4, 2, 4, 2));
    m_hoverText->setVisible(false);
    m_hoverText->setClipToAxisRect(false);
    connect(m_plot, &QCustomPlot::mouseMove, this, &PlotFrame::updateHover);
    // The read-out goes with the pointer (issue 36: read-outs stayed on after it left).
    m_plot->installEventFilter(this);
  }
  buildControls();

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_plot);
  restyle();
}

void PlotFrame::buildControls() {
  const bool smoothing = m_features.testFlag(SmoothingControl);
  const bool log = m_features.testFlag(LogScaleToggle);
  if (!smoothing && !log) return;
  m_controls = new QWidget(this);
  auto* row = new QHBoxLayout(m_controls);
  row->setContentsMargins(0, 0, 0, 0);
  row->setSpacing(4);
  if (smoothing) {
    m_smoothingSlider = new QSlider(Qt::Horizontal, m_controls);
    m_smoothingSlider->setRange(0, 99);
    m_smoothingSlider->setFixedWidth(110);
    m_smoothingSlider->setToolTip(
        tr("Smoothing: exponential moving average weight, debiased so the first points are "
           "not pulled towards zero."));
    m_smoothingValue = new QLabel(QStringLiteral("0.00"), m_controls);
    m_smoothingValue->setMinimumWidth(
        m_smoothingValue->fontMetrics().horizontalAdvance(QStringLiteral("0.000")));
    row->addWidget(new QLabel(tr("Smoothing"), m_controls));
    row->addWidget(m_smoothingSlider);
    row->addWidget(m_smoothingValue);
    connect(m_smoothingSlider, &QSlider::valueChanged, this,
            [this](int v) { setSmoothing(v / 100.0); });
  }
  if (log) {
    m_logButton = new QToolButton(m_controls);
    m_logButton->setDefaultAction(m_logAction);
    m_logButton->setAutoRaise(true);
    row->addWidget(m_logButton);
  }
  m_controls->show();
  placeTitleRow();
}

void PlotFrame::setTitle(const QString& title) {
  if (title == m_title) return;
  m_title = title;
  placeTitleRow();
}

void PlotFrame::setCornerWidget(QWidget* widget) {
  m_corner = widget;
  widget->setParent(this);
  widget->show();
  placeTitleRow();
}

void PlotFrame::placeTitleRow() {
  // The controls float over the plot's title row, which grows to their height so they never
  // cover the axis rect; exports draw the plot alone, title included, without them.
  int tallest = 0;
  for (QWidget* w : {m_corner, m_controls})
    if (w) tallest = std::max(tallest, w->sizeHint().height());
  const int text = QFontMetrics(m_heading->font()).height();
  const int extra = tallest > 0 ? std::max(0, tallest + 4 - text) : 0;
  // The title keeps clear of the controls on either side (issue 36: the Timeline's pipeline
  // title ran over its Follow button): centred over the plot when it fits between them there,
  // else centred in the room between them, elided if it must be.
  const int left = m_corner ? m_corner->sizeHint().width() + 8 : 0;
  const int right = m_controls ? m_controls->sizeHint().width() + 8 : 0;
  const QFontMetrics metrics(m_heading->font());
  const bool centred = metrics.horizontalAdvance(m_title) <= width() - 2 * std::max(left, right);
  const QString shown =
      centred ? m_title
              : metrics.elidedText(m_title, Qt::ElideRight, std::max(0, width() - left - right));
  m_heading->setMargins(
      QMargins(centred ? 0 : left, extra / 2, centred ? 0 : right, extra - extra / 2));
  if (m_heading->text() != shown) m_heading->setText(shown);
  if (m_corner) {
    const QSize size = m_corner->sizeHint();
    m_corner->setGeometry(4, 2, size.width(), size.height());
    m_corner->raise();
  }
  if (m_controls) {
    const QSize size = m_controls->sizeHint();
    m_controls->setGeometry(width() - size.width() - 4, 2, size.width(), size.height());
    m_controls->raise();
  }
}

void PlotFrame::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  placeTitleRow();
}

void PlotFrame::setTimeAxis(bool seconds) {
  if (seconds != m_timeAxis || !m_xName.isEmpty()) hideHover();  // its x is another quantity
  m_timeAxis = seconds;
  m_xName.clear();
  m_plot->xAxis->setLabel(seconds ? tr("time (s)") : tr("step"));
}

void PlotFrame::setXQuantity(const QString& axisLabel, const QString& readoutName) {
  if (m_timeAxis || readoutName != m_xName) hideHover();
  m_timeAxis = false;
  m_xName = readoutName;
  m_plot->xAxis->setLabel(axisLabel);
}

void PlotFrame::setSmoothing(double weight) {
  weight = std::clamp(weight, 0.0, 0.99);
  if (m_smoothingSlider) {
    const QSignalBlocker block(m_smoothingSlider);
    m_smoothingSlider->setValue(int(std::lround(weight * 100)));
    m_smoothingValue->setText(QString::number(weight, 'f', 2));
  }
  if (weight == m_smoothing) return;
  m_smoothing = weight;
  hideHover();  // its values were the old smoothing's (issue 36)
  Q_EMIT smoothingChanged(weight);
}

std::vector<double> PlotFrame::smoothed(const std::vector<double>& values, double weight) {
  if (weight <= 0) return values;
  std::vector<double> out;
  out.reserve(values.size());
  double ema = 0, norm = 0;  // norm = 1 - weight^n: dividing by it removes the pull to zero
  for (double v : values) {
    if (std::isfinite(v)) {
      ema = weight * ema + (1 - weight) * v;
      norm = weight * norm + (1 - weight);
    }
    out.push_back(std::isfinite(v) ? ema / norm : v);
  }
  return out;
}

void PlotFrame::setLogY(bool on) {
  if (on != m_logY) hideHover();
  m_logY = on;
  {
    const QSignalBlocker block(m_logAction);
    m_logAction->setChecked(on);
  }
  m_plot->yAxis->setScaleType(on ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
  applyYTicker();
  Q_EMIT logYChanged(on);
}

void PlotFrame::setYBytes(bool on) {
  m_yBytes = on;
  applyYTicker();
}

void PlotFrame::applyYTicker() {
  QSharedPointer<QCPAxisTicker> ticker;
  if (m_logY)
    ticker.reset(new LogTicker(m_plot->yAxis, m_yBytes));
  else if (m_yBytes)
    ticker.reset(new BytesTicker);
  else
    ticker.reset(new QCPAxisTicker);
  m_plot->yAxis->setTicker(ticker);
}

QString PlotFrame::valueText(double y) const {
  return m_yBytes ? formatBytes(y) : QString::number(y, 'g', 4);
}

bool PlotFrame::onYAxis(double y) const {
  return std::isfinite(y) && (!m_logY || y > 0);
}

void PlotFrame::setYRange(double lo, double hi, double pad) {
  if (m_logY)
    m_plot->yAxis->setRange(lo / 1.3, hi * 1.3);
  else
    m_plot->yAxis->setRange(lo - pad, hi + pad);
}

void PlotFrame::showMenu(const QPoint& pos) {
  QMenu menu(this);
  // The owner's entries (QWidget::addAction on the frame) come first.
  const QList<QAction*> own = actions();
  menu.addActions(own);
  if (m_features.testFlag(LogScaleMenu)) {
    if (!own.isEmpty()) menu.addSeparator();
    menu.addAction(m_logAction);
  }
  if (!menu.isEmpty()) menu.addSeparator();
  menu.addAction(tr("Export…"), this, &PlotFrame::exportWithDialog);
  menu.exec(m_plot->mapToGlobal(pos));
}

void PlotFrame::exportWithDialog() {
  hideHover();
  m_heading->setText(m_title);  // an export has no buttons to keep clear of
  exportPlotWithDialog(m_plot, m_title, this);
  placeTitleRow();
}

QString PlotFrame::exportTo(const QString& path, int width, int height) {
  hideHover();
  m_heading->setText(m_title);  // an export has no buttons to keep clear of
  const QString error = exportPlot(m_plot, path, width, height, m_title);
  placeTitleRow();
  return error;
}

QString PlotFrame::readout() const {
  return m_hoverText && m_hoverText->visible() ? m_readout : QString();
}

void PlotFrame::hideHover() {
  if (!m_hoverText || !m_hoverText->visible()) return;
  m_hoverText->setVisible(false);
  for (auto* column : m_hoverColumns) column->setVisible(false);
  m_hoverLine->setVisible(false);
  m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void PlotFrame::updateHover(QMouseEvent* event) {
  // The graphs listed in the legend, in its order: what the legend hides is not read out.
  std::vector<const QCPGraph*> graphs;
  for (int i = 0; i < m_plot->legend->itemCount(); ++i)
    if (auto* item = qobject_cast<QCPPlottableLegendItem*>(m_plot->legend->item(i)))
      if (auto* graph = qobject_cast<QCPGraph*>(item->plottable()); graph && graph->visible())
        graphs.push_back(graph);
  for (int i = 0; i < m_plot->graphCount(); ++i) {  // folded out of a full legend
    const QCPGraph* graph = m_plot->graph(i);
    if (graph->visible() && graph->property(kUnlistedProperty).toBool() &&
        std::find(graphs.begin(), graphs.end(), graph) == graphs.end())
      graphs.push_back(graph);
  }
  const QPointF pos = event->position();
  if (!m_plot->axisRect()->rect().contains(pos.toPoint()) || graphs.empty()) {
    hideHover();
    return;
  }
  const double x = m_plot->xAxis->pixelToCoord(pos.x());
  const auto nearestDrawn = [](const QCPGraph* graph, double at) -> std::optional<HoverPoint> {
    const auto data = graph->data();
    if (data->isEmpty()) return std::nullopt;
    auto it = data->findBegin(at, false);
    if (it == data->constEnd() || (it != data->constBegin() && at - (it - 1)->key <= it->key - at))
      --it;
    if (!std::isfinite(it->value)) return std::nullopt;
    return HoverPoint{it->key, it->value};
  };
  // The read-out is at the data point nearest the cursor over all listed graphs (a dense
  // series snaps to the step under the mouse); each graph reports its own nearest point, and
  // says where it is when that is elsewhere (a sparse series such as the test accuracy).
  const auto lookup = [&](const QCPGraph* graph, double at) {
    return m_lookup ? m_lookup(graph, at) : nearestDrawn(graph, at);
  };
  double snapped = x, best = std::numeric_limits<double>::infinity();
  for (const QCPGraph* graph : graphs)
    if (const auto hit = lookup(graph, x); hit && std::abs(hit->x - x) < best) {
      best = std::abs(hit->x - x);
      snapped = hit->x;
    }
  // Each graph's point nearest the step the header names, not the mouse (issue 36: at step
  // 286 a sparse series read its point at 295 though 282 was nearer).
  std::vector<std::pair<const QCPGraph*, HoverPoint>> hits;
  for (const QCPGraph* graph : graphs)
    if (const auto hit = lookup(graph, snapped)) hits.emplace_back(graph, *hit);
  const double pixel = std::abs(m_plot->xAxis->pixelToCoord(1) - m_plot->xAxis->pixelToCoord(0));
  // Another quantity (samples, FLOPs): whole numbers in full up to 10^9, else 4 digits.
  const auto quantity = [](double v) {
    return std::abs(v) < 1e9 && v == std::floor(v) ? QString::number(qint64(v))
                                                   : QString::number(v, 'g', 4);
  };
  // Off the step axis: the step of each graph's point, when the owner knows it.
  std::vector<std::optional<qint64>> steps;
  std::set<qint64> distinct;
  if (m_stepOf && (m_timeAxis || !m_xName.isEmpty()))
    for (const auto& [graph, hit] : hits) {
      steps.push_back(m_stepOf(graph, hit.x));
      if (steps.back()) distinct.insert(*steps.back());
    }
  const QLocale english(QLocale::English);
  QStringList lines;
  QStringList shortNames{QString()};  // per line: the header has none
  for (size_t k = 0; k < hits.size(); ++k) {
    const auto& [graph, hit] = hits[k];
    shortNames << graph->property(kShortNameProperty).toString();
    QString line = QStringLiteral("%1: %2").arg(fullName(graph), valueText(hit.y));
    if (std::abs(hit.x - snapped) > 2 * pixel)
      line += !m_xName.isEmpty() ? QStringLiteral(" (%1 %2)").arg(m_xName, quantity(hit.x))
              : m_timeAxis       ? tr(" (at %1 s)").arg(hit.x, 0, 'f', 2)
                                 : tr(" (step %1)").arg(qint64(std::llround(hit.x)));
    if (distinct.size() > 1 && k < steps.size() && steps[k])
      line += tr(" · step %1").arg(english.toString(*steps[k]));
    lines << line;
  }
  const QString where = !m_xName.isEmpty() ? QStringLiteral("%1 %2").arg(m_xName, quantity(snapped))
                        : m_timeAxis       ? tr("%1 s").arg(snapped, 0, 'f', 2)
                                           : tr("step %1").arg(qint64(std::llround(snapped)));
  lines.prepend(distinct.size() == 1
                    ? tr("%1 · step %2").arg(where, english.toString(*distinct.begin()))
                    : where);
  placeReadout(lines, shortNames);
  m_hoverLine->point1->setCoords(snapped, 0);
  m_hoverLine->point2->setCoords(snapped, 1);
  m_hoverLine->setVisible(true);
  m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void PlotFrame::placeReadout(const QStringList& lines, const QStringList& shortNames) {
  m_readout = lines.join(QLatin1Char('\n'));
  if (m_readoutFont.family().isEmpty()) m_readoutFont = m_hoverText->font();
  const QRect rect = m_plot->axisRect()->rect();
  const QMargins pad = m_hoverText->padding();
  const int frame = pad.left() + pad.right() + 2;
  const int avail = m_plot->width() - 2;
  // Lines shortened (never emptied, never a value) to fit the widget; where they still do not,
  // a smaller font (issue 36: a fourth column ran past the window's edge).
  struct Layout {
    QFont font;
    bool inRect = true;
    int top = 0, rows = 1, columns = 1, total = 0;
    QStringList shown;
    std::vector<int> widths;
  };
  const auto layout = [&](const QFont& font) {
    Layout l;
    l.font = font;
    const QFontMetrics metrics(font);
    // A line's height as a text item lays several out (a scaled font's is not lineSpacing()).
    const int lineHeight =
        std::max(metrics.lineSpacing(),
                 metrics.boundingRect(QRect(), Qt::AlignLeft, QStringLiteral("X\nX")).height() -
                     metrics.boundingRect(QRect(), Qt::AlignLeft, QStringLiteral("X")).height());
    // In the axis rect's top-left corner while it fits there; taller, from the widget's top,
    // and in columns of as many lines as the widget's height holds.
    const int fitsInRect = (rect.height() - 4 - pad.top() - pad.bottom()) / lineHeight;
    l.inRect = int(lines.size()) <= fitsInRect;
    l.top = l.inRect ? rect.top() + 2 : 1;
    l.rows = std::max(
        1, l.inRect ? fitsInRect
                    : (m_plot->height() - l.top - 1 - pad.top() - pad.bottom()) / lineHeight);
    l.columns = std::max(1, (int(lines.size()) + l.rows - 1) / l.rows);
    const auto measure = [&] {
      l.widths.clear();
      l.total = 0;
      for (int c = 0; c < l.columns; ++c) {
        int width = 0;
        for (const QString& line : l.shown.mid(c * l.rows, l.rows))
          width = std::max(width, metrics.horizontalAdvance(line));
        l.widths.push_back(width + frame);
        l.total += width + frame;
      }
    };
    l.shown = lines;
    measure();
    if (l.total <= avail) return l;
    // Each series' name shortened to the room left beside its value (readout() keeps the lines
    // whole); the widest columns give up room first: the least cap on a column's width that
    // fits.
    int cap = *std::max_element(l.widths.begin(), l.widths.end());
    const auto capped = [&] {
      int sum = 0;
      for (int w : l.widths) sum += std::min(w, cap);
      return sum;
    };
    while (cap > frame + 20 && capped() > avail) cap -= 2;
    const int room = cap - frame;
    for (qsizetype k = 0; k < l.shown.size(); ++k) {
      QString& line = l.shown[k];
      const qsizetype colon = line.indexOf(QStringLiteral(": "));
      if (colon <= 0 || metrics.horizontalAdvance(line) <= room) continue;
      const QString value = line.mid(colon);
      const int nameRoom = room - metrics.horizontalAdvance(value);
      // The graph's short name ("pS3 fwd") whole, as the least that still tells it apart;
      // without one, the name elided but to a few letters at least.
      const QString brief = k < shortNames.size() ? shortNames[k] : QString();
      const QString name = line.left(colon);
      if (!brief.isEmpty() && metrics.horizontalAdvance(brief) < metrics.horizontalAdvance(name))
        line = brief + value;
      else
        line = metrics.elidedText(
                   name, Qt::ElideRight,
                   std::max(nameRoom, metrics.horizontalAdvance(name.left(6) + u'\u2026'))) +
               value;
    }
    measure();
    return l;
  };
  Layout l = layout(m_readoutFont);
  for (double scale : {0.9, 0.8, 0.7}) {
    if (l.total <= avail) break;
    QFont smaller = m_readoutFont;
    if (m_readoutFont.pointSizeF() > 0)
      smaller.setPointSizeF(m_readoutFont.pointSizeF() * scale);
    else
      smaller.setPixelSize(std::max(6, int(m_readoutFont.pixelSize() * scale)));
    l = layout(smaller);
  }
  while (int(m_hoverColumns.size()) < l.columns - 1) {
    auto* column = new QCPItemText(m_plot);
    column->setLayer(QStringLiteral("readout"));
    column->setPositionAlignment(Qt::AlignTop | Qt::AlignLeft);
    column->setTextAlignment(Qt::AlignLeft);
    column->position->setType(QCPItemPosition::ptAbsolute);
    column->setPadding(pad);
    column->setClipToAxisRect(false);
    column->setSelectable(false);
    column->setBrush(m_hoverText->brush());
    column->setColor(m_hoverText->color());
    column->setPen(m_hoverText->pen());
    m_hoverColumns.push_back(column);
  }
  // From the axis rect's left, or further left (over the y axis) when the columns would run
  // past the widget's right edge.
  int left = std::max(1, std::min(rect.left() + 4, m_plot->width() - l.total - 1));
  for (int c = 0; c < l.columns; ++c) {
    QCPItemText* item = c == 0 ? m_hoverText : m_hoverColumns[size_t(c - 1)];
    item->setFont(l.font);
    item->setText(l.shown.mid(c * l.rows, l.rows).join(QLatin1Char('\n')));
    item->position->setCoords(left, l.top);
    item->setVisible(true);
    left += l.widths[size_t(c)];
  }
  for (size_t c = size_t(l.columns - 1); c < m_hoverColumns.size(); ++c)
    m_hoverColumns[c]->setVisible(false);
}

QStringList PlotFrame::shownReadoutColumns() const {
  QStringList columns;
  if (!m_hoverText || !m_hoverText->visible()) return columns;
  columns << m_hoverText->text();
  for (const QCPItemText* item : m_hoverColumns)
    if (item->visible()) columns << item->text();
  return columns;
}

QRect PlotFrame::shownReadoutRect() const {
  QRect all;
  if (!m_hoverText || !m_hoverText->visible()) return all;
  std::vector<const QCPItemText*> items{m_hoverText};
  for (const QCPItemText* item : m_hoverColumns)
    if (item->visible()) items.push_back(item);
  for (const QCPItemText* item : items) {
    const QFontMetrics metrics(item->font());
    const QRect text =
        metrics.boundingRect(QRect(0, 0, 100000, 100000), Qt::AlignLeft, item->text());
    const QPointF at = item->position->pixelPosition();
    const QMargins pad = item->padding();
    all |= QRect(int(at.x()), int(at.y()), text.width() + pad.left() + pad.right(),
                 text.height() + pad.top() + pad.bottom());
  }
  return all;
}

void PlotFrame::restyle() {
  stylePlot(m_plot);
  if (m_hoverText) {
    const QPalette pal = palette();
    QColor bg = pal.color(QPalette::ToolTipBase);
    bg.setAlpha(220);
    for (QCPItemText* item : m_hoverColumns) {
      item->setBrush(bg);
      item->setColor(pal.color(QPalette::ToolTipText));
      item->setPen(QPen(pal.color(QPalette::Mid)));
    }
    m_hoverText->setBrush(bg);
    m_hoverText->setColor(pal.color(QPalette::ToolTipText));
    m_hoverText->setPen(QPen(pal.color(QPalette::Mid)));
    m_hoverLine->setPen(QPen(pal.color(QPalette::Mid), 1, Qt::DashLine));
  }
  m_plot->replot(QCustomPlot::rpQueuedReplot);
}

bool PlotFrame::eventFilter(QObject* watched, QEvent* event) {
  if (watched == m_plot && (event->type() == QEvent::Leave || event->type() == QEvent::Hide))
    hideHover();
  return QWidget::eventFilter(watched, event);
}

void PlotFrame::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::PaletteChange || event->type() == QEvent::ApplicationPaletteChange)
    restyle();
}

}  // namespace stagewise::ui
