// Why: a LibTorch training step allocates its activations, gradients and temporaries, and frees
// them by the end of the step (some on another stage's thread). With glibc's defaults a block of
// 128 KiB or more is mmapped and unmapped on free until the dynamic threshold has risen past its
// size, and the free memory at the top of a heap goes back to the kernel once it exceeds the trim
// threshold; both make the next operation fault its pages in again. A run's stage threads get past
// that within their first steps, so training is as fast either way; a profile, which times each
// operation a few times in a fresh process, does not: without these thresholds it predicts the
// CNN preset's local speed 1.31 times and the ViT's 1.14 times lower than with them, while the
// runs themselves do not change (bench/engine/malloc_tuning.sh, docs/benchmarks.md, "Freed
// tensors stay in the process"). They are kept so that a profile runs as the run does.
#include "stagewise/engine/malloc_tuning.h"

#include <cstdlib>
#include <cstring>
#include <mutex>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace stagewise::engine {

namespace {

// Under AddressSanitizer or ThreadSanitizer malloc is the sanitizer's own, and its mallopt does
// nothing (returns 0); GCC and Clang both define these macros for such builds.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitizerAllocator = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitizerAllocator = true;
#else
constexpr bool kSanitizerAllocator = false;
#endif
#else
constexpr bool kSanitizerAllocator = false;
#endif

constexpr int kMmapThreshold = 32 << 20;   // glibc's largest: HEAP_MAX_SIZE / 2 on 64-bit
constexpr int kTrimThreshold = 256 << 20;  // free memory kept at the top of a heap

std::once_flag g_once;
std::string g_description = "glibc defaults";

bool userSetMalloc() {
  for (const char* name : {"MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_"})
    if (std::getenv(name) != nullptr) return true;
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  return tunables != nullptr && std::strstr(tunables, "glibc.malloc.") != nullptr;
}

}  // namespace

void tuneMalloc() {
  std::call_once(g_once, [] {
    const char* off = std::getenv("STAGEWISE_MALLOC_TUNING");
    if (off != nullptr && std::strcmp(off, "0") == 0) {
      g_description = "glibc defaults (STAGEWISE_MALLOC_TUNING=0)";
      return;
    }
    if (userSetMalloc()) {
      g_description = "as set in the environment (MALLOC_*_ or GLIBC_TUNABLES)";
      return;
    }
    if (kSanitizerAllocator) {
      g_description = "the sanitizer's allocator (thresholds not applied)";
      return;
    }
#if defined(__GLIBC__)
    // mallopt returns 1 on success; a fixed M_MMAP_THRESHOLD also stops glibc's adjustment.
    if (mallopt(M_MMAP_THRESHOLD, kMmapThreshold) == 1 &&
        mallopt(M_TRIM_THRESHOLD, kTrimThreshold) == 1)
      g_description = "mmap threshold 32 MiB, trim threshold 256 MiB (Stagewise default)";
    else
      g_description = "glibc defaults (mallopt failed)";
#else
    g_description = "the C library's defaults (not glibc)";
#endif
  });
}

std::string mallocDescription() {
  tuneMalloc();
  return g_description;
}

}  // namespace stagewise::engine
