#pragma once
// One live series (step, time, value) kept whole, with an optional debiased-EMA smoothing and a
// min/max pyramid, so that drawing any x-range costs O(pixels), not O(points): a 200,000-point
// series hands QCustomPlot about two points per pixel column.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace stagewise::ui {

enum class XAxisKind { Step, Time };

struct PlotPoint {
  double x = 0;
  double y = 0;
};

class SeriesBuffer {
 public:
  void append(int64_t step, double timeS, double value);
  void reserve(size_t n);
  size_t size() const { return m_step.size(); }
  bool empty() const { return m_step.empty(); }

  /// Debiased exponential moving average with weight in [0, 1): 0 shows the raw values.
  void setSmoothing(double weight);
  double smoothing() const { return m_weight; }

  double x(size_t i, XAxisKind axis) const {
    return axis == XAxisKind::Step ? double(m_step[i]) : double(m_time[i]);
  }
  /// The displayed (smoothed) value of point i.
  double y(size_t i) const { return m_weight > 0 ? double(m_shown[i]) : double(m_raw[i]); }
  double rawY(size_t i) const { return double(m_raw[i]); }

  /// Index of the point nearest to `x`, or -1 when empty.
  int64_t nearest(double x, XAxisKind axis) const;

  /// The displayed points with x in [lo, hi] (plus one on each side so lines reach the edges),
  /// reduced to the min and max of each of about `columns` buckets, in order. Appends to `out`.
  void decimate(XAxisKind axis, double lo, double hi, int columns,
                std::vector<PlotPoint>& out) const;

 private:
  struct Bucket {
    float min, max;
    uint32_t imin, imax;
  };
  static constexpr int kBaseShift = 3;  // the finest pyramid level groups 8 points

  void addToPyramid(size_t i);
  void rebuildPyramid();
  size_t lowerIndex(double x, XAxisKind axis) const;  ///< first point with x >= `x`
  size_t upperIndex(double x, XAxisKind axis) const;  ///< first point with x > `x`

  std::vector<int64_t> m_step;
  std::vector<float> m_time;
  std::vector<float> m_raw;
  std::vector<float> m_shown;  // smoothed; empty when smoothing is off
  double m_weight = 0;
  double m_ema = 0;
  double m_emaNorm = 0;                       // 1 - weight^n, for debiasing
  std::vector<std::vector<Bucket>> m_levels;  // level l groups 2^(l+kBaseShift) points
};

}  // namespace stagewise::ui
