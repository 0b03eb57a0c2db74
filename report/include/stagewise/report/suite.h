#pragma once
// The replication suite: the studies `stagewise-cli report` (and the workbench's Replication
// report) runs for the paper's findings, made from a base experiment, and the runs they need
// (a run that several studies need is made once and linked to each). Torch-free and Qt-free.

#include <cstdint>
#include <string>
#include <vector>

#include "stagewise/engine/spec.h"
#include "stagewise/study/points.h"
#include "stagewise/study/study.h"

namespace stagewise::report {

struct SuiteOptions {
  bool quick = false;  ///< fewer steps and 2 seeds: about 10 minutes on 2 cores
  int cores = 1;       ///< this machine's cores (the throughput finding marks them)
};

/// One finding's study: the base with the finding's settings, its varied keys and seeds.
struct SuiteStudy {
  std::string finding;       ///< the finding's id (the study is named after it)
  std::string baseSpecJson;  ///< the suite's base with this finding's settings
  study::StudyPlan plan;
  /// Measured anew by every report, in interleaved rounds (seeds are rounds): throughput.
  bool fresh = false;
};

struct Suite {
  std::string baseSpecJson;  ///< the user's base after --set
  int baseStages = 0;        ///< the stage count the findings compare at
  int seeds = 0;             ///< seeds per group of the accuracy findings
  int rounds = 0;            ///< interleaved rounds of the throughput runs
  std::vector<SuiteStudy> studies;
  /// What the suite changed for this base, in words (shown in the report).
  std::vector<std::string> adaptations;
};

/// The suite for a base experiment (its JSON, --set applied). Throws study::StudyError with
/// what to fix when the base cannot make the suite (a dataset that cannot be read, say).
Suite planSuite(const std::string& baseSpecJson, const SuiteOptions& options,
                study::ShapeCache& shapes);

/// One run the suite needs, with every study point it makes.
struct SuiteJob {
  engine::ExperimentSpec spec;
  std::string identity;  ///< reuseIdentity of the spec
  bool fresh = false;    ///< never reused from the store
  int round = 0;         ///< fresh jobs: the round (1..rounds)
  struct Link {
    size_t study = 0;  ///< index into Suite::studies
    study::GridPoint point;
  };
  std::vector<Link> links;
  std::string label;  ///< "accuracy: mode=local, seed 2"
};

/// Every run of the suite, resolved and checked (throws study::StudyError naming the point):
/// the fresh (throughput) runs first, round by round, then the others in study order, each spec
/// once however many studies need it.
std::vector<SuiteJob> planJobs(const Suite& suite, const std::vector<std::string>& devices,
                               study::ShapeCache& shapes);

/// What makes two runs the same run for reuse: the canonical spec JSON without `name`,
/// `checkpoint` and `debug` (and what the mode does not read, as study::specIdentity).
std::string reuseIdentity(const std::string& canonicalSpecJson);

}  // namespace stagewise::report
