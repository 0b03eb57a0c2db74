#pragma once
// Every table of the workbench exports its cells as CSV and copies a selection as tab-separated
// text (Ctrl+C), through one helper: attachTableExport() on the view.

#include <QString>
#include <QVariant>
#include <functional>

class QAbstractItemModel;
class QAbstractItemView;
class QAction;
class QItemSelectionModel;
class QTableView;

namespace stagewise::ui {

/// The role a model answers for Export CSV with the stored value behind a cell's display text:
/// a number (written to full precision: the shortest text that reads back as the same double),
/// text, or a QVariantList of those for a cell that shows several values (mean ± std), written
/// as that many fields. A header's kExportRole is its name with the unit ("wall time (s)"), or
/// a QStringList naming each field of a split column. A cell without it exports its display
/// text; a NaN or an empty QString exports an empty field. Copy (Ctrl+C) keeps display text.
constexpr int kExportRole = Qt::UserRole + 0x4e0;

/// A cell's export value as CSV field text (see kExportRole).
QString exportFieldText(const QVariant& value);

/// One CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break, quotes
/// doubled.
QString csvField(const QString& text);
/// The model's header row and every cell's stored value (kExportRole, else its display text) as
/// CSV, one line per row ("\n"); the columns `view` hides are left out.
QString tableCsv(const QAbstractItemModel* model, const QTableView* view = nullptr);
/// The selected cells as tab-separated text: a line of the columns' header names first (not for
/// a single cell), then rows in model order, the columns any selected cell of the selection
/// spans, a cell not selected inside that rectangle empty. Tabs and line breaks
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
