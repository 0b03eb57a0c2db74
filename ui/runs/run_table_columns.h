#pragma once
// The run list's column widths and order (issue 36, at 1366 px): the spec keys that differ
// among the listed runs come right after Name, the fixed columns are as narrow as their
// values, and Name grows to its longest shown name only into room the list has.

#include <QObject>

class QTableView;

namespace stagewise::ui {

class RunTableModel;

/// Sizes and orders the columns of `table` (showing `model`) and keeps them fitted as pages
/// load and keys change. A Name width the user chose is kept.
class RunTableColumns : public QObject {
  Q_OBJECT
 public:
  RunTableColumns(QTableView* table, RunTableModel* model);

  /// The widest Name column a fit gives, in average characters.
  static constexpr int kNameColumnChars = 40;
  /// Widens the Name column to the longest loaded name, up to kNameColumnChars and the room
  /// the list has beside the other shown columns.
  void fitNameColumn();

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  /// Shows the used key columns (hides the rest) and sizes them to their values.
  void showKeyColumns();

  QTableView* m_table;
  RunTableModel* m_model;
  bool m_nameWidthByUser = false;  ///< the user sized the Name column: it is not fitted
  bool m_fitting = false;
};

}  // namespace stagewise::ui
