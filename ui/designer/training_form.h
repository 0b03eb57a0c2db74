#pragma once
// How to train the designed model: optimizer and its settings, steps, batch, seed, queue
// capacity and backprop threads; the validation split, initialisation and normalisation;
// evaluation and gradient-cosine probes; checkpoints. Every edit is an undo step (typing in one
// field merges into one), and a field the spec validation complains about is outlined in red with
// the message as its tooltip.

#include <QWidget>
#include <functional>
#include <map>
#include <string>

#include "designer/design_document.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLineEdit;
class QPushButton;
class QSpinBox;

namespace stagewise::ui {

class U64SpinBox;

class TrainingForm : public QWidget {
  Q_OBJECT
 public:
  explicit TrainingForm(DesignDocument* doc, QWidget* parent = nullptr);

  /// The editor of a spec key ("train.momentum", "checkpoint.dir", ...), or null.
  QWidget* editorFor(const std::string& key) const;
  QPushButton* checkpointBrowseButton() const { return m_browse; }
  /// Undo merge ids of this form's fields start here (see DesignDocument::edit).
  static constexpr int kMergeIdBase = 400;

 public Q_SLOTS:
  void refresh();

 Q_SIGNALS:
  /// "Vary … in a study…" was chosen on the editor of `key`.
  void varyRequested(const QString& key);

 private:
  void edit(const std::string& key, const QString& text,
            const std::function<void(engine::ExperimentSpec&)>& change);
  /// A combo box of fixed choices (value, label) for a string key.
  QComboBox* choiceField(const std::string& key,
                         const std::vector<std::pair<QString, QString>>& choices,
                         const QString& tip, const QString& undoText,
                         std::function<void(engine::ExperimentSpec&, const std::string&)> set);
  QSpinBox* intField(const std::string& key, int lo, int hi, const QString& tip,
                     const QString& undoText,
                     std::function<void(engine::ExperimentSpec&, int)> set);
  QDoubleSpinBox* realField(const std::string& key, double lo, double hi, int decimals, double step,
                            const QString& tip, const QString& undoText,
                            std::function<void(engine::ExperimentSpec&, double)> set);
  void browseCheckpointDir();
  void showProblems();

  DesignDocument* m_doc;
  bool m_updating = false;
  std::map<std::string, QWidget*> m_editors;  // by spec key
  std::map<std::string, QString> m_tips;      // each editor's own tooltip
  QSpinBox* m_batch;
  QSpinBox* m_steps;
  QSpinBox* m_epochs;
  QComboBox* m_optimizer;
  QDoubleSpinBox* m_lr;
  QDoubleSpinBox* m_momentum;
  QDoubleSpinBox* m_weightDecay;
  U64SpinBox* m_seed;
  QSpinBox* m_queue;
  QSpinBox* m_backpropThreads;
  QComboBox* m_lrSchedule;
  QSpinBox* m_warmup;
  QDoubleSpinBox* m_clipNorm;
  QSpinBox* m_microBatches;
  QSpinBox* m_overlap;
  QCheckBox* m_augment;
  QCheckBox* m_randomLabels;
  QDoubleSpinBox* m_validation;
  QComboBox* m_init;
  QComboBox* m_norm;
  QComboBox* m_pipelineSchedule;
  QSpinBox* m_chunks;
  QCheckBox* m_recompute;
  QSpinBox* m_evalInterval;
  QSpinBox* m_evalSamples;
  QSpinBox* m_probeInterval;
  QSpinBox* m_probeBatch;
  QDoubleSpinBox* m_measureBudget;
  QSpinBox* m_checkpointInterval;
  QLineEdit* m_checkpointDir;
  QPushButton* m_browse;
  QCheckBox* m_atStop;
};

}  // namespace stagewise::ui
