#pragma once
// The command palette (Ctrl+Shift+P), as in Qt Creator and KDE applications: every enabled
// action of a window's menus, found by fuzzy search, shown with its menu and shortcut; Enter
// (or a double-click) triggers the chosen one.

#include <QDialog>
#include <QPointer>
#include <vector>

class QAction;
class QLineEdit;
class QMenuBar;
class QTreeWidget;

namespace stagewise::ui {

class CommandPalette : public QDialog {
  Q_OBJECT
 public:
  /// Lists the actions of `menus` (submenus included) and the window's own actions, less those
  /// with the property "paletteSkips" (the palette's own).
  explicit CommandPalette(QMenuBar* menus, QWidget* window);

  /// Reads the actions afresh (what is enabled now) and shows the palette, search emptied.
  void popup();
  QLineEdit* searchEdit() const { return m_search; }
  /// What the search matches, best first: action, menu, shortcut. Item data: the entry index.
  QTreeWidget* list() const { return m_list; }
  /// The action a row of the list stands for.
  QAction* actionAt(int row) const;

  /// How well `pattern` matches `text` as a subsequence, ignoring case and spaces; -1: not at
  /// all. Letters that start a word or follow the previous match score higher; a pattern of up
  /// to kStrictLength letters matches with such letters only, a longer one needs two thirds
  /// of its letters to be such.
  static int fuzzyScore(const QString& pattern, const QString& text);
  static constexpr int kStrictLength = 4;

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  struct Entry {
    QPointer<QAction> action;
    QString label;  ///< its text, without mnemonics
    QString path;   ///< the menus it is in: "Run › Pause / resume"
    QString keys;   ///< its shortcuts
  };
  void collect();
  void refilter();
  void triggerCurrent();

  QMenuBar* m_menus;
  QLineEdit* m_search;
  QTreeWidget* m_list;
  std::vector<Entry> m_entries;
};

}  // namespace stagewise::ui
