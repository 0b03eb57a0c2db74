#pragma once
// Test helper: small PNG, JPEG and BMP files written with stb_image_write (libstb-dev), laid out
// as an image folder. Include from exactly one file of a test executable.
#include <filesystem>
#include <cctype>
#include <stdexcept>
#include <string>
#include <vector>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wpedantic"
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>
#pragma GCC diagnostic pop

namespace fixture {

struct Rgb {
  unsigned char r = 0, g = 0, b = 0;
};

/// A solid h x w image of `colour` (RGB, or grey when `channels` is 1), with one pixel varied
/// by `seed` so same-coloured files differ. The format follows the extension.
inline void writeImage(const std::filesystem::path& file, int h, int w, Rgb colour,
                       int channels = 3, int seed = 0) {
  std::filesystem::create_directories(file.parent_path());
  std::vector<unsigned char> px(static_cast<size_t>(h * w * channels));
  for (int i = 0; i < h * w; ++i) {
    const unsigned char v[3] = {colour.r, colour.g, colour.b};
    for (int c = 0; c < channels; ++c) px[static_cast<size_t>(i * channels + c)] = v[c];
  }
  px[0] = static_cast<unsigned char>(px[0] ^ (seed & 0x3));
  std::string ext = file.extension().string();
  for (auto& ch : ext) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  const std::string name = file.string();
  int ok = 0;
  if (ext == ".png")
    ok = stbi_write_png(name.c_str(), w, h, channels, px.data(), w * channels);
  else if (ext == ".jpg" || ext == ".jpeg")
    ok = stbi_write_jpg(name.c_str(), w, h, channels, px.data(), 95);
  else if (ext == ".bmp")
    ok = stbi_write_bmp(name.c_str(), w, h, channels, px.data());
  if (!ok) throw std::runtime_error("could not write " + name);
}

}  // namespace fixture
