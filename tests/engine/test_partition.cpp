// Model plan, cut validation, balancing and the speed-up estimate.
#include <QtTest>

#include <cmath>

#include "partition/schedule_sim.h"
#include "stagewise/engine/memory_need.h"
#include "stagewise/engine/partition.h"

using namespace stagewise::engine;

namespace {
ModelPlan mlp(std::vector<int> hidden) {
  ModelSpec m;
  m.hidden = std::move(hidden);
  return planModel(m, InputShape{{1, 28, 28}, 10});
}
}  // namespace

class TestPartition : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void mlpPlanCounts() {
    ModelPlan p = mlp({512, 256});
    QCOMPARE(p.layers.size(), size_t{3});
    QCOMPARE(p.layers[0].params, int64_t{784 * 512 + 512});
    QCOMPARE(p.layers[1].params, int64_t{512 * 256 + 256});
    QCOMPARE(p.layers[2].params, int64_t{256 * 10 + 10});
    QCOMPARE(p.layers[2].name, std::string("classifier"));
    QCOMPARE(p.layers[1].outShape, std::vector<int64_t>{256});
    QCOMPARE(p.layers[0].activationBytes, int64_t{512 * 4});
    QVERIFY_THROWS_EXCEPTION(SpecError,
                             planModel(ModelSpec{"resnet", {8}, "relu"}, InputShape{{4}, 2}));
  }

  void memoryNeedAgainstTheLimits() {
    // Issue 36 §1.9: weights, gradients, Adam's moments and the analysis copy of every
    // parameter, and a batch's activations, against the least of the process's limits.
    ExperimentSpec spec;
    spec.model.hidden = {65536, 65536, 65536, 65536};
    spec.partition.cuts = {2};
    spec.train.batchSize = 32;
    const ModelPlan plan = planModel(spec.model, InputShape{{1, 28, 28}, 10});
    const MemoryNeed need = estimateMemoryNeed(spec, plan);
    int64_t params = plan.totalParams();
    for (const auto& st : makePartition(spec, plan).stages) params += st.auxParams;
    QCOMPARE(need.weightBytes, params * 4);
    QCOMPARE(need.gradientBytes, params * 4);
    QCOMPARE(need.optimizerBytes, 2 * params * 4);  // Adam
    QCOMPARE(need.copyBytes, params * 4);
    QVERIFY(need.activationBytes >= int64_t{32} * 4 * 65536 * 4);
    QVERIFY(need.total() > (int64_t{200} << 30));
    spec.train.optimizer = "sgd";
    spec.train.momentum = 0;
    QCOMPARE(estimateMemoryNeed(spec, plan).optimizerBytes, int64_t{0});

    // The limits: the least of them, each named; a cgroup without a limit says "max".
    const std::string meminfo = "MemTotal:       16000000 kB\nMemAvailable:    8000000 kB\n";
    MemoryLimit l = availableMemory("max\n", "100\n", -1, 0, meminfo);
    QCOMPARE(l.bytes, int64_t{8000000} * 1024);
    QCOMPARE(l.source, std::string("MemAvailable"));
    l = availableMemory("6442450944\n", "1073741824\n", -1, 0, meminfo);
    QCOMPARE(l.bytes, int64_t{5} << 30);
    QCOMPARE(l.source, std::string("the cgroup's memory.max"));
    l = availableMemory("", "", int64_t{6} << 30, int64_t{2} << 30, meminfo);
    QCOMPARE(l.bytes, int64_t{4} << 30);
    QCOMPARE(l.source, std::string("ulimit -v"));
    QCOMPARE(availableMemory("", "", -1, 0, "").bytes, int64_t{-1});

    // One line: how much, against what, and what to reduce.
    const std::string line = memoryProblem(need, l, "mlp");
    QVERIFY(line.find('\n') == std::string::npos);
    QVERIFY2(line.find("needs at least") != std::string::npos, line.c_str());
    QVERIFY2(line.find("ulimit -v leaves 4.0 GiB") != std::string::npos, line.c_str());
    QVERIFY2(line.find("model.hidden") != std::string::npos, line.c_str());
    QVERIFY(memoryProblem(need, MemoryLimit{}, "mlp").empty());  // no limit known
    // A small model fits; a batch that dwarfs the weights is the thing to reduce.
    ExperimentSpec small;
    small.model.hidden = {64, 64};
    small.train.batchSize = 1 << 20;
    const ModelPlan smallPlan = planModel(small.model, InputShape{{1, 28, 28}, 10});
    const MemoryNeed wide = estimateMemoryNeed(small, smallPlan);
    QVERIFY(memoryProblem(wide, MemoryLimit{int64_t{1} << 40, "MemAvailable"}, "mlp").empty());
    QVERIFY(memoryProblem(wide, MemoryLimit{int64_t{1} << 20, "MemAvailable"}, "mlp")
                .find("train.batch_size") != std::string::npos);
    QCOMPARE(formatBytesIec(17179869184.0), std::string("16.0 GiB"));
  }

  void validCutsAndMessages() {
    QVERIFY(validateCuts({2, 4, 6}, 9).empty());
    QVERIFY(validateCuts({}, 9).empty());
    auto p = validateCuts({0}, 9);
    QCOMPARE(p.size(), size_t{1});
    QCOMPARE(p[0].field, std::string("partition.cuts[0]"));
    p = validateCuts({4, 3}, 9);
    QCOMPARE(p.size(), size_t{1});
    QVERIFY2(p[0].message.find("stage 2 is empty") != std::string::npos, p[0].message.c_str());
  }

  void balanceMinimisesTheSlowestStage() {
    QCOMPARE(balanceCuts({1, 1, 1, 1}, 2), (std::vector<int>{2}));
    QCOMPARE(balanceCuts({4, 1, 1, 1, 1}, 2), (std::vector<int>{1}));
    QCOMPARE(balanceCuts({1, 1, 1, 1, 1, 1}, 3), (std::vector<int>{2, 4}));
    QCOMPARE(balanceCuts({5, 5}, 1), std::vector<int>{});
    // the default MLP: first layer is heavier (784 inputs); FLOP balance keeps it alone-ish
    ModelPlan p = mlp(std::vector<int>(8, 512));
    auto cuts = balanceCuts(flopCosts(p), 4);
    QCOMPARE(cuts.size(), size_t{3});
    QVERIFY(validateCuts(cuts, 9).empty());
    auto costs = flopCosts(p);
    double worst = 0, total = 0;
    std::vector<int> starts = {0, cuts[0], cuts[1], cuts[2], 9};
    for (int k = 0; k < 4; ++k) {
      double s = 0;
      for (int i = starts[k]; i < starts[k + 1]; ++i) s += costs[size_t(i)];
      worst = std::max(worst, s);
      total += s;
    }
    QVERIFY(worst <= total / 4 * 1.35);
  }

  void partitionCarriesSettingsAndCosts() {
    ExperimentSpec spec =
        parseSpec(R"({"partition":{"cuts":[3]},"stages":[{"aux_head":"mlp","aux_hidden":64},{}]})");
    ModelPlan p = mlp({32, 32, 32, 32});
    PartitionPlan part = makePartition(spec, p);
    QCOMPARE(part.stages.size(), size_t{2});
    QCOMPARE(part.stages[0].lastLayer, 2);
    QCOMPARE(part.stages[1].firstLayer, 3);
    QVERIFY(part.stages[1].isLast);
    QCOMPARE(part.stages[1].auxParams, int64_t{0});
    QCOMPARE(part.stages[0].auxParams, int64_t{32 * 64 + 64 + 64 * 10 + 10});
    QCOMPARE(part.stages[0].outBytes, int64_t{32 * 4});
    ExperimentSpec bal = parseSpec(R"({"partition":{"balance":"flops","stages":2}})");
    QCOMPARE(resolveCuts(bal, p).size(), size_t{1});
    ExperimentSpec bad = parseSpec(R"({"partition":{"cuts":[7]}})");
    QVERIFY_THROWS_EXCEPTION(SpecError, makePartition(bad, p));
  }

  void trainFlopsCountForwardBackwardAuxAndOverlap() {
    ExperimentSpec spec = parseSpec(R"({"partition":{"cuts":[2]}})");
    ModelPlan p = mlp({64, 32, 16});  // 784->64, 64->32 | 32->16, 16->10
    // multiply-add = 2, plus bias and activation per output; the classifier has no activation
    const double f0 = 2.0 * 784 * 64 + 2 * 64, f1 = 2.0 * 64 * 32 + 2 * 32,
                 f2 = 2.0 * 32 * 16 + 2 * 16, f3 = 2.0 * 16 * 10 + 10;
    QCOMPARE(double(p.layers[0].flops), f0);
    PartitionPlan part = makePartition(spec, p);
    const double aux = static_cast<double>(part.stages[0].auxFlops);
    QVERIFY(aux > 0);
    auto local = trainFlopsPerSample(part.stages, p, 0);
    QCOMPARE(local.size(), size_t(2));
    QCOMPARE(local[0], 3 * (f0 + f1 + aux));
    QCOMPARE(local[1], 3 * (f2 + f3));
    // Overlap 1: stage 0 also backpropagates the next stage's loss through its last layer.
    auto overlap = trainFlopsPerSample(part.stages, p, 1);
    QCOMPARE(overlap[0], local[0] + 2 * f1);
    QCOMPARE(overlap[1], local[1]);
    // One stage with the whole model and no aux head (backprop): 3x the model's forward.
    StagePlan all = part.stages[0];
    all.lastLayer = 3, all.isLast = true, all.auxFlops = 0;
    QCOMPARE(trainFlopsPerSample({all}, p, 0)[0], 3.0 * static_cast<double>(p.totalFlops()));
    QCOMPARE(3.0 * static_cast<double>(p.totalFlops()), 3 * (f0 + f1 + f2 + f3));
  }

  void estimateReflectsCoresAndBalance() {
    ModelPlan p = mlp(std::vector<int>(8, 512));
    ExperimentSpec two = parseSpec(R"({"partition":{"cuts":[4]}})");
    SpeedEstimate e2 = estimateSpeed(makePartition(two, p), p, 32, 2);
    QVERIFY2(e2.speedup > 1.0, std::to_string(e2.speedup).c_str());
    QVERIFY(!e2.coresShared);
    QCOMPARE(e2.boundaryBytes.size(), size_t{1});
    QCOMPARE(e2.boundaryBytes[0], int64_t{(512 * 4 + 8) * 32});
    QCOMPARE(e2.backpropBoundaryBytes[0], int64_t{2 * 512 * 4 * 32 + 8 * 32});
    // four one-thread stages on two cores share them: no better than two stages
    ExperimentSpec four = parseSpec(R"({"partition":{"cuts":[2,4,6]}})");
    SpeedEstimate e4 = estimateSpeed(makePartition(four, p), p, 32, 2);
    QVERIFY(e4.coresShared);
    double work = 0;
    for (double t : e4.stageTime) work += t;
    QVERIFY(e4.localTime >= work / 2 - 1e-6);
    // on one core local parallelism cannot win
    SpeedEstimate e1 = estimateSpeed(makePartition(two, p), p, 32, 1);
    QVERIFY(e1.speedup <= 1.0 + 1e-9);
    // an unbalanced cut predicts less speed-up and lower efficiency
    ExperimentSpec skew = parseSpec(R"({"partition":{"cuts":[8]}})");
    SpeedEstimate es = estimateSpeed(makePartition(skew, p), p, 32, 2);
    QVERIFY(es.speedup < e2.speedup);
    QVERIFY(es.pipelineEfficiency < e2.pipelineEfficiency);
  }

  /// The estimate per method simulates each schedule on the cores: numbers worked out by hand.
  void methodEstimateSimulatesTheSchedules() {
    ModelPlan p = mlp(std::vector<int>(8, 512));
    const PartitionPlan two = makePartition(parseSpec(R"({"partition":{"cuts":[4]}})"), p);
    const PartitionPlan four = makePartition(parseSpec(R"({"partition":{"cuts":[2,4,6]}})"), p);
    MethodProfile m;
    m.batchSize = 32;
    m.microBatches = 2;
    m.localStep = {2e-3, 1e-3};
    m.pipelineMicro = {3e-3, 3e-3};  // forward 1 ms, backward 2 ms
    m.pipelineForward = {1e-3, 1e-3};
    m.pipelineUpdate = {0.5e-3, 0.5e-3};
    m.backpropStep = 4e-3;
    auto near = [](double a, double b) { return std::abs(a - b) <= 1e-6 * std::abs(b); };
    // Local: the slowest stage sets the pace (2 ms); backprop 4 ms.
    MethodEstimate e = estimateMethods(m, two, 2);
    QVERIFY2(near(e.localSamplesPerSec, 32 / 2e-3), std::to_string(e.localSamplesPerSec).c_str());
    QVERIFY(near(e.backpropSamplesPerSec, 32 / 4e-3));
    QVERIFY(near(e.localSpeedup, 2.0));
    QVERIFY(!e.coresShared);
    // GPipe, 2 stages, 2 micro-batches: S1 F F, S2 F F B B, S1 B B (each after S2's), S1's
    // update: 1 + 1 + 1 + 2 + 2 + 2 + 0.5 = 9.5 ms a step; each stage busy 6.5 of them.
    QVERIFY2(near(e.pipelineSamplesPerSec, 32 / 9.5e-3),
             std::to_string(e.pipelineSamplesPerSec).c_str());
    QVERIFY(near(e.bubbleFraction, 1 - 6.5 / 9.5));
    // 1F1B (S1: F B-after-F, S2: F B F B) is as fast here; its gain is memory.
    QVERIFY(near(estimateMethods(m, two, 2, true).pipelineSamplesPerSec, 32 / 9.5e-3));
    // One core: the two stages share it; local takes both steps' work, 3 ms.
    QVERIFY2(near(estimateMethods(m, two, 1).localSamplesPerSec, 32 / 3e-3),
             std::to_string(estimateMethods(m, two, 1).localSamplesPerSec).c_str());
    // Contention: two computing stages run 1.5x slower. S2's 1 ms takes 1.5 ms beside S1, which
    // does 1 ms of its 2 meanwhile and the other alone: 2.5 ms a step.
    m.contention = 1.5;
    QVERIFY2(near(estimateMethods(m, two, 2).localSamplesPerSec, 32 / 2.5e-3),
             std::to_string(estimateMethods(m, two, 2).localSamplesPerSec).c_str());
    m.contention = 1;
    // Handoffs lengthen the pipeline's critical path, not local's pace.
    m.handoffSeconds = 0.1e-3;
    const MethodEstimate late = estimateMethods(m, two, 2);
    QVERIFY(late.pipelineSamplesPerSec < e.pipelineSamplesPerSec - 1);
    QVERIFY(near(late.localSamplesPerSec, e.localSamplesPerSec));
    // Four one-thread stages of 1 ms on two cores: 2 ms a step, the cores shared.
    MethodProfile q = m;
    q.handoffSeconds = 0;
    q.localStep = {1e-3, 1e-3, 1e-3, 1e-3};
    q.pipelineMicro = q.pipelineForward = q.pipelineUpdate = {1e-3, 1e-3, 1e-3, 1e-3};
    q.sliceSeconds = 0;
    const MethodEstimate f = estimateMethods(q, four, 2);
    QVERIFY(f.coresShared);
    QVERIFY2(near(f.localSamplesPerSec, 32 / 2e-3), std::to_string(f.localSamplesPerSec).c_str());
    // With time slices never faster than the cores allow, and close to it.
    q.sliceSeconds = -1;
    const double sliced = estimateMethods(q, four, 2).localSamplesPerSec;
    QVERIFY2(sliced <= 32 / 2e-3 * (1 + 1e-9) && sliced >= 0.95 * 32 / 2e-3,
             std::to_string(sliced).c_str());
    // Cold costs slow the stages that share cores, and only them: two stages on two cores keep
    // a core each, four take turns on two.
    MethodProfile coldQ = q;
    coldQ.localStepCold = coldQ.pipelineForwardCold =
        coldQ.pipelineBackwardCold = {0.5e-3, 0.5e-3, 0.5e-3, 0.5e-3};
    const MethodEstimate coldFour = estimateMethods(coldQ, four, 2);
    QVERIFY(coldFour.localSamplesPerSec < 0.9 * sliced);
    QVERIFY(coldFour.pipelineSamplesPerSec <
            0.9 * estimateMethods(q, four, 2).pipelineSamplesPerSec);
    MethodProfile coldM = m;
    coldM.localStepCold = coldM.pipelineForwardCold = coldM.pipelineBackwardCold =
        coldM.pipelineUpdateCold = {1e-3, 1e-3};
    QVERIFY(near(estimateMethods(coldM, two, 2).localSamplesPerSec, late.localSamplesPerSec));
    QVERIFY(near(estimateMethods(coldM, two, 2).pipelineSamplesPerSec, late.pipelineSamplesPerSec));
    // A profile that does not fit the partition predicts nothing.
    QCOMPARE(estimateMethods(m, four, 2).localSamplesPerSec, 0.0);
    // Where every stage has a core, time slices (one queue per core or one for all) and
    // processor sharing are the same schedule.
    MethodProfile sharing = m, oneQueue = m;
    sharing.sliceSeconds = 0;
    oneQueue.perCoreQueues = false;
    for (bool oneFOneB : {false, true}) {
      const MethodEstimate a = estimateMethods(m, two, 2, oneFOneB);
      for (const MethodProfile& other : {sharing, oneQueue}) {
        const MethodEstimate b = estimateMethods(other, two, 2, oneFOneB);
        QVERIFY(near(a.localSamplesPerSec, b.localSamplesPerSec));
        QVERIFY(near(a.pipelineSamplesPerSec, b.pipelineSamplesPerSec));
      }
    }
  }

  /// Three stages on two cores, worked by hand under both scheduling models: with time slices a
  /// stage keeps its core from operation to operation until it blocks or its slice ends.
  void methodEstimateWaitsForACore() {
    ModelPlan p = mlp(std::vector<int>(8, 512));
    const PartitionPlan three = makePartition(parseSpec(R"({"partition":{"cuts":[3,6]}})"), p);
    QCOMPARE(three.stages.size(), size_t(3));
    MethodProfile m;
    m.batchSize = 32;
    m.microBatches = 1;
    m.localStep = {1e-3, 1e-3, 1e-3};
    m.pipelineForward = {1e-3, 1e-3, 1e-3};
    m.pipelineMicro = {2e-3, 2e-3, 2e-3};  // forward 1 ms, backward 1 ms
    m.pipelineUpdate = {0, 2e-3, 2e-3};    // stages 2 and 3 update for 2 ms
    m.backpropStep = 6e-3;
    auto near = [](double a, double b) { return std::abs(a - b) <= 1e-6 * std::abs(b); };
    // Sharing: F1 F2 F3 B3 (4 ms); B2 beside U3 (1 ms); then B1, U2 and U3's last 1 ms share
    // two cores (2/3 each): B1 ends 1.5 ms later; U1 is empty: a step every 6.5 ms.
    m.sliceSeconds = 0;
    const MethodEstimate ps = estimateMethods(m, three, 2);
    QVERIFY2(near(ps.pipelineSamplesPerSec, 32 / 6.5e-3),
             std::to_string(32 / ps.pipelineSamplesPerSec).c_str());
    // Slices of 1.5 ms, one run queue for all cores: stage 3 runs F3, B3 and on into U3 on one
    // core, stage 2 takes the other
    // for B2 and goes on into U2. When B1 wakes, stage 3 has used up its slice and yields to it;
    // stage 2's slice ends half-way through U2 and stage 3 takes that core back. Stage 1 goes on
    // from U1 into the next step's F1, is preempted for U2's rest, and F2 waits until U2 ends,
    // 2 ms after U1: a step every 7 ms.
    m.sliceSeconds = 1.5e-3;
    m.perCoreQueues = false;
    const MethodEstimate rr = estimateMethods(m, three, 2);
    QVERIFY2(near(rr.pipelineSamplesPerSec, 32 / 7e-3),
             std::to_string(32 / rr.pipelineSamplesPerSec).c_str());
    // The default slice on 2 cores is Linux's 1.5 ms.
    QVERIFY(near(defaultSchedulerSlice(2), 1.5e-3));
    QVERIFY(near(defaultSchedulerSlice(1), 0.75e-3));
    QVERIFY(near(defaultSchedulerSlice(64), 3e-3));
  }

  /// The queue per core, operation by operation. Threads T0 (A, 2 ms), T1 (B, 1 ms; then B2,
  /// 1 ms, after A) and T2 (C, 1 ms, after B) on two cores; T0 and T2 start on core 0, T1 on
  /// core 1; no handoff, slices longer than the run.
  void coreQueuesKeepThreadsOnTheirCores() {
    using sim::SimOp;
    auto run = [](bool perCore, double tick, double phase, size_t startCore) {
      std::vector<SimOp> ops(4);
      ops[0].work = 2e-3;                                             // A
      ops[1].work = 1e-3;                                             // B
      ops[2].work = 1e-3, ops[2].after = {0}, ops[2].handoff = true;  // B2
      ops[3].work = 1e-3, ops[3].after = {1}, ops[3].handoff = true;  // C
      const std::vector<std::vector<size_t>> threads = {{0}, {1, 2}, {3}};
      if (perCore)
        sim::simulateCoreQueues(ops, threads, 2, 0, 1, 1.0, tick, phase, startCore);
      else
        sim::simulate(ops, threads, {1, 1, 1}, 2, 0, 1, 1.0, false, tick, 0);
      return ops;
    };
    auto near = [](double a, double b) { return std::abs(a - b) <= 1e-9; };
    // One queue for all: C wakes at 1 ms when B ends, takes the free core 1: ends at 2 ms.
    std::vector<SimOp> one = run(false, 1.0, 0, 0);
    QVERIFY(near(one[3].end, 2e-3));
    QVERIFY(near(one[2].end, 3e-3));
    // A queue per core, no tick in the run: C waits on core 0 behind A while core 1 idles (an
    // idle core does not take threads that wake later); it runs when A ends, 2 to 3 ms. B2 wakes
    // at 2 ms on its own idle core 1: 2 to 3 ms.
    for (size_t start : {size_t(0), size_t(1)}) {  // the same schedule on the other cores
      std::vector<SimOp> q = run(true, 1.0, 0, start);
      QVERIFY2(near(q[3].end, 3e-3), std::to_string(q[3].end).c_str());
      QVERIFY(near(q[0].end, 2e-3) && near(q[1].end, 1e-3) && near(q[2].end, 3e-3));
    }
    // A tick every 1.5 ms from 0: at 1.5 ms the idle core 1 pulls C, which runs to 2.5 ms. B2,
    // woken at 2 ms, queues on its core 1 behind C while core 0 (A done) idles: 2.5 to 3.5 ms.
    std::vector<SimOp> ticked = run(true, 1.5e-3, 0, 0);
    QVERIFY2(near(ticked[3].end, 2.5e-3), std::to_string(ticked[3].end).c_str());
    QVERIFY2(near(ticked[2].end, 3.5e-3), std::to_string(ticked[2].end).c_str());
    // The same tick half a period later (0.75 and 2.25 ms) comes too early and too late.
    std::vector<SimOp> late = run(true, 1.5e-3, 0.5, 0);
    QVERIFY(near(late[3].end, 3e-3) && near(late[2].end, 3e-3));
    // Cold costs of 0.5 ms, no tick: A and B start on fresh cores (0 to 2.5 and 0 to 1.5 ms). C
    // follows A's thread on core 0 and pays (2.5 to 4 ms); B2 follows B on its own core and does
    // not (2.5 to 3.5 ms). The other models ignore cold costs.
    std::vector<SimOp> cold(4);
    const std::vector<std::vector<size_t>> threads = {{0}, {1, 2}, {3}};
    cold[0].work = 2e-3, cold[1].work = 1e-3;
    cold[2].work = 1e-3, cold[2].after = {0}, cold[2].handoff = true;
    cold[3].work = 1e-3, cold[3].after = {1}, cold[3].handoff = true;
    for (auto& op : cold) op.cold = 0.5e-3;
    std::vector<SimOp> other = cold;
    sim::simulateCoreQueues(cold, threads, 2, 0, 1, 1.0, 1.0, 0, 0);
    QVERIFY2(near(cold[0].end, 2.5e-3) && near(cold[1].end, 1.5e-3),
             (std::to_string(cold[0].end) + " " + std::to_string(cold[1].end)).c_str());
    QVERIFY2(near(cold[3].end, 4e-3), std::to_string(cold[3].end).c_str());
    QVERIFY2(near(cold[2].end, 3.5e-3), std::to_string(cold[2].end).c_str());
    sim::simulate(other, threads, {1, 1, 1}, 2, 0, 1, 1.0, false, 1.0, 0);
    QVERIFY(near(other[3].end, 2e-3) && near(other[2].end, 3e-3));
    // coldSince, one core: T0 runs X, then W after T1's Z, then Y (0.5 ms cold). Y follows W on
    // the same core, so it starts warm by default, but cold counted since X: Z ran in between.
    auto since = [&](size_t coldSince) {
      std::vector<SimOp> o(4);  // X, W, Y, Z
      o[0].work = o[1].work = o[2].work = o[3].work = 1e-3;
      o[1].after = {3}, o[3].after = {0};
      o[2].cold = 0.5e-3, o[2].coldSince = coldSince;
      sim::simulateCoreQueues(o, {{0, 1, 2}, {3}}, 1, 0, 1, 1.0, 1.0, 0, 0);
      return o[2].end;
    };
    QVERIFY2(near(since(SimOp::kNone), 4e-3), std::to_string(since(SimOp::kNone)).c_str());
    QVERIFY2(near(since(1), 4e-3), std::to_string(since(1)).c_str());
    QVERIFY2(near(since(0), 4.5e-3), std::to_string(since(0)).c_str());
  }

  /// A core pulls only a waiting thread that is not cache hot (left a core `migrationCost` ago
  /// or more), and SimStats counts the schedule. T0 (core 0) runs W (0.2 ms), then X (1 ms)
  /// after T1's Y (0.5 ms, core 1); T2 (core 0) runs Z (3 ms) from 0.2 ms, when T0 blocks. X is
  /// ready at 0.5 ms, queued on core 0 behind Z, while core 1 idles; a tick every 0.25 ms from
  /// 0.125 ms.
  void coresPullOnlyCacheColdThreads() {
    using sim::SimOp;
    auto run = [](double migrationCost, sim::SimStats* stats = nullptr) {
      std::vector<SimOp> ops(4);  // W, X, Y, Z
      ops[0].work = 0.2e-3;
      ops[1].work = 1e-3, ops[1].after = {2}, ops[1].handoff = true;
      ops[2].work = 0.5e-3;
      ops[3].work = 3e-3;
      sim::simulateCoreQueues(ops, {{0, 1}, {2}, {3}}, 2, 0, 1, 1.0, 0.25e-3, 0.5, 0, stats,
                              migrationCost);
      return ops;
    };
    auto near = [](double a, double b) { return std::abs(a - b) <= 1e-9; };
    // Any thread may move: core 1 pulls T0 at the 0.625 ms tick, X runs 0.625 to 1.625 ms.
    QVERIFY2(near(run(0)[1].end, 1.625e-3), std::to_string(run(0)[1].end).c_str());
    // T0 left core 0 at 0.2 ms: 0.425 ms before that tick, cold for a cost of 0.2 ms.
    QVERIFY(near(run(0.2e-3)[1].end, 1.625e-3));
    // Hot for Linux's 0.5 ms: left alone at 0.625, pulled at the 0.875 ms tick, X ends 1.875.
    sim::SimStats stats;
    stats.from = 0, stats.to = 4e-3;
    const std::vector<SimOp> hot = run(0.5e-3, &stats);
    QVERIFY2(near(hot[1].end, 1.875e-3), std::to_string(hot[1].end).c_str());
    QVERIFY(near(hot[3].end, 3.2e-3));
    // On a core: T0 for W and X, T1 for Y, T2 for Z; waiting: T0 0.5 to 0.875, T2 0 to 0.2.
    QVERIFY(near(stats.running[0], 1.2e-3) && near(stats.running[1], 0.5e-3) &&
            near(stats.running[2], 3e-3));
    QVERIFY2(near(stats.queued[0], 0.375e-3) && near(stats.queued[1], 0) &&
                 near(stats.queued[2], 0.2e-3),
             (std::to_string(stats.queued[0]) + " " + std::to_string(stats.queued[2])).c_str());
    QCOMPARE(stats.switchIns, (std::vector<double>{2, 1, 1}));
    // Core 1 idles 0.5 to 0.875 and 1.875 to 3.2 ms, where the schedule ends.
    QVERIFY2(near(stats.idleCoreSeconds, 1.7e-3), std::to_string(stats.idleCoreSeconds).c_str());
  }
};

QTEST_GUILESS_MAIN(TestPartition)
#include "test_partition.moc"
