#pragma once
// The layer palette of a `model.kind: "layers"` design (issue 33 §1): the top-level layers as a
// list (each row one cuttable layer with its output shape and parameters, an invalid one
// outlined with its message), a menu of layer types to add, reordering by drag or buttons,
// deleting, and the selected layer's parameters. Every change is one undo step of the
// DesignDocument; cuts follow the layers they were between.

#include <QWidget>
#include <vector>

#include "designer/design_document.h"

class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;
class QSpinBox;
class QToolButton;

namespace stagewise::ui {

class LayerListEditor : public QWidget {
  Q_OBJECT
 public:
  explicit LayerListEditor(DesignDocument* doc, QWidget* parent = nullptr);

  QListWidget* list() const { return m_list; }
  QToolButton* addButton() const { return m_add; }
  QPushButton* removeButton() const { return m_remove; }
  QPushButton* upButton() const { return m_up; }
  QPushButton* downButton() const { return m_down; }
  /// The selected layer's whole entry as JSON (every field, inner layers included).
  QLineEdit* jsonEdit() const { return m_json; }
  /// The JSON field's error, shown under it (hidden when the field is fine).
  QLabel* jsonErrorLabel() const { return m_jsonError; }
  /// The spin box of a numeric field of the selected layer ("out", "kernel", …); null when the
  /// selected layer's type has no such field.
  QSpinBox* fieldSpin(const QString& key) const;
  QDoubleSpinBox* dropoutSpin() const { return m_p; }

  /// The layer types the palette offers, in menu order.
  static QStringList layerTypes();
  /// A new layer of `type` with defaults that fit most inputs (a 3x3 conv with padding, …).
  static engine::LayerSpec defaultLayer(const std::string& type);

  /// Inserts a layer of `type` after the selected one (at the end when none is selected).
  void addLayer(const QString& type);
  void removeSelected();
  /// Moves the selected layer `delta` rows (-1 up, +1 down).
  void moveSelected(int delta);
  /// Moves layer `from` to row `to` (a drag in the list).
  void moveLayer(int from, int to);

 public Q_SLOTS:
  void refresh();

 private:
  /// Applies a new layer list as one undo step; `cuts` are the cuts to keep; `droppedStage`:
  /// a stage that lost its only layer (its `stages` entry goes too).
  void apply(std::vector<engine::LayerSpec> layers, std::vector<int> cuts, const QString& text,
             int select, int mergeId = -1, int droppedStage = -1);
  void showSelected();
  void setField(const std::string& key, double value);
  /// Outlines the JSON field and shows `error` under it; an empty one clears both.
  void showJsonError(const QString& error);

  DesignDocument* m_doc;
  bool m_updating = false;
  QListWidget* m_list;
  QToolButton* m_add;
  QPushButton* m_remove;
  QPushButton* m_up;
  QPushButton* m_down;
  QLabel* m_problem;
  QFormLayout* m_fields;
  std::vector<std::pair<std::string, QSpinBox*>> m_spins;
  QDoubleSpinBox* m_p;
  QLineEdit* m_json;
  QLabel* m_jsonError;
};

}  // namespace stagewise::ui
