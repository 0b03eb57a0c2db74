#pragma once
#include <string>

/// glibc malloc's thresholds, set for training (docs/architecture.md, "Freed tensors stay in the
/// process"). glibc by default serves a large block (128 KiB and up, the threshold rising with
/// what is freed) with its own mmap and returns free memory at the top of a heap to the kernel
/// (above 128 KiB, likewise): a training step that frees its activations and allocates them
/// again then takes fresh pages from the kernel, a page fault for every 4 KiB touched.

namespace stagewise::engine {

/// Sets the mmap threshold to 32 MiB (glibc's largest) and the trim threshold to 256 MiB, once
/// per process, unless the user has set malloc's own variables (MALLOC_MMAP_THRESHOLD_,
/// MALLOC_TRIM_THRESHOLD_, MALLOC_TOP_PAD_, or glibc.malloc tunables in GLIBC_TUNABLES) or
/// STAGEWISE_MALLOC_TUNING=0. Runs, profiles and engineInfo() call it; calling it again does
/// nothing.
void tuneMalloc();

/// What tuneMalloc() did, e.g. "mmap threshold 32 MiB, trim threshold 256 MiB (Stagewise
/// default)" or "glibc defaults (STAGEWISE_MALLOC_TUNING=0)"; calls tuneMalloc() first.
std::string mallocDescription();

}  // namespace stagewise::engine
