#pragma once
// What the engine's steering events say, for the workbench: an applied re-partition (its step,
// the cuts before and after, the pause, which layers each stage index now holds), an applied
// stage setting, a stage paused or resumed, or a refused request with its reason. The engine's
// messages are the source (docs/architecture.md, "Live re-partition"); engine::changeFromEvent
// reads the change itself, this adds what the panels show around it.

#include <QString>
#include <optional>
#include <utility>
#include <vector>

#include "stagewise/engine/metrics.h"
#include "stagewise/engine/run.h"

namespace stagewise::ui {

struct SteerEvent {
  enum class Kind { Repartition, Setting, StagePause, StageResume, Refused };
  Kind kind = Kind::Setting;
  /// Repartition, Setting: the applied change (step, key, value); StagePause/Resume: only the
  /// stage's step (-1 in runs stored before the engine said it).
  engine::RunChange change;
  int stage = -1;            ///< Setting, StagePause/Resume: the stage index
  QString before;            ///< Repartition: the cuts before, "[1,3]"
  /// Repartition: each stage index's first and last layer from `change.step` on.
  std::vector<std::pair<int, int>> layout;
  QString reason;  ///< Refused: why
  /// The short text a plot's event line carries: "cuts [1,3] → [2]", "S2 delay_ms = 20".
  QString label() const;
};

/// The steering event `event` reports, or nothing when it is no such event.
std::optional<SteerEvent> steerEventFrom(const engine::RunEvent& event);

/// "[1,3]" for cuts {1, 3}.
QString cutsLabel(const std::vector<int>& cuts);

}  // namespace stagewise::ui
