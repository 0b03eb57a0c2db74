#pragma once
// Everything the Train workspace has received from the current session of runs: one
// SeriesBuffer per (phase, series, stage, layer), recent step spans per stage, and what each
// phase (local, then backprop in "both" mode) is. Filled in batches by the EngineController.

#include <QObject>
#include <QString>
#include <deque>
#include <map>
#include <memory>

#include "live/series_buffer.h"
#include "stagewise/engine/metrics.h"

namespace stagewise::ui {

struct LiveKey {
  int phase = 0;
  std::string name;
  int stage = -1;
  int layer = -1;
  friend bool operator<(const LiveKey& a, const LiveKey& b) {
    return std::tie(a.phase, a.name, a.stage, a.layer) <
           std::tie(b.phase, b.name, b.stage, b.layer);
  }
  friend bool operator==(const LiveKey&, const LiveKey&) = default;
};

/// A change applied to a run while it trained (a re-partition, a stage setting), marked in every
/// plot by a vertical line at its step.
struct LiveMarker {
  int phase = 0;
  int64_t step = 0;  ///< the change applied once `step` steps were done
  double timeS = 0;  ///< the run's time of the event (the time axis)
  QString label;     ///< "cuts [1,3] → [2]"
};

class LiveData : public QObject {
  Q_OBJECT
 public:
  explicit LiveData(QObject* parent = nullptr);

  void clear();
  void beginPhase(int phase, const engine::RunInfo& info);
  void addPoints(int phase, const std::vector<engine::MetricPoint>& points);
  void addSpans(int phase, const std::vector<engine::StepSpan>& spans);

  const SeriesBuffer* series(const LiveKey& key) const;
  const std::map<LiveKey, std::unique_ptr<SeriesBuffer>>& allSeries() const { return m_series; }
  /// The latest value of a series, or NaN.
  double latest(const LiveKey& key) const;

  int phaseCount() const { return int(m_phases.size()); }
  const engine::RunInfo* phaseInfo(int phase) const;
  int currentPhase() const { return int(m_phases.size()) - 1; }
  /// A live re-partition: the phase's stages from now on (the utilization and the strip follow).
  void setStages(int phase, const std::vector<engine::StageInfo>& stages);
  void addMarker(const LiveMarker& marker);
  const std::vector<LiveMarker>& markers() const { return m_markers; }
  /// Spans of one stage of a phase, oldest first (at most kMaxSpans).
  const std::deque<engine::StepSpan>& spans(int phase, int stage) const;
  /// One more than the highest stage of `phase` with spans kept (0: none): a stage joined away
  /// by a re-partition keeps its spans.
  int spanStages(int phase) const;
  /// The end of the newest span of `phase` dropped to keep kMaxSpans per stage (0: none
  /// dropped): a view that begins before it misses spans that were received.
  double droppedUntil(int phase) const;

  /// Smooths the noisy per-step series (common/smoothing.h), each on all its points; bytes,
  /// peaks, rates and measurements stay as received.
  void setSmoothing(double weight);
  double smoothing() const { return m_smoothing; }
  /// Changes whenever data arrives or smoothing changes: panels redraw only when it moved.
  uint64_t revision() const { return m_revision; }

  static constexpr size_t kMaxSpans = 4000;

 Q_SIGNALS:
  void seriesAdded(const stagewise::ui::LiveKey& key);
  void phaseBegan(int phase);
  /// setStages() gave a phase new stages.
  void partitionChanged(int phase);
  void cleared();

 private:
  std::map<LiveKey, std::unique_ptr<SeriesBuffer>> m_series;
  std::vector<engine::RunInfo> m_phases;
  std::vector<LiveMarker> m_markers;
  std::map<std::pair<int, int>, std::deque<engine::StepSpan>> m_spans;
  std::map<int, double> m_droppedUntil;  // per phase
  double m_smoothing = 0;
  uint64_t m_revision = 0;
};

}  // namespace stagewise::ui
