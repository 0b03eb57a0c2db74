#include "data/image_folder.h"

#define STBI_NO_STDIO
#include <stb/stb_image.h>
#include <stb/stb_image_resize.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include <sys/stat.h>

#include "data/file_bytes.h"
#include "data/image_cache.h"

namespace stagewise::engine {

namespace fs = std::filesystem;

namespace {

bool isImageName(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".png" || ext == ".jpg" || ext == ".jpeg" || ext == ".bmp";
}

bool hidden(const fs::path& p) { return p.filename().string().rfind('.', 0) == 0; }

/// The file's size and modification time from one stat() (the cache's key); false when it is
/// not a regular file (links followed).
bool statFile(const fs::path& p, ImageFile& f) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  f.bytes = static_cast<uint64_t>(st.st_size);
  f.mtimeNs = int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
  return true;
}

/// One split: class name -> its image files sorted by path. Throws for images outside a class
/// folder; an empty class stays in the map (checked by the caller, after "no images at all").
std::map<std::string, std::vector<ImageFile>> listSplit(const fs::path& dir) {
  std::map<std::string, std::vector<ImageFile>> classes;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (hidden(entry.path())) continue;
    if (entry.is_directory(ec)) {
      auto& files = classes[entry.path().filename().string()];
      // Subfolders of a class are its images too, as torchvision's ImageFolder reads them
      // (links to folders inside a class are not followed: a link to a parent would loop).
      for (auto it = fs::recursive_directory_iterator(entry.path(), ec);
           !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (hidden(it->path())) {
          if (it->is_directory(ec)) it.disable_recursion_pending();
          continue;
        }
        if (!isImageName(it->path())) continue;
        ImageFile f;
        f.path = it->path().string();
        if (statFile(it->path(), f)) files.push_back(std::move(f));
      }
      if (ec)
        throw DatasetError(entry.path().string() + ": cannot list the folder: " + ec.message());
      std::sort(files.begin(), files.end(),
                [](const ImageFile& a, const ImageFile& b) { return a.path < b.path; });
    } else if (entry.is_regular_file(ec) && isImageName(entry.path())) {
      throw DatasetError(entry.path().string() +
                         ": an image outside a class folder; move it into " + dir.string() +
                         "/<class>/ (the subfolder's name is its class)");
    }
  }
  if (ec) throw DatasetError(dir.string() + ": cannot list the folder: " + ec.message());
  return classes;
}

std::vector<ImageFile> interleave(const std::map<std::string, std::vector<ImageFile>>& split) {
  std::vector<ImageFile> out;
  size_t longest = 0;
  for (const auto& [name, files] : split) longest = std::max(longest, files.size());
  for (size_t i = 0; i < longest; ++i) {
    int64_t label = 0;
    for (const auto& [name, files] : split) {
      if (i < files.size()) {
        out.push_back(files[i]);
        out.back().label = label;
      }
      ++label;
    }
  }
  return out;
}

std::string joinNames(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < 5; ++i) out += (i ? ", '" : "'") + names[i] + "'";
  if (names.size() > 5) out += " and " + std::to_string(names.size() - 5) + " more";
  return out;
}

