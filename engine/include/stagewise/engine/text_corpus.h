#pragma once
// Text for language models (dataset.kind "text"), read without LibTorch (fuzzed): byte-level
// tokens (a vocabulary of 256), split by position, windows drawn deterministically.

#include <cstdint>
#include <string>
#include <vector>

namespace stagewise::engine {

/// The bytes every sample is made of, and where they came from.
struct TextCorpus {
  std::string text;                ///< the files' text in name order, one '\n' between files
  std::vector<std::string> files;  ///< the files read, in order
  /// Files of a folder that were not read, each "NAME (why)": binary data (index files, for
  /// example), or a link to a file already read.
  std::vector<std::string> skipped;
};

/// Debian's fortunes package (about 1.3 MB of English): $STAGEWISE_TEXT_CORPUS when set, else
/// /usr/share/games/fortunes.
std::string defaultTextCorpusPath();

/// Reads a UTF-8 text file, or a folder's regular text files in name order (binary files are
/// skipped and named in `skipped`; a symbolic link is followed once: a link to a file already
/// read is skipped). Files in the fortune format (a NAME.dat index beside them) have their `%`
/// separator lines read as blank lines. An empty `path` reads defaultTextCorpusPath(). Throws
/// DatasetError naming the file and what to fix: missing, empty, binary, no text at all.
TextCorpus readTextCorpus(const std::string& path);

/// Why `bytes` is not text ("" when it is): any NUL byte, or more than 1 % of the bytes not
/// part of valid UTF-8.
std::string binaryReason(const std::string& bytes);

/// The fortune format's separators: every line holding only "%" becomes an empty line.
std::string fortuneSeparatorsAsBlankLines(const std::string& text);

/// Where the test text begins: the last `testFraction` of the bytes (by position). Throws
/// DatasetError when either side is shorter than `context` + 1 bytes (a window and its next
/// byte), naming `what`.
int64_t textTestBegin(int64_t bytes, double testFraction, int context, const std::string& what);

/// The training text's length: the `testBegin` bytes before the test text, or with
/// dataset.limit_train N > 0 only the first N x context + 1 of them, so an epoch holds at most N
/// windows (the windows are drawn from that prefix alone).
int64_t textTrainBytes(int64_t testBegin, int64_t limitTrain, int context);

/// Training windows per epoch: training bytes / context (at least 1).
int64_t textWindowsPerEpoch(int64_t trainBytes, int context);

/// The start of training window `index` (counted over the whole run, epochs included) in a
/// training text of `trainBytes` bytes: uniform over [0, trainBytes - context - 1], a pure
/// function of (seed, index), so a resumed run draws the same windows.
int64_t textWindowOffset(uint64_t seed, int64_t index, int64_t trainBytes, int context);

/// The test windows' starts in a test text of `testBytes` bytes: 0, context, 2*context, ...
/// while a whole window and its next byte fit.
std::vector<int64_t> textTestOffsets(int64_t testBytes, int context);

}  // namespace stagewise::engine
