// The three functions of LibTorch 1.13's c10_cuda that the memory meter calls, declared by the
// real c10/cuda headers and defined here over fake devices (fake_caching_allocator.h).
#include "fake_caching_allocator.h"

#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>

#include <algorithm>
#include <stdexcept>

namespace fake_cuda {
int g_devices = 0;
std::array<Device, kMax> g_device;

void allocate(int device, int64_t bytes) {
  Device& d = g_device.at(static_cast<size_t>(device));
  d.current += bytes;
  d.peak = std::max(d.peak, d.current);
}
void release(int device, int64_t bytes) {
  g_device.at(static_cast<size_t>(device)).current -= bytes;
}
}  // namespace fake_cuda

namespace c10::cuda {

DeviceIndex device_count() noexcept {
  return static_cast<DeviceIndex>(fake_cuda::g_devices);
}

namespace CUDACachingAllocator {

DeviceStats getDeviceStats(int device) {
  const fake_cuda::Device& d = fake_cuda::g_device.at(static_cast<size_t>(device));
  if (d.throws) throw std::runtime_error("fake CUDA error");
  DeviceStats stats;
  auto& aggregate = stats.allocated_bytes[static_cast<size_t>(StatType::AGGREGATE)];
  aggregate.current = d.current;
  aggregate.peak = d.peak;
  return stats;
}

void resetPeakStats(int device) {
  fake_cuda::Device& d = fake_cuda::g_device.at(static_cast<size_t>(device));
  if (d.throws) throw std::runtime_error("fake CUDA error");
  d.peak = d.current;  // as the real allocator does
  ++d.resets;
}

}  // namespace CUDACachingAllocator
}  // namespace c10::cuda
