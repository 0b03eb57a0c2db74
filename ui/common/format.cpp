#include "common/format.h"

#include <QStringList>
#include <cmath>

namespace stagewise::ui {

QString formatCount(double value) {
  const double a = std::abs(value);
  if (a >= 1e9) return QString::number(value / 1e9, 'f', 2) + QStringLiteral(" G");
  if (a >= 1e6) return QString::number(value / 1e6, 'f', 2) + QStringLiteral(" M");
  if (a >= 1e4) return QString::number(value / 1e3, 'f', 1) + QStringLiteral(" k");
  return QString::number(static_cast<qint64>(std::llround(value)));
}

QString formatBytes(double bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (std::abs(bytes) >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  return unit == 0
             ? QString::number(static_cast<qint64>(bytes)) + QStringLiteral(" B")
             : QString::number(bytes, 'f', 1) + QLatin1Char(' ') + QLatin1String(kUnits[unit]);
}

QString formatDuration(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds)) return QStringLiteral("—");
  const auto total = static_cast<qint64>(std::llround(seconds));
  if (total < 60) return QStringLiteral("%1 s").arg(total);
  if (total < 3600) return QStringLiteral("%1 min %2 s").arg(total / 60).arg(total % 60);
  return QStringLiteral("%1 h %2 min").arg(total / 3600).arg((total % 3600) / 60);
}

QString formatShape(const std::vector<int64_t>& dims) {
  QStringList parts;
  for (auto d : dims) parts << QString::number(d);
  return parts.join(QChar(0x00D7));
}

}  // namespace stagewise::ui
