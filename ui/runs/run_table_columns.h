#pragma once
// The run list's column widths and order (issue 36, at 1366 px): the spec keys that differ
// among the listed runs come right after Name, the fixed columns are as narrow as their
// values, and Name grows to its longest shown name only into room the list has.

#include <QObject>

class QFontMetrics;

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
  static constexpr int kNameColumnChars = 46;
  /// The least a fit leaves it (for a name that long) when the list is narrow.
  static constexpr int kNameLeastChars = 22;
  /// The key columns kept in view beside Name: the Name column gives them room.
  static constexpr int kKeysInView = 3;
  /// Sizes the Name column to the longest shown name, up to kNameColumnChars and the room the
  /// list has beside the id and kKeysInView key columns (down to kNameLeastChars).
  void fitNameColumn();
  /// A name as the Name column draws it in `width` pixels: whole if it fits; a study's run
  /// ("<study> · <item>, <item>…") keeps its study part (up to a third of the width), its first
  /// and last items (a trial's label and mode, the seed) before the ones between, and loses the
  /// start of what is left, not the end (issue 36: middle elision made four rows read the
  /// same); any other name loses its middle.
  static QString elideName(const QString& name, const QFontMetrics& metrics, int width);

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
