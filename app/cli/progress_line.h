#pragma once
// Terminal feedback for a run: a progress line with ETA (redrawn in place on a terminal, every
// 10% otherwise) and events as they happen.

#include <functional>
#include <iosfwd>
#include <mutex>
#include <string>

#include "stagewise/engine/metrics.h"
#include "stagewise/engine/run.h"

namespace stagewise::cli {

class ProgressPrinter final : public engine::RunObserver {
 public:
  ProgressPrinter(std::ostream& out, bool terminal, bool quiet);
  void onEvent(const engine::RunEvent& event) override;
  void onMetrics(const std::vector<engine::MetricPoint>& points) override;
  /// Called from the main thread a few times per second.
  void tick(const engine::Progress& progress);
  void done();
  /// Text put before the line (a study's "run 3 of 12"), asked on every redraw.
  void setContext(std::function<std::string(const engine::Progress&)> context) {
    m_context = std::move(context);
  }

 private:
  std::function<std::string(const engine::Progress&)> m_context;
  std::ostream& m_out;
  bool m_terminal;
  bool m_quiet;
  std::mutex m_mutex;
  double m_lastLoss = -1;
  double m_testAccuracy = -1;
  int m_lastDecile = -1;
  bool m_lineOpen = false;
};

std::string formatDuration(double seconds);

}  // namespace stagewise::cli
