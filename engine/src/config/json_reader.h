#pragma once
// Strict reading of a JSON object: every key must be known, every value of the right type, and
// errors name the dotted field and what to change.

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "stagewise/engine/spec.h"

namespace stagewise::engine::detail {

class ObjectReader {
 public:
  ObjectReader(const nlohmann::json& object, std::string path);
  /// Throws for keys that no get*/has call asked about, suggesting the closest known key.
  void finish() const;

  bool has(const std::string& key);
  const nlohmann::json* child(const std::string& key);
  std::string field(const std::string& key) const;

  void get(const std::string& key, std::string& out);
  void get(const std::string& key, int& out);
  void get(const std::string& key, int64_t& out);
  void get(const std::string& key, uint64_t& out);
  void get(const std::string& key, double& out);
  void get(const std::string& key, std::vector<int>& out);

 private:
  const nlohmann::json& value(const std::string& key);
  const nlohmann::json& m_object;
  std::string m_path;
  std::set<std::string> m_known;
};

std::string typeName(const nlohmann::json& value);
std::string closestKey(const std::string& key, const std::set<std::string>& known);

}  // namespace stagewise::engine::detail
