// Stages in 2 processes (c10d Gloo on loopback) against 2 stage threads in one process, both
// started through stagewise-cli exactly as users start them, interleaved and repeated (this
// machine is noisy): samples/s and their ratio (target: at least 0.90), then the bytes per sample
// crossing each boundary next to what pipelined backprop would move across the same cut.
//
//   bench_dist [--steps N] [--repeats R] [--config FILE] [--cuts [4]]

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {

std::string arg(int argc, char** argv, const std::string& name, const std::string& fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (argv[i] == name) return argv[i + 1];
  return fallback;
}

nlohmann::json runCli(const std::string& args) {
  const std::string cmd = std::string(STAGEWISE_CLI) + " " + args + " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) throw std::runtime_error("cannot run " + cmd);
  std::string out, last;
  char buf[65536];
  while (fgets(buf, sizeof buf, p)) out = buf, last = out.empty() ? last : out;
  const int rc = pclose(p);
  if (rc != 0) throw std::runtime_error("failed (" + std::to_string(rc) + "): " + cmd);
  return nlohmann::json::parse(last);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : (v[(v.size() - 1) / 2] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string steps = arg(argc, argv, "--steps", "1500");
  const int repeats = std::stoi(arg(argc, argv, "--repeats", "3"));
  const std::string config = arg(argc, argv, "--config", std::string(STAGEWISE_SOURCE_DIR) + "/resources/experiments/mlp-fmnist-4stage.json");
  const std::string cuts = arg(argc, argv, "--cuts", "[4]");
  const std::string common = "--config " + config + " --no-store --json --quiet --set partition.cuts=" + cuts +
                             " --set stages=[] --set train.max_steps=" + steps +
                             " --set eval.interval=0 --set probe.interval=-1";
  std::vector<double> threads, procs;
  nlohmann::json lastThreads, lastProcs;
  for (int r = 0; r < repeats; ++r) {
    // Alternate which goes first, so drift on the machine hits both alike.
    for (int which : r % 2 == 0 ? std::vector<int>{0, 1} : std::vector<int>{1, 0}) {
      if (which == 0) {
        lastThreads = runCli("train " + common);
        threads.push_back(lastThreads["samples_per_sec"].get<double>());
      } else {
        lastProcs = runCli("launch --procs 2 " + common);
        procs.push_back(lastProcs["samples_per_sec"].get<double>());
      }
      std::fprintf(stderr, ".");
    }
  }
  std::fprintf(stderr, "\n");
  const double t = median(threads), p = median(procs);
  std::printf("MLP preset cut at %s, batch 32, %s steps, %d interleaved repeats (median)\n\n", cuts.c_str(),
              steps.c_str(), repeats);
  std::printf("| run | samples/s | each repeat |\n|---|---:|---|\n");
  auto list = [](const std::vector<double>& v) {
    std::string s;
    for (double x : v) s += (s.empty() ? "" : ", ") + std::to_string(static_cast<int>(x));
    return s;
  };
  std::printf("| 2 stage threads, 1 process | %.0f | %s |\n", t, list(threads).c_str());
  std::printf("| 2 processes (launch --procs 2, Gloo) | %.0f | %s |\n", p, list(procs).c_str());
  std::printf("| **processes / threads** | **%.3f** | target >= 0.90 |\n\n", t > 0 ? p / t : 0);

  const double samples = lastProcs["samples"].get<double>();
  std::printf("| boundary | local: bytes/sample sent | pipelined backprop: bytes/sample | local / backprop |\n");
  std::printf("|---|---:|---:|---:|\n");
  const auto& stages = lastProcs["stages"];
  const auto& stagesThreads = lastThreads["stages"];
  for (size_t k = 0; k + 1 < stages.size(); ++k) {
    const double sent = stages[k]["bytes_sent"].get<double>() / samples;
    const double bp = stages[k]["backprop_bytes"].get<double>() / samples;
    const bool same = stages[k]["bytes_sent"] == stagesThreads[k]["bytes_sent"];
    std::printf("| %zu -> %zu | %.0f%s | %.0f | %.2f |\n", k, k + 1, sent, same ? "" : " (differs in-process!)", bp,
                bp > 0 ? sent / bp : 0);
  }
  std::printf("\nbytes sent = what the c10d channel put on the wire (activations + labels, no headers); the\n"
              "in-process run counts the same bytes. Backprop would send the activations forward and their\n"
              "gradients back (plus the labels to the last stage).\n");
  return 0;
}