ImageFolderListing limited(ImageFolderListing listing, const DatasetSpec& spec) {
  if (spec.limitTrain > 0 && static_cast<int64_t>(listing.train.size()) > spec.limitTrain)
    listing.train.resize(static_cast<size_t>(spec.limitTrain));
  if (spec.limitTest > 0 && static_cast<int64_t>(listing.test.size()) > spec.limitTest)
    listing.test.resize(static_cast<size_t>(spec.limitTest));
  return listing;
}

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Decodes every file of both splits on a few threads. The first failure (lowest index) is
/// thrown after every thread has stopped; the others stop taking files once one fails.
void decodeAll(const ImageFolderListing& listing, const std::vector<int64_t>& shape,
               ByteDataset& out, const ImageLoadOptions& options) {
  const int c = static_cast<int>(shape[0]), h = static_cast<int>(shape[1]),
            w = static_cast<int>(shape[2]);
  const auto per = static_cast<size_t>(c) * static_cast<size_t>(h) * static_cast<size_t>(w);
  const auto nTrain = static_cast<int64_t>(listing.train.size());
  const int64_t total = nTrain + static_cast<int64_t>(listing.test.size());
  for (auto [split, files] : {std::pair{&out.train, &listing.train},
                              std::pair{&out.test, &listing.test}}) {
    split->sampleShape = shape;
    split->images.assign(files->size() * per, 0);
    split->labels.clear();
    for (const auto& f : *files) split->labels.push_back(f.label);
  }
  std::atomic<int64_t> next{0}, done{0};
  std::atomic<bool> failed{false};
  std::mutex mutex;
  std::condition_variable cv;
  int64_t failedAt = total;
  std::string error;
  int running = 0;
  auto work = [&] {
    for (int64_t i; !failed && (i = next.fetch_add(1)) < total;) {
      const bool train = i < nTrain;
      const ImageFile& f = train ? listing.train[static_cast<size_t>(i)]
                                 : listing.test[static_cast<size_t>(i - nTrain)];
      try {
        const std::vector<uint8_t> pixels = decodeImageFile(f.path, c, h, w);
        ByteSplit& split = train ? out.train : out.test;
        std::copy(pixels.begin(), pixels.end(),
                  split.images.begin() +
                      static_cast<std::ptrdiff_t>(static_cast<size_t>(train ? i : i - nTrain) * per));
      } catch (const std::exception& e) {
        std::lock_guard lock(mutex);
        if (i < failedAt) failedAt = i, error = e.what();
        failed = true;
      }
      ++done;
    }
    std::lock_guard lock(mutex);
    --running;
    cv.notify_all();
  };
  int threads = options.threads > 0
                    ? options.threads
                    : static_cast<int>(std::min(8u, std::max(1u, std::thread::hardware_concurrency())));
  threads = static_cast<int>(std::clamp<int64_t>((total + 15) / 16, 1, threads));
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  running = threads;
  for (int t = 0; t < threads; ++t) pool.emplace_back(work);
  {
    std::unique_lock lock(mutex);
    const auto interval = std::chrono::duration<double>(std::max(0.01, options.progressIntervalS));
    auto nextReport = t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(interval);
    while (running > 0) {
      cv.wait_until(lock, nextReport, [&] { return running == 0; });
      if (running == 0 || !options.onProgress) continue;
      nextReport += std::chrono::duration_cast<std::chrono::steady_clock::duration>(interval);
      ImageLoadProgress p;
      p.done = done.load();
      p.total = total;
      p.elapsedS = secondsSince(t0);
      if (p.done > 0) p.etaS = p.elapsedS / static_cast<double>(p.done) * static_cast<double>(total - p.done);
      lock.unlock();
      options.onProgress(p);
      lock.lock();
    }
  }
  for (auto& t : pool) t.join();
  if (failed) throw DatasetError(error);
}

/// stb's terse reason, with what it means where that is known.
std::string stbReason() {
  const std::string r = stbi_failure_reason() ? stbi_failure_reason() : "unknown";
  if (r == "unknown image type") return "not a PNG, JPEG or BMP file";
  if (r == "outofdata" || r == "bad zlib header" || r == "no SOI" || r == "expected marker")
    return "truncated or damaged: " + r;
  if (r == "too large") return "too large: over 16384 pixels a side, or damaged";
  return r;
}

}  // namespace

ImageFolderListing listImageFolder(const std::string& path) {
  const std::string layout = "an image folder holds train/<class>/*.png and test/<class>/*.png ("
                             + std::string(kImageExtensions) + ")";
  if (path.empty())
    throw DatasetError("no dataset folder is set: set dataset.path to the folder holding train/ "
                       "and test/ (" + layout + ")");
  std::error_code ec;
  if (!fs::is_directory(path, ec)) throw DatasetError(path + ": dataset folder does not exist");
  ImageFolderListing listing;
  listing.root = path;
  std::map<std::string, std::vector<ImageFile>> splits[2];
  const char* names[2] = {"train", "test"};
  for (int s = 0; s < 2; ++s) {
    const fs::path dir = fs::path(path) / names[s];
    if (!fs::is_directory(dir, ec))
      throw DatasetError(path + ": there is no " + names[s] + "/ folder; " + layout);
    splits[s] = listSplit(dir);
  }
  size_t images = 0;
  for (const auto& split : splits)
    for (const auto& [name, files] : split) images += files.size();
  if (images == 0)
    throw DatasetError(path + ": no images at all under train/ and test/; " + layout);
  for (int s = 0; s < 2; ++s) {
    if (splits[s].empty())
      throw DatasetError((fs::path(path) / names[s]).string() +
                         ": no class folders; put each class's images in " + names[s] +
                         "/<class>/");
    for (const auto& [name, files] : splits[s])
      if (files.empty())
        throw DatasetError((fs::path(path) / names[s] / name).string() + ": an empty class folder (no " +
                           kImageExtensions + " files); add its images or remove the folder");
  }
  if (splits[0].size() < 2)
    throw DatasetError((fs::path(path) / "train").string() + ": only one class folder ('" +
                       splits[0].begin()->first +
                       "'); a classifier needs at least two: add a folder per class");
  std::vector<std::string> onlyTrain, onlyTest;
  for (const auto& [name, files] : splits[0])
    if (!splits[1].count(name)) onlyTrain.push_back(name);
  for (const auto& [name, files] : splits[1])
    if (!splits[0].count(name)) onlyTest.push_back(name);
  if (!onlyTrain.empty() || !onlyTest.empty()) {
    std::string what = path + ": train/ and test/ have different classes:";
    if (!onlyTrain.empty()) what += " " + joinNames(onlyTrain) + " only in train/";
    if (!onlyTrain.empty() && !onlyTest.empty()) what += ";";
    if (!onlyTest.empty()) what += " " + joinNames(onlyTest) + " only in test/";
    throw DatasetError(what + "; give both the same class folders");
  }
  for (const auto& [name, files] : splits[0]) listing.classes.push_back(name);
  listing.train = interleave(splits[0]);
  listing.test = interleave(splits[1]);
  return listing;
}

