#pragma once
// What to train: preset, model (MLP widths), dataset and training settings. Each change is an
// undo step; typing in the same field merges into one.

#include <QWidget>

#include "designer/design_document.h"

class QComboBox;
class QDoubleSpinBox;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QWidget;

namespace stagewise::ui {

class ModelFamilyForm;

class ModelPanel : public QWidget {
  Q_OBJECT
 public:
  explicit ModelPanel(DesignDocument* doc, QWidget* parent = nullptr);

  QComboBox* presetCombo() const { return m_preset; }
  QLineEdit* widthsEdit() const;
  ModelFamilyForm* familyForm() const { return m_family; }
  QSpinBox* batchSpin() const { return m_batch; }

 public Q_SLOTS:
  void refresh();

 Q_SIGNALS:
  /// The user picked a preset (resource or file path).
  void presetChosen(const QString& path);

 private:
  enum Field {
    kName = 1,
    kDataset,
    kPath,
    kFeatures,
    kClasses,
    kBatch,
    kSteps,
    kEpochs,
    kLr,
    kOptimizer,
    kQueue,
    kSeed,
    kEval,
    kLimit
  };
  void edit(Field field, const QString& text,
            const std::function<void(engine::ExperimentSpec&)>& change);
  void browseDataset();

  DesignDocument* m_doc;
  bool m_updating = false;
  QComboBox* m_preset;
  QLineEdit* m_name;
  ModelFamilyForm* m_family;
  QComboBox* m_dataset;
  QLineEdit* m_path;
  QPushButton* m_browse;
  QWidget* m_syntheticRow;
  QSpinBox* m_features;
  QSpinBox* m_classes;
  QSpinBox* m_limit;
  QSpinBox* m_batch;
  QSpinBox* m_steps;
  QSpinBox* m_epochs;
  QDoubleSpinBox* m_lr;
  QComboBox* m_optimizer;
  QSpinBox* m_queue;
  QSpinBox* m_seed;
  QSpinBox* m_eval;
};

}  // namespace stagewise::ui
