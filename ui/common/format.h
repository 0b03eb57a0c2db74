#pragma once
// Numbers as a person reads them: 1.2 M params, 48 KiB, 3 min 12 s.

#include <QString>
#include <cstdint>
#include <string>
#include <vector>

namespace stagewise::ui {

QString formatCount(double value);                      ///< 1234567 -> "1.23 M"
QString formatBytes(double bytes);                      ///< 49152 -> "48.0 KiB"
/// 192 -> "3 min 12 s"; under a minute to 3 significant digits (1.8123 -> "1.81 s"); < 0 -> "—"
QString formatDuration(double seconds);
/// A spec value from its JSON text as people read it: a string without its quotes, a fraction
/// to 3 significant digits (0.0031622776601683794 -> "0.00316"), anything else as written.
QString formatSpecValue(const std::string& json);
/// "mean ± spread" to the spread's decimal place (stagewise/engine/number_text.h), with `unit`
/// after both: (1.8123, 0.0712, " s") -> "1.81 ± 0.07 s".
QString formatMeanSpread(double mean, double spread, const QString& unit = QString());
/// "1 run", "3 runs": a count with its noun in the number it takes (English plurals; the
/// workbench is not translated, and "%n run(s)" read "1 run(s)").
QString formatCountOf(qint64 n, const QString& one, const QString& many);
QString formatShape(const std::vector<int64_t>& dims);  ///< {1,28,28} -> "1×28×28"

}  // namespace stagewise::ui
