#pragma once
// What non-zero ranks tell rank 0 over the rendezvous store: batches of metric points, spans and
// events, and at the end the summaries of their stages; with both, the pass times their stages
// posted for the bubble plan, so rank 0 plans every stage. Compact JSON; torch-free.

#include <string>
#include <vector>

#include "metrics/bubble_meter.h"
#include "stagewise/engine/metrics.h"

namespace stagewise::engine::dist {

struct FeedBatch {
  std::vector<MetricPoint> points;
  std::vector<StepSpan> spans;
  std::vector<RunEvent> events;
  /// The rank's bubble board as it stood (with metric batches): rank 0 posts them into its own.
  std::vector<BubbleBoard::Entry> bubbleTimes;
};
std::string encodeFeed(const FeedBatch& batch);
FeedBatch decodeFeed(const std::string& text);  ///< throws std::runtime_error when malformed

/// A rank's part of the run, published when its stages are done.
struct RankReport {
  RunStatus status = RunStatus::Completed;
  std::string error;
  int failedStage = -1;
  int64_t feedCount = 0;             ///< feed batches published; rank 0 reads them all first
  std::vector<StageSummary> stages;  ///< the stages this rank ran
  /// Their final pass times (pipeline) or step seconds (local), as the rank's board planned
  /// with them: StageSummary has no place for them, and rank 0 plans the whole pipeline.
  std::vector<BubbleBoard::Entry> bubbleTimes;
  bool ownsLast = false;  ///< then the throughput below is the run's
  int64_t lastStageSteps = 0;
  int64_t samplesAfterWarmup = 0;
  double warmupEndS = -1, lastStepEndS = -1;
};
std::string encodeReport(const RankReport& report);
RankReport decodeReport(const std::string& text);

/// A stable 64-bit digest (FNV-1a) of a text, for checking that every rank runs the same spec.
std::string digest(const std::string& text);

}  // namespace stagewise::engine::dist
