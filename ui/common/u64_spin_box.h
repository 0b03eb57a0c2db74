#pragma once
// A spin box for unsigned 64-bit values (QSpinBox holds an int, and seeds are 64-bit): steps with
// the arrows, keys and wheel, accepts typed digits up to 2^64 - 1, and never clamps a value it
// was given.

#include <QAbstractSpinBox>
#include <cstdint>

namespace stagewise::ui {

class U64SpinBox : public QAbstractSpinBox {
  Q_OBJECT
 public:
  explicit U64SpinBox(QWidget* parent = nullptr);

  quint64 value() const { return m_value; }
  /// Shows `v`; emits valueChanged when it differs from the current value.
  void setValue(quint64 v);

  void stepBy(int steps) override;
  QValidator::State validate(QString& input, int& pos) const override;
  void fixup(QString& input) const override;
  StepEnabled stepEnabled() const override;
  /// Wide enough for 2^64 - 1 (QAbstractSpinBox alone sizes for an empty text).
  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 Q_SIGNALS:
  void valueChanged(quint64 value);

 private:
  void commitText();
  quint64 m_value = 0;
};

}  // namespace stagewise::ui
