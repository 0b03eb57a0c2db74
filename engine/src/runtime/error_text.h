#pragma once
// One line for an exception caught in a run: LibTorch's errors without their C++ backtrace, an
// allocation failure said as such. Failures reach the CLI and the workbench as this line.

#include <torch/torch.h>

#include <new>
#include <string>

#include "stagewise/engine/memory_need.h"

namespace stagewise::engine {

inline std::string errorText(const std::exception& e) {
  std::string text;
  if (auto* c = dynamic_cast<const c10::Error*>(&e))
    text = c->what_without_backtrace();
  else
    text = e.what();
  if (const auto nl = text.find('\n'); nl != std::string::npos) text.resize(nl);
  const bool noMemory = dynamic_cast<const std::bad_alloc*>(&e) ||
                        text.find("tried to allocate") != std::string::npos ||
                        text.find("not enough memory") != std::string::npos;
  if (!noMemory) return text;
  // LibTorch's "[enforce fail at alloc_cpu.cpp:75] data. DefaultCPUAllocator: not enough
  // memory: you tried to allocate N bytes": say how much, in the units users read.
  const std::string marker = "tried to allocate ";
  if (const auto at = text.find(marker); at != std::string::npos) {
    try {
      const double bytes = std::stod(text.substr(at + marker.size()));
      return "out of memory: could not allocate " + formatBytesIec(bytes) +
             " (lower model sizes or train.batch_size)";
    } catch (const std::exception&) {
    }
  }
  return "out of memory (" + text + ")";
}

}  // namespace stagewise::engine
