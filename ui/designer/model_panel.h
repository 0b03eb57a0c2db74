#pragma once
// What to train: preset, model (its family and shape), dataset, and the training form below
// them. Each change is an undo step; typing in the same field merges into one.

#include <QWidget>
#include <string>
#include <vector>

#include "designer/design_document.h"

class QComboBox;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QWidget;

namespace stagewise::ui {

class ModelFamilyForm;
class TrainingForm;

class ModelPanel : public QWidget {
  Q_OBJECT
 public:
  explicit ModelPanel(DesignDocument* doc, QWidget* parent = nullptr);

  QComboBox* presetCombo() const { return m_preset; }
  QLineEdit* widthsEdit() const;
  /// The dataset folder field.
  QLineEdit* pathEdit() const { return m_path; }
  ModelFamilyForm* familyForm() const { return m_family; }
  TrainingForm* trainingForm() const { return m_training; }
  QSpinBox* testLimitSpin() const { return m_limitTest; }
  QSpinBox* syntheticTrainSpin() const { return m_syntheticTrain; }
  QSpinBox* syntheticTestSpin() const { return m_syntheticTest; }

 public Q_SLOTS:
  void refresh();


 Q_SIGNALS:
  /// The user picked a preset (resource or file path).
  void presetChosen(const QString& path);
  /// "Vary … in a study…" was chosen on the field of `key` (here or in the training form).
  void varyRequested(const QString& key);

 private:
  enum Field {
    kName = 1,
    kDataset,
    kPath,
    kFeatures,
    kClasses,
    kLimit = 14,  // ids of the fields since moved to the training form are not reused
    kLimitTest,
    kSyntheticTrain,
    kSyntheticTest
  };
  void edit(Field field, const QString& text,
            const std::function<void(engine::ExperimentSpec&)>& change);
  void browseDataset();
  void refreshPreset();

  DesignDocument* m_doc;
  bool m_updating = false;
  QComboBox* m_preset;
  std::vector<std::string> m_presetJson;  ///< each item's spec as JSON text ("" for none)
  QLineEdit* m_name;
  ModelFamilyForm* m_family;
  QComboBox* m_dataset;
  QLineEdit* m_path;
  QString m_pathTip;  ///< its own tooltip, shown under any problem
  QPushButton* m_browse;
  QWidget* m_syntheticRow;
  QSpinBox* m_features;
  QSpinBox* m_classes;
  QSpinBox* m_limit;
  QSpinBox* m_limitTest;
  QWidget* m_syntheticSizeRow;
  QSpinBox* m_syntheticTrain;
  QSpinBox* m_syntheticTest;
  TrainingForm* m_training;
};

}  // namespace stagewise::ui
