// libFuzzer: IDX parsing, raw and gzip. Anything but a DatasetError is a bug.
#include <cstddef>
#include <cstdint>

#include "stagewise/engine/dataset.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto a = stagewise::engine::parseIdxMaybeGzip(data, size, "fuzz.idx");
    size_t n = 1;
    for (auto d : a.dims) n *= static_cast<size_t>(d);
    if (n != a.data.size()) __builtin_trap();  // the promise a parsed array keeps
  } catch (const stagewise::engine::DatasetError&) {
  }
  return 0;
}
