#pragma once
// dataset.kind "image_folder": path/train/<class>/*.{png,jpg,jpeg,bmp} and path/test/<class>/...
// (torchvision's ImageFolder layout), decoded by stb_image, resized to dataset.size, grey or
// RGB by dataset.channels, and cached beside the run store so a second load starts at once.
// Torch-free: the samples come out as bytes, [C, H, W] each, like the other datasets.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "stagewise/engine/dataset.h"

namespace stagewise::engine {

/// One image file of the listing. `bytes` and `mtimeNs` are the cache's key with the name.
struct ImageFile {
  std::string path;
  int64_t label = 0;
  uint64_t bytes = 0;
  int64_t mtimeNs = 0;
};

/// The folder as listed: class names sorted (byte order), the samples interleaved over the
/// classes (the first file of each class, then the second of each, ...; files sorted by name in
/// a class), so `limit_train` / `limit_test` keep every class while there are enough samples.
struct ImageFolderListing {
  std::string root;
  std::vector<std::string> classes;
  std::vector<ImageFile> train;
  std::vector<ImageFile> test;
};

/// The image file extensions read (lower case; names match case-insensitively).
inline const char* const kImageExtensions = ".png, .jpg, .jpeg, .bmp";

/// Lists the folder. Throws DatasetError naming the folder and what to fix: no path, a missing
/// folder, train/ or test/, no images at all, images outside a class folder, an empty class
/// folder, train and test with different class sets. Reads no image.
ImageFolderListing listImageFolder(const std::string& path);

/// [channels, H, W] of the spec's samples: dataset.size, else the first training image's size
/// (read from its header). Throws DatasetError as listImageFolder, or naming the unreadable
/// first image.
std::vector<int64_t> imageFolderSampleShape(const DatasetSpec& spec,
                                            const ImageFolderListing& listing);

/// Decodes one image file to [channels, h, w] bytes (stb's luma for grey, the grey replicated
/// for RGB, alpha dropped), resized when its size differs. Throws DatasetError naming the file.
std::vector<uint8_t> decodeImageFile(const std::string& path, int channels, int h, int w);

/// `$STAGEWISE_CACHE`, else `$XDG_DATA_HOME/stagewise/cache` (or ~/.local/share/...), beside
/// the default run store and the checkpoints. Creates nothing.
std::string defaultImageCacheDir();

struct ImageLoadProgress {
  int64_t done = 0;
  int64_t total = 0;
  double elapsedS = 0;
  double etaS = -1;  ///< -1: not known yet
};

struct ImageLoadOptions {
  /// Where cache files go; empty: defaultImageCacheDir().
  std::string cacheDir;
  bool useCache = true;
  /// Called from the loading thread while images are decoded, at most every
  /// `progressIntervalS` (the first after that long), never for a load from the cache.
  std::function<void(const ImageLoadProgress&)> onProgress;
  double progressIntervalS = 2.0;
  /// Decoding threads; 0: the machine's cores, at most 8.
  int threads = 0;
};

struct ImageLoadResult {
  ByteDataset data;
  std::vector<std::string> classes;
  bool fromCache = false;
  int64_t decoded = 0;        ///< images decoded (0 when read from the cache)
  double seconds = 0;         ///< the whole load
  std::string cacheFile;      ///< the cache file read or written (empty: none)
  std::string cacheProblem;   ///< why the cache could not be written or read, if so
};

/// Loads the spec's image folder (limits applied), from the cache when the files' names, sizes
/// and modification times and the size/channels are those cached; otherwise decodes every image
/// and writes the cache (a temporary file renamed into place, so an interrupted run never
/// leaves a bad one). A cache that cannot be written is said in `cacheProblem`, not thrown.
/// Throws DatasetError naming the file or folder; nothing is returned from a half-read set.
ImageLoadResult loadImageFolder(const DatasetSpec& spec, const ImageLoadOptions& options = {});

/// Training samples (limit_train applied, before the validation share), from the listing.
int64_t imageFolderTrainCount(const DatasetSpec& spec);

}  // namespace stagewise::engine
