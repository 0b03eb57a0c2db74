#include "runs/overlay_legend.h"

#include <qcustomplot.h>
#include <QCoreApplication>
#include <algorithm>

#include "common/format.h"
#include "common/plot_frame.h"

namespace stagewise::ui {

namespace {

/// A graph's legend entry that writes its own (short) text, not the graph's name: the name
/// stays whole for the read-out, the CSV export and the tooltip. Its row is a font's height and
/// two pixels, so descenders ("_" in "batch_size") are not cut off by the next row.
class TextLegendItem : public QCPPlottableLegendItem {
 public:
  TextLegendItem(QCPLegend* legend, QCPAbstractPlottable* plottable, QString text)
      : QCPPlottableLegendItem(legend, plottable), m_text(std::move(text)) {}
  QString text() const { return m_text; }

  QSize minimumOuterSizeHint() const override {
    const QFontMetrics fm(getFont());
    const QSize icon = mParentLegend->iconSize();
    return QSize(icon.width() + mParentLegend->iconTextPadding() + fm.horizontalAdvance(m_text) +
                     1 + mMargins.left() + mMargins.right(),
                 std::max(fm.height() + 2, icon.height()) + mMargins.top() + mMargins.bottom());
  }

 protected:
  void draw(QCPPainter* painter) override {
    // QCustomPlot's own drawing (the plottable's icon is its friend's to draw), with this text.
    if (!mPlottable) return;
    const QString name = mPlottable->name();
    mPlottable->setName(m_text);
    QCPPlottableLegendItem::draw(painter);
    mPlottable->setName(name);
  }
  /// The row and two pixels below it: a descender is not cut off at the row's foot.
  QRect clipRect() const override { return mOuterRect.adjusted(0, 0, 0, 2); }

 private:
  QString m_text;
};

}  // namespace

QString shortSpecKey(const std::string& key) {
  const size_t dot = key.rfind('.');
  const std::string last = dot == std::string::npos ? key : key.substr(dot + 1);
  if (last == "batch_size") return QStringLiteral("bs");
  if (last == "learning_rate") return QStringLiteral("lr");
  if (last == "optimizer") return QStringLiteral("opt");
  if (last == "hidden") return QStringLiteral("h");
  return QString::fromStdString(last);
}

QString shortRunLabel(int64_t id, const QString& name,
                      const std::vector<std::pair<std::string, std::string>>& keys, bool named) {
  QStringList parts{QStringLiteral("#%1").arg(id)};
  for (const auto& [key, json] : keys) {
    QString value = formatSpecValue(json);
    value.remove(QLatin1Char(' '));
    const QString k = shortSpecKey(key);
    parts << (k == QLatin1String("seed") ? QStringLiteral("s") + value
              : named                    ? QStringLiteral("%1=%2").arg(k, value)
                                         : value);
  }
  if (keys.empty() && !name.isEmpty()) parts << name;
  return parts.join(QLatin1Char(' '));
}

int minOverlayPlotWidth(int plotWidth) {
  return std::min(plotWidth, std::max(200, plotWidth * 3 / 5));
}

OverlayLegendFit fitOverlayLegend(QCustomPlot* plot,
                                  const std::vector<OverlayLegendEntry>& entries) {
  QCPLegend* legend = plot->legend;
  legend->clearItems();
  OverlayLegendFit fit;
  auto* side = qobject_cast<QCPLayoutGrid*>(legend->layout());
  legend->setVisible(!entries.empty());
  if (side && side != plot->plotLayout()) side->setVisible(!entries.empty());
  if (entries.empty()) return fit;
  legend->setRowSpacing(0);  // each row holds its descenders (TextLegendItem)
  legend->setColumnSpacing(8);
  const QFontMetrics fm(legend->font());
  const QSize icon = legend->iconSize();
  const int pad = legend->iconTextPadding();
  const QMargins lm = legend->margins();
  const int rowHeight = std::max(fm.height() + 2, icon.height());
  QCPAxisRect* rect = plot->axisRect();
  const int width = plot->width();
  // The plot's column keeps its least width and the y axis's margins; the legend gets the rest.
  const int axisMargins = rect->margins().left() + rect->margins().right();
  const int room =
      std::max(60, width - minOverlayPlotWidth(width) - axisMargins - lm.left() - lm.right() - 2);
  const int height = rect->outerRect().height() > 40 ? rect->outerRect().height()
                                                     : std::max(60, plot->height() - 70);
  const int rows = std::max(1, (height - lm.top() - lm.bottom() - 2) / rowHeight);
  const int n = int(entries.size());
  const int spacing = legend->columnSpacing();
  const int needed = (n + rows - 1) / rows;  // columns, every entry shown
  const auto widthOf = [&](bool bare) {
    int widest = 0;
    for (const auto& e : entries)
      widest = std::max(widest, fm.horizontalAdvance(bare ? e.bare : e.text));
    // Two pixels more than the text's rounded advance: elidedText measures the unrounded
    // width, and a text a fraction wider than its rounded advance was cut ("#10 … 0.001 …").
    return icon.width() + pad + widest + 4;
  };
  int natural = widthOf(false);
  // An entry narrower than this says too little ("#12 lr=0.0…"): fewer entries instead.
  int least =
      std::min(natural, icon.width() + pad + fm.horizontalAdvance(QStringLiteral("#000 lr=0.00…")));
  // Where the named entries would be cut ("#4 cuts=[2,4,6] bs=3…", the rest of the keys lost),
  // the values only ("#4 [2,4,6] 32 0.001 s1"; the tooltip names them), whole: fewer of them
  // shown rather than cut, unless even one column cannot hold one.
  const bool hasBare = std::all_of(entries.begin(), entries.end(),
                                   [](const OverlayLegendEntry& e) { return !e.bare.isEmpty(); });
  const bool bare = hasBare && needed * natural + (needed - 1) * spacing > room;
  if (bare) {
    natural = widthOf(true);
    least = std::min(natural, room);
  }
  const auto textOf = [&](const OverlayLegendEntry& e) { return bare ? e.bare : e.text; };
  int columns = needed;
  const int most = std::max(1, (room + spacing) / (least + spacing));
  int shown = n;
  if (columns > most) {
    columns = most;
    shown = std::max(1, columns * rows - 1);  // the last cell says "+N more"
  }
  const int column = std::min(natural, (room - (columns - 1) * spacing) / columns);
  const int textRoom = std::max(8, column - icon.width() - pad - 2);
  legend->setFillOrder(QCPLayoutGrid::foRowsFirst, false);
  legend->setWrap(shown < n || n > rows ? rows : 0);
  for (int i = 0; i < shown; ++i) {
    const auto& e = entries[size_t(i)];
    legend->addItem(
        new TextLegendItem(legend, e.graph, fm.elidedText(textOf(e), Qt::ElideRight, textRoom)));
  }
  for (int i = 0; i < n; ++i) PlotFrame::setReadOutUnlisted(entries[size_t(i)].graph, i >= shown);
  for (int i = shown; i < n; ++i) fit.folded << entries[size_t(i)].full;
  if (!fit.folded.isEmpty()) addFoldedLegendItem(legend, int(fit.folded.size()));
  fit.bare = bare;
  fit.columns = columns;
  fit.rows = rows;
  fit.shown = shown;
  return fit;
}

QString overlayLegendText(QCustomPlot* plot, int index) {
  QCPAbstractLegendItem* item = plot->legend->item(index);
  if (auto* text = dynamic_cast<TextLegendItem*>(item)) return text->text();
  if (item && isFoldedLegendItem(item)) return foldedLegendText(item);
  return {};
}

}  // namespace stagewise::ui
