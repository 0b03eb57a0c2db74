#pragma once
// Comparing experiment specs key by key.

#include <string>
#include <utility>
#include <vector>

#include "stagewise/storage/records.h"

namespace stagewise::storage {

/// A JSON document as (dotted key, compact JSON value) pairs in key order. Objects nest with
/// dots ("train.lr"); arrays of objects by index ("stages.1.device"); other arrays are one
/// value ("model.hidden" -> "[512,512]"). Throws StoreError for invalid JSON.
std::vector<std::pair<std::string, std::string>> flattenJson(const std::string& json);

/// The keys whose values are not the same in all documents (a key missing in some counts as
/// different), in key order.
std::vector<SpecDifference> diffJson(const std::vector<std::string>& documents);

}  // namespace stagewise::storage
