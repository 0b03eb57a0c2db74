#pragma once
#include <string>
#include <vector>

namespace stagewise::engine {

/// First statement of every compute thread: pins it to `cores` (if any), sets its intra-op
/// thread count and flushes denormals in it and its OpenMP workers (both are per thread).
/// Returns a note when pinning failed (the run goes on unpinned), else empty.
std::string setupComputeThread(int threads, const std::vector<int>& cores);

/// Names the calling thread (at most 15 characters are kept), as `top -H`, `perf` and debuggers
/// show it: "sw-stage-N" for a stage's worker, "sw-loader" for the data loader.
void nameThread(const std::string& name);

/// Number of cores this process may run on.
int availableCores();

}  // namespace stagewise::engine
