// TorchRun's steering (torch_run.h; docs/architecture.md, "Live re-partition"): live and
// scheduled changes of stage settings, and re-partitions that regroup the layers between two
// segments.

#include <algorithm>
#include <cstdio>
#include <map>

#include "model/torch_model.h"
#include "optim/fused_adam.h"
#include "runtime/run_change.h"
#include "runtime/torch_run.h"

namespace stagewise::engine {

ChangeResult TorchRun::repartition(const std::vector<int>& cuts) {
  auto refuse = [&](const std::string& why) {
    m_reporter.event({EventKind::Warning, m_ctx.now(), -1,
                      "repartition to " + cutsText(cuts) + " refused: " + why});
    return ChangeResult{false, why};
  };
  std::lock_guard lock(m_changeMutex);  // the partition is not rebuilt meanwhile
  if (const std::string why = cannotRepartition(); !why.empty()) return refuse(why);
  if (const std::string why = ended(); !why.empty()) return refuse(why);
  const auto problems = validateCuts(cuts, static_cast<int>(m_plan.layers.size()));
  if (!problems.empty()) return refuse(problems.front().message);
  if (m_liveCuts)
    return refuse("another re-partition (to " + cutsText(*m_liveCuts) +
                  ") is under way; wait for its event");
  for (const auto& st : m_stages)
    if (st->held.load())
      return refuse(stageLabel(st->plan.index) + " is paused and could not drain; resume it first");
  if (cuts == m_cuts) return refuse("the run is already cut at " + cutsText(cuts));
  m_liveCuts = cuts;
  m_ctx.stopAt.store(0);  // the loader stops before the next step it would send
  return {true, {}};
}

ChangeResult TorchRun::changeStage(int stage, const std::string& key, double value) {
  auto refuse = [&](const std::string& why) {
    m_reporter.event(
        {EventKind::Warning, m_ctx.now(), stage,
         "change of stages." + std::to_string(stage) + "." + key + " refused: " + why});
    return ChangeResult{false, why};
  };
  if (m_distributed)
    return refuse("a run spread over several processes cannot change its stages yet");
  if (const std::string why = ended(); !why.empty()) return refuse(why);
  try {
    stageValueText(key, value);
  } catch (const std::invalid_argument& e) {
    return refuse(e.what());
  }
  std::lock_guard lock(m_changeMutex);
  if (stage < 0 || stage >= static_cast<int>(m_stages.size()))
    return refuse("the run has " + std::to_string(m_stages.size()) +
                  " stage(s) now: stages.0 to stages." + std::to_string(m_stages.size() - 1));
  StageRuntime& st = *m_stages[static_cast<size_t>(stage)];
  std::lock_guard stageLock(st.changeMutex);
  st.pendingChanges.push_back({-1, key, value});
  return {true, {}};
}

ChangeResult TorchRun::pauseStage(int stage, bool paused) {
  auto refuse = [&](const std::string& why) {
    m_reporter.event(
        {EventKind::Warning, m_ctx.now(), stage,
         std::string(paused ? "pausing " : "resuming ") + stageLabel(stage) + " refused: " + why});
    return ChangeResult{false, why};
  };
  if (m_distributed)
    return refuse("a run spread over several processes cannot pause one stage yet");
  if (const std::string why = ended(); !why.empty()) return refuse(why);
  std::lock_guard lock(m_changeMutex);
  if (stage < 0 || stage >= static_cast<int>(m_stages.size()))
    return refuse("the run has " + std::to_string(m_stages.size()) + " stage(s) now");
  if (paused && (m_liveCuts || m_ctx.drain.load()))
    return refuse("the pipeline is draining; pause the stage once it has gone on");
  StageRuntime& st = *m_stages[static_cast<size_t>(stage)];
  const int64_t done = m_ctx.produced[static_cast<size_t>(stage) + 1].load();
  if (paused && done >= m_ctx.totalSteps)
    return refuse(stageLabel(stage) + " has finished its " + std::to_string(done) + " steps");
  if (st.held.exchange(paused) != paused)
    m_reporter.event({EventKind::Info, m_ctx.now(), stage, stagePauseMessage(stage, paused, done)});
  return {true, {}};
}

std::string TorchRun::cannotRepartition() const {
  if (m_spec.mode != Mode::Local)
    return toString(m_spec.mode) +
           " mode cannot re-partition while it trains: only local mode's stages are "
           "independent enough to move layers between them";
  if (m_spec.local.overlap > 0)
    return "local.overlap is " + std::to_string(m_spec.local.overlap) +
           ": the gradients in flight between the stages would cross the new cuts; set it to "
           "0 to re-partition";
  if (m_distributed) return "a run spread over several processes cannot re-partition yet";
  for (const auto& st : m_partition.stages)
    if (st.settings.device != m_partition.stages.front().settings.device)
      return "the stages run on different devices; moving layers between devices is not "
             "supported yet";
  return {};
}

std::string TorchRun::ended() const {
  if (m_ctx.control.state() == RunState::Finished) return "the run has finished";
  if (m_ctx.control.stopRequested() || m_ctx.userStop.load() || m_ctx.drain.load())
    return "the run is stopping";
  return {};
}

void TorchRun::scheduleChanges(const std::vector<RunChange>& changes) {
  for (const RunChange& c : changes) {
    if (c.step < 0) throw SpecError("change", "a scheduled change needs a step of 0 or more");
    if (m_distributed)
      throw SpecError("change", "a run spread over several processes cannot take changes yet");
    int stage = 0;
    std::string setting;
    if (c.key == "partition.cuts") {
      if (const std::string why = cannotRepartition(); !why.empty())
        throw SpecError("change", "partition.cuts at step " + std::to_string(c.step) + ": " + why);
      std::vector<int> cuts;
      try {
        cuts = cutsFromText(c.value);
      } catch (const std::invalid_argument& e) {
        throw SpecError("change", e.what());
      }
      const auto problems = validateCuts(cuts, static_cast<int>(m_plan.layers.size()));
      if (!problems.empty())
        throw SpecError("change", "partition.cuts=" + c.value + " at step " +
                                      std::to_string(c.step) + ": " + problems.front().message);
    } else if (splitStageKey(c.key, stage, setting)) {
      try {
        stageValueText(setting, std::stod(c.value));
      } catch (const std::exception& e) {
        throw SpecError("change", c.key + "=" + c.value + ": " + e.what());
      }
    } else {
      throw SpecError("change", "unknown key '" + c.key +
                                    "'; use partition.cuts, stages.N.delay_ms, "
                                    "stages.N.lr_scale or stages.N.threads");
    }
    if (c.step < m_ctx.startStep) continue;
    m_scheduled.push_back(c);
  }
  std::stable_sort(m_scheduled.begin(), m_scheduled.end(),
                   [](const RunChange& a, const RunChange& b) { return a.step < b.step; });
}

void TorchRun::recordSetting(int k, int64_t step, const std::string& setting, double value) {
  const std::string key = "stages." + std::to_string(k) + "." + setting;
  const std::string text = stageValueText(setting, value);
  std::string message = changeEventMessage(step, key, text);
  if (setting == "threads")
    message += "; another thread count may change the last bits of later losses";
  m_reporter.event({EventKind::Info, m_ctx.now(), k, message});
  std::lock_guard lock(m_appliedMutex);
  m_applied.push_back({step, key, text, 0.0});
}

void TorchRun::beginSegment(int64_t step, double drainFromS) {
  std::lock_guard lock(m_changeMutex);
  // Setting changes the stages still hold: scheduled ones go back to the schedule (a stage
  // index names the partition at the change's step), live ones to the stage of that index.
  // They were handed out before any re-partition at their step, so they go back in front.
  std::vector<std::pair<int, StageRuntime::SettingChange>> live;
  std::vector<RunChange> reclaimed;
  for (const auto& st : m_stages) {
    std::lock_guard stageLock(st->changeMutex);
    for (const auto& c : st->pendingChanges)
      if (c.step < 0)
        live.emplace_back(st->plan.index, c);
      else
        reclaimed.push_back({c.step, "stages." + std::to_string(st->plan.index) + "." + c.setting,
                             stageValueText(c.setting, c.value), 0.0});
    st->pendingChanges.clear();
  }
  m_scheduled.insert(m_scheduled.begin(), reclaimed.begin(), reclaimed.end());
  std::stable_sort(m_scheduled.begin(), m_scheduled.end(),
                   [](const RunChange& a, const RunChange& b) { return a.step < b.step; });
  // Due now, in the order given (a replayed history applies in the order it was made).
  while (!m_scheduled.empty() && m_scheduled.front().step <= step) {
    const RunChange c = m_scheduled.front();
    m_scheduled.erase(m_scheduled.begin());
    int k = 0;
    std::string setting;
    if (c.key == "partition.cuts")
      moveCuts(cutsFromText(c.value), step, drainFromS);
    else if (splitStageKey(c.key, k, setting))
      applyNow(k, step, setting, std::stod(c.value));
  }
  if (m_liveCuts) moveCuts(*std::exchange(m_liveCuts, std::nullopt), step, drainFromS);
  for (auto& [k, c] : live) {
    if (k < static_cast<int>(m_stages.size())) {
      m_stages[static_cast<size_t>(k)]->pendingChanges.push_back(c);
    } else {
      m_reporter.event({EventKind::Warning, m_ctx.now(), k,
                        "change of stages." + std::to_string(k) + "." + c.setting +
                            " dropped: the run has " + std::to_string(m_stages.size()) +
                            " stage(s) since step " + std::to_string(step)});
    }
  }
  // This segment's setting changes: those before the next re-partition (one at its step, but
  // given before it, applies at the end of the step before, in the stages it names now).
  int64_t nextCut = INT64_MAX;
  for (const auto& c : m_scheduled)
    if (c.key == "partition.cuts") {
      nextCut = c.step;
      break;
    }
  for (auto it = m_scheduled.begin(); it != m_scheduled.end() && it->key != "partition.cuts";) {
    int k = 0;
    std::string setting;
    if (splitStageKey(it->key, k, setting)) {
      if (k < static_cast<int>(m_stages.size())) {
        std::lock_guard stageLock(m_stages[static_cast<size_t>(k)]->changeMutex);
        m_stages[static_cast<size_t>(k)]->pendingChanges.push_back(
            {it->step, setting, std::stod(it->value)});
      } else {
        m_reporter.event({EventKind::Warning, m_ctx.now(), k,
                          "change at step " + std::to_string(it->step) + ": " + it->key + "=" +
                              it->value + " refused: the run has " +
                              std::to_string(m_stages.size()) + " stage(s) then"});
      }
      it = m_scheduled.erase(it);
    } else {
      ++it;
    }
  }
  m_ctx.segmentStart = step;
  m_ctx.stoppedAt.store(-1);
  m_ctx.stopAt.store(nextCut);
}

void TorchRun::applyNow(int k, int64_t step, const std::string& setting, double value) {
  if (k >= static_cast<int>(m_stages.size())) {
    m_reporter.event({EventKind::Warning, m_ctx.now(), k,
                      "change at step " + std::to_string(step) + ": stages." + std::to_string(k) +
                          "." + setting + " refused: the run has " +
                          std::to_string(m_stages.size()) + " stage(s) then"});
    return;
  }
  StageRuntime& st = *m_stages[static_cast<size_t>(k)];
  if (setting == "delay_ms") st.plan.settings.delayMs = static_cast<int>(value);
  if (setting == "threads") st.plan.settings.threads = static_cast<int>(value);
  if (setting == "lr_scale") {
    st.plan.settings.lrScale = value;
    for (auto& g : st.optimizer->param_groups()) g.options().set_lr(m_spec.train.lr * value);
  }
  recordSetting(k, step, setting, value);
}

uint64_t TorchRun::auxSeedAtCut(int cut) const {
  return m_spec.train.seed * 0x9E3779B97F4A7C15ull ^
         (static_cast<uint64_t>(cut) + 1) * 0xD1B54A32D192ED03ull ^ 0xC075ull;
}

ExperimentSpec TorchRun::currentSpec() const {
  ExperimentSpec s = m_currentSpec;
  if (m_spec.mode != Mode::Local && m_spec.mode != Mode::Pipeline) return s;
  if (s.stages.size() < m_stages.size()) s.stages.resize(m_stages.size());
  for (size_t k = 0; k < m_stages.size(); ++k) {
    const StageSettings& st = m_stages[k]->plan.settings;
    auto& o = s.stages[k];
    if (o.threads || st.threads != s.stageSettings(static_cast<int>(k)).threads)
      o.threads = st.threads;
    if (o.lrScale || st.lrScale != s.stageSettings(static_cast<int>(k)).lrScale)
      o.lrScale = st.lrScale;
    if (o.delayMs || st.delayMs != s.stageSettings(static_cast<int>(k)).delayMs)
      o.delayMs = st.delayMs;
  }
  return s;
}

void TorchRun::moveCuts(const std::vector<int>& cuts, int64_t step, double drainFromS) {
  const double t0 = m_ctx.now();
  const std::vector<int> before = m_cuts;
  std::vector<int> fresh, kept;
  rebuild(cuts, step, nullptr, fresh, kept);
  const double t1 = m_ctx.now();
  const double pause = t1 - (drainFromS >= 0 ? drainFromS : t0);
  auto list = [](const std::vector<int>& v) {
    return v.empty() ? std::string("none") : cutsText(v);
  };
  char timing[128];
  std::snprintf(timing, sizeof timing, "; pause %.6f s (drain %.6f s, rebuild %.6f s)", pause,
                t0 - (drainFromS >= 0 ? drainFromS : t0), t1 - t0);
  std::vector<std::pair<int, int>> layers;
  for (const auto& st : m_stages) layers.emplace_back(st->plan.firstLayer, st->plan.lastLayer);
  const std::string layout = stageLayoutText(layers);
  m_reporter.event({EventKind::Info, t1, -1,
                    "repartition at step " + std::to_string(step) +
                        ": partition.cuts=" + cutsText(cuts) + " (was " + cutsText(before) + ")" +
                        timing + "; " + std::to_string(m_stages.size()) + " stage(s): " + layout +
                        "; new aux heads at cuts " + list(fresh) + ", kept at cuts " + list(kept)});
  std::lock_guard lock(m_appliedMutex);
  m_applied.push_back({step, "partition.cuts", cutsText(cuts), pause});
}

void TorchRun::renewSnapshots(int stages) {
  if (m_snapshots) {
    m_droppedBefore += m_snapshots->dropped();
    m_discardedBefore += m_snapshots->discarded();
    m_retiredSnapshots.push_back(std::move(m_snapshots));
  }
  const bool measured = m_ctx.snapshots != nullptr;
  m_snapshots = std::make_unique<SnapshotCoordinator>(stages, *m_budget);
  if (measured) m_ctx.snapshots = m_snapshots.get();
}

void TorchRun::rebuild(const std::vector<int>& cuts, int64_t step,
                       const ExperimentSpec* settingsFrom, std::vector<int>& freshHeads,
                       std::vector<int>& keptHeads) {
  FixedIntraOpThreads deterministicBuild(1);
  const int layers = static_cast<int>(m_plan.layers.size());
  std::vector<StageRuntime*> owner(static_cast<size_t>(layers), nullptr);
  for (size_t k = 0; k < m_stages.size(); ++k)
    for (int i = m_stages[k]->plan.firstLayer; i <= m_stages[k]->plan.lastLayer; ++i)
      owner[static_cast<size_t>(i)] = m_stages[k].get();
  // The analysis thread of the last segment may still measure on the old shadow set: the new
  // stages get a set of their own (its values are loaded from each snapshot before use).
  auto shadowLayers = buildLayers(m_spec.model, m_plan, m_spec.train.seed);
  auto shadowSet = std::make_shared<ShadowSet>();
  ExperimentSpec next = m_currentSpec;
  next.partition.cuts = cuts;
  next.partition.balance = "manual";
  next.partition.numStages = 0;
  next.stages.clear();
  for (size_t j = 0; j <= cuts.size(); ++j) {
    const int first = j == 0 ? 0 : cuts[j - 1];
    const StageSettings st = settingsFrom ? settingsFrom->stageSettings(static_cast<int>(j))
                                          : owner[static_cast<size_t>(first)]->plan.settings;
    StageOverride o;
    o.device = st.device, o.auxHead = st.auxHead, o.auxHidden = st.auxHidden;
    o.threads = st.threads, o.lrScale = st.lrScale, o.delayMs = st.delayMs;
    if (!st.cores.empty()) o.cores = st.cores;
    if (st.rank >= 0) o.rank = st.rank;
    next.stages.push_back(o);
  }
  const PartitionPlan partition = makePartition(next, m_plan);
  const std::vector<StagePlan> plans =
      m_method->stages(partition.stages, m_plan, m_info.hardwareCores);
  // Every optimizer's per-parameter state, by parameter (LibTorch keys it by the tensor).
  std::map<std::string, std::unique_ptr<torch::optim::OptimizerParamState>> states;
  for (auto& st : m_stages)
    for (auto& [key, state] : st->optimizer->state()) states[key] = std::move(state);
  std::vector<std::unique_ptr<StageRuntime>> stages;
  for (const StagePlan& p : plans) {
    auto s = std::make_unique<StageRuntime>();
    s->plan = p;
    s->isLast = p.isLast;
    s->device = torch::Device(p.settings.device);
    StageModules shadow;
    for (int i = p.firstLayer; i <= p.lastLayer; ++i) {
      StageRuntime* from = owner[static_cast<size_t>(i)];
      const size_t at = static_cast<size_t>(i - from->plan.firstLayer);
      s->layerInfo.push_back(m_plan.layers[static_cast<size_t>(i)]);
      s->modules.layers.push_back(from->modules.layers[at]);
      shadow.layers.push_back(shadowLayers[static_cast<size_t>(i)]);
    }
    if (m_method->auxHead(p)) {
      const int cut = p.lastLayer + 1;
      StageRuntime* had = owner[static_cast<size_t>(p.lastLayer)];
      if (had->plan.lastLayer == p.lastLayer && had->modules.aux) {
        s->modules.aux = had->modules.aux;
        s->plan.settings.auxHead = had->plan.settings.auxHead;
        s->plan.settings.auxHidden = had->plan.settings.auxHidden;
        s->plan.auxParams = had->plan.auxParams;
        s->plan.auxFlops = had->plan.auxFlops;
        keptHeads.push_back(cut);
      } else {
        const auto& outShape = m_plan.layers[static_cast<size_t>(p.lastLayer)].outShape;
        s->modules.aux = buildAuxHead(p.settings, outShape, m_data.shape.numClasses,
                                      auxSeedAtCut(cut), m_spec.model.init);
        s->modules.aux->to(s->device);
        freshHeads.push_back(cut);
      }
      shadow.aux =
          buildAuxHead(s->plan.settings, m_plan.layers[static_cast<size_t>(p.lastLayer)].outShape,
                       m_data.shape.numClasses, auxSeedAtCut(cut), m_spec.model.init);
    }
    auto params = s->modules.bodyParams();
    auto aux = s->modules.auxParams();
    params.insert(params.end(), aux.begin(), aux.end());
    s->optimizer = makeOptimizer(m_spec.train, p.settings.lrScale, params);
    for (const auto& param : params) {
      auto found = states.find(c10::guts::to_string(param.unsafeGetTensorImpl()));
      if (found != states.end()) s->optimizer->state()[found->first] = std::move(found->second);
    }
    const size_t k = static_cast<size_t>(p.index);
    if (k < m_stages.size()) {  // what was measured stays with the stage index
      s->meter = std::move(m_stages[k]->meter);
      s->bytesSent = m_stages[k]->bytesSent;
      s->gradBytesSent = m_stages[k]->gradBytesSent;
      s->backpropBytes = m_stages[k]->backpropBytes;
      s->peakActivationBytes = m_stages[k]->peakActivationBytes;
    }
    s->memorySlot = m_memory.first >= 0 && static_cast<int>(k) < m_memory.count
                        ? m_memory.first + static_cast<int>(k)
                        : -1;
    shadowSet->stages.push_back(std::move(shadow));
    shadowSet->isLast.push_back(p.isLast);
    shadowSet->firstLayer.push_back(p.firstLayer);
    stages.push_back(std::move(s));
  }
  const size_t k = stages.size();
  {
    std::lock_guard lock(m_ctx.channelMutex);
    m_ctx.channels.clear();
    for (size_t i = 0; i < k; ++i)
      m_ctx.channels.push_back(
          std::make_unique<QueueChannel>(static_cast<size_t>(m_spec.train.queueCapacity)));
  }
  m_ctx.bubbles = makeBubbleBoard(m_spec, static_cast<int>(k));  // a new cut plans anew
  m_ctx.produced = std::make_unique<std::atomic<int64_t>[]>(k + 1);
  for (size_t i = 0; i <= k; ++i) m_ctx.produced[i].store(step);
  renewSnapshots(static_cast<int>(k));
  m_stages = std::move(stages);
  m_shadow = std::move(shadowSet);
  m_partition = partition;
  m_cuts = cuts;
  m_currentSpec = next;
  m_rebuilt = true;
}

bool TorchRun::changed() const {
  std::lock_guard lock(m_appliedMutex);
  return !m_applied.empty() || m_rebuilt;
}

}  // namespace stagewise::engine
