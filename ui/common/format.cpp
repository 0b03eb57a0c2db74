#include "common/format.h"

#include <QStringList>
#include <cmath>

#include "stagewise/engine/number_text.h"

namespace stagewise::ui {

QString formatCount(double value) {
  const double a = std::abs(value);
  if (a >= 1e9) return QString::number(value / 1e9, 'f', 2) + QStringLiteral(" G");
  if (a >= 1e6) return QString::number(value / 1e6, 'f', 2) + QStringLiteral(" M");
  if (a >= 1e4) return QString::number(value / 1e3, 'f', 1) + QStringLiteral(" k");
  return QString::number(static_cast<qint64>(std::llround(value)));
}

QString formatBytes(double bytes) {
  return QString::fromStdString(engine::bytesText(bytes));
}

QString formatDuration(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds)) return QStringLiteral("—");
  if (seconds < 59.95)
    return QString::fromStdString(engine::significant(seconds, 3)) + QStringLiteral(" s");
  const auto total = static_cast<qint64>(std::llround(seconds));
  if (total < 3600) return QStringLiteral("%1 min %2 s").arg(total / 60).arg(total % 60);
  return QStringLiteral("%1 h %2 min").arg(total / 3600).arg((total % 3600) / 60);
}

QString formatSpecValue(const std::string& json) {
  QString v = QString::fromStdString(json);
  if (v.size() >= 2 && v.startsWith(QLatin1Char('"')) && v.endsWith(QLatin1Char('"')))
    return v.mid(1, v.size() - 2);
  // Integers stay whole (steps, batch sizes, seeds); only a fraction or an exponent is rounded.
  if (!v.contains(QLatin1Char('.')) && !v.contains(QLatin1Char('e')) &&
      !v.contains(QLatin1Char('E')))
    return v;
  bool ok = false;
  const double d = v.toDouble(&ok);
  return ok ? QString::fromStdString(engine::significant(d, 3)) : v;
}

QString formatMeanSpread(double mean, double spread, const QString& unit) {
  if (!std::isfinite(spread)) return QString::fromStdString(engine::significant(mean, 4)) + unit;
  return QString::fromStdString(engine::meanPlusMinus(mean, spread)) + unit;
}

QString formatCountOf(qint64 n, const QString& one, const QString& many) {
  return QStringLiteral("%1 %2").arg(n).arg(n == 1 ? one : many);
}

QString formatShape(const std::vector<int64_t>& dims) {
  QStringList parts;
  for (auto d : dims) parts << QString::number(d);
  return parts.join(QChar(0x00D7));
}

}  // namespace stagewise::ui
