#pragma once
// Live estimates for the current cut: each stage's share of the work (bar chart), predicted
// speed-up over backprop, pipeline efficiency and the bytes crossing each boundary per batch;
// plus auto-balance.

#include <QWidget>
#include <functional>
#include <optional>

#include "designer/design_document.h"

class QComboBox;
class QCustomPlot;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace stagewise::ui {

class ProfileJob;

/// Per-layer costs to balance stages by: FLOPs (instant), or times the engine measures (see
/// setProfiler). Other estimates plug in as strategies whose `cost` returns them.
struct BalanceStrategy {
  QString name;
  QString toolTip;
  /// Cost of each layer of the plan; nullopt when it cannot say (no measurements yet).
  std::function<std::optional<std::vector<double>>(const engine::ModelPlan&)> cost;
  QString unavailableReason;  ///< shown greyed when `cost` is empty and nothing is measured
};

class EstimatePanel : public QWidget {
  Q_OBJECT
 public:
  explicit EstimatePanel(DesignDocument* doc, QWidget* parent = nullptr);

  void addBalanceStrategy(const BalanceStrategy& strategy);
  /// Enables "by measured time": the engine times every layer (in the background) first.
  void setProfiler(LayerProfiler profiler);
  /// Enables "Measure": the engine times each method's work here, and the panel predicts
  /// samples/s for local, pipelined backprop and backprop with the current cut.
  void setMethodProfiler(MethodProfiler profiler);
  QPushButton* measureButton() const { return m_measure; }
  /// "local … /s · pipeline … · backprop …", or why there is no prediction.
  QLabel* methodsLabel() const { return m_methods; }
  /// Each pipeline schedule's planned bubble and peak activations (scheduleEstimateText).
  QLabel* schedulesLabel() const { return m_schedules; }
  /// The prediction from the last measurement for the current design (nullopt: none, or stale).
  std::optional<engine::MethodEstimate> methodEstimate() const;
  QComboBox* strategyCombo() const { return m_strategy; }
  bool isProfiling() const { return m_job != nullptr; }
  QPushButton* balanceButton() const { return m_balance; }
  QSpinBox* stageCountSpin() const { return m_stageCount; }
  QLabel* speedupLabel() const { return m_speedup; }
  QLabel* balanceLabel() const { return m_efficiency; }
  QLabel* noteLabel() const { return m_note; }
  QCustomPlot* plot() const { return m_plot; }
  /// The chart as a plain widget (for code that does not include QCustomPlot).
  QWidget* chartWidget() const;
  QTableWidget* bytesTable() const { return m_bytes; }

 public Q_SLOTS:
  void refresh();
  /// Re-cuts into the chosen number of stages with the chosen strategy (one undo step).
  void autoBalance();

 Q_SIGNALS:
  /// methodEstimate() may have changed (a measurement finished, or the design changed).
  void methodEstimateChanged();
  /// Something worth a line in the status bar (Auto-balance found nothing to change).
  void message(const QString& text);

 protected:
  void changeEvent(QEvent* event) override;

 private:
  void balanceWith(const std::vector<double>& costs, const QString& how);
  void startProfiling();
  void measureMethods();
  /// Runs `work` in the background with the progress bar (`format`), then `done` or the failure.
  void runJob(std::function<void(const std::function<bool(int, int)>&)> work, const QString& format,
              std::function<void()> done, const QString& failure);
  void profilingDone();
  void refreshMethods();

  DesignDocument* m_doc;
  LayerProfiler m_profiler;
  ProfileJob* m_job = nullptr;
  MethodProfiler m_methodProfiler;
  std::optional<engine::MethodProfile> m_methodProfile;
  std::string m_methodSpec;  ///< the spec (JSON) the method profile was measured for
  QPushButton* m_measure;
  QLabel* m_methods;
  QLabel* m_schedules;
  QProgressBar* m_profileProgress;
  QPushButton* m_cancelProfile;
  std::vector<BalanceStrategy> m_strategies;
  QCustomPlot* m_plot;
  QLabel* m_speedup;
  QLabel* m_efficiency;
  QLabel* m_note;
  QTableWidget* m_bytes;
  QSpinBox* m_cores;
  QSpinBox* m_stageCount;
  QComboBox* m_strategy;
  QPushButton* m_balance;
};

}  // namespace stagewise::ui
