#pragma once
// Measured memory per stage: a counting CPU allocator (installed once, c10::SetCPUAllocator)
// that counts the bytes each allocation requested for the slot of the thread that made it, and
// takes them off that slot when the memory is freed, by whatever thread frees it (activations
// are freed downstream). A run takes one slot per stage and tags each stage thread with its
// slot; allocations of untagged threads (the loader, the analysis thread, OpenMP workers inside
// a parallel region, BLAS's own buffers) are not counted. A stage on a CUDA device reads the
// caching allocator's statistics for its device instead (builds against a CUDA LibTorch only).
// See docs/metrics.md. Torch-free header; the allocator lives in memory_meter.cpp.

#include <cstdint>
#include <string>

namespace stagewise::engine::memory {

inline constexpr int kSlots = 256;

/// Installs the counting allocator (idempotent, thread-safe). False when it is off: the
/// environment variable STAGEWISE_COUNT_MEMORY=0 (benchmarks compare against it) or a
/// previously installed allocator of higher priority.
bool install();
bool installed();

/// A block of `n` consecutive slots for one run, their counts zeroed; -1 if none is free.
int acquire(int n);
void release(int first, int n);

/// The calling thread's allocations count for `slot` from now on (-1: not counted).
void tagThread(int slot);
int threadTag();

/// Bytes the slot's live allocations hold now, and the most they held at once.
int64_t current(int slot);
int64_t peak(int slot);

/// CUDA: whether this build reads the caching allocator's statistics (a CUDA LibTorch).
bool cudaStatistics();

/// Opens a window on a CUDA device ("cuda" or "cuda:N"; anything else is ignored): the
/// allocator's peak is reset and the bytes it holds now become the window's baseline.
void startDeviceWindow(const std::string& device);

/// The most bytes the device's caching allocator held over its window, above the baseline
/// (bytes of its allocated blocks, rounded up to the allocator's block sizes); -1 when this
/// build cannot read it. One figure per device: stages that share a device share it.
int64_t devicePeak(const std::string& device);

/// A stage's peak: its device's on CUDA, its slot's otherwise; -1 when not measured.
int64_t stagePeak(int slot, const std::string& device);

/// A resumed run's peak: this process's, never below the one its checkpoint recorded (`floor`);
/// -1 (not measured) stays -1.
inline int64_t runPeak(int64_t peak, int64_t floor) {
  return peak < 0 ? peak : (peak > floor ? peak : floor);
}

/// Tags the calling thread for its lifetime in a scope.
class ThreadTag {
 public:
  explicit ThreadTag(int slot) : m_saved(threadTag()) { tagThread(slot); }
  ~ThreadTag() { tagThread(m_saved); }
  ThreadTag(const ThreadTag&) = delete;
  ThreadTag& operator=(const ThreadTag&) = delete;

 private:
  int m_saved;
};

}  // namespace stagewise::engine::memory
