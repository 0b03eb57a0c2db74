#include "stagewise/engine/text_corpus.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "data/file_bytes.h"
#include "stagewise/engine/dataset.h"

namespace stagewise::engine {

namespace fs = std::filesystem;

std::string defaultTextCorpusPath() {
  if (const char* env = std::getenv("STAGEWISE_TEXT_CORPUS")) return env;
  return "/usr/share/games/fortunes";
}

namespace {

/// The length of the valid UTF-8 sequence starting at `i`, or 0 when the byte there starts none
/// (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
size_t utf8SequenceLength(const std::string& s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF)
    n = 2;
  else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if (b(i + k) < 0x80 || b(i + k) > 0xBF) return 0;
  return n;
}

std::string readText(const fs::path& file) {
  std::vector<uint8_t> bytes = readFileBytes(file.string());
  return std::string(bytes.begin(), bytes.end());
}

bool fortuneFormat(const fs::path& file) {
  std::error_code ec;
  fs::path dat = file;
  dat += ".dat";
  return fs::is_regular_file(dat, ec);
}

uint64_t splitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

std::string binaryReason(const std::string& bytes) {
  if (bytes.find('\0') != std::string::npos) return "it holds NUL bytes (binary data)";
  size_t invalid = 0;
  for (size_t i = 0; i < bytes.size();) {
    const size_t n = utf8SequenceLength(bytes, i);
    if (n == 0) {
      ++invalid;
      ++i;
    } else {
      i += n;
    }
  }
  if (invalid * 100 > bytes.size()) {
    char share[32];
    std::snprintf(share, sizeof share, "%.1f", 100.0 * double(invalid) / double(bytes.size()));
    return std::string("it is not UTF-8 text (") + share +
           " % of its bytes are invalid UTF-8; at most 1 % may be)";
  }
  return {};
}

std::string fortuneSeparatorsAsBlankLines(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    const bool last = end == std::string::npos;
    if (last) end = text.size();
    std::string_view line(text.data() + start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line != "%") out.append(text, start, end - start);
    if (!last) out.push_back('\n');
    start = end + 1;
  }
  return out;
}

TextCorpus readTextCorpus(const std::string& pathIn) {
  const std::string path = pathIn.empty() ? defaultTextCorpusPath() : pathIn;
  std::error_code ec;
  TextCorpus corpus;
  if (!fs::exists(path, ec)) {
    if (pathIn.empty())
      throw DatasetError(path +
                         ": the default text corpus is not installed; run scripts/deps.sh "
                         "(package fortunes) or set dataset.path to a UTF-8 text file or folder");
    throw DatasetError(path +
                       ": no such file or folder; set dataset.path to a UTF-8 text file "
                       "or a folder of text files");
  }
  if (!fs::is_directory(path, ec)) {
    std::string text = readText(path);
    if (text.empty()) throw DatasetError(path + ": the file is empty; choose a text file");
    if (std::string why = binaryReason(text); !why.empty())
      throw DatasetError(path + ": " + why + "; choose a UTF-8 text file");
    corpus.text = fortuneFormat(path) ? fortuneSeparatorsAsBlankLines(text) : std::move(text);
    corpus.files.push_back(path);
    return corpus;
  }
  std::vector<fs::path> entries;
  for (const fs::directory_entry& e : fs::directory_iterator(path, ec)) entries.push_back(e.path());
  if (ec) throw DatasetError(path + ": cannot list the folder (" + ec.message() + ")");
  std::sort(entries.begin(), entries.end());
  std::set<fs::path> seen;  // canonical paths read: a link is followed once
  for (const fs::path& entry : entries) {
    const std::string name = entry.filename().string();
    if (!fs::is_regular_file(entry, ec)) continue;  // folders, devices; a link to one too
    const fs::path target = fs::weakly_canonical(entry, ec);
    if (!seen.insert(ec ? entry : target).second) {
      corpus.skipped.push_back(name + " (a link to a file already read)");
      continue;
    }
    std::string text = readText(entry);
    if (text.empty()) {
      corpus.skipped.push_back(name + " (empty)");
      continue;
    }
    if (std::string why = binaryReason(text); !why.empty()) {
      corpus.skipped.push_back(name + " (binary)");
      continue;
    }
    if (fortuneFormat(entry)) text = fortuneSeparatorsAsBlankLines(text);
    if (!corpus.text.empty()) corpus.text.push_back('\n');
    corpus.text += text;
    corpus.files.push_back(entry.string());
  }
  if (corpus.files.empty())
    throw DatasetError(path + ": the folder holds no UTF-8 text file" +
                       (corpus.skipped.empty()
                            ? std::string()
                            : " (skipped: " + corpus.skipped.front() +
                                  (corpus.skipped.size() > 1 ? ", ..." : "") + ")") +
                       "; choose a text file or a folder of text files");
  return corpus;
}

int64_t textTestBegin(int64_t bytes, double testFraction, int context, const std::string& what) {
  if (!(testFraction > 0 && testFraction < 1))
    throw DatasetError(what + ": dataset.test_fraction must be between 0 and 1 (exclusive)");
  const int64_t test = static_cast<int64_t>(std::llround(testFraction * double(bytes)));
  const int64_t train = bytes - test;
  const int64_t need = int64_t{context} + 1;
  if (train < need || test < need)
    throw DatasetError(what + ": the text is too short for dataset.context " +
                       std::to_string(context) + ": its " + (train < need ? "training" : "test") +
                       " part holds " + std::to_string(train < need ? train : test) +
                       " bytes and needs at least " + std::to_string(need) +
                       "; lower dataset.context or use a longer text");
  return train;
}

int64_t textTrainBytes(int64_t testBegin, int64_t limitTrain, int context) {
  if (limitTrain <= 0 || limitTrain > testBegin) return testBegin;  // also: no overflow below
  return std::min(testBegin, limitTrain * std::max(1, context) + 1);
}

int64_t textWindowsPerEpoch(int64_t trainBytes, int context) {
  return std::max<int64_t>(1, trainBytes / std::max(1, context));
}

int64_t textWindowOffset(uint64_t seed, int64_t index, int64_t trainBytes, int context) {
  const int64_t span = trainBytes - context;  // offsets 0 .. trainBytes - context - 1
  if (span <= 0) return 0;
  const uint64_t h = splitMix64(splitMix64(seed ^ 0x7465787477696E64ull) + uint64_t(index));
  return static_cast<int64_t>(h % uint64_t(span));
}

std::vector<int64_t> textTestOffsets(int64_t testBytes, int context) {
  std::vector<int64_t> out;
  for (int64_t o = 0; o + context + 1 <= testBytes; o += context) out.push_back(o);
  return out;
}

}  // namespace stagewise::engine
