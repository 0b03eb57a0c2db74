#pragma once
// Steering a run from Train: the stage strip (drag a cut to re-partition live), a line saying
// what the engine answered or applied, and a row of the selected stage's live settings (delay,
// learning-rate scale, intra-op threads) with a pause toggle for that one stage. It only asks:
// EngineController sends the requests off the UI thread, and the engine's events (fed back
// through applyEvent) say what took effect.

#include <QWidget>
#include <string>
#include <vector>

#include "live/steer_events.h"
#include "stagewise/engine/metrics.h"

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSpinBox;

namespace stagewise::ui {

class StageStrip;

class SteerPanel : public QWidget {
  Q_OBJECT
 public:
  explicit SteerPanel(QWidget* parent = nullptr);

  /// A phase began: its layers, stages and their settings (from the run's spec).
  void begin(const engine::RunInfo& info);
  /// No run shown: an empty strip, no stages to choose (a start that failed, a report's end).
  void clear();
  /// Whether requests can be made now; `why` (when not) is shown as the strip's tooltip. The
  /// cuts can be dragged only in a run that can re-partition (local, no overlap; see begin()).
  void setLive(bool live, const QString& why = {});
  /// Why this run's cuts cannot move while it trains (empty: they can).
  QString cutsFixedReason() const { return m_cutsFixed; }
  /// The note's whole text (the label shows what fits, elided).
  QString noteText() const { return m_noteText; }
  /// An engine event about steering (an applied change, a paused stage, a refusal).
  void applyEvent(const SteerEvent& event);
  /// The engine answered a request (EngineController::steerAnswered).
  void showAnswer(const QString& what, bool accepted, const QString& reason);
  void setUtilization(const std::vector<double>& compute);

  StageStrip* strip() const { return m_strip; }
  QLabel* noteLabel() const { return m_note; }
  QComboBox* stageCombo() const { return m_stage; }
  QSpinBox* delaySpin() const { return m_delay; }
  QDoubleSpinBox* lrScaleSpin() const { return m_lrScale; }
  QSpinBox* threadsSpin() const { return m_threads; }
  QPushButton* applyButton() const { return m_apply; }
  QPushButton* pauseStageButton() const { return m_pauseStage; }
  /// Selects `stage` in the settings row (the strip's context menu does).
  void selectStage(int stage);

 Q_SIGNALS:
  void cutsRequested(const std::vector<int>& cuts);
  /// `key`: delay_ms, lr_scale or threads.
  void stageChangeRequested(int stage, const std::string& key, double value);
  void stagePauseRequested(int stage, bool paused);

 private:
  struct Settings {
    int delayMs = 0;
    double lrScale = 1;
    int threads = 1;
    bool paused = false;
  };
  void showStage();
  void applyEdits();
  void setNote(const QString& text, bool error);
  void showNote();
  bool eventFilter(QObject* watched, QEvent* event) override;
  void layoutChanged(const std::vector<std::pair<int, int>>& layout);

  StageStrip* m_strip;
  QLabel* m_note;
  QComboBox* m_stage;
  QSpinBox* m_delay;
  QDoubleSpinBox* m_lrScale;
  QSpinBox* m_threads;
  QPushButton* m_apply;
  QPushButton* m_pauseStage;
  QStringList m_layers;
  std::vector<std::pair<int, int>> m_layout;
  std::vector<Settings> m_settings;  ///< per stage index, as last applied
  bool m_live = false;
  QString m_cutsFixed;  ///< why the running run's cuts cannot move (empty: they can)
  QString m_noteText;
};

}  // namespace stagewise::ui
