#include "levels.h"

#include <cmath>

namespace stagewise::storage::detail {

void LevelBucket::add(int64_t step, double t, double value) {
  if (count == 0) {
    stepFirst = step;
    tFirst = t;
    vFirst = value;
  }
  ++count;
  stepLast = step;
  tLast = t;
  vLast = value;
  if (!std::isnan(value)) {
    if (std::isnan(vMin) || value < vMin) vMin = value;
    if (std::isnan(vMax) || value > vMax) vMax = value;
  }
}

void LevelBucket::merge(const LevelBucket& other) {
  if (other.count == 0) return;
  if (count == 0) {
    const int64_t keep = bucket;
    *this = other;
    bucket = keep;
    return;
  }
  count += other.count;
  stepLast = other.stepLast;
  tLast = other.tLast;
  vLast = other.vLast;
  if (!std::isnan(other.vMin) && (std::isnan(vMin) || other.vMin < vMin)) vMin = other.vMin;
  if (!std::isnan(other.vMax) && (std::isnan(vMax) || other.vMax > vMax)) vMax = other.vMax;
}

void SeriesLevels::add(int64_t seq, int64_t step, double t, double value) {
  for (size_t i = 0; i < kLevelSizes.size(); ++i) {
    const int64_t bucket = seq / kLevelSizes[i];
    LevelBucket& open = m_open[i];
    if (open.bucket != bucket) {
      if (open.count > 0 && m_dirty[i]) m_closed.emplace_back(kLevelSizes[i], open);
      open = LevelBucket{};
      open.bucket = bucket;
    }
    open.add(step, t, value);
    m_dirty[i] = true;
  }
}

void SeriesLevels::restore(size_t levelIndex, const LevelBucket& open) {
  m_open[levelIndex] = open;
  m_dirty[levelIndex] = false;
}

std::vector<std::pair<int64_t, LevelBucket>> SeriesLevels::takeDirty() {
  std::vector<std::pair<int64_t, LevelBucket>> out = std::move(m_closed);
  m_closed.clear();
  for (size_t i = 0; i < kLevelSizes.size(); ++i) {
    if (m_dirty[i] && m_open[i].count > 0) out.emplace_back(kLevelSizes[i], m_open[i]);
    m_dirty[i] = false;
  }
  return out;
}

void bindLevel(Statement& upsert, int64_t seriesId, int64_t level, const LevelBucket& b) {
  upsert.bind(1, seriesId)
      .bind(2, level)
      .bind(3, b.bucket)
      .bind(4, b.count)
      .bind(5, b.stepFirst)
      .bind(6, b.stepLast)
      .bind(7, b.tFirst)
      .bind(8, b.tLast)
      .bind(9, b.vMin)
      .bind(10, b.vMax)
      .bind(11, b.vFirst)
      .bind(12, b.vLast);
  upsert.run();
}

}  // namespace stagewise::storage::detail
