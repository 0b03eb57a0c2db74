#include "progress_line.h"

#include <cmath>
#include <cstdio>
#include <ostream>

namespace stagewise::cli {

std::string formatDuration(double s) {
  if (s < 0 || !std::isfinite(s)) return "--:--";
  const long total = std::lround(s);
  char buf[32];
  if (total >= 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", total / 3600, (total / 60) % 60, total % 60);
  else
    std::snprintf(buf, sizeof buf, "%02ld:%02ld", total / 60, total % 60);
  return buf;
}

ProgressPrinter::ProgressPrinter(std::ostream& out, bool terminal, bool quiet)
    : m_out(out), m_terminal(terminal), m_quiet(quiet) {}

void ProgressPrinter::onEvent(const engine::RunEvent& e) {
  using engine::EventKind;
  if (m_quiet && e.kind != EventKind::Failed) return;
  // The dataset's loading notes (an image folder's decoding progress with its ETA, the cache)
  // come before the run starts; the progress is redrawn in place on a terminal.
  const bool loading = e.kind == EventKind::Info && e.message.rfind("dataset: ", 0) == 0;
  if (e.kind != EventKind::Failed && e.kind != EventKind::Warning && e.kind != EventKind::Started &&
      e.kind != EventKind::StopRequested && !loading)
    return;
  std::lock_guard lock(m_mutex);
  if (loading && m_terminal && e.message.rfind("dataset: decoding images ", 0) == 0) {
    m_out << "\r\033[K" << e.message << std::flush;
    m_lineOpen = true;
    return;
  }
  if (m_lineOpen) m_out << "\n", m_lineOpen = false;
  const char* tag = e.kind == EventKind::Failed    ? "failed"
                    : e.kind == EventKind::Warning ? "warning"
                                                   : "info";
  m_out << "[" << tag << "] " << e.message << std::endl;
}

void ProgressPrinter::onMetrics(const std::vector<engine::MetricPoint>& points) {
  std::lock_guard lock(m_mutex);
  int lastStage = 0;
  for (const auto& p : points) lastStage = std::max(lastStage, p.stage);
  for (const auto& p : points) {
    if (p.name == engine::series::kLoss && p.stage == lastStage) m_lastLoss = p.value;
    if (p.name == engine::series::kTestAccuracy) m_testAccuracy = p.value;
  }
}

void ProgressPrinter::tick(const engine::Progress& p) {
  if (m_quiet || p.totalSteps <= 0) return;
  std::lock_guard lock(m_mutex);
  const double frac = static_cast<double>(p.step) / static_cast<double>(p.totalSteps);
  char line[256];
  std::snprintf(line, sizeof line,
                "step %lld/%lld %5.1f%% | %7.0f samples/s | loss %.4f%s | %s elapsed, ETA %s",
                static_cast<long long>(p.step), static_cast<long long>(p.totalSteps), 100 * frac,
                p.samplesPerSec, m_lastLoss,
                m_testAccuracy >= 0
                    ? (" | test acc " + std::to_string(m_testAccuracy).substr(0, 6)).c_str()
                    : "",
                formatDuration(p.elapsedS).c_str(), formatDuration(p.etaS).c_str());
  const std::string context = m_context ? m_context(p) : std::string();
  if (m_terminal) {
    m_out << "\r\033[K" << context << line << std::flush;
    m_lineOpen = true;
  } else {
    const int decile = static_cast<int>(frac * 10);
    if (decile != m_lastDecile) {
      m_lastDecile = decile;
      m_out << context << line << std::endl;
    }
  }
}

void ProgressPrinter::done() {
  std::lock_guard lock(m_mutex);
  if (m_lineOpen) m_out << "\n", m_lineOpen = false;
}

}  // namespace stagewise::cli
