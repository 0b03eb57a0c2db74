#pragma once
// Numbers as the report writes them: fixed digits, bytes with units, JSON without NaN.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace stagewise::report {

/// `v` with `digits` decimals; "n/a" when not finite.
std::string fmt(double v, int digits);
/// "1.6 MB", "4.0 kB", "812 B" (decimal units); "n/a" when not finite.
std::string fmtBytes(double bytes);
/// A number, or null when not finite (JSON has no NaN).
nlohmann::ordered_json jsonNumber(double v);
nlohmann::ordered_json jsonNumbers(const std::vector<double>& v);

}  // namespace stagewise::report
