#pragma once
// Settings of the selected stage: device (absent ones greyed with the reason), CPU cores,
// intra-op threads, aux head, learning-rate scale and straggler delay. Every change is one undo
// step (steps of the same spin box merge).

#include <QWidget>

#include "designer/design_document.h"

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;

namespace stagewise::ui {

class StageInspector : public QWidget {
  Q_OBJECT
 public:
  explicit StageInspector(DesignDocument* doc, QWidget* parent = nullptr);

  QComboBox* deviceCombo() const { return m_device; }
  QSpinBox* threadsSpin() const { return m_threads; }

 public Q_SLOTS:
  void refresh();

 private:
  enum Field { kDevice = 1, kCores, kThreads, kAuxHead, kAuxHidden, kLrScale, kDelay };
  void apply(Field field, const QString& text,
             const std::function<void(engine::StageSettings&)>& change);
  void applyToAll();
  void fillDevices(const std::string& current);

  DesignDocument* m_doc;
  bool m_updating = false;
  QLabel* m_title;
  QComboBox* m_device;
  QLineEdit* m_cores;
  QSpinBox* m_threads;
  QComboBox* m_auxHead;
  QSpinBox* m_auxHidden;
  QDoubleSpinBox* m_lrScale;
  QSpinBox* m_delay;
  QLabel* m_problems;
  QPushButton* m_applyAll;
};

}  // namespace stagewise::ui
