// libFuzzer: text corpora (dataset.kind "text"). The binary check, the fortune separators and
// the split must take any bytes; anything but a DatasetError is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "stagewise/engine/dataset.h"
#include "stagewise/engine/text_corpus.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stagewise::engine;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  (void)binaryReason(bytes);
  const std::string text = fortuneSeparatorsAsBlankLines(bytes);
  if (text.size() > bytes.size()) __builtin_trap();
  const int context = 1 + static_cast<int>(size % 64);
  try {
    const int64_t begin = textTestBegin(static_cast<int64_t>(text.size()), 0.1, context, "fuzz");
    const int64_t o = textWindowOffset(size, static_cast<int64_t>(size), begin, context);
    if (o < 0 || o + context + 1 > begin) __builtin_trap();
    for (int64_t t : textTestOffsets(static_cast<int64_t>(text.size()) - begin, context))
      if (begin + t + context + 1 > static_cast<int64_t>(text.size())) __builtin_trap();
  } catch (const DatasetError&) {
  }
  return 0;
}
