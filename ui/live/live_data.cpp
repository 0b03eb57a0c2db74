#include "live/live_data.h"

#include <algorithm>
#include <cmath>

#include "common/smoothing.h"

namespace stagewise::ui {

LiveData::LiveData(QObject* parent) : QObject(parent) {}

void LiveData::clear() {
  m_series.clear();
  m_phases.clear();
  m_spans.clear();
  m_droppedUntil.clear();
  m_markers.clear();
  ++m_revision;
  Q_EMIT cleared();
}

void LiveData::beginPhase(int phase, const engine::RunInfo& info) {
  if (phase < 0) return;
  if (size_t(phase) >= m_phases.size()) m_phases.resize(size_t(phase) + 1);
  m_phases[size_t(phase)] = info;
  ++m_revision;
  Q_EMIT phaseBegan(phase);
}

void LiveData::addPoints(int phase, const std::vector<engine::MetricPoint>& points) {
  if (points.empty()) return;
  // Consecutive points usually belong to the same series: remember the last lookup.
  const LiveKey* lastKey = nullptr;
  SeriesBuffer* last = nullptr;
  std::vector<LiveKey> added;
  for (const auto& p : points) {
    if (!lastKey || lastKey->stage != p.stage || lastKey->layer != p.layer ||
        lastKey->name != p.name) {
      LiveKey key{phase, p.name, p.stage, p.layer};
      auto it = m_series.find(key);
      if (it == m_series.end()) {
        auto buffer = std::make_unique<SeriesBuffer>();
        if (smoothable(p.name)) buffer->setSmoothing(m_smoothing);
        it = m_series.emplace(key, std::move(buffer)).first;
        added.push_back(key);
      }
      lastKey = &it->first;
      last = it->second.get();
    }
    last->append(p.step, p.timeS, p.value);
  }
  ++m_revision;
  for (const auto& key : added) Q_EMIT seriesAdded(key);
}

void LiveData::addSpans(int phase, const std::vector<engine::StepSpan>& spans) {
  for (const auto& s : spans) {
    auto& list = m_spans[{phase, s.stage}];
    list.push_back(s);
    if (list.size() > kMaxSpans) {
      double& dropped = m_droppedUntil[phase];
      dropped = std::max(dropped, list.front().endS);
      list.pop_front();
    }
  }
  if (!spans.empty()) ++m_revision;
}

void LiveData::setStages(int phase, const std::vector<engine::StageInfo>& stages) {
  if (phase < 0 || size_t(phase) >= m_phases.size()) return;
  m_phases[size_t(phase)].stages = stages;
  ++m_revision;
  Q_EMIT partitionChanged(phase);
}

void LiveData::addMarker(const LiveMarker& marker) {
  m_markers.push_back(marker);
  ++m_revision;
}

const SeriesBuffer* LiveData::series(const LiveKey& key) const {
  auto it = m_series.find(key);
  return it == m_series.end() ? nullptr : it->second.get();
}

double LiveData::latest(const LiveKey& key) const {
  const SeriesBuffer* s = series(key);
  return s && !s->empty() ? s->rawY(s->size() - 1) : std::nan("");
}

const engine::RunInfo* LiveData::phaseInfo(int phase) const {
  return phase >= 0 && size_t(phase) < m_phases.size() ? &m_phases[size_t(phase)] : nullptr;
}

const std::deque<engine::StepSpan>& LiveData::spans(int phase, int stage) const {
  static const std::deque<engine::StepSpan> kNone;
  auto it = m_spans.find({phase, stage});
  return it == m_spans.end() ? kNone : it->second;
}

int LiveData::spanStages(int phase) const {
  int stages = 0;
  for (auto it = m_spans.lower_bound({phase, 0}); it != m_spans.end() && it->first.first == phase;
       ++it)
    if (!it->second.empty()) stages = it->first.second + 1;
  return stages;
}

double LiveData::droppedUntil(int phase) const {
  auto it = m_droppedUntil.find(phase);
  return it == m_droppedUntil.end() ? 0.0 : it->second;
}

void LiveData::setSmoothing(double weight) {
  if (weight == m_smoothing) return;
  m_smoothing = weight;
  for (auto& [key, buffer] : m_series)
    if (smoothable(key.name)) buffer->setSmoothing(weight);
  ++m_revision;
}

}  // namespace stagewise::ui
