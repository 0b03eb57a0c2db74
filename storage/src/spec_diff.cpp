#include "stagewise/storage/spec_diff.h"

#include <map>
#include <nlohmann/json.hpp>

#include "stagewise/storage/store_error.h"

namespace stagewise::storage {

namespace {

using Json = nlohmann::json;

bool isArrayOfObjects(const Json& j) {
  if (!j.is_array() || j.empty()) return false;
  for (const Json& e : j) {
    if (!e.is_object()) return false;
  }
  return true;
}

void flatten(const Json& j, const std::string& prefix,
             std::vector<std::pair<std::string, std::string>>& out) {
  if (j.is_object() && !j.empty()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      flatten(*it, prefix.empty() ? it.key() : prefix + "." + it.key(), out);
    }
  } else if (isArrayOfObjects(j)) {
    for (size_t i = 0; i < j.size(); ++i) flatten(j[i], prefix + "." + std::to_string(i), out);
  } else {
    out.emplace_back(prefix, j.dump());
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> flattenJson(const std::string& json) {
  Json doc = Json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) throw StoreError("a stored spec is not valid JSON");
  std::vector<std::pair<std::string, std::string>> out;
  flatten(doc, "", out);
  return out;
}

std::vector<SpecDifference> diffJson(const std::vector<std::string>& documents) {
  std::map<std::string, std::vector<std::optional<std::string>>> table;
  for (size_t i = 0; i < documents.size(); ++i) {
    for (auto& [key, value] : flattenJson(documents[i])) {
      auto& row = table[key];
      row.resize(documents.size());
      row[i] = std::move(value);
    }
  }
  std::vector<SpecDifference> out;
  for (auto& [key, values] : table) {
    values.resize(documents.size());
    bool same = true;
    for (const auto& v : values) same = same && v == values.front();
    if (!same) out.push_back({key, std::move(values)});
  }
  return out;
}

}  // namespace stagewise::storage
