#pragma once
// Design → Study's search (issue 32): the searched keys, one row each with its distribution
// (log-uniform, uniform, int, choice) and range; the trials per point of the vary grid, the
// sampler, pruning (successive halving on a validation metric) and tuning (each point's best
// trial run again on fresh seeds). Edits go through the study panel's undoable edit; a row whose
// range does not parse keeps the text, outlined, with the message, and changes nothing.

#include <QWidget>
#include <functional>

#include "designer/design_document.h"

class QCheckBox;
class QComboBox;
class QGroupBox;
class QLabel;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace stagewise::ui {

class SearchSection : public QWidget {
  Q_OBJECT
 public:
  using Edit = std::function<void(const std::function<void(study::StudyObject&)>&, const QString&)>;
  SearchSection(DesignDocument* doc, Edit edit, QWidget* parent = nullptr);

  QTableWidget* table() const { return m_table; }
  QComboBox* keyCombo() const { return m_keyCombo; }
  QPushButton* addButton() const { return m_add; }
  QPushButton* removeButton() const { return m_remove; }
  QSpinBox* trialsSpin() const { return m_trials; }
  QComboBox* samplerCombo() const { return m_sampler; }
  QGroupBox* pruneBox() const { return m_prune; }
  QComboBox* pruneMetricCombo() const { return m_pruneMetric; }
  QSpinBox* minStepsSpin() const { return m_minSteps; }
  QSpinBox* reductionSpin() const { return m_reduction; }
  QGroupBox* tuneBox() const { return m_tune; }
  QSpinBox* tuneSeedsSpin() const { return m_tuneSeeds; }
  QLabel* tunePerLabel() const { return m_tunePer; }
  /// The distribution combo of row `row`.
  QComboBox* distributionCombo(int row) const;

  /// Searches `key` with a range around the experiment's current value (a number: log-uniform
  /// from a tenth to ten times it, an integer: int from half to twice it; anything else: a
  /// choice of that value). A key already searched is selected.
  void search(const QString& key);
  /// Sets row `row`'s distribution and range text (as the cells take them); false when the
  /// range does not parse: the row is outlined with the message and nothing changes.
  bool setRow(int row, const QString& kind, const QString& range);
  /// Why row `row` is outlined (empty: it is not).
  QString rowProblem(int row) const;
  /// Outlines the row of `key` with `problem` (the study's check named it), or clears them all
  /// (empty key).
  void markKey(const std::string& key, const QString& problem);
  void removeSelected();
  void refresh();

 Q_SIGNALS:
  void message(const QString& text);

 private:
  void showRows();
  void markRow(int row, const QString& problem);

  DesignDocument* m_doc;
  Edit m_edit;
  bool m_updating = false;
  QTableWidget* m_table;
  QComboBox* m_keyCombo;
  QPushButton* m_add;
  QPushButton* m_remove;
  QSpinBox* m_trials;
  QComboBox* m_sampler;
  QGroupBox* m_prune;
  QComboBox* m_pruneMetric;
  QSpinBox* m_minSteps;
  QSpinBox* m_reduction;
  QGroupBox* m_tune;
  QComboBox* m_tuneMetric;
  QSpinBox* m_tuneSeeds;
  QLabel* m_tunePer;
  QLabel* m_rowProblem;
  QWidget* m_options;
  std::vector<QString> m_problems;  // per row
};

}  // namespace stagewise::ui
