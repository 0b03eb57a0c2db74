#include "common/command_palette.h"

#include <QAction>
#include <QCoreApplication>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QRegularExpression>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <functional>

namespace stagewise::ui {

namespace {

QString plain(const QString& text) {
  QString out = text;
  out.remove(QRegularExpression(QStringLiteral("&(?!&)")));
  out.replace(QStringLiteral("&&"), QStringLiteral("&"));
  return out;
}

bool wordStart(const QString& text, int i) {
  return i == 0 || !text.at(i - 1).isLetterOrNumber();
}

}  // namespace

CommandPalette::CommandPalette(QMenuBar* menus, QWidget* window) : QDialog(window), m_menus(menus) {
  setWindowTitle(tr("Command palette"));
  setObjectName(QStringLiteral("commandPalette"));
  m_search = new QLineEdit(this);
  m_search->setPlaceholderText(tr("Type to find an action (fuzzy: \"rs\" finds Run study)…"));
  m_search->installEventFilter(this);
  m_list = new QTreeWidget(this);
  m_list->setColumnCount(3);
  m_list->setHeaderHidden(true);
  m_list->setRootIsDecorated(false);
  m_list->setUniformRowHeights(true);
  m_list->setFocusPolicy(Qt::NoFocus);
  m_list->header()->setStretchLastSection(false);
  m_list->header()->setSectionResizeMode(0, QHeaderView::Stretch);
  m_list->header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
  m_list->header()->setSectionResizeMode(2, QHeaderView::ResizeToContents);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(m_search);
  layout->addWidget(m_list);
  resize(620, 380);
  connect(m_search, &QLineEdit::textChanged, this, &CommandPalette::refilter);
  connect(m_search, &QLineEdit::returnPressed, this, &CommandPalette::triggerCurrent);
  connect(m_list, &QTreeWidget::itemDoubleClicked, this, &CommandPalette::triggerCurrent);
}

void CommandPalette::popup() {
  collect();
  m_search->clear();
  refilter();
  if (QWidget* w = parentWidget()) {
    const QPoint top = w->mapToGlobal(QPoint(w->width() / 2, 0));
    move(top.x() - width() / 2, top.y() + 40);
  }
  show();
  raise();
  activateWindow();
  m_search->setFocus();
}

void CommandPalette::collect() {
  m_entries.clear();
  std::function<void(QMenu*, const QString&)> walk = [&](QMenu* menu, const QString& path) {
    for (QAction* a : menu->actions()) {
      if (a->isSeparator() || !a->isVisible()) continue;
      const QString label = plain(a->text());
      if (QMenu* sub = a->menu()) {
        walk(sub, path + QStringLiteral(" › ") + label);
        continue;
      }
      if (!a->isEnabled() || label.isEmpty() || a->property("paletteSkips").toBool()) continue;
      QStringList keys;
      for (const QKeySequence& k : a->shortcuts()) keys << k.toString(QKeySequence::NativeText);
      m_entries.push_back({a, label, path, keys.join(QStringLiteral(", "))});
    }
  };
  if (m_menus) {
    for (QAction* top : m_menus->actions())
      if (QMenu* menu = top->menu(); menu && top->isVisible()) walk(menu, plain(top->text()));
  }
  if (QWidget* w = parentWidget()) {
    for (QAction* a : w->actions()) {
      if (a->isEnabled() && !a->menu() && !a->text().isEmpty())
        m_entries.push_back(
            {a, plain(a->text()), a->property("palettePath").toString(), a->shortcut().toString()});
    }
  }
}

int CommandPalette::fuzzyScore(const QString& pattern, const QString& text) {
  QString p = pattern.toCaseFolded();
  p.remove(QLatin1Char(' '));
  if (p.isEmpty()) return 0;
  const QString t = text.toCaseFolded();
  // A letter counts as meant when it starts a word or follows the previous match. A short
  // pattern matches with such letters only; a longer one (room for a typo) with two thirds of
  // them (issue 36: "csv" found "Design's cuts steer the live run" by c-s-v scattered in it).
  const bool strict = p.size() <= kStrictLength;
  int score = 0;
  int meant = 0;
  int at = 0;
  int last = -2;
  for (const QChar c : p) {
    // The next occurrence, preferring one that starts a word over an earlier one mid-word.
    int found = -1;
    for (int i = at; i < t.size(); ++i) {
      if (t.at(i) != c) continue;
      if (i == last + 1 || wordStart(t, i)) {
        found = i;
        break;
      }
      if (found < 0 && !strict) found = i;
    }
    if (found < 0) return -1;
    score += 1;
    if (found == last + 1 || wordStart(t, found)) ++meant;
    if (found == last + 1) score += 4;
    if (wordStart(t, found)) score += 6;
    score -= std::min(found - at, 8) / 4;  // a little for the letters skipped
    last = found;
    at = found + 1;
  }
  if (meant * 3 < int(p.size()) * 2) return -1;
  // Typed as written ranks first: "runs" finds Runs before Run study.
  if (t.startsWith(p))
    score += 12;
  else if (t.contains(p))
    score += 6;
  return std::max(score, 0) * 16 + 15 - std::min(int(t.size()), 15);  // shorter first
}

void CommandPalette::refilter() {
  m_list->clear();
  const QString pattern = m_search->text();
  std::vector<std::pair<int, int>> ranked;  // (score, entry)
  for (int i = 0; i < int(m_entries.size()); ++i) {
    const Entry& e = m_entries[size_t(i)];
    if (!e.action) continue;
    // The action's own name first: "pause" ranks Pause / resume above a menu called Pause.
    const int own = fuzzyScore(pattern, e.label);
    const int withMenu = fuzzyScore(pattern, e.path + QLatin1Char(' ') + e.label);
    const int score = std::max(own >= 0 ? own + 32 : -1, withMenu);
    if (score >= 0) ranked.push_back({score, i});
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [score, i] : ranked) {
    const Entry& e = m_entries[size_t(i)];
    auto* item = new QTreeWidgetItem(m_list, {e.label, e.path, e.keys});
    item->setData(0, Qt::UserRole, i);
    item->setForeground(1, palette().brush(QPalette::PlaceholderText));
    item->setToolTip(0, e.action->toolTip());
  }
  if (m_list->topLevelItemCount() > 0) m_list->setCurrentItem(m_list->topLevelItem(0));
}

QAction* CommandPalette::actionAt(int row) const {
  QTreeWidgetItem* item = m_list->topLevelItem(row);
  if (!item) return nullptr;
  const int i = item->data(0, Qt::UserRole).toInt();
  return i >= 0 && i < int(m_entries.size()) ? m_entries[size_t(i)].action.data() : nullptr;
}

void CommandPalette::triggerCurrent() {
  QTreeWidgetItem* item = m_list->currentItem();
  if (!item) return;
  QPointer<QAction> action = actionAt(m_list->indexOfTopLevelItem(item));
  hide();
  if (action && action->isEnabled()) action->trigger();
}

bool CommandPalette::eventFilter(QObject* watched, QEvent* event) {
  if (watched == m_search && event->type() == QEvent::KeyPress) {
    const int key = static_cast<QKeyEvent*>(event)->key();
    if (key == Qt::Key_Up || key == Qt::Key_Down || key == Qt::Key_PageUp ||
        key == Qt::Key_PageDown) {
      QCoreApplication::sendEvent(m_list, event);  // the list moves; typing stays in the field
      return true;
    }
  }
  return QDialog::eventFilter(watched, event);
}

}  // namespace stagewise::ui
