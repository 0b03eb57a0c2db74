#pragma once
// "Vary … in a study…" on a field of the form: its context menu (right click, or the menu key)
// offers to add the field's setting to the study panel.

#include <QString>
#include <functional>

class QAction;
class QWidget;

namespace stagewise::ui {

/// Gives `editor` of the spec key `key` a context menu with "Vary KEY in a study…", which calls
/// `vary(key)`. A line edit keeps its standard menu below it.
void offerVary(QWidget* editor, const QString& key, std::function<void(const QString&)> vary);
/// The editor's Vary action (null when it has none).
QAction* varyAction(QWidget* editor);

}  // namespace stagewise::ui
