#include <zlib.h>

#include <cstring>
#include <fstream>
#include <limits>

#include "data/file_bytes.h"
#include "stagewise/engine/dataset.h"

namespace stagewise::engine {

namespace {

constexpr size_t kMaxDecompressed = size_t{4} << 30;  // refuse gzip bombs beyond 4 GiB

std::vector<uint8_t> gunzip(const std::vector<uint8_t>& in, const std::string& what) {
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) throw DatasetError(what + ": zlib failed to start");
  std::vector<uint8_t> out;
  out.resize(std::max<size_t>(in.size() * 4, 1 << 16));
  zs.next_in = const_cast<Bytef*>(in.data());
  zs.avail_in = static_cast<uInt>(in.size());
  int rc = Z_OK;
  size_t produced = 0;
  while (rc != Z_STREAM_END) {
    if (produced == out.size()) {
      if (out.size() >= kMaxDecompressed) {
        inflateEnd(&zs);
        throw DatasetError(what + ": decompresses to more than 4 GiB; not a dataset file?");
      }
      out.resize(std::min(out.size() * 2, kMaxDecompressed));
    }
    zs.next_out = out.data() + produced;
    zs.avail_out = static_cast<uInt>(std::min<size_t>(out.size() - produced, 1u << 30));
    size_t before = zs.avail_out;
    rc = inflate(&zs, Z_NO_FLUSH);
    produced += before - zs.avail_out;
    if (rc == Z_STREAM_END) break;
    if (rc == Z_BUF_ERROR && zs.avail_in == 0) {
      inflateEnd(&zs);
      throw DatasetError(what + ": the gzip data is truncated (the file ends early); download it again");
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      std::string msg = zs.msg ? zs.msg : "error " + std::to_string(rc);
      inflateEnd(&zs);
      throw DatasetError(what + ": corrupt gzip data (" + msg + ")");
    }
  }
  inflateEnd(&zs);
  out.resize(produced);
  return out;
}

uint32_t bigEndian32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

}  // namespace

std::vector<uint8_t> readFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DatasetError(path + ": cannot open the file (missing or not readable)");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw DatasetError(path + ": read error");
  return bytes;
}

IdxArray parseIdx(const uint8_t* bytes, size_t size, const std::string& what) {
  if (size < 4) throw DatasetError(what + ": too short to be an IDX file (" + std::to_string(size) + " bytes)");
  if (bytes[0] != 0 || bytes[1] != 0)
    throw DatasetError(what + ": not an IDX file (the first two bytes must be zero)");
  if (bytes[2] != 0x08) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02X", bytes[2]);
    throw DatasetError(what + ": IDX data type " + hex + " is not supported; only unsigned bytes (0x08)");
  }
  const int ndims = bytes[3];
  if (ndims < 1 || ndims > 4)
    throw DatasetError(what + ": IDX file with " + std::to_string(ndims) +
                       " dimensions; expected 1 (labels) to 4 (images)");
  const size_t header = 4 + 4 * static_cast<size_t>(ndims);
  if (size < header) throw DatasetError(what + ": truncated IDX header");
  IdxArray out;
  uint64_t count = 1;
  for (int i = 0; i < ndims; ++i) {
    uint32_t d = bigEndian32(bytes + 4 + 4 * i);
    if (d == 0) throw DatasetError(what + ": dimension " + std::to_string(i) + " is zero");
    if (d > (1u << 30)) throw DatasetError(what + ": dimension " + std::to_string(i) + " is implausibly large");
    count *= d;
    if (count > (uint64_t{1} << 34)) throw DatasetError(what + ": IDX array is implausibly large");
    out.dims.push_back(static_cast<int64_t>(d));
  }
  const size_t available = size - header;
  if (available < count)
    throw DatasetError(what + ": truncated: the header promises " + std::to_string(count) +
                       " bytes of data but the file holds " + std::to_string(available));
  if (available > count)
    throw DatasetError(what + ": " + std::to_string(available - count) +
                       " unexpected bytes after the data; the file is not a valid IDX file");
  out.data.assign(bytes + header, bytes + header + count);
  return out;
}

IdxArray parseIdxMaybeGzip(const uint8_t* bytes, size_t size, const std::string& what) {
  if (size >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b) {
    std::vector<uint8_t> raw = gunzip(std::vector<uint8_t>(bytes, bytes + size), what);
    return parseIdx(raw.data(), raw.size(), what);
  }
  return parseIdx(bytes, size, what);
}

IdxArray readIdxFile(const std::string& path) {
  std::vector<uint8_t> bytes = readFileBytes(path);
  return parseIdxMaybeGzip(bytes.data(), bytes.size(), path);
}

}  // namespace stagewise::engine
