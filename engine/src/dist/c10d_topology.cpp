#include "dist/c10d_topology.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "runtime/method.h"

#include "stagewise/engine/engine.h"
#include "stagewise/engine/torchscript.h"

namespace stagewise::engine::dist {

/// The whole model's squared gradient norm in pipeline mode with clipping, summed across the
/// processes through the rendezvous store: each stage publishes its value for the step under
/// its own key (a hex float, exact), reads every stage's and adds them in stage order, as the
/// in-process SumBarrier does, so the clipped run equals the one-process run bit for bit. When a
/// stage has the sum of step t, every stage has read step t - 1's values, so it erases its own.
class StoreSum final : public StepSum {
 public:
  StoreSum(DistGroup& group, int parties) : m_group(group), m_parties(parties) {}
  std::optional<double> arrive(int party, int64_t step, double value) override {
    char text[64];
    std::snprintf(text, sizeof text, "%a", value);
    m_group.set(key(step, party), text);
    double sum = 0;
    for (int p = 0; p < m_parties; ++p) {
      std::optional<std::string> v;
      while (!(v = m_group.tryGet(key(step, p)))) {
        if (m_closed.load()) return std::nullopt;  // a stop or a failure (the monitor's too)
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
      sum += std::strtod(v->c_str(), nullptr);
    }
    if (step > 0) m_group.erase(key(step - 1, party));
    return sum;
  }
  void close() override { m_closed.store(true); }

 private:
  static std::string key(int64_t step, int party) {
    return "clip/" + std::to_string(step) + "/" + std::to_string(party);
  }
  DistGroup& m_group;
  const int m_parties;
  std::atomic<bool> m_closed{false};
};

/// Ranks other than 0: every report batch goes to rank 0 through the rendezvous store; a batch
/// of metric points takes the rank's bubble board along (its stages' pass times so far), so that
/// rank 0 plans every stage live.
class FeedForwarder final : public RunObserver {
 public:
  FeedForwarder(DistGroup& group, const BubbleBoard* board) : m_group(group), m_board(board) {}
  void onMetrics(const std::vector<MetricPoint>& points) override {
    FeedBatch b;
    b.points = points;
    if (m_board) b.bubbleTimes = m_board->entries();
    publish(b);
  }
  void onSpans(const std::vector<StepSpan>& spans) override {
    FeedBatch b;
    b.spans = spans;
    publish(b);
  }
  void onEvent(const RunEvent& event) override {
    FeedBatch b;
    b.events = {event};
    publish(b);
  }
  int64_t count() const { return m_seq.load(); }

