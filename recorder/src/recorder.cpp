#include "stagewise/recorder/recorder.h"

#include <cmath>
#include <iterator>
#include <utility>

#include "stagewise/engine/spec.h"
#include "stagewise/storage/run_writer.h"

namespace stagewise::recorder {

namespace {

std::optional<double> measured(double v) {
  if (std::isnan(v)) return std::nullopt;
  return v;
}

storage::RunStatus statusOf(engine::RunStatus status) {
  switch (status) {
    case engine::RunStatus::Running:
      return storage::RunStatus::Interrupted;  // never final
    case engine::RunStatus::Completed:
      return storage::RunStatus::Completed;
    case engine::RunStatus::Stopped:
      return storage::RunStatus::Stopped;
    case engine::RunStatus::Failed:
      return storage::RunStatus::Failed;
    case engine::RunStatus::Interrupted:
      return storage::RunStatus::Interrupted;
  }
  return storage::RunStatus::Interrupted;
}

std::string modelKindOf(const std::string& specJson) {
  try {
    return engine::parseSpec(specJson).model.kind;
  } catch (const std::exception&) {
    return {};  // a spec the engine ran but this build cannot parse: keep the rest
  }
}

/// The store's name of a span kind (storage::SpanInput::kind).
const char* spanKindName(engine::SpanKind kind) {
  switch (kind) {
    case engine::SpanKind::Step:
      return "step";
    case engine::SpanKind::Forward:
      return "forward";
    case engine::SpanKind::Backward:
      return "backward";
    case engine::SpanKind::Weight:
      return "weight";
    case engine::SpanKind::Recompute:
      return "recompute";
    case engine::SpanKind::Wait:
      return "wait";
    case engine::SpanKind::Blocked:
      return "blocked";
    case engine::SpanKind::Aux:
      return "aux";
  }
  return "step";
}

/// Waits are not compute: they go to the timeline, not to step_seconds.
bool isCompute(engine::SpanKind kind) {
  return kind != engine::SpanKind::Wait && kind != engine::SpanKind::Blocked;
}

}  // namespace

Recorder::Recorder(storage::RunStore& store, RecorderOptions options)
    : m_store(store), m_options(std::move(options)) {}

Recorder::~Recorder() {
  if (m_listening) m_listening->removeNoticeHandler(m_handlerId);
}

void Recorder::listen(storage::RunWriter& writer) {
  if (m_listening) return;
  m_listening = &writer;
  m_handlerId = writer.addNoticeHandler([this](const storage::WriterNotice& notice) {
    if (notice.kind == storage::WriterNotice::Kind::Lost) fail(notice.message);
    if (m_options.onStoreNotice) m_options.onStoreNotice(notice);
  });
}

std::optional<int64_t> Recorder::runId() const {
  const int64_t id = m_runId.load();
  if (id == 0) return std::nullopt;
  return id;
}

std::string Recorder::error() const {
  std::lock_guard lock(m_errorMutex);
  return m_error;
}

void Recorder::fail(const std::string& what) {
  std::lock_guard lock(m_errorMutex);
  if (m_error.empty()) m_error = what;
}

void Recorder::onStart(const engine::RunInfo& info) {
  try {
    storage::RunWriter& writer = m_store.writer();
    listen(writer);
    if (m_options.resumeRunId) {
      writer.resumeRun(*m_options.resumeRunId);
      m_runId = *m_options.resumeRunId;
      if (m_options.onRecordCreated) m_options.onRecordCreated(*m_options.resumeRunId);
      return;
    }
    storage::NewRun run;
    run.name = info.name;
    run.mode = engine::toString(info.mode);
    run.specJson = info.specJson;
    run.modelKind = modelKindOf(info.specJson);
    run.totalSteps = info.totalSteps;
    run.batchSize = info.batchSize;
    run.blas = info.blas;
    run.torchVersion = info.torchVersion;
    run.tags = m_options.tags;
    run.notes = m_options.notes;
    m_startLayout.clear();
    for (const engine::StageInfo& s : info.stages) {
      m_startLayout.emplace_back(s.firstLayer, s.lastLayer);
      storage::StageRecord r;
      r.index = s.index;
      r.firstLayer = s.firstLayer;
      r.lastLayer = s.lastLayer;
      r.device = s.device;
      r.auxHead = s.auxHead;
      r.threads = s.threads;
      r.params = s.params;
      r.auxParams = s.auxParams;
      run.stages.push_back(std::move(r));
    }
    for (const engine::LayerInfo& l : info.layers) {
      run.layers.push_back(
          {l.index, l.name, l.description, l.outShape, l.params, l.flops, l.activationBytes});
    }
    // Not waited for here: a store locked by another process delays the record (the writer
    // retries it), and meanwhile this callback must not hold up the run's other observers or
    // a stop. What arrives before the record exists is held and handed over once it does.
    m_pending = writer.createRunLater(run).share();
    resolve(std::chrono::milliseconds(0));
    // Which process ran each stage, for the trace's tracks (`runs trace`).
    std::vector<engine::MetricPoint> ranks;
    for (size_t k = 0; k < m_options.stageRanks.size(); ++k)
      ranks.push_back({"rank", static_cast<int>(k), -1, 0, 0.0, double(m_options.stageRanks[k])});
    onMetrics(ranks);
  } catch (const std::exception& e) {
    fail(std::string("recording not started: ") + e.what());
  }
}

bool Recorder::resolve(std::chrono::milliseconds wait) {
  if (m_runId.load() != 0) return true;
  if (!m_pending) return false;
  if (m_pending->wait_for(wait) != std::future_status::ready) return false;
  try {
    const int64_t id = m_pending->get();
    m_pending.reset();
    m_runId = id;
    if (m_options.onRecordCreated) m_options.onRecordCreated(id);
    if (!m_heldPoints.empty()) m_store.writer().appendPoints(id, std::move(m_heldPoints));
    m_heldPoints = {};
    if (!m_heldSpans.empty()) m_store.writer().appendSpans(id, std::move(m_heldSpans));
    m_heldSpans = {};
    for (const auto& [e, step] : std::exchange(m_heldEvents, {})) record(id, e, step);
    if (m_heldLost > 0)
      fail("recording: " + std::to_string(m_heldLost) +
           " points were dropped while the run's record waited for the store");
    return true;
  } catch (const std::exception& e) {
    m_pending.reset();
    m_heldPoints = {};
    m_heldSpans = {};
    m_heldEvents.clear();
    fail(std::string("recording not started: ") + e.what());
    return false;
  }
}

void Recorder::hold(std::vector<storage::PointInput>&& points) {
  if (m_heldPoints.size() + points.size() > kMaxHeldPoints) {
    m_heldLost += static_cast<int64_t>(points.size());
    return;
  }
  m_heldPoints.insert(m_heldPoints.end(), std::make_move_iterator(points.begin()),
                      std::make_move_iterator(points.end()));
}

void Recorder::onMetrics(const std::vector<engine::MetricPoint>& points) {
  if (points.empty()) return;
  const bool ready = resolve(std::chrono::milliseconds(0));
  if (!ready && !m_pending) return;  // not recorded (the error says why)
  std::vector<storage::PointInput> out;
  out.reserve(points.size());
  for (const engine::MetricPoint& p : points) {
    out.push_back({p.name, p.stage, p.layer, p.step, p.timeS, p.value});
    if (p.stage < 0) m_lastStep = std::max(m_lastStep, p.step);
  }
  if (ready)
    m_store.writer().appendPoints(m_runId.load(), std::move(out));
  else
    hold(std::move(out));
}

void Recorder::onSpans(const std::vector<engine::StepSpan>& spans) {
  if (spans.empty() || !m_options.recordSpans) return;
  const bool ready = resolve(std::chrono::milliseconds(0));
  if (!ready && !m_pending) return;
  std::vector<storage::PointInput> out;
  std::vector<storage::SpanInput> timeline;
  out.reserve(spans.size());
  timeline.reserve(spans.size());
  for (const engine::StepSpan& s : spans) {
    if (isCompute(s.kind))
      out.push_back({"step_seconds", s.stage, -1, s.step, s.endS, s.endS - s.startS});
    timeline.push_back({s.stage, s.step, s.startS, s.endS, spanKindName(s.kind), s.micro});
  }
  if (ready) {
    m_store.writer().appendPoints(m_runId.load(), std::move(out));
    m_store.writer().appendSpans(m_runId.load(), std::move(timeline));
  } else {
    hold(std::move(out));
    if (m_heldSpans.size() + timeline.size() > kMaxHeldPoints) {
      m_heldLost += static_cast<int64_t>(timeline.size());
    } else {
      m_heldSpans.insert(m_heldSpans.end(), std::make_move_iterator(timeline.begin()),
                         std::make_move_iterator(timeline.end()));
    }
  }
}

void Recorder::onEvent(const engine::RunEvent& event) {
  if (resolve(std::chrono::milliseconds(0))) {
    record(m_runId.load(), event, m_lastStep);
  } else if (m_pending) {
    m_heldEvents.emplace_back(event, m_lastStep);  // a checkpoint's step is the step it was at
  }
}

void Recorder::record(int64_t id, const engine::RunEvent& event, int64_t lastStep) {
  storage::RunWriter& writer = m_store.writer();
  writer.appendEvent(id, {engine::toString(event.kind), event.timeS, event.stage, event.message});
  // The engine names the checkpoint file in the event's message.
  if (event.kind == engine::EventKind::Checkpoint && !event.message.empty()) {
    writer.addCheckpoint(id, event.message, lastStep);
  }
}

void Recorder::onFinish(const engine::RunSummary& summary) {
  // A record still being created (the store locked since the start): its end waits for it, as
  // long as the writer keeps retrying (WriterOptions::createRetry).
  if (m_pending) resolve(std::chrono::hours(1));
  const int64_t id = m_runId.load();
  if (id == 0) return;
  storage::RunFinish f;
  f.status = statusOf(summary.status);
  f.summaryJson = engine::summaryToJson(summary);
  f.steps = summary.steps;
  f.testAccuracy = measured(summary.testAccuracy);
  f.testLoss = measured(summary.testLoss);
  f.samplesPerSec = measured(summary.samplesPerSec);
  f.wallSeconds = measured(summary.wallSeconds);
  f.cpuUtilization = measured(summary.cpuUtilization);
  f.pipelineEfficiency = measured(summary.pipelineEfficiency);
  f.error = summary.error;
  if (summary.failedStage >= 0) f.failedStage = summary.failedStage;
  // A live re-partition: the stage rows become the end's partition, whole.
  std::vector<std::pair<int, int>> endLayout;
  for (const engine::StageSummary& s : summary.stages)
    endLayout.emplace_back(s.firstLayer, s.lastLayer);
  f.replaceStages = !summary.stages.empty() && endLayout != m_startLayout;
  for (const engine::StageSummary& s : summary.stages) {
    storage::StageRecord r;
    r.index = s.index;
    if (f.replaceStages) {
      r.firstLayer = s.firstLayer, r.lastLayer = s.lastLayer;
      r.device = s.device, r.auxHead = s.auxHead, r.threads = s.threads;
      r.params = s.params, r.auxParams = s.auxParams;
    }
    r.steps = s.steps;
    r.finalLoss = measured(s.finalLoss);
    r.finalAccuracy = measured(s.finalAccuracy);
    r.computeFraction = measured(s.computeFraction);
    r.gradCosine = measured(s.gradCosine);
    f.stages.push_back(std::move(r));
  }
  try {
    storage::RunWriter& writer = m_store.writer();
    writer.finishRun(id, std::move(f));
    writer.flush();
  } catch (const std::exception& e) {
    // The message says whether data was lost or is still held and retried until the store
    // closes (a full disk or a lock held by another process).
    fail(std::string("recording the end of run ") + std::to_string(id) + ": " + e.what());
  }
}

}  // namespace stagewise::recorder
