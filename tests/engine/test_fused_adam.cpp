// FusedAdam against torch::optim::Adam: the same trajectory to rounding on the fused path, bit for
// bit on the fallback path, and the same save/load format in both directions.
#include <QtTest>

#include "optim/fused_adam.h"

using stagewise::engine::FusedAdam;

namespace {

// Shapes of a small MLP plus an odd length and one large enough to be split over threads.
std::vector<torch::Tensor> makeParams(torch::Dtype dtype, uint64_t seed) {
  torch::manual_seed(seed);
  std::vector<torch::Tensor> out;
  for (auto shape : std::vector<std::vector<int64_t>>{{512, 784}, {512}, {10, 512}, {10}, {7}, {300001}})
    out.push_back(torch::randn(shape, torch::dtype(dtype)).requires_grad_(true));
  return out;
}

std::vector<torch::Tensor> cloneParams(const std::vector<torch::Tensor>& ps) {
  std::vector<torch::Tensor> out;
  for (const auto& p : ps) out.push_back(p.detach().clone().requires_grad_(true));
  return out;
}

// Deterministic gradients with a wide range of magnitudes (small ones test eps, big ones beta2).
void setGrads(std::vector<torch::Tensor>& ps, int step) {
  torch::manual_seed(1000 + step);
  for (auto& p : ps) {
    auto g = torch::randn_like(p) * torch::pow(10.0, torch::randint(-6, 2, p.sizes(), p.options()));
    p.mutable_grad() = g;
  }
}

double maxRelDiff(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    auto d = (a[i] - b[i]).abs() / (b[i].abs() + 1e-3);
    worst = std::max(worst, d.max().item<double>());
  }
  return worst;
}

template <class Opt>
void train(Opt& opt, std::vector<torch::Tensor>& ps, int from, int to) {
  for (int s = from; s < to; ++s) {
    setGrads(ps, s);
    opt.step();
  }
}

}  // namespace

