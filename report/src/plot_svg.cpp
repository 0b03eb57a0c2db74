#include <plplot.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "stagewise/report/plot.h"

namespace stagewise::report {

namespace {

// Colour-blind-safe series colours (Okabe-Ito, then two greys); cmap0 index 0 is the background,
// 1 the axes and 2 the grid, so series colour i is cmap0 index i + 3.
constexpr int kPalette[][3] = {{0, 114, 178},   {230, 159, 0},  {0, 158, 115},  {204, 121, 167},
                               {86, 180, 233},  {213, 94, 0},   {240, 228, 66}, {0, 0, 0},
                               {120, 120, 120}, {180, 180, 180}};
constexpr int kPaletteSize = static_cast<int>(sizeof(kPalette) / sizeof(kPalette[0]));
constexpr int kFirstSeriesColor = 3;

std::mutex& plplotMutex() {
  static std::mutex m;  // PLplot keeps its state in globals
  return m;
}

/// PLplot reads '#' as its escape character: a literal one is written twice.
std::string plText(const std::string& s) {
  std::string out;
  for (char c : s) {
    out += c;
    if (c == '#') out += '#';
  }
  return out;
}

bool haveSvgDriver() {
  int n = 64;
  std::vector<const char*> menu(static_cast<size_t>(n)), devs(static_cast<size_t>(n));
  const char** menuPtr = menu.data();
  const char** devsPtr = devs.data();
  plgDevs(&menuPtr, &devsPtr, &n);
  for (int i = 0; i < n; ++i)
    if (devsPtr[i] && std::string(devsPtr[i]) == "svg") return true;
  return false;
}

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void add(double v) {
    if (!std::isfinite(v)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  bool valid() const { return lo <= hi; }
  void pad(double fraction, bool log) {
    if (!valid()) lo = 0, hi = 1;
    if (hi - lo < 1e-12) {
      const double d = log ? 0.5 : std::max(1e-3, std::abs(hi) * 0.1);
      lo -= d, hi += d;
    }
    const double d = (hi - lo) * fraction;
    lo -= d, hi += d;
  }
};

double axisValue(double v, bool log) {
  if (!log) return v;
  return v > 0 ? std::log10(v) : std::numeric_limits<double>::quiet_NaN();
}

std::vector<PLFLT> mapped(const std::vector<double>& v, bool log) {
  std::vector<PLFLT> out;
  out.reserve(v.size());
  for (double d : v) out.push_back(axisValue(d, log));
  return out;
}

/// Draws `x`/`y` as polylines split at non-finite values.
void drawLine(const std::vector<PLFLT>& x, const std::vector<PLFLT>& y) {
  std::vector<PLFLT> px, py;
  auto flush = [&] {
    if (px.size() >= 2) plline(static_cast<PLINT>(px.size()), px.data(), py.data());
    px.clear(), py.clear();
  };
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
    if (std::isfinite(x[i]) && std::isfinite(y[i])) {
      px.push_back(x[i]);
      py.push_back(y[i]);
    } else {
      flush();
    }
  }
  flush();
}

void drawBand(const std::vector<PLFLT>& x, const std::vector<PLFLT>& lo,
              const std::vector<PLFLT>& hi) {
  std::vector<PLFLT> px, py;
  for (size_t i = 0; i < x.size(); ++i)
    if (std::isfinite(x[i]) && std::isfinite(lo[i]) && std::isfinite(hi[i]))
      px.push_back(x[i]), py.push_back(lo[i]);
  const size_t n = px.size();
  for (size_t i = x.size(); i-- > 0;)
    if (std::isfinite(x[i]) && std::isfinite(lo[i]) && std::isfinite(hi[i]))
      px.push_back(x[i]), py.push_back(hi[i]);
  if (n >= 2) plfill(static_cast<PLINT>(px.size()), px.data(), py.data());
}

/// Tick labels written in full ("116593", "0.25") and a log axis's decades as "1e9": PLplot's
/// own put a scale or an exponent in a superscript, which is nested SVG text that QtSvg's SVG
/// Tiny cannot show (the workbench renders these plots with it).
void tickLabel(PLINT axis, PLFLT value, char* label, PLINT length, PLPointer data) {
  const auto* logs = static_cast<const bool*>(data);  // {x is log, y is log}
  const bool log = axis == PL_X_AXIS ? logs[0] : logs[1];
  const auto n = static_cast<size_t>(length);
  if (!log) {
    std::snprintf(label, n, "%.6g", std::abs(value) < 1e-12 ? 0.0 : value);
    return;
  }
  const double rounded = std::round(value);
  if (std::abs(value - rounded) < 1e-6)
    std::snprintf(label, n, "1e%d", static_cast<int>(rounded));
  else
    std::snprintf(label, n, "%.3g", std::pow(10.0, value));
}

std::string readAndRemove(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  std::remove(path.c_str());
  return s.str();
}

/// The document without its XML prolog and DOCTYPE (which names an external DTD), sized by its
/// viewBox so that it scales with the page.
std::string inlineable(const std::string& svg, int width, int height) {
  const size_t start = svg.find("<svg");
  if (start == std::string::npos) throw std::runtime_error("PLplot wrote no SVG");
  std::string out = svg.substr(start);
  const size_t close = out.find('>');
  std::string head = out.substr(0, close);
  for (const char* attr : {"width=\"", "height=\""}) {
    const size_t a = head.find(std::string("\n  ") + attr);
    if (a == std::string::npos) continue;
    const size_t e = head.find('"', a + 3 + std::string(attr).size());
    head.erase(a, e - a + 1);
  }
  head += " role=\"img\" style=\"width:100%;max-width:" + std::to_string(width) +
          "px;height:auto\" data-height=\"" + std::to_string(height) + "\"";
  return head + out.substr(close);
}

}  // namespace

std::string paletteColor(int index) {
  const int* c = kPalette[((index % kPaletteSize) + kPaletteSize) % kPaletteSize];
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c[0], c[1], c[2]);
  return buf;
}

