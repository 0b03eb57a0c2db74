#include "common/invalid_outline.h"

#include <QEvent>
#include <QPainter>
#include <QWidget>

namespace stagewise::ui {

namespace {

constexpr const char* kName = "invalidOutline";

class Outline : public QWidget {
 public:
  explicit Outline(QWidget* editor) : QWidget(editor) {
    setObjectName(QLatin1String(kName));
    setAttribute(Qt::WA_TransparentForMouseEvents);
    setAttribute(Qt::WA_NoSystemBackground);
    setFocusPolicy(Qt::NoFocus);
    editor->installEventFilter(this);
    setGeometry(editor->rect());
  }

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override {
    if (watched == parent() && event->type() == QEvent::Resize) {
      setGeometry(parentWidget()->rect());
      raise();
    }
    return false;
  }
  void paintEvent(QPaintEvent*) override {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.setPen(QPen(QColor(0xd0, 0x30, 0x30), 1.5));
    p.setBrush(Qt::NoBrush);
    p.drawRoundedRect(QRectF(rect()).adjusted(0.75, 0.75, -0.75, -0.75), 2, 2);
  }
};

}  // namespace

void setInvalidOutline(QWidget* editor, bool invalid) {
  if (!editor) return;
  auto* outline = editor->findChild<QWidget*>(QLatin1String(kName), Qt::FindDirectChildrenOnly);
  if (!invalid) {
    if (outline) outline->hide();
    return;
  }
  if (!outline) outline = new Outline(editor);
  outline->setGeometry(editor->rect());
  outline->raise();
  outline->show();
}

bool hasInvalidOutline(const QWidget* editor) {
  if (!editor) return false;
  const auto* outline =
      editor->findChild<QWidget*>(QLatin1String(kName), Qt::FindDirectChildrenOnly);
  return outline && !outline->isHidden();
}

}  // namespace stagewise::ui
