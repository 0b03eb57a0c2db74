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
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace stagewise::ui {

/// Per-layer costs to balance stages by. FLOPs now; measured per-layer times plug in here once
/// the engine reports them (register a strategy whose `cost` returns them).
struct BalanceStrategy {
  QString name;
  QString toolTip;
  /// Cost of each layer of the plan; nullopt when it cannot say (no measurements yet).
  std::function<std::optional<std::vector<double>>(const engine::ModelPlan&)> cost;
  QString unavailableReason;  ///< shown greyed when `cost` is empty
};

class EstimatePanel : public QWidget {
  Q_OBJECT
 public:
  explicit EstimatePanel(DesignDocument* doc, QWidget* parent = nullptr);

  void addBalanceStrategy(const BalanceStrategy& strategy);
  QPushButton* balanceButton() const { return m_balance; }
  QSpinBox* stageCountSpin() const { return m_stageCount; }
  QLabel* speedupLabel() const { return m_speedup; }

 public Q_SLOTS:
  void refresh();
  /// Re-cuts into the chosen number of stages with the chosen strategy (one undo step).
  void autoBalance();

 private:
  DesignDocument* m_doc;
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
