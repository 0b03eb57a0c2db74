#pragma once
// Min/max summary levels of a series. Points are numbered in write order (seq); level L groups
// seq / L into one bucket that keeps count, first/last step and time, and min/max/first/last
// value. Keeping min and max (not a mean) is what lets a one-step spike survive decimation.

#include <array>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "sqlite_db.h"

namespace stagewise::storage::detail {

/// Bucket sizes, finest first. 32x apart: a 1M-point series has 31,250 / 977 / 31 buckets.
inline constexpr std::array<int64_t, 3> kLevelSizes = {32, 1024, 32768};

struct LevelBucket {
  int64_t bucket = -1;
  int64_t count = 0;
  int64_t stepFirst = 0;
  int64_t stepLast = 0;
  double tFirst = 0;
  double tLast = 0;
  double vMin = std::numeric_limits<double>::quiet_NaN();  ///< NaN values are left out
  double vMax = std::numeric_limits<double>::quiet_NaN();
  double vFirst = 0;
  double vLast = 0;

  void add(int64_t step, double t, double value);
  /// Merges `other`, which comes after this bucket in write order.
  void merge(const LevelBucket& other);
};

/// The open (last) bucket of every level of one series, as the writer appends points.
class SeriesLevels {
 public:
  void add(int64_t seq, int64_t step, double t, double value);
  /// Continues a series written earlier: `open` is its stored last bucket of `levelIndex`.
  void restore(size_t levelIndex, const LevelBucket& open);
  /// Buckets changed since the last call: (bucket size, bucket). Closed ones and each open one.
  std::vector<std::pair<int64_t, LevelBucket>> takeDirty();

 private:
  std::array<LevelBucket, kLevelSizes.size()> m_open{};
  std::array<bool, kLevelSizes.size()> m_dirty{};
  std::vector<std::pair<int64_t, LevelBucket>> m_closed;
};

/// INSERT OR REPLACE of one level row; bind with bindLevel().
inline constexpr const char* kUpsertLevelSql =
    "INSERT OR REPLACE INTO series_levels (series_id, level, bucket, count, step_first, "
    "step_last, t_first, t_last, v_min, v_max, v_first, v_last) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)";
void bindLevel(Statement& upsert, int64_t seriesId, int64_t level, const LevelBucket& bucket);

}  // namespace stagewise::storage::detail
