// RunReader's series half: listing, raw reads, decimation over the summary levels, alignment.

#include <algorithm>
#include <cmath>
#include <limits>

#include "levels.h"
#include "reader_impl.h"

namespace stagewise::storage {

using detail::Database;
using detail::kLevelSizes;
using detail::Statement;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

constexpr const char* kSeriesColumns =
    "s.id, s.run_id, s.name, s.stage, s.layer, s.point_count, "
    "(SELECT step FROM points WHERE series_id = s.id ORDER BY seq LIMIT 1), "
    "(SELECT step FROM points WHERE series_id = s.id ORDER BY seq DESC LIMIT 1), "
    "(SELECT t FROM points WHERE series_id = s.id ORDER BY seq LIMIT 1), "
    "(SELECT t FROM points WHERE series_id = s.id ORDER BY seq DESC LIMIT 1)";

SeriesInfo readSeries(const Statement& st) {
  SeriesInfo s;
  s.id = st.getInt(0);
  s.runId = st.getInt(1);
  s.key = {st.getText(2), static_cast<int>(st.getInt(3)), static_cast<int>(st.getInt(4))};
  s.pointCount = st.getInt(5);
  s.firstStep = st.getInt(6);
  s.lastStep = st.getInt(7);
  s.firstTimeS = st.getDouble(8);
  s.lastTimeS = st.getDouble(9);
  return s;
}

// Column names per axis, fixed strings (never caller input).
const char* xRaw(XAxis axis) {
  return axis == XAxis::Step ? "step" : "t";
}
const char* xFirst(XAxis axis) {
  return axis == XAxis::Step ? "step_first" : "t_first";
}
const char* xLast(XAxis axis) {
  return axis == XAxis::Step ? "step_last" : "t_last";
}

/// Accumulates items (raw points or level buckets) into x columns. Plot columns are equal
/// slices [lo + k w, lo + (k+1) w) placed by an item's first x. Align columns end at grid points
/// x_k = lo + k (hi - lo) / (n - 1) and take the items with x in (x_{k-1}, x_k], placed by
/// their last x, so a column's last value is the last value at or before its grid point.
class ColumnAccumulator {
 public:
  ColumnAccumulator(double lo, double hi, int columns, bool align)
      : m_lo(lo), m_hi(hi), m_columns(std::max(columns, 1)), m_align(align) {}

  int columnOf(double x, double xLast) const {
    if (!(m_hi > m_lo)) return m_align ? m_columns - 1 : 0;
    double c = 0;
    if (m_align) {
      c = m_columns == 1 ? 0 : std::ceil((xLast - m_lo) / (m_hi - m_lo) * (m_columns - 1));
    } else {
      c = std::floor((x - m_lo) / (m_hi - m_lo) * m_columns);
    }
    return static_cast<int>(std::clamp(c, 0.0, static_cast<double>(m_columns - 1)));
  }

  void add(double x, double xLast, double vMin, double vMax, double vFirst, double vLast,
           int64_t count) {
    const int column = columnOf(x, xLast);
    auto it = m_out.end();
    if (!m_out.empty() && m_out.back().first >= column) {
      // x went backwards (a run resumed from an earlier step): merge into its column.
      it = std::lower_bound(m_out.begin(), m_out.end(), column,
                            [](const auto& c, int value) { return c.first < value; });
    }
    if (it == m_out.end() || it->first != column) {
      m_out.insert(it, {column, PlotBucket{x, xLast, vMin, vMax, vFirst, vLast, count}});
      return;
    }
    PlotBucket& b = it->second;
    b.xLast = xLast;
    b.last = vLast;
    b.count += count;
    if (!std::isnan(vMin) && (std::isnan(b.min) || vMin < b.min)) b.min = vMin;
    if (!std::isnan(vMax) && (std::isnan(b.max) || vMax > b.max)) b.max = vMax;
  }

  std::vector<std::pair<int, PlotBucket>>& columns() { return m_out; }

