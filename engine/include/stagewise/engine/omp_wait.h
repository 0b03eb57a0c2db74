#pragma once
#include <string>

/// How long an idle OpenMP worker of LibTorch (libgomp) spins before it sleeps, in Stagewise's
/// programs that train, when the user has set neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT.
/// libgomp's own default is 300,000 spins; see docs/architecture.md, "Idle OpenMP workers".
#define STAGEWISE_GOMP_SPINCOUNT_DEFAULT "10000"

namespace stagewise::engine {

/// First statement of main() in a program that trains. Unless OMP_WAIT_POLICY or GOMP_SPINCOUNT
/// is set, sets GOMP_SPINCOUNT to the default above and executes the program again with the same
/// arguments (libgomp reads the variable once, as it is loaded, before main() runs). Returns in
/// the re-executed program, or when the variable was already set, or when the re-execution
/// failed (the program then runs with libgomp's default; openmpWaitDescription() says so).
void ensureOmpWaitDefault(char** argv);

/// How this process's OpenMP workers wait, e.g. "spin 10000, then sleep (Stagewise default)",
/// "OMP_WAIT_POLICY=active" or "libgomp default (spin 300000, then sleep)".
std::string openmpWaitDescription();

}  // namespace stagewise::engine
