#pragma once
// The Runs overlay's legend (issue 36 §2.3): short entries ("#12 lr=0.001 cuts=[2,4,6] s1",
// only the keys that differ among the shown runs), laid out in the room the plot leaves: the
// plot keeps a readable width, the legend gets more columns, shorter texts, or its last
// entries folded into "+N more" (the full names in its tooltip), never past its panel.

#include <QString>
#include <QStringList>
#include <string>
#include <utility>
#include <vector>

class QCPGraph;
class QCustomPlot;

namespace stagewise::ui {

/// A spec key as the legend writes it: its last part, the common ones abbreviated
/// ("train.batch_size" -> "bs", "train.lr" -> "lr", "partition.cuts" -> "cuts").
QString shortSpecKey(const std::string& key);

/// "#12 lr=0.001 cuts=[2,4,6] bs=32 s1": the id and each (key, JSON value) given, the seed as
/// "s<n>"; with no keys, "#12 <name>".
/// With `named` false, the values only ("#12 0.001 [2,4,6] 32 s1"): the form the legend falls
/// back to where the named one would be cut (its tooltip names the keys in order).
QString shortRunLabel(int64_t id, const QString& name,
                      const std::vector<std::pair<std::string, std::string>>& keys,
                      bool named = true);

/// The least width the overlay's axis rect keeps beside its legend: 60 % of the plot's width,
/// at least 200 px where the plot has that much (issue 36).
int minOverlayPlotWidth(int plotWidth);

/// One legend entry: its graph, the short text, the full name (tooltip, read-out), and the
/// values-only text used instead of `text` where that would not fit its column (empty: none).
struct OverlayLegendEntry {
  QCPGraph* graph = nullptr;
  QString text;
  QString full;
  QString bare;
};

/// What fitOverlayLegend() made: columns, the entries shown, and the full names of those
/// folded into "+N more" (empty: every entry shown).
struct OverlayLegendFit {
  int columns = 0;
  int rows = 0;
  int shown = 0;
  bool bare = false;  ///< the entries show their values only
  QStringList folded;
};

/// Fills the plot's legend with `entries` (replacing its items) so that it fits the width the
/// axis rect leaves (minOverlayPlotWidth) and the axis rect's height: as many rows as fit, then
/// more columns, each text elided to its column (the values-only forms first, where every
/// entry has one and a named text would be cut), then "+N more". Call after the plot's layout
/// knows its size (a replot); its graphs must be the plot's.
OverlayLegendFit fitOverlayLegend(QCustomPlot* plot,
                                  const std::vector<OverlayLegendEntry>& entries);

/// The text of legend item `index` as drawn (tests); empty: no such item or not an entry.
QString overlayLegendText(QCustomPlot* plot, int index);

}  // namespace stagewise::ui