class TestFusedAdam : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void matchesTorchAdam_data() {
    QTest::addColumn<double>("weightDecay");
    QTest::addColumn<int>("threads");
    QTest::newRow("no weight decay, 1 thread") << 0.0 << 1;
    QTest::newRow("weight decay 1e-2, 1 thread") << 1e-2 << 1;
    QTest::newRow("weight decay 1e-4, 2 threads") << 1e-4 << 2;
  }
  void matchesTorchAdam() {
    QFETCH(double, weightDecay);
    QFETCH(int, threads);
    at::set_num_threads(threads);
    auto ref = makeParams(torch::kFloat32, 7);
    auto fused = cloneParams(ref);
    auto options = torch::optim::AdamOptions(3e-3).weight_decay(weightDecay);
    torch::optim::Adam torchAdam(ref, options);
    FusedAdam fusedAdam(fused, options);
    train(torchAdam, ref, 0, 60);
    train(fusedAdam, fused, 0, 60);
    // The parameters moved (so the comparison means something) and agree to float rounding.
    QVERIFY(maxRelDiff(ref, makeParams(torch::kFloat32, 7)) > 1e-2);
    qInfo() << "max rel diff" << maxRelDiff(fused, ref);
    QVERIFY2(maxRelDiff(fused, ref) < 1e-4, qPrintable(QString::number(maxRelDiff(fused, ref))));
    // The state is Adam's own.
    for (size_t i = 0; i < ref.size(); ++i) {
      auto key = c10::guts::to_string(fused[i].unsafeGetTensorImpl());
      auto& st = static_cast<torch::optim::AdamParamState&>(*fusedAdam.state().at(key));
      QCOMPARE(st.step(), int64_t{60});
      auto& rs = static_cast<torch::optim::AdamParamState&>(
          *torchAdam.state().at(c10::guts::to_string(ref[i].unsafeGetTensorImpl())));
      QVERIFY(torch::allclose(st.exp_avg_sq(), rs.exp_avg_sq(), 1e-4, 1e-12));
    }
    at::set_num_threads(1);
  }

  // Not float32 (and amsgrad): the fallback is LibTorch's own sequence of operations.
  void fallbackIsTorchAdamExactly() {
    for (bool amsgrad : {false, true}) {
      auto ref = makeParams(torch::kFloat64, 3);
      auto ours = cloneParams(ref);
      auto options = torch::optim::AdamOptions(1e-3).weight_decay(1e-3).amsgrad(amsgrad);
      torch::optim::Adam torchAdam(ref, options);
      FusedAdam fusedAdam(ours, options);
      train(torchAdam, ref, 0, 20);
      train(fusedAdam, ours, 0, 20);
      for (size_t i = 0; i < ref.size(); ++i) QVERIFY(torch::equal(ours[i], ref[i]));
    }
  }

  void parametersWithoutGradientsAreLeftAlone() {
    auto ps = makeParams(torch::kFloat32, 5);
    auto before = cloneParams(ps);
    FusedAdam opt(ps, torch::optim::AdamOptions(1e-2));
    setGrads(ps, 0);
    ps[2].mutable_grad() = torch::Tensor();
    opt.step();
    QVERIFY(torch::equal(ps[2], before[2]));
    QVERIFY(!torch::equal(ps[0], before[0]));
  }

  // Without weight decay an inf parameter stays inf (LibTorch skips the term; 0 * inf is NaN).
  void infParameterStaysInfWithoutWeightDecay() {
    auto p = torch::full({100}, 1.0f).requires_grad_(true);
    {
      torch::NoGradGuard noGrad;
      p[3] = std::numeric_limits<float>::infinity();
    }
    FusedAdam opt({p}, torch::optim::AdamOptions(1e-2));
    p.mutable_grad() = torch::full({100}, 0.5f);
    const auto version = p._version();
    opt.step();
    QVERIFY(std::isinf(p[3].item<float>()));
    QVERIFY(torch::isfinite(p.slice(0, 4)).all().item<bool>());
    QVERIFY(p._version() > version);  // autograd sees the in-place update
  }

  // Checkpoints written before FusedAdam (torch::optim::Adam) resume, and the other way round.
  void saveLoadIsAdamsFormat() {
    auto options = torch::optim::AdamOptions(2e-3);
    auto straight = makeParams(torch::kFloat32, 11);
    FusedAdam uninterrupted(straight, options);
    train(uninterrupted, straight, 0, 30);

    auto first = makeParams(torch::kFloat32, 11);
    torch::optim::Adam torchAdam(first, options);
    train(torchAdam, first, 0, 15);
    std::stringstream buffer;
    {
      torch::serialize::OutputArchive archive;
      torchAdam.save(archive);
      archive.save_to(buffer);
    }
    auto second = cloneParams(first);
    FusedAdam resumed(second, options);
    {
      torch::serialize::InputArchive archive;
      archive.load_from(buffer);
      resumed.load(archive);
    }
    train(resumed, second, 15, 30);
    QVERIFY2(maxRelDiff(second, straight) < 1e-4, qPrintable(QString::number(maxRelDiff(second, straight))));

    // ...and FusedAdam's state loads into torch::optim::Adam.
    std::stringstream back;
    {
      torch::serialize::OutputArchive archive;
      resumed.save(archive);
      archive.save_to(back);
    }
    auto third = cloneParams(second);
    torch::optim::Adam reloaded(third, options);
    torch::serialize::InputArchive archive;
    archive.load_from(back);
    reloaded.load(archive);
    const auto& st = static_cast<torch::optim::AdamParamState&>(
        *reloaded.state().at(c10::guts::to_string(third[0].unsafeGetTensorImpl())));
    QCOMPARE(st.step(), int64_t{30});
  }
};

QTEST_APPLESS_MAIN(TestFusedAdam)
#include "test_fused_adam.moc"
