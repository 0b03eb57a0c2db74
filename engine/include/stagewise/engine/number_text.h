#pragma once
// Numbers to significant digits, one rule for every table (the workbench, `study show`, the
// report): a measured mean is written to the decimal place its spread supports, a setting such
// as a learning rate to three significant digits, never to the double's full precision.

#include <string>

namespace stagewise::engine {

/// `value` to `digits` significant digits, trailing zeros dropped: 0.0031622776 -> "0.00316",
/// 1.8123 -> "1.81", 0.1 -> "0.1". Whole digits are never cut (123456 -> "123456"); below 1e-4
/// or from 1e15 it is written with an exponent (3.16e-05). NaN and infinities: "nan", "inf".
std::string significant(double value, int digits = 3);

/// The decimals a spread is written with: one significant digit, two when its first digits are
/// below 355 (the Particle Data Group's rule): 0.0712 -> 2, 0.0312 -> 3, 2.4 -> 1, 240 -> 0.
/// Negative for spreads of hundreds and more (-1: tens). A spread <= 0 or not finite: -100.
int spreadDecimals(double spread);

/// `value` rounded to `decimals` (negative: to tens, hundreds, …) and written without exponent;
/// decimals == -100 (no spread) writes significant(value, 4).
std::string atDecimals(double value, int decimals);

/// "mean ± spread", both to the spread's decimals: (1.8123, 0.0712) -> "1.81 ± 0.07",
/// (12345, 240) -> "12350 ± 240". A zero spread: "1.812 ± 0"; a spread not finite: the mean
/// alone to 4 significant digits.
std::string meanPlusMinus(double mean, double spread);

/// Bytes in IEC units, the one system of every screen, table and axis (issue 36 §3): "912 B",
/// "1.5 KiB", "18.7 MiB", "2.0 GiB" (one decimal from KiB on).
std::string bytesText(double bytes);

}  // namespace stagewise::engine
