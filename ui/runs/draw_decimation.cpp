#include "runs/draw_decimation.h"

#include <algorithm>
#include <cmath>

namespace stagewise::ui {

std::vector<std::pair<double, double>> pointsToDraw(
    const std::vector<std::pair<double, double>>& stored, double factor, double lo, double hi,
    int columns) {
  std::vector<std::pair<double, double>> out;
  if (stored.empty() || !(factor > 0) || !(hi >= lo)) return out;
  const auto before = [factor](const std::pair<double, double>& p, double x) {
    return p.first * factor < x;
  };
  auto first = std::lower_bound(stored.begin(), stored.end(), lo, before);
  auto last = std::upper_bound(
      stored.begin(), stored.end(), hi,
      [factor](double x, const std::pair<double, double>& p) { return x < p.first * factor; });
  // One point beyond each end (the nearest finite one), so the line leaves the plot there.
  auto outerFirst = first;
  while (outerFirst != stored.begin()) {
    --outerFirst;
    if (std::isfinite(outerFirst->second)) break;
  }
  auto outerLast = last;
  while (outerLast != stored.end() && !std::isfinite(outerLast->second)) ++outerLast;
  if (outerFirst != first && std::isfinite(outerFirst->second)) out.push_back(*outerFirst);

  const int cols = std::max(1, columns);
  if (last - first <= 4 * std::ptrdiff_t(cols) || !(hi > lo)) {
    for (auto it = first; it != last; ++it)
      if (std::isfinite(it->second)) out.push_back(*it);
  } else {
    const double width = (hi - lo) / cols;
    auto it = first;
    while (it != last) {
      const int column = std::min(cols - 1, int(std::floor((it->first * factor - lo) / width)));
      // The column's points: [it, end).
      auto end = it;
      while (end != last &&
             std::min(cols - 1, int(std::floor((end->first * factor - lo) / width))) == column)
        ++end;
      auto firstFinite = end, lastFinite = end, low = end, high = end;
      for (auto p = it; p != end; ++p) {
        if (!std::isfinite(p->second)) continue;
        if (firstFinite == end) firstFinite = p;
        lastFinite = p;
        if (low == end || p->second < low->second) low = p;
        if (high == end || p->second > high->second) high = p;
      }
      if (firstFinite != end) {
        std::vector<decltype(it)> keep{firstFinite, low, high, lastFinite};
        std::sort(keep.begin(), keep.end());
        keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
        for (auto k : keep) out.push_back(*k);
      }
      it = end;
    }
  }
  if (outerLast != stored.end()) out.push_back(*outerLast);
  return out;
}

}  // namespace stagewise::ui
