#pragma once
// The study being designed with the experiment: the varied settings and their values (added by
// "Vary…" on a field of the form, by name, or "Add the current cut" from the canvas), seeds, an
// optional sample of the grid, the target accuracy and a name. It says how many runs the study
// makes and how long they should take, names a grid point that cannot run, and queues the study
// (Run study). The study is part of the document: every edit is an undo step, and it is saved
// as the experiment's "study" object.

#include <QWidget>
#include <functional>
#include <map>
#include <optional>

#include "designer/design_document.h"
#include "stagewise/engine/partition.h"
#include "stagewise/study/points.h"

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace stagewise::ui {

class SearchSection;

class StudyPanel : public QWidget {
  Q_OBJECT
 public:
  explicit StudyPanel(DesignDocument* doc, QWidget* parent = nullptr);

  /// Where the predicted duration's speeds come from (the estimate panel's measurement).
  void setRateSource(std::function<std::optional<engine::MethodEstimate>()> source);

  QTableWidget* keyTable() const { return m_keys; }
  QComboBox* keyCombo() const { return m_keyCombo; }
  QPushButton* addKeyButton() const { return m_addKey; }
  QPushButton* addCutButton() const { return m_addCut; }
  QPushButton* removeButton() const { return m_remove; }
  QSpinBox* seedsSpin() const { return m_seeds; }
  QSpinBox* sampleSpin() const { return m_sample; }
  QDoubleSpinBox* targetSpin() const { return m_target; }
  QLineEdit* nameEdit() const { return m_name; }
  QLabel* summaryLabel() const { return m_summary; }
  QLabel* problemLabel() const { return m_problem; }
  QPushButton* runButton() const { return m_run; }
  /// The search: searched keys, trials, sampler, pruning, tuning.
  SearchSection* searchSection() const { return m_search; }

  /// The runs the study makes now (0: no study, or one that cannot run); a search's at most
  /// (pruned trials train fewer steps).
  int runCount() const { return m_runCount; }
  /// Why the study cannot run (a bad value, a grid point named with its values), or empty.
  QString problem() const { return m_problemText; }
  /// Predicted seconds of the whole study; < 0 when the estimate is not measured.
  double predictedSeconds() const { return m_predictedS; }
  /// Training FLOPs of the whole study, as `train_flops` counts them.
  double predictedFlops() const { return m_predictedFlops; }

 public Q_SLOTS:
  /// Adds a setting to vary, with the experiment's current value as its first value, and
  /// starts editing its values. A setting already varied is selected.
  void vary(const QString& key);
  /// Adds the canvas's current cut as a value of partition.cuts.
  void addCurrentCut();
  /// Sets a varied setting's values (a JSON list); false (nothing changed) when it is not one.
  bool setValues(const QString& key, const QString& jsonList);
  void removeSelected();
  void refresh();

 Q_SIGNALS:
  /// Run study was pressed (the study can run).
  void runStudyRequested();
  /// The run count changed (0: no study, or one that cannot run).
  void runsChanged(int runs);
  void message(const QString& text);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void edit(const std::function<void(study::StudyObject&)>& change, const QString& text);
  void recompute();
  void showKeys();
  /// A search's points and predicted cost (recompute's search half); throws StudyError.
  void recomputeSearch(const study::StudyPlan& plan);
  /// Adds a point's training FLOPs (and its seconds when the method's speed is measured) times
  /// `times` to the prediction; false when its method's speed is unknown.
  bool addPrediction(const study::ResolvedPoint& point, double times,
                     const std::map<engine::Mode, double>& secondsPerFlop, double& seconds);
  std::map<engine::Mode, double> secondsPerFlop();

  DesignDocument* m_doc;
  std::function<std::optional<engine::MethodEstimate>()> m_rates;
  bool m_updating = false;
  QTableWidget* m_keys;
  QComboBox* m_keyCombo;
  QPushButton* m_addKey;
  QPushButton* m_addCut;
  QPushButton* m_remove;
  QSpinBox* m_seeds;
  QSpinBox* m_sample;
  QDoubleSpinBox* m_target;
  QLineEdit* m_name;
  QLabel* m_summary;
  QLabel* m_problem;
  QPushButton* m_run;
  std::vector<study::GridPoint> m_points;
  int m_runCount = 0;
  SearchSection* m_search;
  QString m_problemText;
  double m_predictedS = -1;
  double m_predictedFlops = 0;
  study::ShapeCache m_shapes;
  std::map<std::string, int64_t> m_trainSamples;  // per dataset (kind + path)
};

}  // namespace stagewise::ui
