#pragma once
// The suite's runs read back from the store, and every finding judged from them. Torch-free
// and Qt-free (the engine's torch-free core gives the FLOPs per stage).

#include <cstdint>
#include <string>
#include <vector>

#include "stagewise/report/findings.h"
#include "stagewise/report/suite.h"
#include "stagewise/study/points.h"

namespace stagewise::storage {
class RunReader;
}

namespace stagewise::report {

/// What the findings need of a stored run: its spec's settings, its summary's numbers, each
/// stage's bytes and memory, its evaluations, probes and the head's training accuracy. Throws
/// std::runtime_error for an unknown run.
RunData collectRun(storage::RunReader& reader, int64_t runId, study::ShapeCache& shapes);

/// Judges every finding from the completed runs linked to the suite's studies (`studyIds[i]` is
/// the store's id of `suite.studies[i]`), in kFindingIds order. `cores`: this machine's.
std::vector<Finding> judgeSuite(storage::RunReader& reader, const Suite& suite,
                                const std::vector<int64_t>& studyIds, int cores,
                                study::ShapeCache& shapes);

}  // namespace stagewise::report
