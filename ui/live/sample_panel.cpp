#include "live/sample_panel.h"

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QSettings>
#include <QVBoxLayout>

namespace stagewise::ui {

namespace {
const QString kOnKey = QStringLiteral("train/sample");
const QString kPromptKey = QStringLiteral("train/sample_prompt");
const QString kTemperatureKey = QStringLiteral("train/sample_temperature");
}  // namespace

SamplePanel::SamplePanel(QWidget* parent) : QWidget(parent) {
  QSettings settings;
  m_on = new QCheckBox(tr("Sample"), this);
  m_on->setToolTip(tr("At each evaluation, show the text the network writes after the prompt "
                      "(%1 bytes). Takes a little of the evaluation's time.")
                       .arg(kLength));
  m_on->setChecked(settings.value(kOnKey, true).toBool());
  m_prompt = new QLineEdit(settings.value(kPromptKey, QStringLiteral("The ")).toString(), this);
  m_prompt->setPlaceholderText(tr("prompt"));
  m_prompt->setToolTip(tr("The text the samples continue; it applies from the next run"));
  m_temperature = new QDoubleSpinBox(this);
  m_temperature->setRange(0, 5);
  m_temperature->setSingleStep(0.1);
  m_temperature->setDecimals(2);
  m_temperature->setSpecialValueText(tr("greedy"));
  m_temperature->setPrefix(tr("temperature "));
  m_temperature->setValue(settings.value(kTemperatureKey, 0.0).toDouble());
  m_temperature->setToolTip(
      tr("0: the likeliest byte at each step; above: bytes drawn at this "
         "temperature with the run's seed"));
  m_step = new QLabel(this);
  m_text = new QPlainTextEdit(this);
  m_text->setReadOnly(true);
  m_text->setMinimumHeight(24);  // a line or two in the bottom row: Train fits 1366x768
  m_text->setPlaceholderText(tr("The sample appears at the run's first evaluation"));

  auto* top = new QHBoxLayout;
  top->setContentsMargins(0, 0, 0, 0);
  top->addWidget(m_on);
  top->addWidget(m_prompt, 1);
  top->addWidget(m_temperature);
  top->addWidget(m_step);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  layout->addLayout(top);
  layout->addWidget(m_text);

  auto follow = [this] {
    m_text->setVisible(m_on->isChecked());
    m_step->setVisible(m_on->isChecked());
  };
  follow();
  connect(m_on, &QCheckBox::toggled, this, [this, follow] {
    follow();
    save();
  });
  connect(m_prompt, &QLineEdit::editingFinished, this, &SamplePanel::save);
  connect(m_temperature, &QDoubleSpinBox::valueChanged, this, &SamplePanel::save);
}

std::optional<engine::SampleRequest> SamplePanel::request() const {
  if (!m_on->isChecked()) return std::nullopt;
  engine::SampleRequest r;
  r.prompt = m_prompt->text().toStdString();
  if (r.prompt.empty()) r.prompt = "\n";  // the engine generates for a non-empty prompt only
  r.length = kLength;
  r.temperature = m_temperature->value();
  return r;
}

void SamplePanel::addEvents(const std::vector<engine::RunEvent>& events) {
  for (auto it = events.rbegin(); it != events.rend(); ++it)
    if (const auto sample = engine::sampleFromEvent(it->message)) {
      // The step the engine's event and the evaluation's points carry, as the store has them.
      m_step->setText(tr("step %1").arg(sample->first));
      m_text->setPlainText(QString::fromStdString(sample->second));
      return;
    }
}

QString SamplePanel::stepText() const { return m_step->text(); }

void SamplePanel::clear() {
  m_step->clear();
  m_text->clear();
}

QString SamplePanel::text() const {
  return m_text->toPlainText();
}

bool SamplePanel::isOn() const {
  return m_on->isChecked();
}

void SamplePanel::setOn(bool on) {
  m_on->setChecked(on);
}

void SamplePanel::save() {
  QSettings settings;
  settings.setValue(kOnKey, m_on->isChecked());
  settings.setValue(kPromptKey, m_prompt->text());
  settings.setValue(kTemperatureKey, m_temperature->value());
}

}  // namespace stagewise::ui
