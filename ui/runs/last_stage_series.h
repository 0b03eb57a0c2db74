#pragma once
// "Loss · last stage" across a live re-partition. Joining or splitting stages changes which
// stage index is the last (4 → 2: S4 until the change, S2 after; 4 → 5: S4, then S5). The last
// stage's series of such a run is pieced from each partition's last stage over that partition's
// steps, and the overlay breaks the line between pieces: it never joins two stages' points.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "stagewise/storage/records.h"

namespace stagewise::storage {
class RunReader;
}

namespace stagewise::ui {

/// The stage index that was the last from `fromStep` on.
struct LastStageSpan {
  int64_t fromStep = 0;
  int stage = 0;
};

/// The spans of a run that had `stageCounts[j].second` stages from step `stageCounts[j].first`
/// on (RunHistory::stageCounts, in step order). A re-partition that keeps the stage count keeps
/// the span: the last stage is still the last.
std::vector<LastStageSpan> lastStageSpans(const std::vector<std::pair<int64_t, int>>& stageCounts);

/// The spans of a stored run, from its spec's partition and its re-partition events; one span
/// (its stored stage count's last) when the spec cannot be read.
std::vector<LastStageSpan> lastStageSpansOf(storage::RunReader& reader,
                                            const storage::RunRecord& run);

/// A series pieced from several stages' series.
struct PiecedSeries {
  std::vector<std::pair<double, double>> points;  ///< (x on the axis, value), sorted by x
  std::vector<size_t> starts;  ///< where each piece after the first begins in `points`
  /// The x of each piece's first point after the first piece (where the line breaks).
  std::vector<double> breaks() const;
};

/// Series `name` of each span's stage over that span's steps, on `axis`; each piece smoothed on
/// its own (PlotFrame::smoothed with `smoothing`), so no stage's values lean on another's.
PiecedSeries loadPieces(storage::RunReader& reader, int64_t runId, const std::string& name,
                        const std::vector<LastStageSpan>& spans, storage::XAxis axis,
                        double smoothing);

/// `series` sampled on `grid` as RunReader::alignSeries samples one series (the last value at or
/// before each x, NaN before the first point and after the grid point that follows the last),
/// each piece on its own: a grid x takes its value only from the piece that holds it.
std::vector<double> sampleOnGrid(const PiecedSeries& series, const std::vector<double>& grid);

}  // namespace stagewise::ui
