#pragma once
// The Runs filter box as a query field (docs/query.md): parsing what was typed, the outline and
// tooltip of a query that does not parse, and the menu of saved queries beside it.

#include <QToolButton>
#include <functional>
#include <optional>

#include "stagewise/storage/run_query.h"

class QLineEdit;

namespace stagewise::ui {

/// The query in `field`: outlines the field and puts the message and column in its tooltip
/// when it does not parse (nullopt), else clears both. An empty field gives a query matching
/// every run.
std::optional<storage::RunQuery> readQueryField(QLineEdit* field);

/// "Saved ▾" beside a query field: save the field's query, forget it, or recall a saved one
/// (it replaces the field's text and `recalled` is called). Kept in AppSettings.
class SavedQueriesButton : public QToolButton {
  Q_OBJECT
 public:
  SavedQueriesButton(QLineEdit* field, std::function<void()> recalled, QWidget* parent = nullptr);

 private:
  void fillMenu();

  QLineEdit* m_field;
  std::function<void()> m_recalled;
};

}  // namespace stagewise::ui
