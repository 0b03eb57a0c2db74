// libFuzzer: CIFAR-10 binary records. Anything but a DatasetError is a bug.
#include <cstddef>
#include <cstdint>

#include "stagewise/engine/dataset.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    stagewise::engine::ByteSplit split;
    stagewise::engine::parseCifar(data, size, "fuzz.bin", size % 7, split);
    if (split.images.size() != split.labels.size() * 3072) __builtin_trap();
  } catch (const stagewise::engine::DatasetError&) {
  }
  return 0;
}
