#pragma once
// A red outline drawn over an editor whose value the spec has wrong. It is a transparent child
// widget, not a style sheet: a style sheet on one editor switches it to another style's
// metrics (a line edit in a form shrank to half its width until the theme was switched).

class QWidget;

namespace stagewise::ui {

/// Shows or hides the outline of `editor`.
void setInvalidOutline(QWidget* editor, bool invalid);
/// Whether `editor` is outlined now.
bool hasInvalidOutline(const QWidget* editor);

}  // namespace stagewise::ui
