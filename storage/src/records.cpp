#include "stagewise/storage/records.h"

#include <chrono>

namespace stagewise::storage {

TimestampMs nowMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::string toString(RunStatus status) {
  switch (status) {
    case RunStatus::Running:
      return "running";
    case RunStatus::Completed:
      return "completed";
    case RunStatus::Stopped:
      return "stopped";
    case RunStatus::Failed:
      return "failed";
    case RunStatus::Interrupted:
      return "interrupted";
    case RunStatus::Pruned:
      return "pruned";
  }
  return "running";
}

std::optional<RunStatus> runStatusFromString(std::string_view text) {
  for (RunStatus s : {RunStatus::Running, RunStatus::Completed, RunStatus::Stopped,
                      RunStatus::Failed, RunStatus::Interrupted, RunStatus::Pruned}) {
    if (toString(s) == text) return s;
  }
  return std::nullopt;
}

std::string toString(StudyStatus status) {
  switch (status) {
    case StudyStatus::Running:
      return "running";
    case StudyStatus::Stopped:
      return "stopped";
    case StudyStatus::Interrupted:
      return "interrupted";
    case StudyStatus::Completed:
      return "completed";
  }
  return "running";
}

std::optional<StudyStatus> studyStatusFromString(std::string_view text) {
  for (StudyStatus s : {StudyStatus::Running, StudyStatus::Stopped, StudyStatus::Interrupted,
                        StudyStatus::Completed}) {
    if (toString(s) == text) return s;
  }
  return std::nullopt;
}

}  // namespace stagewise::storage
