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

/// Asks for the file (a save dialog, "run-<id>.trace.json" proposed), writes it, and says so in
/// a message box when it fails.
void exportTraceWithDialog(QWidget* parent, const storage::RunStore& store, int64_t runId);

}  // namespace stagewise::ui
