#pragma once
// State shared by the threads of one LibTorch run.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "metrics/bubble_meter.h"
#include "metrics/reporter.h"
#include "metrics/stage_meter.h"
#include "runtime/channel.h"
#include "runtime/run_control.h"
#include "stagewise/engine/partition.h"

namespace stagewise::engine {

class SnapshotCoordinator;

/// The modules of one stage: its body layers and (except the last stage) its aux head.
struct StageModules {
  std::vector<torch::nn::Sequential> layers;
  torch::nn::Sequential aux{nullptr};
  std::vector<torch::Tensor> bodyParams() const;
  std::vector<torch::Tensor> auxParams() const;
  /// Parameters then buffers (batch-norm statistics), for snapshots and checkpoints.
  std::vector<torch::Tensor> bodyState() const;
  std::vector<torch::Tensor> auxState() const;
  /// Training or evaluation behaviour (batch norm) of every module.
  void setTraining(bool on);
};

/// A stage as it trains: plan, modules, optimizer, device and what it measured.
struct StageRuntime {
  StagePlan plan;
  std::vector<LayerInfo> layerInfo;  ///< the plan's layers firstLayer..lastLayer
  bool isLast = false;
  StageModules modules;
  torch::Device device{torch::kCPU};
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  // written by the stage thread; read after it joined
  StageMeter meter;
  BubbleMeter bubble;  ///< pipeline mode
  int64_t bytesSent = 0;
  int64_t gradBytesSent = 0;
  int64_t backpropBytes = 0;
  int64_t peakActivationBytes = 0;
  int memorySlot = -1;  ///< the counting allocator's slot of the stage (-1: not counted)
  /// The peak memory a checkpoint recorded: a resumed run's peak is the whole run's, never below
  /// it.
  int64_t peakMemoryFloor = 0;

  /// A setting to change before one of the stage's steps (live or scheduled; docs/architecture.md,
  /// "Live re-partition"). Taken by the stage thread between two of its steps.
  struct SettingChange {
    int64_t step = -1;    ///< the stage's step it applies before; -1: the next one
    std::string setting;  ///< delay_ms | lr_scale | threads
    double value = 0;
  };
  std::mutex changeMutex;
  std::vector<SettingChange> pendingChanges;  ///< under changeMutex
  /// Held before its next step (Run::pauseStage).
  std::atomic<bool> held{false};
};

/// K parties each add a value for a step and wait for the sum, taken in party order so that it
/// does not depend on who came first (pipeline mode: the whole model's gradient norm). Every
/// party arrives once per step, in step order. In one process: SumBarrier; across processes:
/// the rendezvous store (dist/c10d_topology.cpp), the same sum bit for bit.
class StepSum {
 public:
  virtual ~StepSum() = default;
  /// The sum of every party's value for `step`; empty once closed (the run stops).
  virtual std::optional<double> arrive(int party, int64_t step, double value) = 0;
  virtual void close() = 0;
};

class SumBarrier final : public StepSum {
 public:
  explicit SumBarrier(int parties) : m_values(static_cast<size_t>(parties)) {}
  std::optional<double> arrive(int party, int64_t /*step*/, double value) override {
    std::unique_lock lock(m_mutex);
    const int64_t round = m_round;
    m_values[static_cast<size_t>(party)] = value;
    if (++m_arrived == static_cast<int>(m_values.size())) {
      double sum = 0;
      for (double v : m_values) sum += v;
      m_sum = sum;
      m_arrived = 0;
      ++m_round;
      m_cv.notify_all();
      return sum;
    }
    m_cv.wait(lock, [&] { return m_round != round || m_closed; });
    if (m_round == round) return std::nullopt;
    return m_sum;
  }
  void close() override {
    std::lock_guard lock(m_mutex);
    m_closed = true;
    m_cv.notify_all();
  }

 private:
  std::mutex m_mutex;
  std::condition_variable m_cv;
  std::vector<double> m_values;
  int m_arrived = 0;
  int64_t m_round = 0;
  double m_sum = 0;
  bool m_closed = false;
};

struct RunContext {
  using Clock = std::chrono::steady_clock;

