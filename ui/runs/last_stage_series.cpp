#include "runs/last_stage_series.h"

#include <algorithm>
#include <cmath>

#include "common/plot_frame.h"
#include "runs/run_history.h"
#include "stagewise/storage/run_reader.h"

namespace stagewise::ui {

std::vector<LastStageSpan> lastStageSpans(const std::vector<std::pair<int64_t, int>>& stageCounts) {
  std::vector<LastStageSpan> out;
  for (const auto& [step, count] : stageCounts) {
    const int last = std::max(0, count - 1);
    if (!out.empty() && out.back().stage == last) continue;
    if (!out.empty() && out.back().fromStep == step)
      out.back().stage = last;  // two changes at one step: the later holds
    else
      out.push_back({step, last});
  }
  return out;
}

std::vector<LastStageSpan> lastStageSpansOf(storage::RunReader& reader,
                                            const storage::RunRecord& run) {
  try {
    const auto history = runHistory(engine::parseSpec(run.specJson), reader.events(run.id));
    return lastStageSpans(history.stageCounts);
  } catch (const std::exception&) {
    // A spec this build cannot read: no partition history, the stored count's last stage.
    return {{0, std::max(0, run.stageCount - 1)}};
  }
}

std::vector<double> PiecedSeries::breaks() const {
  std::vector<double> out;
  for (const size_t s : starts)
    if (s < points.size()) out.push_back(points[s].first);
  return out;
}

PiecedSeries loadPieces(storage::RunReader& reader, int64_t runId, const std::string& name,
                        const std::vector<LastStageSpan>& spans, storage::XAxis axis,
                        double smoothing) {
  PiecedSeries out;
  for (size_t j = 0; j < spans.size(); ++j) {
    const int64_t from = spans[j].fromStep;
    const int64_t to = j + 1 < spans.size() ? spans[j + 1].fromStep : INT64_MAX;
    std::vector<storage::SeriesPoint> piece;
    for (const auto& p : reader.loadSeries(runId, {name, spans[j].stage, -1}))
      if (p.step >= from && p.step < to) piece.push_back(p);
    if (piece.empty()) continue;
    std::stable_sort(piece.begin(), piece.end(),
                     [](const auto& a, const auto& b) { return a.step < b.step; });
    std::vector<double> values;
    for (const auto& p : piece) values.push_back(p.value);
    values = PlotFrame::smoothed(values, smoothing);
    if (!out.points.empty()) out.starts.push_back(out.points.size());
    for (size_t k = 0; k < piece.size(); ++k)
      out.points.emplace_back(axis == storage::XAxis::Time ? piece[k].timeS : double(piece[k].step),
                              values[k]);
  }
  return out;
}

std::vector<double> sampleOnGrid(const PiecedSeries& series, const std::vector<double>& grid) {
  std::vector<double> out(grid.size(), NAN);
  const auto& pts = series.points;
  if (pts.empty()) return out;
  std::vector<size_t> begins{0};
  begins.insert(begins.end(), series.starts.begin(), series.starts.end());
  for (size_t k = 0; k < grid.size(); ++k) {
    const double x = grid[k];
    // The piece that holds x: the last one that has begun by x.
    size_t piece = begins.size();
    for (size_t j = begins.size(); j-- > 0;)
      if (pts[begins[j]].first <= x) {
        piece = j;
        break;
      }
    if (piece == begins.size()) continue;
    const auto first = pts.begin() + std::ptrdiff_t(begins[piece]);
    const auto end =
        piece + 1 < begins.size() ? pts.begin() + std::ptrdiff_t(begins[piece + 1]) : pts.end();
    const auto after =
        std::upper_bound(first, end, x, [](double v, const auto& p) { return v < p.first; });
    const auto& held = *(after - 1);
    // Past the piece's last point, held only up to the grid point that follows it.
    if (after == end && held.first < x && k > 0 && grid[k - 1] >= held.first) continue;
    out[k] = held.second;
  }
  return out;
}

}  // namespace stagewise::ui
