// DistOptions from the environment, as torchrun sets it.
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "stagewise/engine/engine.h"

namespace stagewise::engine {

namespace {
int intFromEnv(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  try {
    size_t used = 0;
    const int n = std::stoi(v, &used);
    if (used != std::string(v).size()) throw std::invalid_argument(name);
    return n;
  } catch (const std::exception&) {
    throw std::invalid_argument(std::string(name) + "='" + v + "' is not a whole number");
  }
}
}  // namespace

DistOptions DistOptions::fromEnvironment() {
  DistOptions o;
  o.rank = intFromEnv("RANK", -1);
  o.worldSize = intFromEnv("WORLD_SIZE", 0);
  if (const char* a = std::getenv("MASTER_ADDR"); a && *a) o.masterAddr = a;
  o.masterPort = intFromEnv("MASTER_PORT", o.masterPort);
  return o;
}

}  // namespace stagewise::engine
