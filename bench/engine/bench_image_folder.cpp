// An image folder's first load (list, decode, resize, write the cache) against its cached load
// (list, stat, read the cache), on N generated images: 10 classes, 90/10 train/test, half PNG
// and half JPEG (quality 90), 40x40 pixels of smooth colour with noise, resized to 32x32 RGB.
// usage: bench_image_folder [--images N] [--dir DIR] [--rounds R] [--threads T]
//   DIR (default: a new folder under /tmp) is written once; each round clears the cache first.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "data/image_folder.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wpedantic"
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>
#pragma GCC diagnostic pop

namespace fs = std::filesystem;
using namespace stagewise::engine;

namespace {

void writeImages(const fs::path& root, int count) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> noise(-12, 12);
  const int side = 40;
  std::vector<unsigned char> px(side * side * 3);
  for (int i = 0; i < count; ++i) {
    const int cls = i % 10;
    const bool test = (i / 10) % 10 == 9;
    std::string cname = "class";
    cname.append(std::to_string(cls));
    const fs::path dir = root / (test ? "test" : "train") / cname;
    fs::create_directories(dir);
    for (int y = 0; y < side; ++y)
      for (int x = 0; x < side; ++x)
        for (int c = 0; c < 3; ++c) {
          const int v = 25 * cls + 3 * x * (c == 0) + 3 * y * (c == 1) + 60 * (c == 2) + noise(rng);
          px[static_cast<size_t>((y * side + x) * 3 + c)] =
              static_cast<unsigned char>(std::clamp(v, 0, 255));
        }
    std::string name = std::to_string(i);
    const std::string file = (dir / name).string() + (i % 2 ? ".png" : ".jpg");
    const int ok = i % 2 ? stbi_write_png(file.c_str(), side, side, 3, px.data(), side * 3)
                         : stbi_write_jpg(file.c_str(), side, side, 3, px.data(), 90);
    if (!ok) {
      std::fprintf(stderr, "bench_image_folder: cannot write %s\n", file.c_str());
      std::exit(1);
    }
  }
}

double seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  int images = 10000, rounds = 3, threads = 0;
  std::string dir;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--images") images = std::atoi(argv[i + 1]);
    else if (a == "--dir") dir = argv[i + 1];
    else if (a == "--rounds") rounds = std::atoi(argv[i + 1]);
    else if (a == "--threads") threads = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "bench_image_folder: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  const bool own = dir.empty();
  if (own) dir = "/tmp/bench_image_folder-" + std::to_string(::getpid());
  const fs::path root(dir);
  if (!fs::exists(root / "train")) {
    const auto t0 = std::chrono::steady_clock::now();
    writeImages(root, images);
    std::fprintf(stderr, "wrote %d images in %.1f s\n", images, seconds(t0));
  }
  DatasetSpec spec;
  spec.kind = "image_folder";
  spec.path = root.string();
  spec.size = {32, 32};
  ImageLoadOptions options;
  options.cacheDir = (root / "cache").string();
  options.threads = threads;
  std::printf("%-6s %8s %12s %12s %8s\n", "round", "images", "first_s", "cached_s", "ratio");
  for (int r = 1; r <= rounds; ++r) {
    fs::remove_all(options.cacheDir);
    const ImageLoadResult first = loadImageFolder(spec, options);
    const ImageLoadResult cached = loadImageFolder(spec, options);
    if (first.fromCache || !cached.fromCache) {
      std::fprintf(stderr, "bench_image_folder: the cache was not used as expected (%s)\n",
                   first.cacheProblem.c_str());
      return 1;
    }
    std::printf("%-6d %8lld %12.3f %12.3f %8.1f\n", r,
                static_cast<long long>(first.data.train.size() + first.data.test.size()),
                first.seconds, cached.seconds, first.seconds / cached.seconds);
  }
  if (own) fs::remove_all(root);
  return 0;
}
