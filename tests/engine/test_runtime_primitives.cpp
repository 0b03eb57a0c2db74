// Torch-free concurrency pieces of the runtime, and the fake engine through the public API.
#include <QtTest>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <set>
#include <thread>

#include "metrics/reporter.h"
#include "runtime/bounded_queue.h"
#include "runtime/run_control.h"
#include "stagewise/engine/fake_engine.h"
#include "stagewise/engine/malloc_tuning.h"

#if defined(__GLIBC__)
#include <malloc.h>
void* volatile g_sink = nullptr;  // the malloc test's block, so the compiler keeps it
#endif

using namespace stagewise::engine;
using namespace std::chrono_literals;

namespace {
struct Collect : RunObserver {
  std::vector<MetricPoint> points;
  std::vector<RunEvent> events;
  std::set<std::thread::id> threads;
  bool started = false, finished = false;
  RunSummary summary;
  void onStart(const RunInfo&) override { started = true; }
  void onMetrics(const std::vector<MetricPoint>& p) override {
    threads.insert(std::this_thread::get_id());
    points.insert(points.end(), p.begin(), p.end());
  }
  void onEvent(const RunEvent& e) override { events.push_back(e); }
  void onFinish(const RunSummary& s) override { finished = true, summary = s; }
};
}  // namespace

