#include "stagewise/engine/number_text.h"

#include <cmath>
#include <cstdio>

namespace stagewise::engine {

namespace {

constexpr int kNoSpread = -100;

std::string printf1(const char* format, int precision, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, precision, value);
  return buf;
}

std::string dropTrailingZeros(std::string s) {
  if (s.find('.') == std::string::npos) return s;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

/// "-0" and "-0.00" read as a sign that is not there.
std::string noNegativeZero(std::string s) {
  if (!s.empty() && s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
  return s;
}

}  // namespace

std::string significant(double value, int digits) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (value == 0) return "0";
  if (digits < 1) digits = 1;
  const double a = std::abs(value);
  if (a < 1e-4 || a >= 1e15) {
    // %.*e keeps `digits` significant digits; trim the mantissa's trailing zeros.
    std::string s = printf1("%.*e", digits - 1, value);
    const size_t e = s.find('e');
    return dropTrailingZeros(s.substr(0, e)) + s.substr(e);
  }
  const int magnitude = int(std::floor(std::log10(a)));
  const int decimals = std::max(0, digits - 1 - magnitude);
  return noNegativeZero(dropTrailingZeros(printf1("%.*f", decimals, value)));
}

int spreadDecimals(double spread) {
  if (!(spread > 0) || !std::isfinite(spread)) return kNoSpread;
  int magnitude = int(std::floor(std::log10(spread)));
  // The first three digits, 100..999, decide between one and two significant digits.
  double lead = spread / std::pow(10.0, magnitude - 2);
  if (lead >= 999.5) {  // rounds up to the next power of ten
    ++magnitude;
    lead = 100;
  }
  const int digits = lead < 355 ? 2 : 1;
  return digits - 1 - magnitude;
}

std::string atDecimals(double value, int decimals) {
  if (decimals == kNoSpread || !std::isfinite(value)) return significant(value, 4);
  if (decimals >= 0) return noNegativeZero(printf1("%.*f", decimals, value));
  const double unit = std::pow(10.0, -decimals);
  return noNegativeZero(printf1("%.*f", 0, std::round(value / unit) * unit));
}

std::string meanPlusMinus(double mean, double spread) {
  if (!std::isfinite(spread) || spread < 0) return significant(mean, 4);
  if (spread == 0) return significant(mean, 4) + " ± 0";
  const int decimals = spreadDecimals(spread);
  return atDecimals(mean, decimals) + " ± " + atDecimals(spread, decimals);
}

std::string bytesText(double bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  if (!std::isfinite(bytes)) return "nan B";
  int unit = 0;
  while (std::abs(bytes) >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  char text[48];
  if (unit == 0)
    std::snprintf(text, sizeof text, "%lld B", static_cast<long long>(std::llround(bytes)));
  else
    std::snprintf(text, sizeof text, "%.1f %s", bytes, kUnits[unit]);
  return text;
}

}  // namespace stagewise::engine
