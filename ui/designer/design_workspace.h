#pragma once
// The Design workspace: model and data on the left, the network canvas in the middle, the stage
// inspector and live estimates on the right, problems and Run at the bottom.

#include <QWidget>

#include "designer/design_document.h"

class QLabel;
class QListWidget;
class QPushButton;
class QTabWidget;

namespace stagewise::ui {

class EstimatePanel;
class ModelPanel;
class NetworkScene;
class NetworkView;
class StageInspector;
class StudyPanel;

/// The suffix of experiment files the workbench saves (registered as their MIME type's glob).
inline constexpr const char* kExperimentSuffix = ".stagewise.json";

class DesignWorkspace : public QWidget {
  Q_OBJECT
 public:
  explicit DesignWorkspace(DesignDocument* doc, QWidget* parent = nullptr);

  DesignDocument* document() const { return m_doc; }
  NetworkScene* scene() const { return m_scene; }
  NetworkView* view() const { return m_view; }
  StageInspector* inspector() const { return m_inspector; }
  EstimatePanel* estimatePanel() const { return m_estimate; }
  StudyPanel* studyPanel() const { return m_study; }
  /// The Estimate and Study tabs below the stage inspector.
  QTabWidget* sideTabs() const { return m_sideTabs; }
  ModelPanel* modelPanel() const { return m_model; }
  QPushButton* runButton() const { return m_run; }
  QListWidget* problemList() const { return m_problems; }

  /// Asks whether to drop unsaved edits; true if it is fine to replace the document.
  bool maybeDiscard();
  /// Opens a spec file (error shown in a message box). Returns success.
  bool openFile(const QString& path);
  /// A TorchScript file as a new, unsaved experiment (model.kind "torchscript", cut by FLOPs),
  /// with the open experiment's dataset and training. Errors in a message box.
  bool importModel(const QString& path);
  bool save();
  bool saveAs();

 public Q_SLOTS:
  void openWithDialog();
  void importWithDialog();
  void newExperiment();
  void refresh();

 Q_SIGNALS:
  void runRequested();
  /// The study panel's Run study was pressed.
  void studyRequested();
  /// Something worth a line in the status bar.
  void message(const QString& text);

 private:
  DesignDocument* m_doc;
  ModelPanel* m_model;
  NetworkScene* m_scene;
  NetworkView* m_view;
  StageInspector* m_inspector;
  EstimatePanel* m_estimate;
  StudyPanel* m_study;
  QTabWidget* m_sideTabs;
  QListWidget* m_problems;
  QLabel* m_summary;

 public:
  /// "18 layers · 4 stages · …" above the canvas (or which layer does not fit).
  QLabel* summaryLabel() const { return m_summary; }

 private:
  QPushButton* m_run;
};

}  // namespace stagewise::ui