 private:
  void publish(const FeedBatch& b) {
    if (m_lost) return;
    try {
      m_group.set(keys::feed(m_group.rank(), m_seq.load()), encodeFeed(b));
      ++m_seq;
    } catch (const std::exception&) {
      m_lost = true;  // rank 0 is gone; the monitor reports it
    }
  }
  DistGroup& m_group;
  const BubbleBoard* m_board;  ///< the run's (m_ctx.bubbles: set before, kept for the run)
  std::atomic<int64_t> m_seq{0};
  bool m_lost = false;
};

C10dTopology::C10dTopology(const RunOptions& options, const ModelPlan& plan, RunContext& ctx,
                           ObserverFanout& fanout,
                           std::vector<std::unique_ptr<StageRuntime>>& stages)
    : m_ctx(ctx), m_spec(ctx.spec), m_reporter(ctx.reporter), m_stages(stages) {
  const DistOptions& o = options.dist;
  if (!options.resumeFrom.empty())
    throw SpecError("", "a distributed run cannot resume from a checkpoint yet");
  if (m_spec.distributed.backend == "nccl")
    throw SpecError("distributed.backend", "this LibTorch has no NCCL (no CUDA); use gloo or auto");
  const int k = static_cast<int>(m_stages.size());
  m_stageRank = assignRanks(m_spec, k, o.worldSize);
  const double timeout = o.timeoutS > 0 ? o.timeoutS : m_spec.distributed.timeoutS;
  const std::string modelFile = m_spec.model.kind == "torchscript"  // every rank, the same file
                                    ? m_spec.model.path + " " + torchScriptSha256(m_spec.model.path)
                                    : std::string();
  m_group = std::make_shared<DistGroup>(o, timeout, digest(specToJson(m_spec)), modelFile);
  m_rank = o.rank;
  // Channel k feeds stage k; its sender is stage k-1 (the loader, on stage 0's rank, for k = 0).
  // Nothing assumes a rank's stages are adjacent: under interleaved rank r runs stages r, r + W,
  // ..., and every boundary crosses, the wrap from worker W-1 to worker 0 included. Each boundary
  // has its own tags, so transfers between the same two ranks in both directions never wait on
  // one another; the receiving queue holds what the in-process one does (activationCapacity).
  m_sendChannels.assign(static_cast<size_t>(k), nullptr);
  m_gradSendChannels.assign(static_cast<size_t>(k), nullptr);
  // The activations entering stage i: the output of the layer before it, at most a full batch.
  auto maxPayloadInto = [&](int i) {
    int64_t perSample = 1;
    if (i > 0)
      for (int64_t d :
           plan.layers[static_cast<size_t>(m_stages[static_cast<size_t>(i)]->plan.firstLayer - 1)]
               .outShape)
        perSample *= d;
    return perSample * m_spec.train.batchSize * static_cast<int64_t>(sizeof(float));
  };
  // Labels per batch: one per sample, or one per token of a text window.
  const int maxLabels =
      m_spec.train.batchSize * (plan.input.sequence ? static_cast<int>(plan.input.dims.at(0)) : 1);
  for (int i = 0; i < k; ++i) {
    const int up = m_stageRank[static_cast<size_t>(i == 0 ? 0 : i - 1)];
    const int down = m_stageRank[static_cast<size_t>(i)];
    auto& slot = m_ctx.channels[static_cast<size_t>(i)];
    const int64_t maxPayload = maxPayloadInto(i);
    if (up == m_rank && down != m_rank) {
      auto c =
          std::make_unique<C10dSendChannel>(*m_group, down, boundaryTag(i), maxLabels, maxPayload);
      m_sendChannels[static_cast<size_t>(i)] = c.get();
      slot = std::move(c);
    } else if (up != m_rank && down == m_rank) {
      slot = std::make_unique<C10dRecvChannel>(
          *m_group, up, boundaryTag(i), maxLabels, maxPayload,
          activationCapacity(m_spec, static_cast<size_t>(i)), [this, i](const std::string& e) {
            m_ctx.fail(i, "stage " + std::to_string(i) + ": " + e);
          });
    }
  }
  // Pipeline mode: the gradient of boundary i's activations goes back from stage i to stage
  // i - 1, the same kind of channel in the other direction (no labels).
  for (int i = 1; i < k && !m_ctx.gradChannels.empty(); ++i) {
    const int up = m_stageRank[static_cast<size_t>(i - 1)],
              down = m_stageRank[static_cast<size_t>(i)];
    if (up == down) continue;
    auto& slot = m_ctx.gradChannels[static_cast<size_t>(i - 1)];
    if (down == m_rank) {
      auto c =
          std::make_unique<C10dSendChannel>(*m_group, up, gradientTag(i), 0, maxPayloadInto(i));
      m_gradSendChannels[static_cast<size_t>(i - 1)] = c.get();
      slot = std::move(c);
    } else if (up == m_rank) {
      slot = std::make_unique<C10dRecvChannel>(
          *m_group, down, gradientTag(i), 0, maxPayloadInto(i), gradientCapacity(m_spec),
          [this, i](const std::string& e) {
            m_ctx.fail(i - 1, "stage " + std::to_string(i - 1) + ", gradients: " + e);
          });
    }
  }
  // Clipping by the whole model's norm (pipeline mode) sums every stage's part, over the store.
  if (m_ctx.normBarrier) m_ctx.normBarrier = std::make_unique<StoreSum>(*m_group, k);
  for (int i = 0; i < k; ++i) m_transferSlots.push_back(std::make_unique<InFlight>());
  m_ctx.abortTransfers = [this] {
    for (auto& s : m_transferSlots) s->abort();
  };
  m_ctx.onFailure = [this](int stage, const std::string& message) {
    if (!m_peerFault.load()) publishAbort(*m_group, stage, message);
  };
  if (m_rank != 0) {
    m_forwarder = std::make_unique<FeedForwarder>(*m_group, m_ctx.bubbles.get());
    fanout.add(m_forwarder.get());
    if (m_ctx.snapshots)
      m_ctx.snapshots->setForward(
          [this](int stage, int64_t step, const std::vector<torch::Tensor>& body,
                 const std::vector<torch::Tensor>& aux) { sendSnapshot(stage, step, body, aux); });
  }
}

/// At start: all ranks start their clocks together; then the monitor, and on rank 0 the threads
/// that take in the other ranks' reports and snapshots.
void C10dTopology::start() {
  m_group->add("go", 1);
  if (!m_group->waitCount("go", m_group->world(), m_group->timeoutS()))
    m_ctx.fail(-1,
               "not every rank started within " + std::to_string(int(m_group->timeoutS())) + " s");
  m_monitor = std::make_unique<Monitor>(
      *m_group,
      [this](int, int stage, const std::string& message) {
        m_peerFault = true;
        m_finalSendSlot.abort();
        m_finalRecvSlot.abort();
        m_ctx.fail(stage, message);
      },
      [this] {
        if (m_ctx.userStop.exchange(true)) return;
        m_reporter.event(
            {EventKind::StopRequested, m_ctx.now(), -1, "stop requested by another rank"});
        m_ctx.stopAll();
      });
  if (m_rank != 0) return;
  m_feedNext.assign(static_cast<size_t>(m_group->world()), 0);
  m_feedThread = std::thread([this] { feedLoop(); });
  if (m_ctx.snapshots)
    for (size_t k = 0; k < m_stages.size(); ++k)
      if (!owns(k))
        m_snapshotReceivers.emplace_back([this, k] { receiveSnapshots(static_cast<int>(k)); });
  std::string where;
  for (size_t k = 0; k < m_stages.size(); ++k)
    where += (k ? ", " : "") + std::string("stage ") + std::to_string(k) + " on rank " +
             std::to_string(m_stageRank[k]);
  m_reporter.event({EventKind::Info, 0.0, -1,
                    "distributed over " + std::to_string(m_group->world()) +
                        " processes (Gloo, rendezvous " + m_group->where() + "): " + where});
}

/// A stage on this rank sends its parameters at a probe/eval step to rank 0 (its stage thread).
void C10dTopology::sendSnapshot(int stage, int64_t step, const std::vector<torch::Tensor>& body,
                                const std::vector<torch::Tensor>& aux) {
  auto& slot = *m_transferSlots[static_cast<size_t>(stage)];
  const int tag = snapshotTag(stage);
  torch::NoGradGuard noGrad;
  if (!m_group->send(torch::full({1}, step, torch::kInt64), 0, tag, slot)) return;
  for (const auto* list : {&body, &aux})
    for (const auto& t : *list)
      if (!m_group->send(t.detach().to(torch::kCPU).contiguous(), 0, tag, slot)) return;
}

/// Rank 0: receives the snapshots of remote stage `stage` and offers them to the coordinator.
void C10dTopology::receiveSnapshots(int stage) {
  auto& slot = *m_transferSlots[static_cast<size_t>(stage)];
  const int src = m_stageRank[static_cast<size_t>(stage)], tag = snapshotTag(stage);
  const auto& modules = m_stages[static_cast<size_t>(stage)]->modules;
  auto like = [](const std::vector<torch::Tensor>& ts) {
    std::vector<torch::Tensor> out;
    for (const auto& t : ts)
      out.push_back(torch::empty(t.sizes(), t.options().device(torch::kCPU).requires_grad(false)));
    return out;
  };
  try {
    while (true) {
      auto header = torch::empty({1}, torch::kInt64);
      if (!m_group->recv(header, src, tag, slot)) return;
      auto body = like(modules.bodyState()), aux = like(modules.auxState());
      for (auto* list : {&body, &aux})
        for (auto& t : *list)
          if (!m_group->recv(t, src, tag, slot)) return;
      m_ctx.snapshots->offer(stage, header.item<int64_t>(), body, aux);
    }
  } catch (const std::exception& e) {
    m_ctx.fail(stage, "stage " + std::to_string(stage) + " (rank " + std::to_string(src) +
                          "), parameter snapshot: " + e.what());
  }
}

/// Rank 0: report batches of the other ranks land in this run's reporter.
void C10dTopology::feedLoop() {
  std::vector<int64_t>& next = m_feedNext;  // sized before this thread starts
  const int last = static_cast<int>(m_stages.size()) - 1;
  try {
    while (true) {
      bool any = false;
      for (int r = 1; r < m_group->world(); ++r) {
        while (auto text = m_group->tryGet(keys::feed(r, next[static_cast<size_t>(r)]))) {
          m_group->erase(keys::feed(r, next[static_cast<size_t>(r)]));
          {
            std::lock_guard lock(m_feedMutex);
            ++next[static_cast<size_t>(r)];
          }
          any = true;
          FeedBatch b = decodeFeed(*text);
          if (m_ctx.bubbles) {
            postRemote(*m_ctx.bubbles, b.bubbleTimes);
            addRemotePlanned(b.points);
          }
          for (const auto& p : b.points) {
            if (p.stage == last && p.name == series::kLoss) {
              int64_t cur = m_ctx.lastStageSteps.load();
              while (p.step + 1 > cur &&
                     !m_ctx.lastStageSteps.compare_exchange_weak(cur, p.step + 1)) {
              }
            }
            if (p.stage == -1 && p.name == series::kSamplesPerSec) m_remoteSps.store(p.value);
          }
          m_reporter.add(b.points);
          for (const auto& sp : b.spans) m_reporter.addSpan(sp);
          for (auto e : b.events) {
            // Start, stop, completion and failure of the run are rank 0's to report.
            if (e.kind == EventKind::Info || e.kind == EventKind::Warning ||
                e.kind == EventKind::Checkpoint) {
              e.message = "rank " + std::to_string(r) + ": " + e.message;
              m_reporter.event(e);
            }
          }
        }
      }
      m_feedProgress.notify_all();
      if (!any) {
        std::unique_lock lock(m_feedMutex);
        if (m_feedCv.wait_for(lock, std::chrono::milliseconds(30), [&] { return m_feedQuit; }))
          return;
      }
    }
  } catch (const std::exception& e) {
    m_reporter.event({EventKind::Warning, m_ctx.now(), -1,
                      std::string("reports from other ranks stopped: ") + e.what()});
  }
}

void C10dTopology::postRemote(BubbleBoard& board,
                              const std::vector<BubbleBoard::Entry>& entries) const {
  for (const auto& e : entries)
    if (e.stage >= 0 && static_cast<size_t>(e.stage) < m_stageRank.size() &&
        rankOf(static_cast<size_t>(e.stage)) != m_rank)
      board.post(e);
}

void C10dTopology::addRemotePlanned(std::vector<MetricPoint>& points) const {
  std::vector<double> planned;  // planned once per batch, if it has a remote stage's bubble
  const size_t n = points.size();
  for (size_t i = 0; i < n; ++i) {
    const MetricPoint p = points[i];  // a copy: the push below may move the vector
    if (p.name != kBubbleMeasuredSeries || p.stage < 0 ||
        static_cast<size_t>(p.stage) >= m_stageRank.size() || owns(static_cast<size_t>(p.stage)))
      continue;
    if (planned.empty()) planned = m_ctx.bubbles->planned();
    if (static_cast<size_t>(p.stage) < planned.size() &&
        !std::isnan(planned[static_cast<size_t>(p.stage)]))
      points.push_back({kBubblePlannedSeries, p.stage, -1, p.step, p.timeS,
                        planned[static_cast<size_t>(p.stage)]});
  }
}

void C10dTopology::postRemoteTimes(BubbleBoard& board) const {
  for (const auto& report : m_reports)
    if (report) postRemote(board, report->bubbleTimes);
}

/// Rank 0, once its own stages are done: waits for every other rank's report (bounded), reads
/// the rest of their report batches and the final weights of their stages.
void C10dTopology::collect() {
  m_reports.assign(static_cast<size_t>(m_group->world()), std::nullopt);
  const double timeout = m_group->timeoutS();
  for (int r = 1; r < m_group->world(); ++r) {
    // A rank that failed or went silent is reported by the monitor; do not wait long for it.
    auto t0 = RunContext::Clock::now();
    auto waited = [&] {
      return std::chrono::duration<double>(RunContext::Clock::now() - t0).count();
    };
    while (true) {
      try {
        if (auto text = m_group->tryGet(keys::summary(r))) {
          m_reports[static_cast<size_t>(r)] = decodeReport(*text);
          break;
        }
      } catch (const std::exception& e) {
        m_ctx.fail(-1, std::string("rank ") + std::to_string(r) + ": " + e.what());
        break;
      }
      const bool failed = m_ctx.control.stopRequested() && !m_ctx.userStop.load();
      if (waited() > (failed ? 3.0 : timeout)) {
        if (!failed)
          m_ctx.fail(-1, "rank " + std::to_string(r) +
                             " did not report the end of its stages within " +
                             std::to_string(int(timeout)) + " s");
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  // Every remote stage is done: the snapshot receivers have nothing more to wait for.
  for (size_t k = 0; k < m_stages.size(); ++k)
    if (!owns(k)) m_transferSlots[k]->abort();
  for (auto& t : m_snapshotReceivers) t.join();
  m_snapshotReceivers.clear();
  // The rest of their report batches.
  {
    std::unique_lock lock(m_feedMutex);
    m_feedProgress.wait_for(lock, std::chrono::seconds(5), [&] {
      for (int r = 1; r < m_group->world(); ++r)
        if (m_reports[static_cast<size_t>(r)] &&
            m_feedNext[static_cast<size_t>(r)] < m_reports[static_cast<size_t>(r)]->feedCount)
          return false;
      return true;
    });
    m_feedQuit = true;
  }
  m_feedCv.notify_all();
  if (m_feedThread.joinable()) m_feedThread.join();
  // Final weights, so that rank 0 evaluates and checksums the whole model.
  bool failed = false;
  {
    std::lock_guard lock(m_ctx.failureMutex);
    failed = !m_ctx.error.empty();
  }
  InFlight& finalSlot = m_finalRecvSlot;
  for (size_t k = 0; k < m_stages.size() && !failed; ++k) {
    const auto& report = m_reports[static_cast<size_t>(m_stageRank[k])];
    if (owns(k) || !report || report->status == RunStatus::Failed) continue;
    try {
      torch::NoGradGuard noGrad;
      auto& modules = m_stages[k]->modules;
      for (auto list : {modules.bodyState(), modules.auxState()})
        for (auto& t : list) {
          auto x = torch::empty(t.sizes(), t.options().device(torch::kCPU).requires_grad(false));
          if (!m_group->recv(x, m_stageRank[k], stateTag(static_cast<int>(k)), finalSlot))
            throw std::runtime_error("aborted");
          t.copy_(x);
        }
      m_stateReceived.insert(k);
    } catch (const std::exception& e) {
      m_ctx.fail(static_cast<int>(k), "rank " + std::to_string(m_stageRank[k]) +
                                          ": the final weights of stage " + std::to_string(k) +
                                          " did not arrive: " + e.what());
      failed = true;
    }
  }
}

/// Ranks other than 0, at the end: publish this rank's report, send the final weights, and
/// wait (bounded) until rank 0 has the whole run.
void C10dTopology::handOver(const RunSummary& s) {
  RankReport report;
  report.status = s.status;
  report.error = s.error;
  report.failedStage = s.failedStage;
  report.feedCount = m_forwarder ? m_forwarder->count() : 0;
  report.stages = s.stages;
  // The summary planned with the board (SummaryBuilder): it holds the stages' final times.
  if (m_ctx.bubbles) report.bubbleTimes = m_ctx.bubbles->entries();
  report.ownsLast = ownsLast();
  report.lastStageSteps = m_ctx.lastStageSteps.load();
  report.samplesAfterWarmup = m_ctx.samplesAfterWarmup.load();
  report.warmupEndS = m_ctx.warmupEndS.load();
  report.lastStepEndS = m_ctx.lastStepEndS.load();
  try {
    m_group->set(keys::summary(m_rank), encodeReport(report));
    if (s.status != RunStatus::Failed) {
      torch::NoGradGuard noGrad;
      InFlight& slot = m_finalSendSlot;
      for (size_t k = 0; k < m_stages.size(); ++k) {
        if (!owns(k)) continue;
        auto& modules = m_stages[k]->modules;
        for (auto list : {modules.bodyState(), modules.auxState()})
          for (auto& t : list)
            if (!m_group->send(t.detach().to(torch::kCPU).contiguous(), 0,
                               stateTag(static_cast<int>(k)), slot))
              throw std::runtime_error("aborted");
      }
    }
    if (m_monitor) m_monitor->markDone();
    const auto t0 = RunContext::Clock::now();
    while (!m_group->has(keys::kEnd) &&
           std::chrono::duration<double>(RunContext::Clock::now() - t0).count() <
               m_group->timeoutS())
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } catch (const std::exception& e) {
    m_reporter.event({EventKind::Warning, m_ctx.now(), -1,
                      std::string("could not hand the run to rank 0: ") + e.what()});
  }
}

C10dTopology::~C10dTopology() {
  shutdown();
}

void C10dTopology::requestStop() {
  try {
    m_group->set(keys::kStop, std::to_string(m_rank));
  } catch (const std::exception&) {  // the store is gone: the monitor reports it
  }
}

void C10dTopology::end() {
  try {
    m_group->set(keys::kEnd, "1");
  } catch (const std::exception&) {
  }
  if (m_monitor) m_monitor->markDone(), m_monitor->stop();
}

void C10dTopology::shutdown() {
  if (m_monitor) m_monitor->stop();
  for (auto& s : m_transferSlots) s->abort();
  for (auto& t : m_snapshotReceivers) t.join();
  m_snapshotReceivers.clear();
  {
    std::lock_guard lock(m_feedMutex);
    m_feedQuit = true;
  }
  m_feedCv.notify_all();
  if (m_feedThread.joinable()) m_feedThread.join();
}

const RankReport* C10dTopology::report(int rank) const {
  if (rank < 0 || rank >= static_cast<int>(m_reports.size()) ||
      !m_reports[static_cast<size_t>(rank)])
    return nullptr;
  return &*m_reports[static_cast<size_t>(rank)];
}

int64_t C10dTopology::wireBytes(size_t channel, bool gradients) const {
  const auto& list = gradients ? m_gradSendChannels : m_sendChannels;
  return channel < list.size() && list[channel] ? list[channel]->payloadBytes() : -1;
}

std::optional<StageSummary> C10dTopology::remoteStage(size_t stage) const {
  if (owns(stage)) return std::nullopt;
  const auto* r = report(rankOf(stage));
  if (!r) return std::nullopt;
  for (const auto& s : r->stages)
    if (s.index == static_cast<int>(stage)) return s;
  return std::nullopt;
}

std::optional<LastStageCounters> C10dTopology::remoteLastStage() const {
  if (ownsLast()) return std::nullopt;
  const auto* r = report(rankOf(m_stages.size() - 1));
  if (!r) return std::nullopt;
  return LastStageCounters{r->lastStageSteps, r->samplesAfterWarmup, r->warmupEndS,
                           r->lastStepEndS};
}

void C10dTopology::mergeOutcome(RunSummary& s, std::atomic<bool>& userStop) const {
  if (m_rank != 0) return;
  for (int r = 1; r < world(); ++r) {
    const auto* report = this->report(r);
    if (!report) continue;
    if (s.error.empty() && report->status == RunStatus::Failed)  // a failure another rank saw first
      s.error = report->error, s.failedStage = report->failedStage;
    if (report->status == RunStatus::Stopped) userStop.store(true);
  }
}

void C10dTopology::conclude(const RunSummary& summary) {
  if (m_rank != 0)
    handOver(summary);
  else
    end();
  shutdown();
}

}  // namespace stagewise::engine::dist
