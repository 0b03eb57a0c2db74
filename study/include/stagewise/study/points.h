#pragma once
// A study's points made into runs: each point's resolved spec, checked as `train` checks a spec,
// the name and checkpoint folder its run gets, and the study's store record. The CLI's
// `study run` and the workbench's study queue both go through here, so a point is the same run
// whichever starts it. Torch-free and Qt-free.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "stagewise/engine/model_plan.h"
#include "stagewise/engine/spec.h"
#include "stagewise/storage/records.h"
#include "stagewise/study/study.h"

namespace stagewise::study {

/// One point's spec, ready to run, and its identity (points of equal identity share a run).
struct ResolvedPoint {
  engine::ExperimentSpec spec;
  std::string identity;
};

/// Input shapes probed so far, by dataset (kind + path): a grid probes each dataset once.
using ShapeCache = std::map<std::string, engine::InputShape>;

/// The base spec (JSON) with the point's keys applied, parsed and validated like `--set`
/// (spec, devices, the cut on the model). Throws StudyError naming the point by its number and
/// values and the field to fix: "grid point 3 (partition.cuts=[9], seed 1): partition.cuts[0]:
/// ...".
ResolvedPoint resolvePoint(const std::string& baseSpecJson, const StudyPlan& plan,
                           const GridPoint& point, const std::vector<std::string>& devices,
                           ShapeCache& shapes);

/// The point's values as one JSON list text, as the store links it.
std::string pointValuesJson(const GridPoint& point);

/// Gives a fresh run of a point its name ("STUDY · KEY=VALUE, seed N") and, when the spec has a
/// checkpoint folder, a folder of its own below it (runs of one study never share one).
void nameStudyRun(engine::ExperimentSpec& spec, const std::string& studyName, int64_t studyId,
                  const StudyPlan& plan, const GridPoint& point);

/// The store record of a new study of `points` runs (a search counts its own points and keeps
/// its search as JSON).
storage::NewStudy newStudyRecord(const std::string& name, const std::string& baseSpecJson,
                                 const StudyPlan& plan, std::optional<double> target,
                                 size_t points);

/// The plan a study object describes (seeds, sample and its seed defaulted).
StudyPlan planOf(const StudyObject& study);

}  // namespace stagewise::study
