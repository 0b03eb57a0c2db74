#include "runtime/memory_meter.h"

#include <c10/core/CPUAllocator.h>
#include <c10/core/Device.h>

// The CUDA statistics need a CUDA LibTorch (engine/CMakeLists.txt defines STAGEWISE_CUDA_MEMORY
// when it finds one); Debian's LibTorch is CPU-only.
#if defined(STAGEWISE_CUDA_MEMORY) && __has_include(<c10/cuda/CUDACachingAllocator.h>)
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#define STAGEWISE_HAS_CUDA_STATS 1
#endif

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace stagewise::engine::memory {

namespace {

struct alignas(64) Slot {
  std::atomic<int64_t> current{0};
  std::atomic<int64_t> peak{0};
  std::atomic<bool> used{false};
};
std::array<Slot, kSlots> g_slots;
std::mutex g_acquireMutex;
thread_local int t_tag = -1;

/// Written before the data of every allocation: the data stays 64-byte aligned.
struct alignas(64) Header {
  void* baseContext;
  c10::DeleterFnPtr baseDeleter;
  int64_t bytes;
  int slot;
};
static_assert(sizeof(Header) == 64);

void countedFree(void* data) {
  auto* h = reinterpret_cast<Header*>(static_cast<char*>(data) - sizeof(Header));
  if (h->slot >= 0)
    g_slots[static_cast<size_t>(h->slot)].current.fetch_sub(h->bytes, std::memory_order_relaxed);
  h->baseDeleter(h->baseContext);
}

class CountingAllocator final : public c10::Allocator {
 public:
  explicit CountingAllocator(c10::Allocator* base) : m_base(base) {}
  c10::DataPtr allocate(size_t n) const override {
    c10::DataPtr base = m_base->allocate(n + sizeof(Header));
    auto* raw = static_cast<char*>(base.get());
    const c10::Device device = base.device();
    auto* h = reinterpret_cast<Header*>(raw);
    h->baseDeleter = base.get_deleter();
    h->baseContext = base.release_context();
    h->bytes = static_cast<int64_t>(n);
    h->slot = t_tag;
    if (h->slot >= 0) {
      Slot& s = g_slots[static_cast<size_t>(h->slot)];
      const int64_t now = s.current.fetch_add(h->bytes, std::memory_order_relaxed) + h->bytes;
      int64_t seen = s.peak.load(std::memory_order_relaxed);
      while (now > seen && !s.peak.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
      }
    }
    void* data = raw + sizeof(Header);
    return {data, data, &countedFree, device};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &countedFree; }

 private:
  c10::Allocator* m_base;
};

std::atomic<bool> g_installed{false};

constexpr int kDevices = 64;

/// The CUDA device index of "cuda" / "cuda:N"; -1 for anything else or an unparsable name.
[[maybe_unused]] int cudaIndex(const std::string& device) {
  if (device.rfind("cuda", 0) != 0) return -1;
  try {
    const c10::Device d(device);
    const int index = d.has_index() ? d.index() : 0;
    return index < kDevices ? index : -1;
  } catch (const std::exception&) {
    return -1;
  }
}

}  // namespace

bool install() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* env = std::getenv("STAGEWISE_COUNT_MEMORY");
    if (env && std::strcmp(env, "0") == 0) return;
    static CountingAllocator allocator(c10::GetCPUAllocator());
    c10::SetCPUAllocator(&allocator, /*priority=*/1);
    g_installed = c10::GetCPUAllocator() == &allocator;
  });
  return g_installed.load();
}

bool installed() {
  return g_installed.load();
}

int acquire(int n) {
  std::lock_guard lock(g_acquireMutex);
  for (int first = 0; first + n <= kSlots; ++first) {
    bool free = true;
    for (int i = first; i < first + n && free; ++i)
      free = !g_slots[static_cast<size_t>(i)].used.load();
    if (!free) continue;
    for (int i = first; i < first + n; ++i) {
      Slot& s = g_slots[static_cast<size_t>(i)];
      s.used = true;
      s.current = 0;
      s.peak = 0;
    }
    return first;
  }
  return -1;
}

void release(int first, int n) {
  if (first < 0) return;
  std::lock_guard lock(g_acquireMutex);
  for (int i = first; i < first + n && i < kSlots; ++i)
    g_slots[static_cast<size_t>(i)].used = false;
}

void tagThread(int slot) {
  t_tag = slot >= 0 && slot < kSlots ? slot : -1;
}
int threadTag() {
  return t_tag;
}
int64_t current(int slot) {
  return slot >= 0 && slot < kSlots ? g_slots[static_cast<size_t>(slot)].current.load() : 0;
}
int64_t peak(int slot) {
  return slot >= 0 && slot < kSlots ? g_slots[static_cast<size_t>(slot)].peak.load() : 0;
}

bool cudaStatistics() {
#ifdef STAGEWISE_HAS_CUDA_STATS
  return true;
#else
  return false;
#endif
}

#ifdef STAGEWISE_HAS_CUDA_STATS
namespace {
namespace cca = c10::cuda::CUDACachingAllocator;
constexpr size_t kAggregate = 0;  // StatType::AGGREGATE, the sum over the small and large pools
std::array<std::atomic<int64_t>, kDevices> g_deviceBaseline{};
bool deviceExists(int index) {
  return index >= 0 && index < static_cast<int>(c10::cuda::device_count());
}
/// The device's allocated bytes, summed over the small and large pools.
auto allocated(int index) {  // a Stat (its namespace moved in later LibTorch versions)
  return cca::getDeviceStats(static_cast<c10::DeviceIndex>(index)).allocated_bytes[kAggregate];
}
}  // namespace

void startDeviceWindow(const std::string& device) {
  const int index = cudaIndex(device);
  if (!deviceExists(index)) return;
  try {  // statistics never fail a run
    cca::resetPeakStats(static_cast<c10::DeviceIndex>(index));
    g_deviceBaseline[static_cast<size_t>(index)] = allocated(index).current;
  } catch (const std::exception&) {
  }
}

int64_t devicePeak(const std::string& device) {
  const int index = cudaIndex(device);
  if (!deviceExists(index)) return -1;
  try {
    const int64_t base = g_deviceBaseline[static_cast<size_t>(index)].load();
    return std::max<int64_t>(0, allocated(index).peak - base);
  } catch (const std::exception&) {
    return -1;
  }
}
#else
void startDeviceWindow(const std::string&) {}
int64_t devicePeak(const std::string&) {
  return -1;
}
#endif

int64_t stagePeak(int slot, const std::string& device) {
  if (device.rfind("cuda", 0) == 0) return devicePeak(device);  // -1 for a bad index
  return slot >= 0 ? peak(slot) : -1;
}

}  // namespace stagewise::engine::memory
