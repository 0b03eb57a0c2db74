#pragma once
// A fake of LibTorch's CUDA caching allocator statistics (fake_caching_allocator.cpp), for
// test_cuda_memory_stats: each device has its allocated bytes, current and peak, as the real
// allocator keeps them.
#include <array>
#include <cstdint>

namespace fake_cuda {

struct Device {
  int64_t current = 0, peak = 0;
  int resets = 0;       ///< resetPeakStats calls
  bool throws = false;  ///< the statistics calls throw, as a broken driver would make them
};
inline constexpr int kMax = 4;
extern int g_devices;  ///< what c10::cuda::device_count() answers
extern std::array<Device, kMax> g_device;

void allocate(int device, int64_t bytes);
void release(int device, int64_t bytes);

}  // namespace fake_cuda
