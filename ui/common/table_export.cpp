#include "common/table_export.h"

#include <QAbstractItemView>
#include <QAction>
#include <QClipboard>
#include <QEvent>
#include <QFile>
#include <QFileDialog>
#include <QGuiApplication>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLocale>
#include <QMenu>
#include <QMessageBox>
#include <QPointer>
#include <QSaveFile>
#include <QTableView>
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "common/app_settings.h"

namespace stagewise::ui {

namespace {

QString cellText(const QAbstractItemModel* model, int row, int column) {
  return model->data(model->index(row, column), Qt::DisplayRole).toString();
}

/// Ctrl+C on the view copies its whole selection (QAbstractItemView copies the current cell).
class CopyFilter : public QObject {
 public:
  explicit CopyFilter(QAbstractItemView* view) : QObject(view), m_view(view) {}

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override {
    if (watched != m_view) return false;
    if (event->type() != QEvent::ShortcutOverride && event->type() != QEvent::KeyPress)
      return false;
    auto* key = static_cast<QKeyEvent*>(event);
    if (!key->matches(QKeySequence::Copy)) return false;
    if (event->type() == QEvent::ShortcutOverride) {
      event->accept();  // the view's, not a window-wide Copy action's
      return true;
    }
    copyTableSelection(m_view);
    return true;
  }

 private:
  QAbstractItemView* m_view;
};

}  // namespace

QString csvField(const QString& text) {
  if (!text.contains(QLatin1Char(',')) && !text.contains(QLatin1Char('"')) &&
      !text.contains(QLatin1Char('\n')) && !text.contains(QLatin1Char('\r')))
    return text;
  QString quoted = text;
  quoted.replace(QLatin1Char('"'), QStringLiteral("\"\""));
  return QLatin1Char('"') + quoted + QLatin1Char('"');
}

QString exportFieldText(const QVariant& value) {
  switch (value.typeId()) {
    case QMetaType::Double:
    case QMetaType::Float: {
      const double v = value.toDouble();
      if (std::isnan(v)) return QString();
      if (std::isinf(v)) return QString::fromLatin1(v > 0 ? "inf" : "-inf");
      return QString::number(v, 'g', QLocale::FloatingPointShortest);
    }
    default:
      return value.toString();
  }
}

QString tableCsv(const QAbstractItemModel* model, const QTableView* view) {
  QString out;
  if (!model) return out;
  const int rows = model->rowCount();
  std::vector<int> columns;
  for (int c = 0; c < model->columnCount(); ++c)
    if (!view || !view->isColumnHidden(c)) columns.push_back(c);
  // A column split into several fields (mean, std) has the same number of fields in every row.
  std::vector<int> width;
  QStringList fields;
  for (int c : columns) {
    const QVariant names = model->headerData(c, Qt::Horizontal, kExportRole);
    QStringList header;
    if (names.typeId() == QMetaType::QStringList)
      header = names.toStringList();
    else if (names.isValid())
      header << names.toString();
    else
      header << model->headerData(c, Qt::Horizontal, Qt::DisplayRole).toString();
    width.push_back(int(std::max<qsizetype>(1, header.size())));
    for (const QString& name : header) fields << csvField(name);
  }
  out += fields.join(QLatin1Char(',')) + QLatin1Char('\n');
  for (int r = 0; r < rows; ++r) {
    fields.clear();
    for (size_t i = 0; i < columns.size(); ++i) {
      const QVariant value = model->data(model->index(r, columns[i]), kExportRole);
      QStringList cell;
      if (value.typeId() == QMetaType::QVariantList) {
        for (const QVariant& v : value.toList()) cell << exportFieldText(v);
      } else {
        cell << (value.isValid() ? exportFieldText(value) : cellText(model, r, columns[i]));
      }
      while (cell.size() < width[i]) cell << QString();
      for (int k = 0; k < width[i]; ++k) fields << csvField(cell[k]);
    }
    out += fields.join(QLatin1Char(',')) + QLatin1Char('\n');
  }
  return out;
}

QString selectionTsv(const QItemSelectionModel* selection, const QTableView* view) {
  if (!selection || !selection->hasSelection()) return {};
  const QAbstractItemModel* model = selection->model();
  std::map<int, std::set<int>> cells;  // row -> selected columns
  std::set<int> columns;
  int count = 0;
  for (const QModelIndex& index : selection->selectedIndexes()) {
    if (view && view->isColumnHidden(index.column())) continue;
    ++count;
    cells[index.row()].insert(index.column());
    columns.insert(index.column());
  }
  const auto field = [](QString text) {
    text.replace(QLatin1Char('\t'), QLatin1Char(' '));
    text.replace(QLatin1Char('\n'), QLatin1Char(' '));
    text.remove(QLatin1Char('\r'));
    return text;
  };
  // In the order the table shows them (the run list moves its key columns after Name in the
  // view only; a copy followed the model's order).
  std::vector<int> order(columns.begin(), columns.end());
  if (view)
    std::stable_sort(order.begin(), order.end(), [view](int a, int b) {
      return view->horizontalHeader()->visualIndex(a) < view->horizontalHeader()->visualIndex(b);
    });
  QString out;
  // Pasted into a spreadsheet, the columns keep their names (issue 36): one line of headers
  // first, unless a single cell is copied (its value alone is what gets pasted).
  if (count > 1) {
    QStringList names;
    for (int column : order)
      names << field(model->headerData(column, Qt::Horizontal, Qt::DisplayRole).toString());
    out += names.join(QLatin1Char('\t')) + QLatin1Char('\n');
  }
  for (const auto& [row, selected] : cells) {
    QStringList fields;
    for (int column : order)
      fields << field(selected.count(column) ? cellText(model, row, column) : QString());
    out += fields.join(QLatin1Char('\t')) + QLatin1Char('\n');
  }
  return out;
}

QString writeTableCsv(const QAbstractItemModel* model, const QString& path,
                      const QTableView* view) {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Text))
    return QObject::tr("Cannot write %1: %2").arg(path, file.errorString());
  file.write(tableCsv(model, view).toUtf8());
  if (!file.commit()) return QObject::tr("Cannot write %1: %2").arg(path, file.errorString());
  return {};
}

