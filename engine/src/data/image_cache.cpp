#include "data/image_cache.h"

#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace stagewise::engine {

namespace fs = std::filesystem;

namespace {

// Bump when the decoding changes (resize filter, grey conversion, layout): old caches are then
// never read.
constexpr char kMagic[8] = {'S', 'W', 'I', 'M', 'G', 'C', '0', '1'};

struct Header {
  char magic[8];
  uint64_t key[2];
  int64_t shape[3];
  int64_t numClasses;
  int64_t trainCount;
  int64_t testCount;
  uint32_t crc;
  uint32_t reserved;
};

uint64_t fnv1a(const std::string& text, uint64_t basis) {
  uint64_t h = basis;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001B3ull;
  }
  return h;
}

int64_t perSample(const Header& h) { return h.shape[0] * h.shape[1] * h.shape[2]; }

uint32_t crcOf(uint32_t crc, const void* data, size_t size) {
  const auto* p = static_cast<const Bytef*>(data);
  while (size > 0) {  // zlib's length is 32-bit
    const auto n = static_cast<uInt>(std::min<size_t>(size, 1u << 30));
    crc = static_cast<uint32_t>(crc32(crc, p, n));
    p += n;
    size -= n;
  }
  return crc;
}

uint32_t payloadCrc(const ByteDataset& d) {
  uint32_t crc = static_cast<uint32_t>(crc32(0, nullptr, 0));
  for (const ByteSplit* s : {&d.train, &d.test}) {
    crc = crcOf(crc, s->labels.data(), s->labels.size() * sizeof(int64_t));
    crc = crcOf(crc, s->images.data(), s->images.size());
  }
  return crc;
}

}  // namespace

ImageCacheKey imageCacheKey(const ImageFolderListing& listing,
                            const std::vector<int64_t>& sampleShape) {
  std::string text = "image_folder v1\n";
  for (auto d : sampleShape) text += std::to_string(d) + " ";
  text += "\nclasses";
  for (const auto& c : listing.classes) text += "\n" + c;
  for (const auto* files : {&listing.train, &listing.test}) {
    text += "\nsplit " + std::to_string(files->size());
    for (const auto& f : *files)
      text += "\n" + f.path + "\t" + std::to_string(f.label) + "\t" + std::to_string(f.bytes) +
              "\t" + std::to_string(f.mtimeNs);
  }
  return {fnv1a(text, 0xCBF29CE484222325ull), fnv1a(text, 0x84222325CBF29CE4ull ^ 0x5157)};
}

std::string imageCachePath(const std::string& dir, const ImageCacheKey& key) {
  char name[64];
  std::snprintf(name, sizeof name, "images-%016llx%016llx.bin",
                static_cast<unsigned long long>(key[0]), static_cast<unsigned long long>(key[1]));
  return (fs::path(dir) / name).string();
}

std::optional<ByteDataset> readImageCache(const std::string& path, const ImageCacheKey& key,
                                          std::string& problem) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return std::nullopt;
  const auto fileSize = fs::file_size(path, ec);
  std::ifstream in(path, std::ios::binary);
  Header h{};
  if (ec || !in || !in.read(reinterpret_cast<char*>(&h), sizeof h) ||
      std::memcmp(h.magic, kMagic, sizeof kMagic) != 0 || h.key[0] != key[0] ||
      h.key[1] != key[1] || h.shape[0] < 1 || h.shape[1] < 1 || h.shape[2] < 1 ||
      h.trainCount < 0 || h.testCount < 0) {
    problem = path + ": not a cache of this image folder; decoding again";
    return std::nullopt;
  }
  const auto per = static_cast<uint64_t>(perSample(h));
  const auto count = static_cast<uint64_t>(h.trainCount + h.testCount);
  if (fileSize != sizeof h + count * (sizeof(int64_t) + per)) {
    problem = path + ": the cache file is truncated; decoding again";
    return std::nullopt;
  }
  ByteDataset d;
  d.name = "image_folder";
  d.numClasses = static_cast<int>(h.numClasses);
  for (auto [split, n] : {std::pair{&d.train, h.trainCount}, std::pair{&d.test, h.testCount}}) {
    split->sampleShape.assign(h.shape, h.shape + 3);
    split->labels.resize(static_cast<size_t>(n));
    split->images.resize(static_cast<size_t>(n) * per);
    in.read(reinterpret_cast<char*>(split->labels.data()),
            static_cast<std::streamsize>(split->labels.size() * sizeof(int64_t)));
    in.read(reinterpret_cast<char*>(split->images.data()),
            static_cast<std::streamsize>(split->images.size()));
  }
  if (!in || payloadCrc(d) != h.crc) {
    problem = path + ": the cache file is damaged (checksum); decoding again";
    return std::nullopt;
  }
  return d;
}

std::string writeImageCache(const std::string& path, const ImageCacheKey& key,
                            const ByteDataset& data) {
  std::error_code ec;
  const fs::path target(path);
  fs::create_directories(target.parent_path(), ec);
  if (ec) return "cannot create " + target.parent_path().string() + ": " + ec.message();
  // Unique per process and call, so ranks or runs loading the same folder at once never share a
  // temporary file; the rename is atomic, the last one wins with identical contents.
  static std::atomic<int> serial{0};
  const fs::path tmp = target.string() + ".tmp-" + std::to_string(::getpid()) + "-" +
                       std::to_string(serial.fetch_add(1));
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.key[0] = key[0];
  h.key[1] = key[1];
  for (int i = 0; i < 3; ++i) h.shape[i] = data.train.sampleShape.at(static_cast<size_t>(i));
  h.numClasses = data.numClasses;
  h.trainCount = data.train.size();
  h.testCount = data.test.size();
  h.crc = payloadCrc(data);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(&h), sizeof h);
    for (const ByteSplit* s : {&data.train, &data.test}) {
      out.write(reinterpret_cast<const char*>(s->labels.data()),
                static_cast<std::streamsize>(s->labels.size() * sizeof(int64_t)));
      out.write(reinterpret_cast<const char*>(s->images.data()),
                static_cast<std::streamsize>(s->images.size()));
    }
    out.flush();
    if (!out) {
      out.close();
      fs::remove(tmp, ec);
      return "cannot write " + tmp.string() + " (disk full or not writable?)";
    }
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    return "cannot rename " + tmp.string() + " to " + target.string() + ": " + ec.message();
  }
  return {};
}

}  // namespace stagewise::engine
