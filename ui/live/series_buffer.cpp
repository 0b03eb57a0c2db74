#include "live/series_buffer.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace stagewise::ui {

void SeriesBuffer::reserve(size_t n) {
  m_step.reserve(n);
  m_time.reserve(n);
  m_raw.reserve(n);
}

void SeriesBuffer::append(int64_t step, double timeS, double value) {
  m_step.push_back(step);
  m_time.push_back(float(timeS));
  m_raw.push_back(float(value));
  if (m_weight > 0) {
    if (std::isfinite(value)) {
      m_ema = m_weight * m_ema + (1 - m_weight) * value;
      m_emaNorm = m_weight * m_emaNorm + (1 - m_weight);
    }
    m_shown.push_back(m_emaNorm > 0 ? float(m_ema / m_emaNorm) : float(value));
  }
  addToPyramid(m_step.size() - 1);
}

void SeriesBuffer::setSmoothing(double weight) {
  weight = std::clamp(weight, 0.0, 0.999);
  if (weight == m_weight) return;
  m_weight = weight;
  m_ema = 0;
  m_emaNorm = 0;
  m_shown.clear();
  if (m_weight > 0) {
    m_shown.reserve(m_raw.size());
    for (float v : m_raw) {
      if (std::isfinite(v)) {
        m_ema = m_weight * m_ema + (1 - m_weight) * v;
        m_emaNorm = m_weight * m_emaNorm + (1 - m_weight);
      }
      m_shown.push_back(m_emaNorm > 0 ? float(m_ema / m_emaNorm) : v);
    }
  }
  rebuildPyramid();
}

void SeriesBuffer::addToPyramid(size_t i) {
  const size_t n = i + 1;
  auto take = [this](Bucket& b, size_t j) {
    const float v = m_weight > 0 ? m_shown[j] : m_raw[j];
    if (!std::isfinite(v)) return;
    if (v < b.min) b.min = v, b.imin = uint32_t(j);
    if (v > b.max) b.max = v, b.imax = uint32_t(j);
  };
  auto fresh = [](size_t j) {
    return Bucket{std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                  uint32_t(j), uint32_t(j)};
  };
  for (size_t level = 0;; ++level) {
    const size_t shift = level + kBaseShift;
    if (level < m_levels.size()) {
      auto& buckets = m_levels[level];
      const size_t bucket = i >> shift;
      if (bucket >= buckets.size()) buckets.push_back(fresh(i));
      take(buckets[bucket], i);
    } else if ((size_t(1) << shift) <= n) {
      // A new, coarser level appears once there are enough points: it starts as one bucket
      // holding everything so far, built from the level below.
      Bucket b = fresh(0);
      if (level == 0) {
        for (size_t j = 0; j < n; ++j) take(b, j);
      } else {
        for (const Bucket& part : m_levels[level - 1]) {
          if (part.min < b.min) b.min = part.min, b.imin = part.imin;
          if (part.max > b.max) b.max = part.max, b.imax = part.imax;
        }
      }
      m_levels.push_back({b});
    } else {
      break;
    }
  }
}

void SeriesBuffer::rebuildPyramid() {
  m_levels.clear();
  for (size_t i = 0; i < m_step.size(); ++i) addToPyramid(i);
}

size_t SeriesBuffer::lowerIndex(double x, XAxisKind axis) const {
  if (axis == XAxisKind::Step)
    return size_t(std::lower_bound(m_step.begin(), m_step.end(), std::ceil(x)) - m_step.begin());
  return size_t(std::lower_bound(m_time.begin(), m_time.end(), float(x)) - m_time.begin());
}

size_t SeriesBuffer::upperIndex(double x, XAxisKind axis) const {
  if (axis == XAxisKind::Step)
    return size_t(std::upper_bound(m_step.begin(), m_step.end(), std::floor(x)) - m_step.begin());
  return size_t(std::upper_bound(m_time.begin(), m_time.end(), float(x)) - m_time.begin());
}

int64_t SeriesBuffer::nearest(double x, XAxisKind axis) const {
  if (empty()) return -1;
  const size_t i = std::min(lowerIndex(x, axis), size() - 1);
  if (i > 0 && std::abs(this->x(i - 1, axis) - x) <= std::abs(this->x(i, axis) - x))
    return int64_t(i - 1);
  return int64_t(i);
}

void SeriesBuffer::decimate(XAxisKind axis, double lo, double hi, int columns,
                            std::vector<PlotPoint>& out) const {
  if (empty() || hi < lo) return;
  const size_t n = size();
  size_t a = lowerIndex(lo, axis);
  size_t b = std::min(n, upperIndex(hi, axis) + 1);  // one past the range: the line reaches it
  if (a > 0) --a;                                    // and one before it
  if (a >= b) return;
  columns = std::max(columns, 1);
  const size_t count = b - a;
  if (count <= size_t(columns) * 2 || m_levels.empty()) {
    for (size_t i = a; i < b; ++i) out.push_back({x(i, axis), y(i)});
    return;
  }
  // The coarsest level whose buckets are still no wider than a pixel column's share.
  size_t level = 0;
  while (level + 1 < m_levels.size() &&
         (size_t(1) << (level + 1 + kBaseShift)) * size_t(columns) <= count)
    ++level;
  const size_t shift = level + kBaseShift;
  const auto& buckets = m_levels[level];
  const size_t first = a >> shift, last = std::min((b - 1) >> shift, buckets.size() - 1);
  // Buckets are merged per pixel column, so at most two points (its min and max, in order)
  // reach the plot for each column, however the buckets fall.
  const double span = std::max(hi - lo, 1e-12);
  long column = std::numeric_limits<long>::min();
  uint32_t cmin = 0, cmax = 0;
  auto flush = [&] {
    if (column == std::numeric_limits<long>::min()) return;
    const uint32_t i1 = std::min(cmin, cmax), i2 = std::max(cmin, cmax);
    if (i1 > a && i1 < b - 1) out.push_back({x(i1, axis), y(i1)});
    if (i2 != i1 && i2 > a && i2 < b - 1) out.push_back({x(i2, axis), y(i2)});
  };
  out.push_back({x(a, axis), y(a)});
  for (size_t k = first; k <= last; ++k) {
    const Bucket& bk = buckets[k];
    if (!(bk.min <= bk.max)) continue;  // no finite value in the bucket
    const long c = long(std::floor((x(bk.imin, axis) - lo) / span * columns));
    if (c != column) {
      flush();
      column = c;
      cmin = bk.imin;
      cmax = bk.imax;
      continue;
    }
    if (bk.min < y(cmin)) cmin = bk.imin;
    if (bk.max > y(cmax)) cmax = bk.imax;
  }
  flush();
  out.push_back({x(b - 1, axis), y(b - 1)});
}

}  // namespace stagewise::ui
