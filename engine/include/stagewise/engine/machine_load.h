#pragma once
// The machine's load around a run (issue 36 §1.8): throughputs measured while other processes
// ran, or while the hypervisor took CPU time away (steal), are not comparable with those of an
// idle machine. The engine records a MachineLoad at the start and at the end of every run; the
// workbench and the report compare them before they compare throughputs.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "stagewise/engine/metrics.h"

namespace stagewise::engine {

/// Where the numbers come from; the default reads /proc, tests give their own texts.
struct LoadSource {
  std::function<std::string()> loadavg;  ///< the text of /proc/loadavg
  std::function<std::string()> stat;     ///< the text of /proc/stat (its first "cpu" line is used)
  std::function<int()> cores;            ///< online CPUs
  std::function<void()> pause;           ///< between two reads of `stat` for the start's steal
};
LoadSource procLoadSource();

/// The 1-minute load average from /proc/loadavg's text (NaN when it cannot be read).
double parseLoadAverage(const std::string& loadavg);
/// The first "cpu" line of /proc/stat: all jiffies and the steal column (the 8th value).
struct CpuJiffies {
  double total = 0, steal = 0;
  bool valid = false;
};
CpuJiffies parseCpuJiffies(const std::string& stat);
/// The share of CPU time stolen between two readings (NaN when they cannot be compared).
double stealShare(const CpuJiffies& before, const CpuJiffies& after);

/// Reads the load at a run's start and end: the start's steal share over a short window (the
/// source's pause, 100 ms from /proc), the end's over the whole run.
class LoadMeter {
 public:
  explicit LoadMeter(LoadSource source = procLoadSource());
  MachineLoad start();
  MachineLoad end();

 private:
  LoadSource m_source;
  CpuJiffies m_startJiffies;
};

/// Load per core (load average / cores); NaN when either is unknown.
double loadPerCore(const MachineLoad& load);
/// Whether throughputs measured under `a` and `b` may be compared: their load per core (the
/// busier of start and end) differs by at most `tolerance` (0.5 by default: half the machine
/// busy with something else) and neither lost more than 10 % to steal. Unknown loads compare.
struct LoadComparison {
  bool comparable = true;
  std::string why;  ///< when not: "load 1.9 vs 0.1 per core" or "steal 23 % vs 0 %"
};
LoadComparison compareLoads(const MachineLoad& aStart, const MachineLoad& aEnd,
                            const MachineLoad& bStart, const MachineLoad& bEnd,
                            double tolerance = 0.5);
/// The busier of a run's two readings per core, and the larger steal share (NaN: unknown).
MachineLoad busiest(const MachineLoad& start, const MachineLoad& end);

/// Whether the machine is busy for a throughput measurement: load per core above `threshold`
/// (0.5 by default), or steal above 10 %. `why` says what was read.
bool machineBusy(const MachineLoad& load, std::string* why = nullptr, double threshold = 0.5);

/// How long a throughput measurement waits for a busy machine to quiet down.
struct QuietWait {
  double threshold = 0.5;  ///< load per core above which the machine is busy
  double maxWaitS = 60;    ///< the longest wait (then it measures anyway, and says so)
  double pollS = 5;        ///< how often the load is read again
};
/// Waits while `read()` says the machine is busy (machineBusy), at most `wait.maxWaitS`, through
/// `sleep(seconds)`. `say` gets one line when the wait starts (what was read, how long at most)
/// and one when it ends (quiet after N s, or still busy: measured anyway). Returns the seconds
/// waited.
double waitUntilQuiet(const std::function<MachineLoad()>& read, const QuietWait& wait,
                      const std::function<void(double)>& sleep,
                      const std::function<void(const std::string&)>& say);

/// One run's loads, for warnings over several runs.
struct RunLoad {
  int64_t runId = 0;
  MachineLoad start, end;
};
/// The loads a summary JSON recorded (load_start, load_end; unknown when absent).
RunLoad runLoadFromSummary(int64_t runId, const std::string& summaryJson);
/// Empty when every pair of runs compares (compareLoads); else one line naming the two runs
/// furthest apart: "throughputs measured under different machine loads: run #3 (load 1.9 per
/// core) vs run #5 (0.1 per core); compare them with care or measure again on a quiet machine".
std::string loadMismatch(const std::vector<RunLoad>& runs, double tolerance = 0.5);

}  // namespace stagewise::engine
