#pragma once
// Scrolling a column of settings must not edit them: a wheel turn over a spin box or combo box
// that does not have the keyboard focus scrolls the column instead of changing its value (the
// field takes the focus, and then the wheel, when clicked or tabbed into).

class QAbstractScrollArea;
class QWidget;

namespace stagewise::ui {

/// Guards every spin box and combo box inside `scroll`'s widget, present when called.
void guardWheel(QAbstractScrollArea* scroll, QWidget* content);

}  // namespace stagewise::ui