class TestRuntimePrimitives : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void queueIsFifoAndBounded() {
    BoundedQueue<int> q(2);
    QVERIFY(q.push(1));
    QVERIFY(q.push(2));
    std::atomic<bool> pushed{false};
    std::thread t([&] { q.push(3), pushed = true; });
    std::this_thread::sleep_for(50ms);
    QVERIFY(!pushed);  // full: the producer blocks
    QCOMPARE(*q.pop(), 1);
    t.join();
    QVERIFY(pushed);
    QCOMPARE(*q.pop(), 2);
    QCOMPARE(*q.pop(), 3);
  }

  void closeWakesBlockedProducerAndConsumer() {
    BoundedQueue<int> full(1), empty(1);
    full.push(0);
    std::thread producer([&] { QVERIFY(!full.push(1)); });
    std::thread consumer([&] { QVERIFY(!empty.pop().has_value()); });
    std::this_thread::sleep_for(30ms);
    auto t0 = std::chrono::steady_clock::now();
    full.close();
    empty.close();
    producer.join();
    consumer.join();
    QVERIFY(std::chrono::steady_clock::now() - t0 < 1s);
  }

  void closeWithoutDropLetsConsumerDrain() {
    BoundedQueue<int> q(4);
    q.push(1), q.push(2);
    q.close(/*drop=*/false);
    QCOMPARE(*q.pop(), 1);
    QCOMPARE(*q.pop(), 2);
    QVERIFY(!q.pop());
    QVERIFY(!q.push(3));
  }

  void pauseBlocksUntilResumeOrStop() {
    RunControl c;
    c.setState(RunState::Running);
    c.pause();
    QVERIFY(c.state() == RunState::Paused);
    std::atomic<int> passed{0};
    std::thread t([&] { passed = c.waitIfPaused() ? 1 : 2; });
    std::this_thread::sleep_for(30ms);
    QCOMPARE(passed.load(), 0);
    c.resume();
    t.join();
    QCOMPARE(passed.load(), 1);
    c.pause();
    std::thread u([&] { passed = c.waitIfPaused() ? 1 : 2; });
    c.requestStop();
    u.join();
    QCOMPARE(passed.load(), 2);
    QVERIFY(!c.sleepFor(std::chrono::seconds(5)));  // returns at once once stopped
  }

  void pausedTimeIsAccounted() {
    RunControl c;
    c.setState(RunState::Running);
    QVERIFY(c.pausedFor() == std::chrono::steady_clock::duration::zero());
    c.pause();
    std::this_thread::sleep_for(60ms);
    c.pause();  // a second pause does not restart the clock
    std::this_thread::sleep_for(60ms);
    const auto during = c.pausedFor();
    QVERIFY(during >= 115ms);  // counted while the pause goes on
    c.resume();
    const auto after = c.pausedFor();
    std::this_thread::sleep_for(50ms);
    QVERIFY(c.pausedFor() == after);  // running time is not paused time
    c.pause();
    std::this_thread::sleep_for(40ms);
    c.requestStop();  // a stop ends the pause
    const auto stopped = c.pausedFor();
    QVERIFY(stopped >= after + 35ms);
    std::this_thread::sleep_for(40ms);
    QVERIFY(c.pausedFor() == stopped);
  }

  void reporterDeliversEverythingFromOneThread() {
    Collect c;
    {
      Reporter r(&c, 5ms);
      r.start(RunInfo{});
      std::vector<std::thread> producers;
      for (int k = 0; k < 4; ++k)
        producers.emplace_back([&r, k] {
          for (int i = 0; i < 1000; ++i) r.add(MetricPoint{"loss", k, -1, i, 0, double(i)});
        });
      for (auto& p : producers) p.join();
      r.event({EventKind::Info, 0, -1, "hello"});
      r.finish(RunSummary{});
    }
    QVERIFY(c.started && c.finished);
    QCOMPARE(c.points.size(), size_t{4000});
    QVERIFY(c.threads.size() <= 2);  // the delivery thread, plus finish() on the caller
    // per producer order is kept
    std::vector<int64_t> last(4, -1);
    for (auto& p : c.points) {
      QVERIFY(p.step > last[size_t(p.stage)]);
      last[size_t(p.stage)] = p.step;
    }
    QCOMPARE(c.events.size(), size_t{1});
  }

  void mallocTuningKeepsLargeBlocksInTheProcess() {
#if defined(__GLIBC__)
    for (const char* name : {"STAGEWISE_MALLOC_TUNING", "MALLOC_MMAP_THRESHOLD_",
                             "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "GLIBC_TUNABLES"})
      if (std::getenv(name) != nullptr) QSKIP("malloc's thresholds are set in the environment");
    if (mallocDescription().find("sanitizer") != std::string::npos)
      QSKIP("a sanitizer build: malloc is the sanitizer's, mallopt does nothing");
    QVERIFY(mallocDescription().find("Stagewise default") != std::string::npos);
    // 16 MiB: glibc's own threshold (128 KiB, rising only as mmapped blocks this large are freed)
    // would mmap it, and unmap it on free; tuned, it comes from the heap and stays there.
    constexpr size_t kBytes = 16u << 20;
    const size_t mapped = mallinfo2().hblks;
    void* p = std::malloc(kBytes);
    QVERIFY(p);
    std::memset(p, 1, kBytes);
    g_sink = p;  // so the compiler keeps the allocation
    QCOMPARE(mallinfo2().hblks, mapped);
    std::free(p);
    // Freed, it stays in the heap for the next step rather than going back to the kernel.
    QVERIFY(mallinfo2().fordblks >= kBytes);
#else
    QSKIP("not glibc");
#endif
  }

  void fakeRunCompletesPausesAndStops() {
    ExperimentSpec spec = parseSpec(
        R"({"dataset":{"kind":"synthetic"},"partition":{"cuts":[2,4]},"eval":{"interval":10},"probe":{"interval":10}})");
    Collect c;
    auto run = createFakeRun(spec, &c, FakeScript{60, 0.001, -1, 0, 1});
    run->start();
    RunSummary s = run->wait();
    QVERIFY(s.status == RunStatus::Completed);
    QCOMPARE(s.steps, int64_t{60});
    QCOMPARE(s.stages.size(), size_t{3});
    QVERIFY(c.finished);
    int losses = 0;
    for (auto& p : c.points) losses += p.name == series::kLoss;
    QCOMPARE(losses, 3 * 60);

    Collect c2;
    auto slow = createFakeRun(spec, &c2, FakeScript{100000, 0.002, -1, 0, 1});
    slow->start();
    std::this_thread::sleep_for(50ms);
    slow->pause();
    QVERIFY(slow->state() == RunState::Paused);
    auto at = slow->progress().step;
    std::this_thread::sleep_for(60ms);
    QVERIFY(slow->progress().step <= at + 1);
    slow->resume();
    slow->requestStop();
    QVERIFY(slow->waitFor(1s));
    QVERIFY(slow->wait().status == RunStatus::Stopped);

    Collect c3;
    auto failing = createFakeRun(spec, &c3, FakeScript{100, 0.0, 30, 1, 1});
    failing->start();
    RunSummary f = failing->wait();
    QVERIFY(f.status == RunStatus::Failed);
    QCOMPARE(f.failedStage, 1);
    QVERIFY(f.error.find("stage 1") != std::string::npos);
  }
};

QTEST_GUILESS_MAIN(TestRuntimePrimitives)
#include "test_runtime_primitives.moc"
