#pragma once
// A stored run's change history, read back from its events: the changes applied while it trained
// (what Runs → Run again replays, as `stagewise-cli train --replay`), one line per change with
// its step and pause, and the partition history (which layers each stage index held from which
// step).

#include <QStringList>
#include <cstdint>
#include <utility>
#include <vector>

#include "stagewise/engine/run.h"
#include "stagewise/engine/spec.h"
#include "stagewise/storage/records.h"

namespace stagewise::ui {

struct RunHistory {
  /// The run's settings that differ from the format's defaults, "train.lr = 0.0003" (what a
  /// selected run shows in Runs, issue 36 §3).
  QStringList settings;
  std::vector<engine::RunChange> changes;  ///< applied, in the order they took effect
  QStringList lines;                       ///< "step 40: cuts [1,2] → [2], paused 0.012 s"
  QStringList partitions;                  ///< "from step 40: S1 layers 1–2 · S2 layers 3–4"
  /// How many stages the run had from which step: {0, the spec's count}, then one entry per
  /// applied re-partition (its step, its stage count).
  std::vector<std::pair<int64_t, int>> stageCounts;
};

/// The keys of `spec` whose values differ from a default spec's, dotted, with their JSON values
/// (lists whole), in the format's order.
/// A pipeline run at the default 0 micro-batches gets "pipeline.micro_batches = 0 (M=K)".
QStringList settingsDifferingFromDefaults(const engine::ExperimentSpec& spec);

/// The history in a run's stored events; `spec` gives the partition it started with.
RunHistory runHistory(const engine::ExperimentSpec& spec,
                      const std::vector<storage::EventRecord>& events);

}  // namespace stagewise::ui
