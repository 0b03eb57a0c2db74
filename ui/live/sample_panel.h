#pragma once
// Train's Sample panel (language models): the text the network writes after a prompt at each
// evaluation, greedy or at a temperature. Shown only for text runs; a checkbox turns it off
// (remembered in the settings, with the prompt and the temperature).

#include <QWidget>
#include <optional>
#include <vector>

#include "stagewise/engine/metrics.h"
#include "stagewise/engine/run.h"

class QCheckBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;

namespace stagewise::ui {

/// The prompt, the temperature and the latest sample of the running phase.
class SamplePanel : public QWidget {
  Q_OBJECT
 public:
  explicit SamplePanel(QWidget* parent = nullptr);

  /// What the engine should generate at each evaluation; empty when turned off.
  std::optional<engine::SampleRequest> request() const;
  /// Bytes generated per sample: small, so that an evaluation stays cheap.
  static constexpr int kLength = 64;
  /// Shows the latest sample event among `events` (sampleFromEvent); others are ignored.
  void addEvents(const std::vector<engine::RunEvent>& events);
  /// A new run: no sample yet.
  void clear();
  /// The text shown (the latest sample), for tests.
  QString text() const;
  /// "step 300": the step of the sample shown, as the store's event and points have it.
  QString stepText() const;
  bool isOn() const;
  void setOn(bool on);

 private:
  void save();

  QCheckBox* m_on = nullptr;
  QLineEdit* m_prompt = nullptr;
  QDoubleSpinBox* m_temperature = nullptr;
  QLabel* m_step = nullptr;
  QPlainTextEdit* m_text = nullptr;
};

}  // namespace stagewise::ui
