#pragma once
// A stored run's change history, read back from its events: the changes applied while it trained
// (what Runs → Run again replays, as `stagewise-cli train --replay`), one line per change with
// its step and pause, and the partition history (which layers each stage index held from which
// step).

#include <QStringList>
#include <vector>

#include "stagewise/engine/run.h"
#include "stagewise/engine/spec.h"
#include "stagewise/storage/records.h"

namespace stagewise::ui {

struct RunHistory {
  std::vector<engine::RunChange> changes;  ///< applied, in the order they took effect
  QStringList lines;                       ///< "step 40: cuts [1,2] → [2], paused 0.012 s"
  QStringList partitions;                  ///< "from step 40: S1 layers 1–2 · S2 layers 3–4"
};

/// The history in a run's stored events; `spec` gives the partition it started with.
RunHistory runHistory(const engine::ExperimentSpec& spec,
                      const std::vector<storage::EventRecord>& events);

}  // namespace stagewise::ui
