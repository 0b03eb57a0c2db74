#pragma once
// The decoded image folder on disk: one file per key (the image files' names, sizes and
// modification times, the sample shape and the limits), written atomically.

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "data/image_folder.h"

namespace stagewise::engine {

/// 128 bits of the key: two independent 64-bit FNV-1a hashes of its text.
using ImageCacheKey = std::array<uint64_t, 2>;

ImageCacheKey imageCacheKey(const ImageFolderListing& listing,
                            const std::vector<int64_t>& sampleShape);

/// `dir`/images-<key in hex>.bin.
std::string imageCachePath(const std::string& dir, const ImageCacheKey& key);

/// The cached dataset when `path` holds one for `key` and it is whole (size and checksum);
/// nullopt when there is none or it is damaged (then `problem` says so).
std::optional<ByteDataset> readImageCache(const std::string& path, const ImageCacheKey& key,
                                          std::string& problem);

/// Writes `data` to `path` through a temporary file renamed into place. Returns the problem
/// (empty: written).
std::string writeImageCache(const std::string& path, const ImageCacheKey& key,
                            const ByteDataset& data);

}  // namespace stagewise::engine
