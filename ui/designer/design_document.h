#pragma once
// The experiment being designed: the spec, everything derived from it (model plan, stages,
// speed estimate, problems), the selected stage, and the undo stack every edit goes through.

#include <QObject>
#include <QString>
#include <QUndoStack>
#include <map>
#include <optional>

#include "common/services.h"
#include "stagewise/engine/model_plan.h"
#include "stagewise/engine/model_plan_prefix.h"
#include "stagewise/engine/partition.h"
#include "stagewise/engine/spec.h"
#include "stagewise/study/study.h"

namespace stagewise::ui {

/// Where a problem shows up in the designer.
struct DesignProblem {
  std::string field;  ///< dotted spec key, e.g. "stages[1].device"
  std::string message;
  int stage = -1;  ///< the stage it belongs to, or -1
  int cut = -1;    ///< the cut it belongs to, or -1
};

class DesignDocument : public QObject {
  Q_OBJECT
 public:
  explicit DesignDocument(EngineDescription engine, QObject* parent = nullptr);

  const engine::ExperimentSpec& spec() const { return m_spec; }
  const EngineDescription& engineDescription() const { return m_engine; }
  QUndoStack* undoStack() { return &m_undo; }

  /// Replaces the whole document (open, new, preset); clears undo history.
  void load(const engine::ExperimentSpec& spec, const QString& filePath = {},
            const study::StudyObject& study = {});
  /// Applies an edit through the undo stack. Edits with the same non-negative `mergeId` in a
  /// row merge into one undo step (a spin box being stepped).
  void edit(const engine::ExperimentSpec& next, const QString& text, int mergeId = -1);
  /// Sets the spec without recording it (used by undo commands).
  void setSpecDirect(const engine::ExperimentSpec& spec);
  /// A form field's text that does not parse (`field`: its spec key; an empty message clears
  /// it). The spec keeps its last good value, so the design cannot run until the field is fixed
  /// or the document loaded anew: the problem is listed and blocks Run.
  void setFieldError(const std::string& field, const QString& message);
  bool hasFieldError(const std::string& field) const { return m_fieldErrors.count(field) > 0; }

  /// The study designed with the experiment (saved as its "study" object; empty: none).
  const study::StudyObject& study() const { return m_study; }
  /// The study's name: the one set, else the experiment's name + " study".
  std::string studyName() const;
  /// Changes the study through the undo stack.
  void editStudy(const study::StudyObject& next, const QString& text);
  /// Sets the study without recording it (used by undo commands).
  void setStudyDirect(const study::StudyObject& study);

  QString filePath() const { return m_filePath; }
  void setFilePath(const QString& path);
  bool isModified() const { return !m_undo.isClean(); }
  void markSaved() { m_undo.setClean(); }

  // Derived state, recomputed after every change.
  int layerCount() const { return static_cast<int>(m_plan.layers.size()); }
  /// The model's layers; with a bad layer, those before it (the first bad one is invalidLayer()).
  const engine::ModelPlan& plan() const { return m_plan; }
  /// The first layer the model cannot plan (an index into the model's layer list), or -1.
  int invalidLayer() const { return m_modelError.layer; }
  /// Why the model does not plan (empty when it does).
  const engine::PlanError& modelError() const { return m_modelError; }
  /// Stages of a valid cut; empty when the cuts are invalid.
  const engine::PartitionPlan& partition() const { return m_partition; }
  const std::optional<engine::SpeedEstimate>& estimate() const { return m_estimate; }
  const std::vector<DesignProblem>& problems() const { return m_problems; }
  /// Problems are listed for these; empty when none.
  std::vector<DesignProblem> problemsForStage(int stage) const;
  bool canRun() const { return m_problems.empty(); }
  /// What a pipeline run of this spec would refuse (the engine's check of what the schedule
  /// can order) while the spec's mode is another: Train picks the mode, so Design says it
  /// before Run. Warnings, not problems: a local or backprop run does not read them.
  const std::vector<DesignProblem>& pipelineWarnings() const { return m_pipelineWarnings; }
  /// Why Run is blocked (every problem on its own line), empty when it is not.
  QString blockReason() const;
  /// One problem as users read it (a cut problem without its 0-based JSON path).
  static QString problemText(const DesignProblem& problem);
  /// True when the dataset could not be read and the plan uses a stand-in input shape.
  bool inputShapeGuessed() const { return m_inputGuessed; }

  int selectedStage() const { return m_selectedStage; }
  void selectStage(int stage);

  /// Cores the estimate assumes (the machine's by default).
  int estimateCores() const { return m_cores; }
  void setEstimateCores(int cores);

 Q_SIGNALS:
  void changed();
  /// The study changed (an edit, undo, or a load).
  void studyChanged();
  /// A whole new experiment was loaded (open, new, preset).
  void loaded();
  void selectedStageChanged(int stage);
  void filePathChanged(const QString& path);

 private:
  void recompute();
  engine::InputShape inputShapeFor(const engine::DatasetSpec& dataset);

  EngineDescription m_engine;
  engine::ExperimentSpec m_spec;
  study::StudyObject m_study;
  QUndoStack m_undo;
  QString m_filePath;
  engine::ModelPlan m_plan;
  engine::PlanError m_modelError;
  std::map<std::string, QString> m_fieldErrors;  ///< setFieldError
  engine::PartitionPlan m_partition;
  std::optional<engine::SpeedEstimate> m_estimate;
  std::vector<DesignProblem> m_problems;
  std::vector<DesignProblem> m_pipelineWarnings;
  int m_selectedStage = 0;
  int m_cores = 1;
  // The dataset probe reads file headers: cache it per dataset so edits stay instant.
  std::string m_probedKey;
  engine::InputShape m_probedShape;
  std::string m_probeError;
  bool m_inputGuessed = false;
};

}  // namespace stagewise::ui
