#pragma once
// The replication report as documents: report.json (for scripts) and report.html (one
// self-contained page: plots inline as SVG, no external reference). Torch-free and Qt-free.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "stagewise/report/findings.h"

namespace stagewise::report {

struct MachineInfo {
  int cores = 1;
  std::string cpu;  ///< the processor's model name
  std::string host;
  std::string blas;
  std::string torchVersion;
  std::vector<std::string> devices;
};

/// This machine's processor model name and host name (what MachineInfo needs beyond the
/// engine's info).
MachineInfo describeMachine(int cores, const std::string& blas, const std::string& torchVersion,
                            const std::vector<std::string>& devices);

struct ReportDoc {
  static constexpr int kVersion = 1;
  bool quick = false;
  std::string createdAt;  ///< ISO 8601, UTC
  double seconds = 0;     ///< how long the suite took
  MachineInfo machine;
  std::string baseSpecJson;
  std::vector<std::string> adaptations;
  std::vector<Finding> findings;
  std::map<std::string, int64_t> studyIds;  ///< finding id -> its study in the store
  std::string storePath;
  /// Every distinct spec the suite trained (canonical JSON) and the runs made from it.
  struct SpecRuns {
    std::string label;
    std::string specJson;
    std::vector<int64_t> runs;
  };
  std::vector<SpecRuns> specs;
  std::vector<std::string> failures;  ///< runs that failed, with why
  // issue 32 §5
  /// The learning-rate search the suite ran before the learning findings: per method its
  /// trials, the rate chosen on validation and the best so far.
  struct SearchTrial {
    int trial = 0;  ///< 1-based, in the search's order
    double lr = 0;
    double value = kNaN;   ///< the validation metric (a pruned trial's: at its rung)
    std::string status;    ///< completed | pruned | failed | stopped | not run
    int64_t steps = 0;     ///< steps it trained
    int64_t prunedAt = 0;  ///< the rung that stopped it (0: none)
    int64_t runId = 0;
  };
  struct SearchMethod {
    std::string mode;
    std::vector<SearchTrial> trials;
    double chosenLr = kNaN;   ///< NaN: no trial completed; the method trains at the base's rate
    double bestValue = kNaN;  ///< the chosen trial's validation metric
    int chosenTrial = 0;      ///< 1-based; 0: none
    std::vector<double> bestSoFar;  ///< after each trial (NaN before the first completed one)
  };
  struct Search {
    int64_t studyId = 0;
    std::string key = "train.lr";
    std::string distributionJson;  ///< {"log_uniform": [1e-05, 0.01]}
    int trials = 0;                ///< per method
    std::string sampler;
    std::string metric;     ///< the validation metric that chooses
    std::string pruneJson;  ///< {"metric", "min_steps", "reduction"}; "null": none
    double validation = 0;  ///< the split the trials held out
    double baseLr = 0;      ///< the shared rate
    int64_t steps = 0;      ///< steps the trials trained, all together
    std::vector<SearchMethod> methods;
    std::vector<Plot> plots;  ///< best so far against trials; the metric against the rate
  };
  std::optional<Search> search;
};

/// The verdicts counted for a summary (issue 32 §6). Only the paper's findings count as
/// evidence: a finding that holds by construction and an extra check never add to `reproduced`
/// or `notReproduced`.
struct Tally {
  int paper = 0;  ///< findings that test one of the paper's findings
  int reproduced = 0;
  int notReproduced = 0;
  int inconclusive = 0;  ///< not converged included
  int notConverged = 0;
  int byConstruction = 0;
  int extra = 0;  ///< extra checks, whatever their verdict
};
Tally tally(const std::vector<Finding>& findings);
/// "2 of 7 findings that test the paper reproduced, 1 not reproduced, 3 inconclusive (2 not
/// converged); 1 holds by construction (not evidence); 1 extra check (not counted)".
std::string tallyText(const Tally& t);

/// report.json: {"version", "quick", "created_at", "seconds", "machine": {...}, "base",
/// "adaptations", "paper_findings": [{"n", "claim", "tested_by"}], "summary": {Tally},
/// "findings": [{"id", "title", "kind", "paper_finding", "claim", "paper_value", "paper_source",
/// "ours", "ours_text", "settings", "rule", "verdict", "reason", "why", "carried_by",
/// "convergence", "decide_steps", "runs", "tables": [{"title", "columns", "rows"}], "study_id"}],
/// "specs", "store", "failures"}.
/// A learning finding adds "tuned" and "shared_lr" ({"settings", "verdict", "ours", "ours_text",
/// "why", "runs"}); the search adds "search": {"study_id", "key", "distribution", "trials",
/// "sampler", "metric", "prune", "validation", "base_lr", "steps", "methods": [{"mode",
/// "chosen": {"train.lr", "trial", METRIC}, "best_so_far", "trials": [{"trial", "train.lr",
/// METRIC, "status", "steps", "pruned_at", "run"}]}]}.
std::string reportJson(const ReportDoc& doc);

/// Markup for one plot: the finding's index, the plot's index within it, the plot. The search's
/// plots come with the finding index findings.size().
using PlotMarkup = std::function<std::string(size_t finding, size_t plot, const Plot& p)>;

/// report.html. By default every plot is inline SVG (renderSvg); `markup` replaces that (the
/// workbench shows PNG images it renders itself).
std::string reportHtml(const ReportDoc& doc, const PlotMarkup& markup = {});

/// Text for HTML: & < > " ' escaped.
std::string escapeHtml(const std::string& text);

/// The verdicts as a text table (the CLI prints it), then each finding's tables in Markdown.
std::string verdictTable(const ReportDoc& doc);

/// A finding's table in Markdown (a bold title, then a pipe table; `|` in a cell escaped).
std::string markdownTable(const Table& table);

}  // namespace stagewise::report
