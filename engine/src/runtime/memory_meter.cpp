#include "runtime/memory_meter.h"

#include <c10/core/CPUAllocator.h>

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

}  // namespace stagewise::engine::memory
