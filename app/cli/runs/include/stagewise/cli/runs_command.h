#pragma once
// `stagewise-cli runs ...`: browse, export, trace, tag, annotate and delete stored runs.

#include <ostream>
#include <string>
#include <vector>

namespace stagewise::cli {

/// Runs the subcommand; `args` are the words after `runs`. Results go to `out`; a bad argument
/// gets one line on `err` saying what to fix. Returns 0 on success, 2 for a usage error, 1 when
/// the store fails (the message says why).
int runsCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

/// The help text of `runs`.
std::string runsUsage();

}  // namespace stagewise::cli