std::string renderSvg(const Plot& plot, int width, int height) {
  // A byte axis in IEC units, as every other byte axis in the workbench (issue 36: the memory
  // chart read "1e+07 bytes"): the data stay in bytes (report.json), the drawing is scaled.
  if (!plot.logY && plot.yLabel.rfind("bytes", 0) == 0) {
    double top = 0;
    for (const auto& s : plot.series)
      for (const auto* v : {&s.y, &s.lo, &s.hi})
        for (double y : *v)
          if (std::isfinite(y)) top = std::max(top, std::abs(y));
    static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
    double scale = 1;
    int unit = -1;
    while (top / scale >= 1024 && unit < 3) scale *= 1024, ++unit;
    if (unit >= 0) {
      Plot scaled = plot;
      for (auto& s : scaled.series)
        for (auto* v : {&s.y, &s.lo, &s.hi})
          for (double& y : *v) y /= scale;
      if (plot.yMin < plot.yMax) scaled.yMin /= scale, scaled.yMax /= scale;
      scaled.yLabel = kUnits[unit] + plot.yLabel.substr(5);
      return renderSvg(scaled, width, height);
    }
  }
  std::lock_guard lock(plplotMutex());
  if (!haveSvgDriver()) throw std::runtime_error("PLplot has no svg driver (install libplplot17)");
  const char* tmp = std::getenv("TMPDIR");
  std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/stagewise-plot-XXXXXX";
  const int fd = mkstemp(path.data());
  if (fd < 0) throw std::runtime_error("cannot create a temporary file for a plot in " + path);
  close(fd);

  const bool bars = std::any_of(plot.series.begin(), plot.series.end(), [](const PlotSeries& s) {
    return s.style == PlotSeries::Style::Bars;
  });
  const bool logX = plot.logX && !bars;
  Range xr, yr;
  for (const auto& s : plot.series) {
    for (double v : s.x) xr.add(axisValue(v, logX));
    for (double v : s.y) yr.add(axisValue(v, plot.logY));
    for (double v : s.lo) yr.add(axisValue(v, plot.logY));
    for (double v : s.hi) yr.add(axisValue(v, plot.logY));
  }
  for (double m : plot.markers) xr.add(axisValue(m, logX));
  if (bars) {
    xr.lo = -0.6;
    xr.hi = std::max<double>(1, static_cast<double>(plot.categories.size())) - 0.4;
    yr.add(plot.logY ? yr.lo : 0);
  } else {
    xr.pad(0.03, logX);
  }
  yr.pad(0.06, plot.logY);
  if (plot.yMin < plot.yMax)
    yr.lo = axisValue(plot.yMin, plot.logY), yr.hi = axisValue(plot.yMax, plot.logY);

  plsdev("svg");
  plsfnam(path.c_str());
  plspage(0, 0, width, height, 0, 0);
  std::vector<PLINT> r, g, b;
  r.push_back(255), g.push_back(255), b.push_back(255);  // background
  r.push_back(40), g.push_back(40), b.push_back(40);     // axes and text
  r.push_back(228), g.push_back(228), b.push_back(228);  // grid
  for (const auto& c : kPalette) r.push_back(c[0]), g.push_back(c[1]), b.push_back(c[2]);
  plscmap0n(static_cast<PLINT>(r.size()));
  plscmap0(r.data(), g.data(), b.data(), static_cast<PLINT>(r.size()));
  plinit();
  pladv(0);
  plschr(0, 0.75);
  const bool legend =
      plot.series.size() > 1 || (plot.series.size() == 1 && !plot.series[0].label.empty());
  plvpor(0.10, legend ? 0.70 : 0.95, 0.14, 0.90);
  plwind(xr.lo, xr.hi, yr.lo, yr.hi);
  plcol0(1);
  plwidth(1);
  const std::string yLog = plot.logY ? "lo" : "o";
  bool logs[2] = {logX, plot.logY};
  plslabelfunc(tickLabel, logs);
  const std::string yOpt = "bcnstv" + yLog;
  plcol0(2);
  plbox(bars ? "" : (logX ? "gl" : "g"), 0, 0, (plot.logY ? "gl" : "g"), 0, 0);
  plcol0(1);
  if (bars) {
    plbox("bc", 0, 0, yOpt.c_str(), 0, 0);
    for (size_t c = 0; c < plot.categories.size(); ++c) {
      const double pos = (static_cast<double>(c) - xr.lo) / (xr.hi - xr.lo);
      plmtex("b", 1.6, pos, 0.5, plText(plot.categories[c]).c_str());
    }
  } else {
    const std::string xOpt = std::string("bcnsto") + (logX ? "l" : "");
    plbox(xOpt.c_str(), 0, 0, yOpt.c_str(), 0, 0);
  }
  pllab(plText(plot.xLabel).c_str(), plText(plot.yLabel).c_str(), "");
  plschr(0, 0.95);
  plmtex("t", 1.6, 0.5, 0.5, plText(plot.title).c_str());
  plschr(0, 0.75);

  const size_t nBars = static_cast<size_t>(
      std::count_if(plot.series.begin(), plot.series.end(),
                    [](const PlotSeries& s) { return s.style == PlotSeries::Style::Bars; }));
  size_t barIndex = 0;
  for (size_t i = 0; i < plot.series.size(); ++i) {
    const PlotSeries& s = plot.series[i];
    const int color =
        kFirstSeriesColor + ((s.color >= 0 ? s.color : static_cast<int>(i)) % kPaletteSize);
    if (s.style == PlotSeries::Style::Bars) {
      const double w = 0.8 / static_cast<double>(std::max<size_t>(1, nBars));
      plcol0(color);
      for (size_t k = 0; k < s.x.size() && k < s.y.size(); ++k) {
        const double y = axisValue(s.y[k], plot.logY);
        if (!std::isfinite(y)) continue;
        const double x0 = s.x[k] - 0.4 + w * static_cast<double>(barIndex);
        const double base = plot.logY ? yr.lo : 0.0;
        PLFLT bx[4] = {x0, x0 + w * 0.92, x0 + w * 0.92, x0};
        PLFLT by[4] = {base, base, y, y};
        plfill(4, bx, by);
        if (k < s.lo.size() && k < s.hi.size()) {
          PLFLT ex = x0 + w * 0.46, elo = axisValue(s.lo[k], plot.logY),
                ehi = axisValue(s.hi[k], plot.logY);
          plcol0(1);
          if (std::isfinite(elo) && std::isfinite(ehi)) plerry(1, &ex, &elo, &ehi);
          plcol0(color);
        }
      }
      ++barIndex;
      continue;
    }
    const auto x = mapped(s.x, logX);
    const auto y = mapped(s.y, plot.logY);
    const bool band = s.lo.size() == s.y.size() && s.hi.size() == s.y.size() && !s.y.empty();
    if (band && s.style == PlotSeries::Style::Line) {
      const int* c = kPalette[(color - kFirstSeriesColor) % kPaletteSize];
      plscol0a(color, c[0], c[1], c[2], 0.22);
      plcol0(color);
      drawBand(x, mapped(s.lo, plot.logY), mapped(s.hi, plot.logY));
      plscol0a(color, c[0], c[1], c[2], 1.0);
    }
    plcol0(color);
    plwidth(2);
    if (s.style != PlotSeries::Style::Points) drawLine(x, y);
    plwidth(1);
    if (s.style == PlotSeries::Style::Points || s.style == PlotSeries::Style::LinePoints) {
      std::vector<PLFLT> px, py;
      for (size_t k = 0; k < x.size() && k < y.size(); ++k)
        if (std::isfinite(x[k]) && std::isfinite(y[k])) px.push_back(x[k]), py.push_back(y[k]);
      if (!px.empty()) {
        plssym(0, 1.4);
        plpoin(static_cast<PLINT>(px.size()), px.data(), py.data(), 4);
      }
      if (band)
        for (size_t k = 0; k < x.size(); ++k) {
          PLFLT ex = x[k], elo = axisValue(s.lo[k], plot.logY), ehi = axisValue(s.hi[k], plot.logY);
          if (std::isfinite(ex) && std::isfinite(elo) && std::isfinite(ehi))
            plerry(1, &ex, &elo, &ehi);
        }
    }
  }
  for (size_t m = 0; m < plot.markers.size(); ++m) {
    const double x = axisValue(plot.markers[m], logX);
    if (!std::isfinite(x)) continue;
    plcol0(1);
    pllsty(2);
    PLFLT lx[2] = {x, x}, ly[2] = {yr.lo, yr.hi};
    plline(2, lx, ly);
    pllsty(1);
    if (m < plot.markerLabels.size())
      plptex(x + (xr.hi - xr.lo) * 0.01, yr.hi - (yr.hi - yr.lo) * 0.05, 1, 0, 0,
             plText(plot.markerLabels[m]).c_str());
  }
  if (legend) {
    const auto n = static_cast<PLINT>(plot.series.size());
    std::vector<PLINT> opts(n), textColors(n, 1), colors(n), styles(n, 1), boxPatterns(n, 0),
        symbolNumbers(n, 1);
    std::vector<PLFLT> widths(n, 2), boxScales(n, 0.8), boxWidths(n, 1), symbolScales(n, 1.0);
    std::vector<std::string> labels;
    std::vector<const char*> texts, symbols;
    for (PLINT i = 0; i < n; ++i) {
      const PlotSeries& s = plot.series[static_cast<size_t>(i)];
      colors[static_cast<size_t>(i)] =
          kFirstSeriesColor + ((s.color >= 0 ? s.color : static_cast<int>(i)) % kPaletteSize);
      opts[static_cast<size_t>(i)] = s.style == PlotSeries::Style::Bars     ? PL_LEGEND_COLOR_BOX
                                     : s.style == PlotSeries::Style::Points ? PL_LEGEND_SYMBOL
                                     : s.style == PlotSeries::Style::LinePoints
                                         ? (PL_LEGEND_LINE | PL_LEGEND_SYMBOL)
                                         : PL_LEGEND_LINE;
      labels.push_back(plText(s.label));
    }
    for (const auto& l : labels) texts.push_back(l.c_str());
    for (PLINT i = 0; i < n; ++i) symbols.push_back("○");
    PLFLT lw = 0, lh = 0;
    pllegend(&lw, &lh, PL_LEGEND_BACKGROUND, PL_POSITION_OUTSIDE | PL_POSITION_RIGHT, 0.02, 0.0,
             0.08, 0, 1, 1, n, 1, n, opts.data(), 0.8, 0.9, 2.0, 0.0, textColors.data(),
             texts.data(), colors.data(), boxPatterns.data(), boxScales.data(), boxWidths.data(),
             colors.data(), styles.data(), widths.data(), colors.data(), symbolScales.data(),
             symbolNumbers.data(), symbols.data());
  }
  plslabelfunc(nullptr, nullptr);
  plend();
  return inlineable(readAndRemove(path), width, height);
}

}  // namespace stagewise::report
