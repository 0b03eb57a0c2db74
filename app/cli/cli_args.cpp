#include "cli_args.h"

namespace stagewise::cli {

Args::Args(const std::vector<std::string>& argv, const std::set<std::string>& valued,
           const std::set<std::string>& repeated, const std::set<std::string>& flags) {
  for (size_t i = 0; i < argv.size(); ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0 || arg == "--") {
      m_positional.push_back(arg);
      continue;
    }
    std::string value;
    bool hasValue = false;
    if (auto eq = arg.find('='); eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      hasValue = true;
    }
    if (flags.count(arg)) {
      if (hasValue) throw UsageError("option " + arg + " takes no value");
      m_flags.insert(arg);
    } else if (valued.count(arg) || repeated.count(arg)) {
      if (!hasValue) {
        if (i + 1 >= argv.size()) throw UsageError("option " + arg + " needs a value");
        value = argv[++i];
      }
      auto& list = m_values[arg];
      if (!list.empty() && !repeated.count(arg)) throw UsageError("option " + arg + " given twice");
      list.push_back(value);
    } else {
      throw UsageError("unknown option " + arg + " (see --help)");
    }
  }
}

std::optional<std::string> Args::value(const std::string& name) const {
  auto it = m_values.find(name);
  if (it == m_values.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

std::vector<std::string> Args::values(const std::string& name) const {
  auto it = m_values.find(name);
  return it == m_values.end() ? std::vector<std::string>{} : it->second;
}

std::string Args::required(const std::string& name) const {
  auto v = value(name);
  if (!v) throw UsageError("missing " + name + " (see --help)");
  return *v;
}

}  // namespace stagewise::cli
