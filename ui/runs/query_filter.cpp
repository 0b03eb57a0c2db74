#include "runs/query_filter.h"

#include <QLineEdit>
#include <QMenu>

#include "common/app_settings.h"
#include "common/invalid_outline.h"

namespace stagewise::ui {

namespace {

QString queryHelp() {
  return SavedQueriesButton::tr(
      "Plain text matches names, notes, tags, a mode, a status or #id.\n"
      "A query compares spec keys (train.lr), summary figures (test_accuracy) and series "
      "(max(test_accuracy), min(loss), last(…), mean(…)) with numbers (1e-3) or \"text\":\n"
      "= != < <= > >=, ~ \"glob*\" (case-insensitive), tag = \"baseline\", and / or / not, "
      "parentheses. For example:\n"
      "mode = \"local\" and train.lr < 1e-3 and max(test_accuracy) > 0.8");
}

}  // namespace

std::optional<storage::RunQuery> readQueryField(QLineEdit* field) {
  try {
    storage::RunQuery query = storage::RunQuery::parse(field->text().toStdString());
    setInvalidOutline(field, false);
    field->setToolTip(queryHelp());
    return query;
  } catch (const storage::QueryError& e) {
    setInvalidOutline(field, true);
    field->setToolTip(SavedQueriesButton::tr("Column %1: %2\n\n%3")
                          .arg(e.column())
                          .arg(QString::fromUtf8(e.what()), queryHelp()));
    return std::nullopt;
  }
}

SavedQueriesButton::SavedQueriesButton(QLineEdit* field, std::function<void()> recalled,
                                       QWidget* parent)
    : QToolButton(parent), m_field(field), m_recalled(std::move(recalled)) {
  setText(tr("Saved"));
  setToolTip(tr("Save the query in the filter, or recall a saved one"));
  setPopupMode(QToolButton::InstantPopup);
  setMenu(new QMenu(this));
  connect(menu(), &QMenu::aboutToShow, this, &SavedQueriesButton::fillMenu);
  fillMenu();  // so the actions exist before the first click (tests, accessibility)
  if (m_field->toolTip().isEmpty()) m_field->setToolTip(queryHelp());
}

void SavedQueriesButton::fillMenu() {
  QMenu* m = menu();
  m->clear();
  const QString current = m_field->text().trimmed();
  const QStringList saved = AppSettings::savedQueries();
  QAction* save = m->addAction(tr("Save this query"), this, [this] {
    const QString query = m_field->text().trimmed();
    QStringList list = AppSettings::savedQueries();
    if (!query.isEmpty() && !list.contains(query)) AppSettings::setSavedQueries(list << query);
    fillMenu();
  });
  save->setObjectName(QStringLiteral("saveQuery"));
  save->setEnabled(!current.isEmpty() && !hasInvalidOutline(m_field) && !saved.contains(current));
  QAction* forget = m->addAction(tr("Forget this query"), this, [this] {
    QStringList list = AppSettings::savedQueries();
    list.removeAll(m_field->text().trimmed());
    AppSettings::setSavedQueries(list);
    fillMenu();
  });
  forget->setObjectName(QStringLiteral("forgetQuery"));
  forget->setEnabled(saved.contains(current));
  m->addSeparator();
  if (saved.isEmpty()) m->addAction(tr("No saved queries"))->setEnabled(false);
  for (const QString& query : saved) {
    QAction* recall = m->addAction(query, this, [this, query] {
      m_field->setText(query);
      if (m_recalled) m_recalled();
    });
    recall->setData(query);
  }
}

}  // namespace stagewise::ui