bool copyTableSelection(const QAbstractItemView* view) {
  const QString text = selectionTsv(view->selectionModel(), qobject_cast<const QTableView*>(view));
  if (text.isEmpty()) return false;
  QGuiApplication::clipboard()->setText(text);
  return true;
}

QAction* attachTableExport(QAbstractItemView* view, const QString& baseName,
                           PrepareExport prepare) {
  view->installEventFilter(new CopyFilter(view));
  auto* copy = new QAction(QObject::tr("Copy"), view);
  copy->setShortcut(QKeySequence::Copy);
  copy->setShortcutContext(Qt::WidgetShortcut);
  QObject::connect(copy, &QAction::triggered, view, [view] { copyTableSelection(view); });
  auto* exportCsv = new QAction(QObject::tr("Export CSV…"), view);
  exportCsv->setToolTip(QObject::tr("Write every row of this table as a CSV file"));
  QObject::connect(exportCsv, &QAction::triggered, view, [view, baseName, prepare] {
    const QString path = AppSettings::keepExportPath(QFileDialog::getSaveFileName(
        view, QObject::tr("Export CSV"), AppSettings::exportPath(baseName + QStringLiteral(".csv")),
        QObject::tr("CSV files (*.csv)")));
    if (path.isEmpty()) return;
    QPointer<QAbstractItemView> guard(view);
    auto write = [guard, path] {
      if (!guard) return;
      const QString error =
          writeTableCsv(guard->model(), path, qobject_cast<const QTableView*>(guard.data()));
      if (!error.isEmpty()) QMessageBox::warning(guard, QObject::tr("Export CSV"), error);
    };
    if (prepare)
      prepare(write);
    else
      write();
  });
  view->setContextMenuPolicy(Qt::CustomContextMenu);
  QObject::connect(
      view, &QWidget::customContextMenuRequested, view, [view, copy, exportCsv](const QPoint& pos) {
        QMenu menu(view);
        const QList<QAction*> own = view->actions();
        for (QAction* a : own)
          if (a != copy && a != exportCsv) menu.addAction(a);
        if (!menu.isEmpty()) menu.addSeparator();
        copy->setEnabled(view->selectionModel() && view->selectionModel()->hasSelection());
        menu.addAction(copy);
        menu.addAction(exportCsv);
        menu.exec(view->viewport()->mapToGlobal(pos));
      });
  return exportCsv;
}

}  // namespace stagewise::ui
