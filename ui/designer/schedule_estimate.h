#pragma once
// The Design estimate's pipeline schedules: each schedule's planned bubble and peak activations
// for the current cut (docs/metrics.md, "Bubble: planned against measured"). No Widgets.

#include <QString>

#include "stagewise/engine/model_plan.h"
#include "stagewise/engine/partition.h"
#include "stagewise/engine/spec.h"

namespace stagewise::ui {

/// One line per schedule (gpipe, 1f1b, interleaved with 2 chunks, zb-h1): its planned bubble and
/// the largest stage's peak activations, the spec's own schedule marked; planned from
/// `measured`'s forward and backward times where given, else from the stages' FLOPs.
QString scheduleEstimateText(const engine::ExperimentSpec& spec, const engine::ModelPlan& plan,
                             const engine::PartitionPlan& partition,
                             const engine::MethodProfile* measured);

}  // namespace stagewise::ui
