#include "common/u64_spin_box.h"

#include <QLineEdit>
#include <QStyle>
#include <QStyleOptionSpinBox>
#include <limits>

namespace stagewise::ui {

namespace {
constexpr quint64 kMax = std::numeric_limits<quint64>::max();
}

U64SpinBox::U64SpinBox(QWidget* parent) : QAbstractSpinBox(parent) {
  lineEdit()->setText(QStringLiteral("0"));
  connect(this, &QAbstractSpinBox::editingFinished, this, &U64SpinBox::commitText);
}

void U64SpinBox::setValue(quint64 v) {
  const QString text = QString::number(v);
  if (lineEdit()->text() != text) lineEdit()->setText(text);
  if (v == m_value) return;
  m_value = v;
  update();  // the arrows' enabled state
  Q_EMIT valueChanged(v);
}

void U64SpinBox::stepBy(int steps) {
  commitText();  // a typed value counts before the step
  quint64 next = m_value;
  if (steps > 0) next = m_value > kMax - quint64(steps) ? kMax : m_value + quint64(steps);
  if (steps < 0) next = m_value < quint64(-int64_t(steps)) ? 0 : m_value - quint64(-int64_t(steps));
  setValue(next);
  selectAll();
}

QValidator::State U64SpinBox::validate(QString& input, int&) const {
  const QString t = input.trimmed();
  if (t.isEmpty()) return QValidator::Intermediate;
  for (QChar c : t)
    if (!c.isDigit()) return QValidator::Invalid;
  bool ok = false;
  t.toULongLong(&ok);
  return ok ? QValidator::Acceptable : QValidator::Invalid;
}

void U64SpinBox::fixup(QString& input) const { input = QString::number(m_value); }

QAbstractSpinBox::StepEnabled U64SpinBox::stepEnabled() const {
  StepEnabled e = StepNone;
  if (isReadOnly()) return e;
  if (m_value < kMax) e |= StepUpEnabled;
  if (m_value > 0) e |= StepDownEnabled;
  return e;
}

QSize U64SpinBox::sizeHint() const {
  ensurePolished();
  const int width = fontMetrics().horizontalAdvance(QString::number(kMax) + QLatin1Char(' '));
  QStyleOptionSpinBox option;
  initStyleOption(&option);
  return style()->sizeFromContents(QStyle::CT_SpinBox, &option, QSize(width, lineEdit()->sizeHint().height()),
                                   this);
}

QSize U64SpinBox::minimumSizeHint() const { return sizeHint(); }

void U64SpinBox::commitText() {
  bool ok = false;
  const quint64 v = lineEdit()->text().trimmed().toULongLong(&ok);
  if (ok) setValue(v);
  else lineEdit()->setText(QString::number(m_value));
}

}  // namespace stagewise::ui
