#pragma once
// Numbers as a person reads them: 1.2 M params, 48 KiB, 3 min 12 s.

#include <QString>
#include <cstdint>
#include <vector>

namespace stagewise::ui {

QString formatCount(double value);                      ///< 1234567 -> "1.23 M"
QString formatBytes(double bytes);                      ///< 49152 -> "48.0 KiB"
QString formatDuration(double seconds);                 ///< 192 -> "3 min 12 s"; < 0 -> "—"
QString formatShape(const std::vector<int64_t>& dims);  ///< {1,28,28} -> "1×28×28"

}  // namespace stagewise::ui
