#include "common/wheel_guard.h"

#include <QAbstractScrollArea>
#include <QAbstractSpinBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QEvent>
#include <QScrollBar>

namespace stagewise::ui {

namespace {

class WheelGuard : public QObject {
 public:
  WheelGuard(QAbstractScrollArea* scroll, QObject* parent) : QObject(parent), m_scroll(scroll) {}

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override {
    if (event->type() != QEvent::Wheel) return false;
    auto* widget = qobject_cast<QWidget*>(watched);
    if (!widget || widget->hasFocus()) return false;
    QCoreApplication::sendEvent(m_scroll->verticalScrollBar(), event);
    return true;
  }

 private:
  QAbstractScrollArea* m_scroll;
};

}  // namespace

void guardWheel(QAbstractScrollArea* scroll, QWidget* content) {
  auto* guard = new WheelGuard(scroll, content);
  const auto guardOne = [guard](QWidget* w) {
    w->setFocusPolicy(Qt::StrongFocus);  // not Qt::WheelFocus: the wheel alone gives no focus
    w->installEventFilter(guard);
  };
  for (auto* w : content->findChildren<QAbstractSpinBox*>()) guardOne(w);
  for (auto* w : content->findChildren<QComboBox*>()) guardOne(w);
}

}  // namespace stagewise::ui
