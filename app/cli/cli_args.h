#pragma once
// A small, strict command-line parser: known options only, clear messages for the rest.

#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace stagewise::cli {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Args {
 public:
  /// `valued`: options taking a value ("--config"); `repeated`: may appear several times;
  /// `flags`: options without value. Throws UsageError for anything else.
  Args(const std::vector<std::string>& argv, const std::set<std::string>& valued,
       const std::set<std::string>& repeated, const std::set<std::string>& flags);

  std::optional<std::string> value(const std::string& name) const;
  std::vector<std::string> values(const std::string& name) const;
  bool flag(const std::string& name) const { return m_flags.count(name) > 0; }
  const std::vector<std::string>& positional() const { return m_positional; }
  /// value(name) or a UsageError naming the option.
  std::string required(const std::string& name) const;

 private:
  std::map<std::string, std::vector<std::string>> m_values;
  std::set<std::string> m_flags;
  std::vector<std::string> m_positional;
};

}  // namespace stagewise::cli
