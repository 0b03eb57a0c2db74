// Samples from a language model (issue 34): the text the composed network writes after a prompt,
// greedy or at a temperature, from a finished run (`train --sample`) and at every evaluation
// (the Train workspace's Sample panel).
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>

#include "model/torch_model.h"
#include "probe/sample.h"
#include "recording_observer.h"
#include "stagewise/engine/dataset.h"
#include "stagewise/engine/engine.h"
#include "stagewise/engine/model_plan.h"

using namespace stagewise::engine;

namespace {

QTemporaryDir* g_dir = nullptr;

std::string corpusPath() {
  return g_dir->path().toStdString() + "/corpus.txt";
}

void writeCorpus(const std::string& path) {
  const char* words[] = {"the", "cat", "sat", "on", "a", "mat", "and", "dog", "ran", "far"};
  std::ofstream out(path, std::ios::binary);
  uint64_t x = 11;
  for (int line = 0; line < 400; ++line)
    for (int w = 0; w < 6; ++w) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      out << words[(x >> 33) % 10] << (w == 5 ? ".\n" : " ");
    }
}

ExperimentSpec gpt(const std::string& extra = "") {
  return parseSpec(R"({"dataset":{"kind":"text","path":")" + corpusPath() +
                   R"(","context":16},
     "model":{"kind":"gpt","dim":16,"depth":2,"heads":2,"mlp_ratio":2},
     "partition":{"cuts":[1,2]},"stage_defaults":{"aux_head":"lm"},
     "train":{"batch_size":8,"max_steps":20,"seed":5,"queue_capacity":2,"lr":0.003},
     "eval":{"interval":0,"max_samples":32},"probe":{"interval":-1})" +
                   extra + "}");
}

}  // namespace