  explicit RunContext(const ExperimentSpec& s, Reporter& r) : spec(s), reporter(r) {}
  /// Training time since the start: time spent paused does not count (samples/s, the ETA, the
  /// time axis of every series and the summary's wall time all read this clock).
  double now() const {
    return clockOffsetS +
           std::chrono::duration<double>(Clock::now() - start - control.pausedFor()).count();
  }

  /// Records the first failure, stops the run and wakes every waiting thread.
  void fail(int stage, const std::string& message);
  /// Stops the run and closes every channel (dropping what is queued).
  void stopAll();

  const ExperimentSpec& spec;
  Reporter& reporter;
  RunControl control;
  Clock::time_point start = Clock::now();
  int64_t totalSteps = 0;
  int64_t startStep = 0;  ///< resumed runs start here
  /// A resumed run's clock continues from its checkpoint's training time (now() includes it).
  double clockOffsetS = 0;
  int batchSize = 0;
  /// Pipeline and local modes: every stage's pass times and the bubble they plan (the stage
  /// threads post, docs/metrics.md "Bubble: planned against measured"); null in backprop mode.
  std::unique_ptr<BubbleBoard> bubbles;

  /// Graceful stop: the loader stops feeding and the stages finish what is queued, so every
  /// stage ends at the same step (used when a stop must leave a checkpoint).
  std::atomic<bool> drain{false};
  std::atomic<bool> userStop{false};
  /// Called by the loader before step s when s is a checkpoint step, once every stage has
  /// finished s steps (the stage threads are all idle, waiting for input).
  std::function<void(int64_t)> checkpoint;
  int64_t checkpointInterval = 0;

  /// Live re-partition: the run trains in segments; each starts its loader and stage threads at
  /// `segmentStart`. The loader ends the segment before step `stopAt` (the next scheduled
  /// re-partition, or 0 once a live one is asked for) and notes it in `stoppedAt`.
  int64_t segmentStart = 0;
  std::atomic<int64_t> stopAt{INT64_MAX};
  std::atomic<int64_t> stoppedAt{-1};
  std::atomic<double> stoppedAtS{-1.0};  ///< run time when the loader stopped there
  /// A stage applied a setting change before its step `step` (reported and recorded by the run).
  std::function<void(int stage, int64_t step, const std::string& setting, double value)>
      onSettingChange;
  /// Held while the channels are replaced between segments, and by stopAll().
  std::mutex channelMutex;

  std::vector<std::unique_ptr<Channel>> channels;  ///< channels[k] feeds stage k
  /// Pipeline mode: gradChannels[k] carries the gradients of stage k's output back from stage k+1.
  std::vector<std::unique_ptr<Channel>> gradChannels;
  /// Pipeline mode with train.clip_norm: the stages' squared gradient norms, summed per step.
  std::unique_ptr<StepSum> normBarrier;
  std::unique_ptr<std::atomic<int64_t>[]> produced;  ///< [0]: loader, [k+1]: stage k finished
  SnapshotCoordinator* snapshots = nullptr;

  // samples/s counted at the last stage after a 20-step warm-up
  std::atomic<int64_t> lastStageSteps{0};
  std::atomic<int64_t> samplesAfterWarmup{0};
  std::atomic<double> warmupEndS{-1.0};
  std::atomic<double> lastStepEndS{-1.0};  ///< when the last stage finished its latest step
  /// A resumed run: samples/s's measurement before its checkpoint (the last stage's samples
  /// after the warm-up and the training time they took), counted with this run's own.
  int64_t priorMeasuredSamples = 0;
  double priorMeasuredS = 0;

  /// Called by stopAll(): aborts transfers to other processes that are not channels.
  std::function<void()> abortTransfers;
  /// Called once, after the first failure is recorded (distributed runs tell the other ranks).
  std::function<void(int stage, const std::string& message)> onFailure;

  mutable std::mutex failureMutex;
  std::string error;
  int failedStage = -1;
};

}  // namespace stagewise::engine
