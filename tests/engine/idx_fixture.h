#pragma once
// Test helper: small IDX datasets written to a folder (raw or gzip), with images a model can
// learn (each class lights up its own band of rows).
#include <zlib.h>

#include <QString>
#include <cstdint>
#include <fstream>
#include <vector>

namespace fixture {

inline std::vector<uint8_t> idxHeader(const std::vector<uint32_t>& dims) {
  std::vector<uint8_t> b = {0, 0, 0x08, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims) {
    b.push_back(uint8_t(d >> 24)), b.push_back(uint8_t(d >> 16)), b.push_back(uint8_t(d >> 8)), b.push_back(uint8_t(d));
  }
  return b;
}

/// An IDX array of `dims` whose data bytes cycle 0, 1, 2 (starting at `fill` % 3).
inline std::vector<uint8_t> idx(const std::vector<uint32_t>& dims, size_t dataBytes, uint8_t fill = 7) {
  std::vector<uint8_t> b = idxHeader(dims);
  for (size_t i = 0; i < dataBytes; ++i) b.push_back(static_cast<uint8_t>((fill + i) % 3));
  return b;
}

inline void write(const QString& path, const std::vector<uint8_t>& bytes, bool gz = false) {
  if (gz) {
    gzFile f = gzopen(path.toStdString().c_str(), "wb");
    gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
    gzclose(f);
  } else {
    std::ofstream out(path.toStdString(), std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
}

/// train-/t10k- image and label files of n and n/2 samples of h x w pixels.
inline void writeSet(const QString& dir, int n, int h, int w, bool gz, int classes = 3) {
  const QString ext = gz ? ".gz" : "";
  auto split = [&](const QString& prefix, int count) {
    std::vector<uint8_t> images = idxHeader({uint32_t(count), uint32_t(h), uint32_t(w)});
    std::vector<uint8_t> labels = idxHeader({uint32_t(count)});
    for (int i = 0; i < count; ++i) {
      const int label = i % classes;
      labels.push_back(static_cast<uint8_t>(label));
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
          const bool lit = y * classes / h == label;
          images.push_back(static_cast<uint8_t>((lit ? 180 : 40) + (x * 7 + y * 13 + i * 3) % 50));
        }
    }
    write(dir + "/" + prefix + "-images-idx3-ubyte" + ext, images, gz);
    write(dir + "/" + prefix + "-labels-idx1-ubyte" + ext, labels, gz);
  };
  split("train", n);
  split("t10k", n / 2);
}

}  // namespace fixture