class TestGptSample : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() {
    g_dir = new QTemporaryDir;
    writeCorpus(corpusPath());
  }
  void cleanupTestCase() { delete g_dir; }

  void greedyIsTheArgmaxStepByStep() {
    const ExperimentSpec spec = gpt();
    const ModelPlan plan = planModel(spec.model, probeInputShape(spec.dataset));
    auto layers = buildLayers(spec.model, plan, 3);
    const std::string prompt = "the cat";
    // 30 bytes: past the context of 16, so the window slides.
    const std::string text = generateBytes(layers, prompt, 30, 0, 1, 16);
    QCOMPARE(text.size(), size_t{30});
    QCOMPARE(generateBytes(layers, prompt, 30, 0, 99, 16), text);  // greedy ignores the seed
    torch::NoGradGuard noGrad;
    std::vector<int64_t> tokens(prompt.begin(), prompt.end());
    for (size_t i = 0; i < text.size(); ++i) {
      const int64_t n = static_cast<int64_t>(tokens.size()), from = std::max<int64_t>(0, n - 16);
      torch::Tensor h =
          torch::tensor(std::vector<int64_t>(tokens.begin() + from, tokens.end())).unsqueeze(0);
      for (auto& l : layers) h = l->forward(h);
      const int64_t best = h[0][h.size(1) - 1].argmax().item<int64_t>();
      QCOMPARE(int64_t(static_cast<unsigned char>(text[i])), best);
      tokens.push_back(best);
    }
  }

  void temperatureDrawsWithTheSeed() {
    const ExperimentSpec spec = gpt();
    const ModelPlan plan = planModel(spec.model, probeInputShape(spec.dataset));
    auto layers = buildLayers(spec.model, plan, 3);
    const std::string a = generateBytes(layers, "a", 40, 1.0, 7, 16);
    QCOMPARE(generateBytes(layers, "a", 40, 1.0, 7, 16), a);
    QVERIFY(generateBytes(layers, "a", 40, 1.0, 8, 16) != a);
    // A temperature near 0 puts all the weight on the likeliest byte: greedy.
    QCOMPARE(generateBytes(layers, "a", 40, 1e-9, 7, 16), generateBytes(layers, "a", 40, 0, 7, 16));
  }

  void aFinishedRunSamples() {
    RecordingObserver obs;
    auto run = createRun(gpt(), &obs);
    const SampleResult early = run->sample({"the", 10, 0});
    QVERIFY(!early.ok);
    QVERIFY2(early.error.find("finished") != std::string::npos, early.error.c_str());
    run->start();
    const RunSummary s = run->wait();
    QVERIFY2(s.status == RunStatus::Completed, s.error.c_str());
    const SampleResult a = run->sample({"the ", 24, 0});
    QVERIFY2(a.ok, a.error.c_str());
    QVERIFY(!a.text.empty());
    QCOMPARE(run->sample({"the ", 24, 0}).text, a.text);  // greedy: the same text every time
    const SampleResult hot = run->sample({"the ", 24, 0.8});
    QVERIFY2(hot.ok, hot.error.c_str());
    QCOMPARE(run->sample({"the ", 24, 0.8}).text, hot.text);  // the run's seed
  }

  void anImageModelRefuses() {
    RecordingObserver obs;
    auto run = createRun(
        parseSpec(R"({"dataset":{"kind":"synthetic","synthetic_train":64,"synthetic_test":32},
                     "model":{"kind":"mlp","hidden":[8]},"train":{"batch_size":16,"max_steps":2}})"),
        &obs);
    run->start();
    run->wait();
    const SampleResult r = run->sample({"x", 10, 0});
    QVERIFY(!r.ok);
    QVERIFY2(r.error.find("language model") != std::string::npos, r.error.c_str());
  }

  void everyEvaluationReportsASample() {
    RecordingObserver obs;
    RunOptions options;
    options.sampleAtEvaluations = {"the ", 12, 0};
    auto run = createRun(gpt(R"(,"eval":{"interval":10,"max_samples":32})"), &obs, options);
    run->start();
    const RunSummary s = run->wait();
    QVERIFY2(s.status == RunStatus::Completed, s.error.c_str());
    std::vector<int64_t> steps;
    for (const auto& e : obs.events)
      if (auto sample = sampleFromEvent(e.message)) {
        QVERIFY(e.kind == EventKind::Info);
        steps.push_back(sample->first);
        QVERIFY(sample->second.rfind("the ", 0) == 0);  // the prompt, then its continuation
        QVERIFY(sample->second.size() >= 4 + 12);
      }
    // The periodic evaluation after step 10 (step index 9) and the final one (20 steps).
    QVERIFY(steps.size() >= 2);
    QCOMPARE(steps.back(), int64_t{20});
    // Without a prompt none is generated.
    RecordingObserver quiet;
    auto plain = createRun(gpt(R"(,"eval":{"interval":10,"max_samples":32})"), &quiet);
    plain->start();
    plain->wait();
    for (const auto& e : quiet.events) QVERIFY(!sampleFromEvent(e.message));
  }

  void sampleEventsReadBack() {
    const auto read = sampleFromEvent(sampleEventMessage(42, "to be: or not"));
    QVERIFY(read);
    QCOMPARE(read->first, int64_t{42});
    QCOMPARE(read->second, std::string("to be: or not"));
    QVERIFY(!sampleFromEvent("sample at step x: text"));
    QVERIFY(!sampleFromEvent("change at step 3: stages.0.delay_ms=5"));
  }

  void samplesAreValidUtf8() {
    QCOMPARE(validUtf8("plain"), std::string("plain"));
    QCOMPARE(validUtf8("caf\xC3\xA9"), std::string("caf\xC3\xA9"));
    QCOMPARE(validUtf8("a\xFF"
                       "b"),
             std::string("a\xEF\xBF\xBD"
                         "b"));
    QCOMPARE(validUtf8("\xC3"), std::string("\xEF\xBF\xBD"));                  // cut short
    QCOMPARE(validUtf8("\xC0\xAF"), std::string("\xEF\xBF\xBD\xEF\xBF\xBD"));  // overlong
  }
};

QTEST_GUILESS_MAIN(TestGptSample)
#include "test_gpt_sample.moc"
