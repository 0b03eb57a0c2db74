#include "designer/vary_action.h"

#include <QAction>
#include <QLineEdit>
#include <QMenu>
#include <QWidget>

namespace stagewise::ui {

namespace {
constexpr const char* kVaryName = "varyInStudy";
}

void offerVary(QWidget* editor, const QString& key, std::function<void(const QString&)> vary) {
  auto* action = new QAction(QObject::tr("Vary %1 in a study…").arg(key), editor);
  action->setObjectName(QLatin1String(kVaryName));
  action->setToolTip(QObject::tr("Add %1 to the study panel, to sweep it over values").arg(key));
  QObject::connect(action, &QAction::triggered, editor,
                   [key, vary = std::move(vary)] { vary(key); });
  editor->addAction(action);
  editor->setContextMenuPolicy(Qt::CustomContextMenu);
  QObject::connect(editor, &QWidget::customContextMenuRequested, editor,
                   [editor, action](const QPoint& at) {
                     QMenu* menu = nullptr;
                     if (auto* line = qobject_cast<QLineEdit*>(editor)) {
                       menu = line->createStandardContextMenu();
                       QAction* first = menu->actions().value(0);
                       menu->insertAction(first, action);
                       menu->insertSeparator(first);
                     } else {
                       menu = new QMenu(editor);
                       menu->addAction(action);
                     }
                     menu->setAttribute(Qt::WA_DeleteOnClose);
                     menu->popup(editor->mapToGlobal(at));
                   });
}

QAction* varyAction(QWidget* editor) {
  return editor ? editor->findChild<QAction*>(QLatin1String(kVaryName), Qt::FindDirectChildrenOnly)
                : nullptr;
}

}  // namespace stagewise::ui
