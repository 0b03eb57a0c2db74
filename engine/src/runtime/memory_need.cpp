#include "stagewise/engine/memory_need.h"

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "stagewise/engine/partition.h"

namespace stagewise::engine {

MemoryNeed estimateMemoryNeed(const ExperimentSpec& spec, const ModelPlan& plan) {
  constexpr int64_t kFloat = 4;
  const PartitionPlan partition = makePartition(spec, plan);
  int64_t params = plan.totalParams();
  if (spec.mode == Mode::Local)
    for (const auto& st : partition.stages) params += st.auxParams;
  const int64_t batch = std::max(1, spec.train.batchSize);
  MemoryNeed need;
  need.weightBytes = params * kFloat;
  need.gradientBytes = params * kFloat;
  if (spec.train.optimizer == "adam")
    need.optimizerBytes = 2 * params * kFloat;
  else if (spec.train.momentum > 0)
    need.optimizerBytes = params * kFloat;
  need.copyBytes = params * kFloat;  // the final evaluation always loads the copies
  int64_t activations = 0;
  for (const auto& st : partition.stages) {
    activations += st.activationBytes * batch;
    // Local and pipeline: the batches waiting in the queue to the next stage.
    if (spec.mode != Mode::Backprop && !st.isLast)
      activations += st.outBytes * batch * std::max(1, spec.train.queueCapacity);
  }
  need.activationBytes = activations;
  return need;
}

namespace {

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int64_t parseBytes(const std::string& text) {
  try {
    size_t used = 0;
    const long long v = std::stoll(text, &used);
    return used > 0 && v >= 0 ? static_cast<int64_t>(v) : -1;
  } catch (const std::exception&) {
    return -1;
  }
}

}  // namespace

MemoryLimit availableMemory(const std::string& cgroupMax, const std::string& cgroupCurrent,
                            int64_t addressLimit, int64_t addressUsed, const std::string& meminfo) {
  MemoryLimit out;
  const auto offer = [&](int64_t bytes, const char* source) {
    if (bytes < 0) return;
    if (out.bytes < 0 || bytes < out.bytes) out.bytes = bytes, out.source = source;
  };
  if (const int64_t max = parseBytes(cgroupMax); max >= 0)
    offer(std::max<int64_t>(0, max - std::max<int64_t>(0, parseBytes(cgroupCurrent))),
          "the cgroup's memory.max");
  if (addressLimit >= 0) offer(std::max<int64_t>(0, addressLimit - addressUsed), "ulimit -v");
  std::istringstream lines(meminfo);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("MemAvailable:", 0) == 0) {
      const int64_t kib = parseBytes(line.substr(line.find_first_not_of(" \t", 13)));
      if (kib >= 0) offer(kib * 1024, "MemAvailable");
    }
  return out;
}

MemoryLimit availableMemory() {
  rlimit limit{};
  int64_t addressLimit = -1;
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    addressLimit = static_cast<int64_t>(limit.rlim_cur);
  int64_t addressUsed = 0;
  if (addressLimit >= 0) {
    std::istringstream statm(readFile("/proc/self/statm"));
    int64_t pages = 0;
    if (statm >> pages) addressUsed = pages * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
  }
  // The process's own cgroup (v2: one line "0::/path").
  std::string cgroup = "/sys/fs/cgroup";
  {
    std::istringstream lines(readFile("/proc/self/cgroup"));
    for (std::string line; std::getline(lines, line);)
      if (line.rfind("0::", 0) == 0 && line.size() > 3 && line.substr(3) != "/")
        cgroup += line.substr(3);
  }
  std::string max = readFile(cgroup + "/memory.max");
  std::string current = readFile(cgroup + "/memory.current");
  if (max.empty()) {
    max = readFile("/sys/fs/cgroup/memory.max");
    current = readFile("/sys/fs/cgroup/memory.current");
  }
  return availableMemory(max, current, addressLimit, addressUsed, readFile("/proc/meminfo"));
}

std::string formatBytesIec(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (bytes >= 1024 && u < 5) bytes /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buf;
}

std::string memoryProblem(const MemoryNeed& need, const MemoryLimit& limit,
                          const std::string& modelKind) {
  if (limit.bytes < 0 || need.total() <= limit.bytes) return {};
  const int64_t model = need.weightBytes + need.gradientBytes + need.optimizerBytes +
                        need.copyBytes;
  const std::string reduce =
      model >= need.activationBytes
          ? (modelKind == "cnn"   ? std::string("reduce model.channels or model.blocks")
             : modelKind == "vit" ? std::string("reduce model.dim, model.depth or model.mlp_ratio")
             : modelKind == "torchscript"
                 ? std::string("use a smaller model (model.path), or more memory")
             : modelKind == "layers"
                 ? std::string("reduce model.layers (fewer layers, or smaller out, dim and "
                               "mlp_ratio)")
                                  : std::string("reduce model.hidden (fewer or narrower layers)"))
          : std::string("reduce train.batch_size");
  return "the run needs at least " + formatBytesIec(double(need.total())) + " (weights " +
         formatBytesIec(double(need.weightBytes)) + ", gradients, optimizer state and copies " +
         formatBytesIec(double(need.gradientBytes + need.optimizerBytes + need.copyBytes)) +
         ", activations " + formatBytesIec(double(need.activationBytes)) + ") but " +
         limit.source + " leaves " + formatBytesIec(double(limit.bytes)) + ": " + reduce;
}

}  // namespace stagewise::engine