 private:
  double m_lo;
  double m_hi;
  int m_columns;
  bool m_align;
  std::vector<std::pair<int, PlotBucket>> m_out;
};

/// Inclusive seq range holding every point with x in [from, to], from the finest level.
std::optional<std::pair<int64_t, int64_t>> seqBounds(Database& db, int64_t seriesId, XAxis axis,
                                                     const XRange& range) {
  Statement st(db, std::string("SELECT min(bucket), max(bucket) FROM series_levels WHERE "
                               "series_id = ?1 AND level = ?2 AND ") +
                       xLast(axis) + " >= ?3 AND " + xFirst(axis) + " <= ?4");
  st.bind(1, seriesId).bind(2, kLevelSizes[0]).bind(3, range.from).bind(4, range.to);
  if (!st.step() || st.isNull(0)) return std::nullopt;
  return std::pair{st.getInt(0) * kLevelSizes[0], (st.getInt(1) + 1) * kLevelSizes[0] - 1};
}

/// Points of a series (in write order) with x in `range`, fed to `visit(step, t, value)`.
template <typename Visit>
void scanPoints(Database& db, int64_t seriesId, XAxis axis, const std::optional<XRange>& range,
                Visit&& visit) {
  int64_t seqFrom = 0;
  int64_t seqTo = std::numeric_limits<int64_t>::max();
  if (range) {
    auto bounds = seqBounds(db, seriesId, axis, *range);
    if (!bounds) return;
    std::tie(seqFrom, seqTo) = *bounds;
  }
  std::string sql =
      "SELECT step, t, value FROM points WHERE series_id = ?1 AND seq BETWEEN ?2 AND ?3";
  if (range) sql += std::string(" AND ") + xRaw(axis) + " BETWEEN ?4 AND ?5";
  Statement st(db, sql + " ORDER BY seq");
  st.bind(1, seriesId).bind(2, seqFrom).bind(3, seqTo);
  if (range) st.bind(4, range->from).bind(5, range->to);
  while (st.step()) visit(st.getInt(0), st.getDouble(1), st.getDouble(2));
}

struct Decimation {
  std::vector<std::pair<int, PlotBucket>> columns;
  int64_t pointCount = 0;
  int level = 0;
};

Decimation decimate(Database& db, int64_t seriesId, int64_t totalPoints, XAxis axis, double lo,
                    double hi, int pixels, bool wholeSeries, bool align = false) {
  Decimation out;
  int64_t estimate = totalPoints;
  if (!wholeSeries) {
    Statement st(db, std::string("SELECT sum(count) FROM series_levels WHERE series_id = ?1 "
                                 "AND level = ?2 AND ") +
                         xLast(axis) + " >= ?3 AND " + xFirst(axis) + " <= ?4");
    st.bind(1, seriesId).bind(2, kLevelSizes[1]).bind(3, lo).bind(4, hi);
    estimate = st.step() ? st.getInt(0) : 0;
  }
  // The coarsest level that still gives every pixel column two buckets or more.
  int64_t level = 0;
  for (int64_t size : kLevelSizes) {
    if (estimate / size >= 2 * static_cast<int64_t>(pixels)) level = size;
  }
  ColumnAccumulator acc(lo, hi, pixels, align);
  if (level == 0) {
    std::optional<XRange> range;
    if (!wholeSeries) range = XRange{lo, hi};
    scanPoints(db, seriesId, axis, range, [&](int64_t step, double t, double v) {
      const double x = axis == XAxis::Step ? static_cast<double>(step) : t;
      acc.add(x, x, v, v, v, v, 1);
      ++out.pointCount;
    });
  } else {
    std::string sql = std::string("SELECT ") + xFirst(axis) + ", " + xLast(axis) +
                      ", v_min, v_max, v_first, v_last, count FROM series_levels "
                      "WHERE series_id = ?1 AND level = ?2";
    if (!wholeSeries)
      sql += std::string(" AND ") + xLast(axis) + " >= ?3 AND " + xFirst(axis) + " <= ?4";
    Statement st(db, sql + " ORDER BY bucket");
    st.bind(1, seriesId).bind(2, level);
    if (!wholeSeries) st.bind(3, lo).bind(4, hi);
    while (st.step()) {
      const int64_t count = st.getInt(6);
      acc.add(st.getDouble(0), st.getDouble(1), st.getDouble(2), st.getDouble(3), st.getDouble(4),
              st.getDouble(5), count);
      out.pointCount += count;
    }
  }
  out.columns = std::move(acc.columns());
  out.level = static_cast<int>(level);
  return out;
}

std::pair<double, double> extent(const SeriesInfo& s, XAxis axis) {
  if (axis == XAxis::Step)
    return {static_cast<double>(s.firstStep), static_cast<double>(s.lastStep)};
  return {s.firstTimeS, s.lastTimeS};
}

}  // namespace

std::vector<SeriesInfo> RunReader::listSeries(int64_t runId) {
  Statement st(*m_impl->db,
               std::string("SELECT ") + kSeriesColumns +
                   " FROM series s WHERE s.run_id = ?1 ORDER BY s.name, s.stage, s.layer");
  st.bind(1, runId);
  std::vector<SeriesInfo> out;
  while (st.step()) out.push_back(readSeries(st));
  return out;
}

std::optional<SeriesInfo> RunReader::findSeries(int64_t runId, const SeriesKey& key) {
  Statement st(*m_impl->db, std::string("SELECT ") + kSeriesColumns +
                                " FROM series s WHERE s.run_id = ?1 AND s.name = ?2 AND "
                                "s.stage = ?3 AND s.layer = ?4");
  st.bind(1, runId).bind(2, key.name).bind(3, key.stage).bind(4, key.layer);
  if (!st.step()) return std::nullopt;
  return readSeries(st);
}

std::vector<SeriesPoint> RunReader::loadSeries(int64_t runId, const SeriesKey& key, XAxis axis,
                                               std::optional<XRange> range) {
  std::vector<SeriesPoint> out;
  const auto info = findSeries(runId, key);
  if (!info) return out;
  out.reserve(static_cast<size_t>(info->pointCount));
  scanPoints(*m_impl->db, info->id, axis, range, [&](int64_t step, double t, double v) {
    out.push_back({step, t, v});
  });
  return out;
}

