#include "stagewise/engine/metrics.h"

namespace stagewise::engine {

std::string toString(EventKind kind) {
  switch (kind) {
    case EventKind::Started: return "started";
    case EventKind::Paused: return "paused";
    case EventKind::Resumed: return "resumed";
    case EventKind::StopRequested: return "stop_requested";
    case EventKind::Completed: return "completed";
    case EventKind::Stopped: return "stopped";
    case EventKind::Failed: return "failed";
    case EventKind::Checkpoint: return "checkpoint";
    case EventKind::Info: return "info";
    case EventKind::Warning: return "warning";
  }
  return "info";
}

std::string toString(RunStatus status) {
  switch (status) {
    case RunStatus::Running: return "running";
    case RunStatus::Completed: return "completed";
    case RunStatus::Stopped: return "stopped";
    case RunStatus::Failed: return "failed";
    case RunStatus::Interrupted: return "interrupted";
  }
  return "running";
}

}  // namespace stagewise::engine
