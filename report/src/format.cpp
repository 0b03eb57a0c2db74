#include "format.h"

#include <cmath>
#include <cstdio>

namespace stagewise::report {

std::string fmt(double v, int digits) {
  if (!std::isfinite(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string fmtBytes(double bytes) {
  if (!std::isfinite(bytes)) return "n/a";
  // IEC, as every other place bytes are shown (issue 36: one unit system).
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  double v = bytes;
  while (std::abs(v) >= 1024 && u < 4) v /= 1024, ++u;
  return fmt(v, u == 0 ? 0 : 1) + " " + units[u];
}

nlohmann::ordered_json jsonNumber(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json jsonNumbers(const std::vector<double>& v) {
  auto a = nlohmann::ordered_json::array();
  for (double x : v) a.push_back(jsonNumber(x));
  return a;
}

}  // namespace stagewise::report
