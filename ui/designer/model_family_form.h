#pragma once
// The model's family and its shape: MLP widths, residual-CNN channels and blocks, or ViT patch,
// width, depth, heads and MLP ratio. Edits are undo steps; typing in one field merges.

#include <QWidget>
#include <functional>

#include "designer/design_document.h"

class QCheckBox;
class QComboBox;
class QFormLayout;
class QLabel;
class QPushButton;
class QLineEdit;
class QSpinBox;
class QStackedWidget;

namespace stagewise::ui {

class LayerListEditor;

class ModelFamilyForm : public QWidget {
  Q_OBJECT
 public:
  explicit ModelFamilyForm(DesignDocument* doc, QWidget* parent = nullptr);

  QComboBox* kindCombo() const { return m_kind; }
  QLineEdit* widthsEdit() const { return m_widths; }
  QLineEdit* channelsEdit() const { return m_channels; }
  LayerListEditor* layerEditor() const { return m_layers; }
  QPushButton* editAsLayersButton() const { return m_editAsLayers; }

  /// Turns the family into its layer list (model.kind "layers"), one undo step.
  void editAsLayers();

 Q_SIGNALS:
  /// "TorchScript file" was chosen, or Import another…: the workspace runs its import.
  void importRequested();

 public Q_SLOTS:
  void refresh();

 private:
  void edit(int field, const QString& text, const std::function<void(engine::ModelSpec&)>& change);
  /// `key`: the spec key the line edits (its problem while its text does not parse).
  void listEdit(QLineEdit* line, int field, const QString& text,
                std::vector<int> engine::ModelSpec::*member, const char* key);
  QSpinBox* vitSpin(int lo, int hi, const QString& tip, int field, const QString& text,
                    int engine::ModelSpec::*member);

  DesignDocument* m_doc;
  bool m_updating = false;
  QComboBox* m_kind;
  QStackedWidget* m_pages;
  QLineEdit* m_widths;
  QComboBox* m_activation;
  QLineEdit* m_channels;
  QLineEdit* m_blocks;
  std::vector<std::pair<QSpinBox*, int engine::ModelSpec::*>> m_vit;
  LayerListEditor* m_layers;
  QLabel* m_scriptPath;
  QCheckBox* m_reinit;
  QPushButton* m_editAsLayers;
  QFormLayout* m_vitForm = nullptr;
  QSpinBox* m_patchSpin = nullptr;
};

/// "512, 256" -> {512, 256}; nullopt if malformed or empty.
std::optional<std::vector<int>> parseWidths(const QString& text);

}  // namespace stagewise::ui
