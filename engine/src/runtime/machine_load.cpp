#include "stagewise/engine/machine_load.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

namespace stagewise::engine {

namespace {

std::string readFile(const char* path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string fixed(const char* format, double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

constexpr double kStealLimit = 0.10;

}  // namespace

LoadSource procLoadSource() {
  LoadSource s;
  s.loadavg = [] { return readFile("/proc/loadavg"); };
  s.stat = [] { return readFile("/proc/stat"); };
  s.cores = [] { return int(sysconf(_SC_NPROCESSORS_ONLN)); };
  s.pause = [] { std::this_thread::sleep_for(std::chrono::milliseconds(100)); };
  return s;
}

double parseLoadAverage(const std::string& loadavg) {
  std::istringstream in(loadavg);
  double one = 0;
  if (!(in >> one) || one < 0) return kNoValue;
  return one;
}

CpuJiffies parseCpuJiffies(const std::string& stat) {
  CpuJiffies j;
  std::istringstream in(stat);
  std::string label;
  if (!(in >> label) || label != "cpu") return j;
  // user nice system idle iowait irq softirq steal [guest guest_nice]: guest time is already
  // counted in user and nice, so the sum stops at steal.
  for (int i = 0; i < 8; ++i) {
    double v = 0;
    if (!(in >> v)) return j;
    j.total += v;
    if (i == 7) j.steal = v;
  }
  j.valid = true;
  return j;
}

double stealShare(const CpuJiffies& before, const CpuJiffies& after) {
  if (!before.valid || !after.valid) return kNoValue;
  const double total = after.total - before.total;
  if (!(total > 0)) return kNoValue;
  return std::clamp((after.steal - before.steal) / total, 0.0, 1.0);
}

LoadMeter::LoadMeter(LoadSource source) : m_source(std::move(source)) {}

MachineLoad LoadMeter::start() {
  MachineLoad load;
  try {
    load.loadAverage = parseLoadAverage(m_source.loadavg());
    load.cores = m_source.cores();
    const CpuJiffies before = parseCpuJiffies(m_source.stat());
    if (m_source.pause) m_source.pause();
    m_startJiffies = parseCpuJiffies(m_source.stat());
    load.stealShare = stealShare(before, m_startJiffies);
  } catch (const std::exception&) {
    // An unreadable /proc leaves the load unknown; the run goes on.
  }
  return load;
}

MachineLoad LoadMeter::end() {
  MachineLoad load;
  try {
    load.loadAverage = parseLoadAverage(m_source.loadavg());
    load.cores = m_source.cores();
    load.stealShare = stealShare(m_startJiffies, parseCpuJiffies(m_source.stat()));
  } catch (const std::exception&) {
  }
  return load;
}

double loadPerCore(const MachineLoad& load) {
  if (load.cores <= 0 || !std::isfinite(load.loadAverage)) return kNoValue;
  return load.loadAverage / load.cores;
}

MachineLoad busiest(const MachineLoad& start, const MachineLoad& end) {
  const double a = loadPerCore(start), b = loadPerCore(end);
  MachineLoad out = !std::isfinite(a) || (std::isfinite(b) && b > a) ? end : start;
  const double sa = start.stealShare, sb = end.stealShare;
  out.stealShare = !std::isfinite(sa) ? sb : !std::isfinite(sb) ? sa : std::max(sa, sb);
  return out;
}

LoadComparison compareLoads(const MachineLoad& aStart, const MachineLoad& aEnd,
                            const MachineLoad& bStart, const MachineLoad& bEnd, double tolerance) {
  LoadComparison c;
  const MachineLoad a = busiest(aStart, aEnd), b = busiest(bStart, bEnd);
  const double la = loadPerCore(a), lb = loadPerCore(b);
  if (std::isfinite(la) && std::isfinite(lb) && std::abs(la - lb) > tolerance) {
    c.comparable = false;
    c.why = "load " + fixed("%.2g", la) + " vs " + fixed("%.2g", lb) + " per core";
  }
  const double sa = a.stealShare, sb = b.stealShare;
  if (std::isfinite(sa) && std::isfinite(sb) && std::max(sa, sb) > kStealLimit &&
      std::abs(sa - sb) > kStealLimit / 2) {
    c.comparable = false;
    c.why += std::string(c.why.empty() ? "" : ", ") + "steal " + fixed("%.0f", sa * 100) +
             " % vs " + fixed("%.0f", sb * 100) + " %";
  }
  return c;
}

bool machineBusy(const MachineLoad& load, std::string* why, double threshold) {
  const double perCore = loadPerCore(load);
  const bool loaded = std::isfinite(perCore) && perCore > threshold;
  const bool stolen = std::isfinite(load.stealShare) && load.stealShare > kStealLimit;
  if (why) {
    *why = "load average " + fixed("%.2f", load.loadAverage) + " on " + std::to_string(load.cores) +
           " cores";
    if (std::isfinite(load.stealShare))
      *why += ", steal " + fixed("%.0f", load.stealShare * 100) + " %";
  }
  return loaded || stolen;
}

double waitUntilQuiet(const std::function<MachineLoad()>& read, const QuietWait& wait,
                      const std::function<void(double)>& sleep,
                      const std::function<void(const std::string&)>& say) {
  std::string why;
  if (!machineBusy(read(), &why, wait.threshold)) return 0;
  say("the machine is busy (" + why + "): waiting up to " + fixed("%.0f", wait.maxWaitS) +
      " s before measuring throughput");
  double waited = 0;
  while (waited < wait.maxWaitS) {
    const double step = std::min(wait.pollS, wait.maxWaitS - waited);
    sleep(step);
    waited += step;
    if (!machineBusy(read(), &why, wait.threshold)) {
      say("the machine is quiet after " + fixed("%.0f", waited) + " s (" + why + ")");
      return waited;
    }
  }
  say("the machine is still busy after " + fixed("%.0f", waited) + " s (" + why +
      "): measuring anyway; the run's summary records the load");
  return waited;
}

std::string loadMismatch(const std::vector<RunLoad>& runs, double tolerance) {
  const RunLoad* lo = nullptr;
  const RunLoad* hi = nullptr;
  double loV = INFINITY, hiV = -INFINITY;
  std::string stealWhy;
  for (size_t i = 0; i < runs.size(); ++i) {
    const double v = loadPerCore(busiest(runs[i].start, runs[i].end));
    if (std::isfinite(v) && v < loV) loV = v, lo = &runs[i];
    if (std::isfinite(v) && v > hiV) hiV = v, hi = &runs[i];
    for (size_t j = 0; j < i && stealWhy.empty(); ++j) {
      const LoadComparison c =
          compareLoads(runs[i].start, runs[i].end, runs[j].start, runs[j].end, tolerance);
      if (!c.comparable && c.why.find("steal") != std::string::npos)
        stealWhy = "run #" + std::to_string(runs[j].runId) + " and run #" +
                   std::to_string(runs[i].runId) + " lost different shares to steal (" +
                   c.why.substr(c.why.find("steal")) + ")";
    }
  }
  std::string out;
  if (lo && hi && hiV - loV > tolerance)
    out = "run #" + std::to_string(hi->runId) + " (load " + fixed("%.2g", hiV) +
          " per core) vs run #" + std::to_string(lo->runId) + " (" + fixed("%.2g", loV) +
          " per core)";
  if (!stealWhy.empty()) out += (out.empty() ? "" : "; ") + stealWhy;
  if (out.empty()) return out;
  return "throughputs measured under different machine loads: " + out +
         "; compare them with care or measure again on a quiet machine";
}

}  // namespace stagewise::engine
