#pragma once
// Whole-file reads shared by the dataset loaders; errors name the file (DatasetError).

#include <cstdint>
#include <string>
#include <vector>

namespace stagewise::engine {

std::vector<uint8_t> readFileBytes(const std::string& path);

}  // namespace stagewise::engine