DecimatedSeries RunReader::loadDecimated(int64_t runId, const SeriesKey& key, int pixels,
                                         XAxis axis, std::optional<XRange> range) {
  DecimatedSeries out;
  const auto info = findSeries(runId, key);
  if (!info || info->pointCount == 0 || pixels <= 0) return out;
  const auto [lo, hi] = range ? std::pair{range->from, range->to} : extent(*info, axis);
  Decimation d = decimate(*m_impl->db, info->id, info->pointCount, axis, lo, hi, pixels, !range);
  out.buckets.reserve(d.columns.size());
  for (auto& column : d.columns) out.buckets.push_back(column.second);
  out.pointCount = d.pointCount;
  out.level = d.level;
  return out;
}

AlignedSeries RunReader::alignSeries(const std::vector<SeriesRef>& refs, int points, XAxis axis,
                                     std::optional<XRange> range, double smoothing) {
  smoothing = std::clamp(smoothing, 0.0, 0.999);
  AlignedSeries out;
  out.axis = axis;
  if (points <= 0) return out;
  std::vector<std::optional<SeriesInfo>> infos;
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  for (const SeriesRef& ref : refs) {
    infos.push_back(findSeries(ref.runId, ref.key));
    if (infos.back() && infos.back()->pointCount > 0) {
      const auto [first, last] = extent(*infos.back(), axis);
      lo = std::min(lo, first);
      hi = std::max(hi, last);
    }
  }
  if (range) std::tie(lo, hi) = std::pair{range->from, range->to};
  if (!(lo <= hi)) {
    out.values.assign(refs.size(), {});
    out.points.assign(refs.size(), {});
    return out;
  }
  out.x.resize(static_cast<size_t>(points));
  for (int k = 0; k < points; ++k) {
    out.x[static_cast<size_t>(k)] =
        points == 1 || k + 1 == points ? hi : lo + (hi - lo) * k / (points - 1);
  }
  for (const auto& info : infos) {
    std::vector<double> values(static_cast<size_t>(points), kNaN);
    // Smoothed: every point from the series' first, the average carried through those before
    // the range, each column's last smoothed value kept.
    std::vector<std::pair<double, double>> smoothedOwn;
    const bool sparse = info && info->pointCount > 0 && info->pointCount * 2 <= points;
    if (info && info->pointCount > 0 && smoothing > 0) {
      ColumnAccumulator acc(lo, hi, points, /*align=*/true);
      double ema = 0, norm = 0;
      scanPoints(*m_impl->db, info->id, axis, std::nullopt, [&](int64_t step, double t, double v) {
        if (std::isfinite(v)) {
          ema = smoothing * ema + (1 - smoothing) * v;
          norm = smoothing * norm + (1 - smoothing);
        }
        const double shown = norm > 0 ? ema / norm : v;
        const double x = axis == XAxis::Step ? static_cast<double>(step) : t;
        if (x < lo || x > hi) return;
        acc.add(x, x, shown, shown, shown, shown, 1);
        if (sparse) smoothedOwn.emplace_back(x, shown);
      });
      size_t next = 0;
      double held = kNaN;
      auto& columns = acc.columns();
      const int lastColumn = columns.empty() ? -1 : columns.back().first;
      for (int k = 0; k <= lastColumn; ++k) {
        if (next < columns.size() && columns[next].first == k) held = columns[next++].second.last;
        values[static_cast<size_t>(k)] = held;
      }
      out.values.push_back(std::move(values));
      out.points.push_back(std::move(smoothedOwn));
      continue;
    }
    if (info && info->pointCount > 0) {
      Decimation d = decimate(*m_impl->db, info->id, info->pointCount, axis, lo, hi, points,
                              /*wholeSeries=*/false, /*align=*/true);
      // Hold the last value across empty columns between the series' first and last point.
      size_t next = 0;
      double held = kNaN;
      const int lastColumn = d.columns.empty() ? -1 : d.columns.back().first;
      for (int k = 0; k <= lastColumn; ++k) {
        if (next < d.columns.size() && d.columns[next].first == k) {
          held = d.columns[next++].second.last;
        }
        values[static_cast<size_t>(k)] = held;
      }
    }
    out.values.push_back(std::move(values));
    std::vector<std::pair<double, double>> own;
    if (info && info->pointCount > 0 && info->pointCount * 2 <= points)
      scanPoints(*m_impl->db, info->id, axis, XRange{lo, hi},
                 [&](int64_t step, double t, double v) {
                   own.emplace_back(axis == XAxis::Step ? static_cast<double>(step) : t, v);
                 });
    out.points.push_back(std::move(own));
  }
  return out;
}

void RunReader::forEachPoint(int64_t seriesId,
                             const std::function<void(const SeriesPoint&)>& visit) {
  scanPoints(*m_impl->db, seriesId, XAxis::Step, std::nullopt,
             [&](int64_t step, double t, double v) {
               visit({step, t, v});
             });
}

}  // namespace stagewise::storage
