// CUDA stages' peak_memory_bytes on a machine without CUDA: the engine's memory meter
// (engine/src/runtime/memory_meter.cpp), compiled as a CUDA LibTorch build compiles it
// (STAGEWISE_CUDA_MEMORY, the real c10/cuda/CUDACachingAllocator.h of LibTorch 1.13), reads a
// fake caching allocator's statistics (fake_cuda/). What it checks: the window's baseline and
// reset, the device a name means, one figure per device, and that no statistics failure fails a
// run. On a GPU, tests/gpu/gpu_smoke.sh checks the real allocator.
#include <QtTest>

#include "fake_cuda/fake_caching_allocator.h"
#include "runtime/memory_meter.h"

using namespace stagewise::engine;

class TestCudaMemoryStats : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void init() {
    fake_cuda::g_devices = 2;
    fake_cuda::g_device = {};
  }

  void buildReadsTheStatistics() { QVERIFY(memory::cudaStatistics()); }

  /// The window starts at the bytes held when the run has built its stages (the weights): the
  /// peak counts what the run allocated over them, after the earlier peak was reset.
  void peakIsOverTheWindowsBaseline() {
    fake_cuda::allocate(1, 5000);  // an earlier run's peak
    fake_cuda::release(1, 4000);   // 1000 bytes of weights stay
    memory::startDeviceWindow("cuda:1");
    QCOMPARE(fake_cuda::g_device[1].resets, 1);
    QCOMPARE(memory::devicePeak("cuda:1"), int64_t{0});
    fake_cuda::allocate(1, 3000);
    fake_cuda::release(1, 3000);
    fake_cuda::allocate(1, 512);
    QCOMPARE(memory::devicePeak("cuda:1"), int64_t{3000});
    QCOMPARE(memory::stagePeak(-1, "cuda:1"), int64_t{3000});  // a CUDA stage: the device's
    QCOMPARE(memory::stagePeak(7, "cuda:1"), int64_t{3000});   // whatever its CPU slot holds
    QCOMPARE(fake_cuda::g_device[0].resets, 0);                // the other device is untouched
    fake_cuda::release(1, 1512);                               // frees below the baseline
    QCOMPARE(memory::devicePeak("cuda:1"), int64_t{3000});
    memory::startDeviceWindow("cuda:1");  // a new run: the window starts again
    QCOMPARE(memory::devicePeak("cuda:1"), int64_t{0});
  }

  /// "cuda" is device 0; stages that share a device share its figure.
  void oneFigurePerDevice() {
    memory::startDeviceWindow("cuda");
    fake_cuda::allocate(0, 2048);
    QCOMPARE(memory::devicePeak("cuda"), int64_t{2048});
    QCOMPARE(memory::stagePeak(0, "cuda:0"), int64_t{2048});
    QCOMPARE(memory::stagePeak(1, "cuda:0"), int64_t{2048});
    QCOMPARE(memory::devicePeak("cuda:1"), int64_t{0});
  }

  /// A device this process cannot see, or a name that is not one, reads as not measured.
  void absentDevicesAreNotMeasured() {
    memory::startDeviceWindow("cuda:2");
    memory::startDeviceWindow("cuda:x");
    QCOMPARE(memory::devicePeak("cuda:2"), int64_t{-1});
    QCOMPARE(memory::stagePeak(0, "cuda:x"), int64_t{-1});
    QCOMPARE(memory::devicePeak("cpu"), int64_t{-1});
    QCOMPARE(memory::stagePeak(-1, "cpu"), int64_t{-1});  // a CPU stage without a slot
    fake_cuda::g_devices = 0;
    QCOMPARE(memory::devicePeak("cuda:0"), int64_t{-1});
  }

  /// Statistics never fail a run: a throwing allocator reads as not measured.
  void failuresAreNotMeasured() {
    fake_cuda::g_device[0].throws = true;
    memory::startDeviceWindow("cuda:0");  // must not throw
    QCOMPARE(memory::devicePeak("cuda:0"), int64_t{-1});
  }
};

QTEST_GUILESS_MAIN(TestCudaMemoryStats)
#include "test_cuda_memory_stats.moc"
