#pragma once
// The Timeline's "Export trace (Perfetto)…": asks for a file and has the store write the run's
// spans there as a Chrome trace (storage/trace.h, the writer `stagewise-cli runs trace` uses).

#include <QString>
#include <cstdint>

class QWidget;

namespace stagewise::storage {
class RunStore;
}

namespace stagewise::ui {

/// Writes run `runId` of `store` to `path` as a Chrome trace; an empty string on success, else
/// one line saying what went wrong (no such run, no spans stored, the file not writable).
QString exportTrace(const storage::RunStore& store, int64_t runId, const QString& path);

/// The file the dialog proposes: "run-<id>.trace.json" in the last export folder (the
/// documents folder at first).
QString defaultTracePath(int64_t runId);

/// Asks for the file (a save dialog, defaultTracePath proposed; its folder is remembered), writes
/// it, and says so in a message box when it fails.
void exportTraceWithDialog(QWidget* parent, const storage::RunStore& store, int64_t runId);

}  // namespace stagewise::ui
