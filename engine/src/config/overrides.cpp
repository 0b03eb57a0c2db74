#include <nlohmann/json.hpp>

#include "stagewise/engine/spec.h"

namespace stagewise::engine {

using nlohmann::json;

static bool isIndex(const std::string& s) {
  return !s.empty() && s.size() < 6 && s.find_first_not_of("0123456789") == std::string::npos;
}

static void assign(json& doc, const std::string& key, const json& value) {
  json* node = &doc;
  size_t start = 0;
  std::string path;
  while (true) {
    size_t dot = key.find('.', start);
    std::string part = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (part.empty()) throw SpecError(key, "empty part in dotted key; write e.g. train.lr=0.01");
    path += (path.empty() ? "" : ".") + part;
    json* next = nullptr;
    if (node->is_null() && isIndex(part)) *node = json::array();  // "stages.1.device" on no list yet
    if (node->is_array() && isIndex(part)) {
      size_t i = std::stoul(part);
      if (i > 4096) throw SpecError(path, "list index " + part + " is too large");
      while (node->size() <= i) node->push_back(json::object());
      next = &(*node)[i];
    } else if (node->is_object() || node->is_null()) {
      next = &(*node)[part];
    } else {
      throw SpecError(path, "cannot set a key inside a value that is not an object");
    }
    if (dot == std::string::npos) {
      *next = value;
      return;
    }
    node = next;
    start = dot + 1;
  }
}

std::string applyOverrides(std::string_view text, const std::vector<std::string>& assignments) {
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {  // parse_error, and out_of_range for huge numbers (fuzz_spec)
    throw SpecError("", std::string("not valid JSON: ") + e.what());
  }
  for (const auto& a : assignments) {
    size_t eq = a.find('=');
    if (eq == std::string::npos || eq == 0)
      throw SpecError("", "override '" + a + "' must look like dotted.key=value, e.g. train.lr=0.01");
    std::string key = a.substr(0, eq);
    std::string raw = a.substr(eq + 1);
    json value = json::parse(raw, nullptr, /*allow_exceptions=*/false);
    if (value.is_discarded()) value = raw;  // not JSON: take it as a string
    assign(doc, key, value);
  }
  try {
    return doc.dump(2);
  } catch (const json::type_error&) {  // found by fuzz_spec: raw bytes that are not UTF-8
    throw SpecError("", "an override value is not valid UTF-8 text; check the --set arguments");
  }
}

}  // namespace stagewise::engine