std::vector<int64_t> imageFolderSampleShape(const DatasetSpec& spec,
                                            const ImageFolderListing& listing) {
  if (spec.channels != 1 && spec.channels != 3)
    throw SpecError("dataset.channels", "must be 1 (grey) or 3 (RGB)");
  if (!spec.size.empty()) {
    if (spec.size.size() != 2 || spec.size[0] < 1 || spec.size[1] < 1)
      throw SpecError("dataset.size", "must be [height, width] in pixels, or [] (the first "
                                      "training image's size)");
    return {spec.channels, spec.size[0], spec.size[1]};
  }
  const std::string& first = listing.train.at(0).path;
  const std::vector<uint8_t> bytes = readFileBytes(first);
  int w = 0, h = 0, comp = 0;
  if (!stbi_info_from_memory(bytes.data(), static_cast<int>(bytes.size()), &w, &h, &comp))
    throw DatasetError(first + ": cannot read the image (" + stbReason() +
                       "); replace or remove the file");
  return {spec.channels, h, w};
}

std::vector<uint8_t> decodeImageFile(const std::string& path, int channels, int h, int w) {
  const std::vector<uint8_t> bytes = readFileBytes(path);
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    throw DatasetError(path + ": the file is larger than 2 GiB; not an image this reads");
  int iw = 0, ih = 0, comp = 0;
  std::unique_ptr<stbi_uc, void (*)(void*)> pixels(
      stbi_load_from_memory(bytes.data(), static_cast<int>(bytes.size()), &iw, &ih, &comp,
                            channels),
      stbi_image_free);
  if (!pixels)
    throw DatasetError(path + ": cannot decode the image (" + stbReason() +
                       "); replace or remove the file");
  const size_t plane = static_cast<size_t>(h) * static_cast<size_t>(w);
  std::vector<uint8_t> hwc;
  const stbi_uc* src = pixels.get();
  if (iw != w || ih != h) {
    hwc.resize(plane * static_cast<size_t>(channels));
    if (!stbir_resize_uint8(pixels.get(), iw, ih, 0, hwc.data(), w, h, 0, channels))
      throw DatasetError(path + ": cannot resize the image from " + std::to_string(ih) + "x" +
                         std::to_string(iw) + " to " + std::to_string(h) + "x" +
                         std::to_string(w));
    src = hwc.data();
  }
  std::vector<uint8_t> chw(plane * static_cast<size_t>(channels));
  for (size_t p = 0; p < plane; ++p)
    for (int ch = 0; ch < channels; ++ch)
      chw[static_cast<size_t>(ch) * plane + p] = src[p * static_cast<size_t>(channels) +
                                                     static_cast<size_t>(ch)];
  return chw;
}

std::string defaultImageCacheDir() {
  if (const char* v = std::getenv("STAGEWISE_CACHE"); v && *v) return v;
  fs::path base;
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg && fs::path(xdg).is_absolute())
    base = xdg;
  else if (const char* home = std::getenv("HOME"); home && *home)
    base = fs::path(home) / ".local" / "share";
  else
    base = ".";
  return (base / "stagewise" / "cache").string();
}

ImageLoadResult loadImageFolder(const DatasetSpec& spec, const ImageLoadOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  const ImageFolderListing listing = limited(listImageFolder(spec.path), spec);
  const std::vector<int64_t> shape = imageFolderSampleShape(spec, listing);
  ImageLoadResult result;
  result.classes = listing.classes;
  const ImageCacheKey key = imageCacheKey(listing, shape);
  if (options.useCache) {
    const std::string dir = options.cacheDir.empty() ? defaultImageCacheDir() : options.cacheDir;
    result.cacheFile = imageCachePath(dir, key);
    if (auto cached = readImageCache(result.cacheFile, key, result.cacheProblem)) {
      result.data = std::move(*cached);
      result.fromCache = true;
      result.seconds = secondsSince(t0);
      return result;
    }
  }
  result.data.name = "image_folder";
  result.data.numClasses = static_cast<int>(listing.classes.size());
  decodeAll(listing, shape, result.data, options);
  result.decoded = result.data.train.size() + result.data.test.size();
  if (options.useCache) {
    if (std::string problem = writeImageCache(result.cacheFile, key, result.data);
        !problem.empty()) {
      result.cacheProblem = problem;
      result.cacheFile.clear();
    }
  }
  result.seconds = secondsSince(t0);
  return result;
}

int64_t imageFolderTrainCount(const DatasetSpec& spec) {
  const auto n = static_cast<int64_t>(listImageFolder(spec.path).train.size());
  return spec.limitTrain > 0 ? std::min(n, spec.limitTrain) : n;
}

}  // namespace stagewise::engine
