#pragma once
// Every table of the workbench exports its cells as CSV and copies a selection as tab-separated
// text (Ctrl+C), through one helper: attachTableExport() on the view.

#include <QString>
#include <functional>

class QAbstractItemModel;
class QAbstractItemView;
class QAction;
class QItemSelectionModel;
class QTableView;

namespace stagewise::ui {

/// One CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break, quotes
/// doubled.
QString csvField(const QString& text);
/// The model's header row and every cell's display text as CSV, one line per row ("\n"); the
/// columns `view` hides are left out.
QString tableCsv(const QAbstractItemModel* model, const QTableView* view = nullptr);
/// The selected cells as tab-separated text: rows in model order, the columns any selected cell
/// of the selection spans, a cell not selected inside that rectangle empty. Tabs and line breaks
/// inside a cell become spaces; the columns `view` hides are left out. Empty when nothing is
/// selected.
QString selectionTsv(const QItemSelectionModel* selection, const QTableView* view = nullptr);
/// Writes tableCsv(model, view) to `path`; an empty string on success, else one line saying
/// why not.
QString writeTableCsv(const QAbstractItemModel* model, const QString& path,
                      const QTableView* view = nullptr);

/// Before an export, a lazily loaded model loads every row; it calls `ready` once it has (on the
/// GUI thread).
using PrepareExport = std::function<void(std::function<void()> ready)>;

/// Gives `view` Ctrl+C (the selection as tab-separated text on the clipboard, in place of the
/// current cell only) and a right-click menu with "Copy" and "Export CSV…" (a file dialog
/// proposing `baseName`.csv). The view's own context-menu actions (QWidget::addAction) come
/// first. Returns the export action (for a toolbar or the command palette).
QAction* attachTableExport(QAbstractItemView* view, const QString& baseName,
                           PrepareExport prepare = {});
/// Copies the view's selection to the clipboard (what Ctrl+C does); false when none.
bool copyTableSelection(const QAbstractItemView* view);

}  // namespace stagewise::ui
