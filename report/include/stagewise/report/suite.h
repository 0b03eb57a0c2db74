#pragma once
// The replication suite: the studies `stagewise-cli report` (and the workbench's Replication
// report) runs for the paper's findings, made from a base experiment, and the runs they need
// (a run that several studies need is made once and linked to each). Torch-free and Qt-free.

#include <cstdint>
#include <map>
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
  // issue 32 §5
  /// A learning finding's study at each method's own chosen rate (the search's): its runs are
  /// planned by planTunedJobs once the search has ended. Its twin with `tuned` false trains at
  /// the base's rate (the shared lr).
  bool tuned = false;
  // issue 37
  /// A second study of the same finding, for settings its grid cannot hold (a Cartesian grid
  /// cannot leave out a schedule where the stage count does not allow it): "schedules" (1f1b and
  /// zb-h1) and "interleaved" (2 chunks per worker). Empty: the finding's own study. The store
  /// names it "FINDING (PART)".
  std::string part;
};

/// The finding id of the suite's learning-rate search (a search study, before the learning
/// findings): mode varied over local and backprop, train.lr searched, chosen on validation.
inline const std::string kSearchStudy = "lr_search";

struct Suite {
  std::string baseSpecJson;  ///< the user's base after --set
  int baseStages = 0;        ///< the stage count the findings compare at
  int seeds = 0;             ///< seeds per group of the accuracy findings
  int rounds = 0;            ///< interleaved rounds of the throughput runs
  std::vector<SuiteStudy> studies;
  /// What the suite changed for this base, in words (shown in the report).
  std::vector<std::string> adaptations;
  // issue 32 §5
  double baseLr = 0;  ///< the base's train.lr: the shared rate of the shared-lr runs
  // issue 36: the dialog says what lengths each choice uses
  int64_t baseSteps = 0;   ///< the base's own length in steps
  int64_t learnSteps = 0;  ///< a learning run's steps (quick: scaled by the model's FLOPs)
  int64_t speedSteps = 0;  ///< a throughput run's steps
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
  // issue 32 §5
  /// A trial of the learning-rate search: the run evaluates at the rungs (runOptions) and may be
  /// pruned (ReportSession::watch).
  bool trial = false;
};

/// Every run of the suite known before it trains, resolved and checked (throws
/// study::StudyError naming the point): the fresh (throughput) runs first, round by round, then
/// the others in study order (the search's trials, in the search's order, before the learning
/// runs at the shared rate), each spec once however many studies need it. The tuned studies'
/// runs wait for the search (planTunedJobs).
std::vector<SuiteJob> planJobs(const Suite& suite, const std::vector<std::string>& devices,
                               study::ShapeCache& shapes);

/// The tuned studies' runs: each point's spec at its method's chosen rate (`lrOf`: mode ->
/// train.lr; a mode missing from it trains at the base's rate), each spec once.
std::vector<SuiteJob> planTunedJobs(const Suite& suite, const std::map<std::string, double>& lrOf,
                                    const std::vector<std::string>& devices,
                                    study::ShapeCache& shapes);

/// What makes two runs the same run for reuse: the canonical spec JSON without `name`,
/// `checkpoint` and `debug` (and what the mode does not read, as study::specIdentity).
std::string reuseIdentity(const std::string& canonicalSpecJson);

}  // namespace stagewise::report
