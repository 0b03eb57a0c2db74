#pragma once
// issue 32 §5: the suite's learning-rate search read back from the store (each method's trials
// and the rate chosen on the validation metric, never a test metric), and the search as the
// report's JSON and HTML show it. Torch-free and Qt-free.

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "stagewise/report/report.h"
#include "stagewise/report/suite.h"

namespace stagewise::storage {
class RunReader;
}

namespace stagewise::report {

/// The search study `study` (stored as `studyId`) read back. A method's rate is its best
/// completed trial's by the search's choosing metric (a validation metric); ties go to the
/// earlier trial. Pruned, failed and unfinished trials are never chosen.
ReportDoc::Search readSearch(storage::RunReader& reader, const SuiteStudy& study, int64_t studyId,
                             double baseLr);

/// mode -> the chosen rate (methods without one are left out: they train at the base's rate).
std::map<std::string, double> chosenRates(const ReportDoc::Search& search);

/// The methods a learning finding trains (empty: a systems finding).
std::vector<std::string> findingModes(const std::string& findingId);

/// A finding's settings at these rates, JSON: {"local": {"train.lr": 0.0003, METRIC: 0.84}}
/// (`search` given: the chosen rate and the validation metric it was chosen on; a method the
/// search found no rate for: the base's rate, "chosen": false).
std::string settingsJson(const std::string& findingId, double baseLr,
                         const ReportDoc::Search* search);

nlohmann::ordered_json searchJson(const ReportDoc::Search& search);

/// The search's section of report.html: the chosen rates, each method's trials and the plots
/// (`plot` draws the plot with its index).
std::string searchHtml(const ReportDoc::Search& search,
                       const std::function<std::string(size_t, const Plot&)>& plot);

}  // namespace stagewise::report
