#include "runs/study_groups.h"

#include <QAction>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QTableWidget>
#include <QToolButton>
#include <QVBoxLayout>
#include <cmath>

#include "common/format.h"

namespace stagewise::ui {

namespace {

QString meanStd(const study::Stat& s, int decimals) {
  const QLocale locale;
  QString text = locale.toString(s.mean, 'f', decimals);
  if (s.n > 1) text += QStringLiteral(" ± ") + locale.toString(s.std, 'f', decimals);
  return text;
}

QString unquoted(const std::string& json) {
  QString v = QString::fromStdString(json);
  if (v.size() >= 2 && v.startsWith(QLatin1Char('"')) && v.endsWith(QLatin1Char('"')))
    v = v.mid(1, v.size() - 2);
  return v;
}

/// Sorts numbers by their value (Qt::UserRole), text by its text.
class SortItem : public QTableWidgetItem {
 public:
  using QTableWidgetItem::QTableWidgetItem;
  bool operator<(const QTableWidgetItem& other) const override {
    const double a = data(Qt::UserRole).toDouble(), b = other.data(Qt::UserRole).toDouble();
    if (std::isnan(a) || std::isnan(b)) return text() < other.text();
    return a < b;
  }
};

/// A cell that sorts by `sort` (a number; NaN: by its text) and shows `text`.
QTableWidgetItem* cell(const QString& text, double sort) {
  auto* item = new SortItem(text);
  item->setData(Qt::UserRole, sort);
  item->setFlags(item->flags() & ~Qt::ItemIsEditable);
  if (std::isfinite(sort)) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

}  // namespace

StudyGroupTable::StudyGroupTable(StoreExecutor* executor, QWidget* parent)
    : QWidget(parent), m_executor(executor) {
  m_groupBy = new QComboBox(this);
  m_groupBy->addItem(tr("Groups of the chosen keys"));
  m_groupBy->addItem(tr("Each run"));
  m_groupBy->setToolTip(
      tr("Groups: the runs equal in the chosen keys (every varied key by default, so a group "
         "pools the seeds), as mean ± sample std. Each run: one row per run."));
  m_keys = new QToolButton(this);
  m_keys->setText(tr("Keys"));
  m_keys->setPopupMode(QToolButton::InstantPopup);
  m_keys->setMenu(new QMenu(m_keys));
  m_keys->setToolTip(tr("The keys a group is made of; unchecked keys are pooled like the seeds."));
  m_target = new QDoubleSpinBox(this);
  m_target->setRange(0, 1);
  m_target->setDecimals(3);
  m_target->setSingleStep(0.01);
  m_target->setSpecialValueText(tr("study's"));
  m_target->setPrefix(tr("target "));
  m_target->setKeyboardTracking(false);
  m_target->setToolTip(
      tr("The test accuracy for time-to-target (the study's own by default; without one, the "
         "lowest best accuracy of its completed runs, so every run reaches it)."));
  m_note = new QLabel(this);
  m_note->setWordWrap(true);
  m_table = new QTableWidget(this);
  m_table->setSortingEnabled(true);
  m_table->verticalHeader()->hide();
  m_table->setAlternatingRowColors(true);
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_table->horizontalHeader()->setStretchLastSection(true);

  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("Group by"), this));
  bar->addWidget(m_groupBy);
  bar->addWidget(m_keys);
  bar->addWidget(m_target);
  bar->addWidget(m_note, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(bar);
  layout->addWidget(m_table, 1);

  connect(m_groupBy, &QComboBox::currentIndexChanged, this, &StudyGroupTable::fill);
  connect(m_target, &QDoubleSpinBox::valueChanged, this, &StudyGroupTable::reload);
  fill();
}

void StudyGroupTable::setStudy(int64_t id) {
  if (id == m_study) return;
  m_study = id;
  m_results.reset();
  m_keys->menu()->clear();
  reload();
}

void StudyGroupTable::reload() {
  const quint64 ticket = ++m_ticket;
  if (m_study <= 0) {
    m_results.reset();
    m_loadedTicket = ticket;
    fill();
    return;
  }
  const int64_t id = m_study;
  const std::optional<double> target =
      m_target->value() > 0 ? std::optional<double>(m_target->value()) : std::nullopt;
  m_executor->post<study::StudyResults>(
      this,
      [id, target](storage::RunReader& reader, storage::RunStore&) {
        return study::loadStudyResults(reader, id, target);
      },
      [this, ticket](study::StudyResults results) {
        if (ticket != m_ticket) return;
        // The Keys menu: the study's keys, all checked the first time.
        if (m_keys->menu()->actions().size() != int(results.keys.size())) {
          m_keys->menu()->clear();
          for (const auto& k : results.keys) {
            QAction* a = m_keys->menu()->addAction(QString::fromStdString(k));
            a->setCheckable(true);
            a->setChecked(true);
            connect(a, &QAction::toggled, this, &StudyGroupTable::fill);
          }
        }
        m_results = std::move(results);
        m_loadedTicket = ticket;
        fill();
        Q_EMIT loaded();
      },
      [this, ticket](const QString& message) {
        if (ticket != m_ticket) return;
        m_results.reset();
        m_loadedTicket = ticket;
        fill();
        m_note->setText(tr("The study could not be read: %1").arg(message));
      });
}

void StudyGroupTable::setGroupKeys(const std::vector<std::string>& keys) {
  for (QAction* a : m_keys->menu()->actions()) {
    const QSignalBlocker block(a);
    a->setChecked(std::find(keys.begin(), keys.end(), a->text().toStdString()) != keys.end());
  }
  fill();
}

std::vector<std::string> StudyGroupTable::chosenKeys() const {
  std::vector<std::string> keys;
  for (QAction* a : m_keys->menu()->actions())
    if (a->isChecked()) keys.push_back(a->text().toStdString());
  return keys;
}

void StudyGroupTable::fill() {
  m_table->setSortingEnabled(false);
  m_table->clear();
  m_groups.clear();
  const bool perRun = m_groupBy->currentIndex() == 1;
  m_keys->setEnabled(!perRun);
  if (!m_results) {
    m_table->setRowCount(0);
    m_table->setColumnCount(0);
    m_note->setText(m_study > 0 ? tr("Loading…")
                                : tr("Choose a study in the filter above to see its groups."));
    return;
  }
  const study::StudyResults& r = *m_results;
  const QLocale locale;
  // The chosen keys' positions among the study's.
  const std::vector<std::string> chosen = chosenKeys();
  std::vector<size_t> at;
  for (size_t i = 0; i < r.keys.size(); ++i)
    if (std::find(chosen.begin(), chosen.end(), r.keys[i]) != chosen.end()) at.push_back(i);
  QStringList headers;
  for (size_t i : perRun ? std::vector<size_t>() : at) headers << QString::fromStdString(r.keys[i]);
  if (perRun)
    for (const auto& k : r.keys) headers << QString::fromStdString(k);
  if (perRun) headers << tr("seed");
  headers << tr("mode") << (perRun ? tr("run") : tr("n")) << tr("test accuracy") << tr("samples/s")
          << tr("wall time") << tr("training FLOPs") << tr("time to target");
  if (!perRun) headers << tr("front");
  m_table->setColumnCount(int(headers.size()));
  m_table->setHorizontalHeaderLabels(headers);

  auto timeText = [](const std::optional<double>& t) {
    return t ? formatDuration(*t) : tr("not reached");
  };
  if (perRun) {
    m_table->setRowCount(int(r.outcomes.size()));
    for (int row = 0; row < int(r.outcomes.size()); ++row) {
      const study::RunOutcome& o = r.outcomes[size_t(row)];
      int c = 0;
      for (const auto& v : o.values) m_table->setItem(row, c++, cell(unquoted(v), std::nan("")));
      m_table->setItem(row, c++, cell(QString::number(o.seed), double(o.seed)));
      m_table->setItem(row, c++, cell(QString::fromStdString(o.mode), std::nan("")));
      const int64_t runId = r.rows[r.outcomeRows[size_t(row)]].run.id;
      m_table->setItem(row, c++, cell(QStringLiteral("#%1").arg(runId), double(runId)));
      m_table->setItem(row, c++, cell(locale.toString(o.testAccuracy, 'f', 4), o.testAccuracy));
      m_table->setItem(row, c++, cell(locale.toString(o.samplesPerSec, 'f', 0), o.samplesPerSec));
      m_table->setItem(row, c++, cell(formatDuration(o.wallS), o.wallS));
      m_table->setItem(row, c++, cell(formatCount(o.trainFlops), o.trainFlops));
      m_table->setItem(row, c++, cell(timeText(o.targetTimeS), o.targetTimeS.value_or(INFINITY)));
    }
  } else {
    std::vector<study::RunOutcome> projected = r.outcomes;
    for (auto& o : projected) {
      std::vector<std::string> values;
      for (size_t i : at) values.push_back(o.values.at(i));
      o.values = std::move(values);
    }
    m_groups = study::groupRuns(projected);
    m_table->setRowCount(int(m_groups.size()));
    for (int row = 0; row < int(m_groups.size()); ++row) {
      const study::Group& g = m_groups[size_t(row)];
      int c = 0;
      for (const auto& v : g.values) m_table->setItem(row, c++, cell(unquoted(v), std::nan("")));
      m_table->setItem(row, c++, cell(QString::fromStdString(g.mode), std::nan("")));
      m_table->setItem(row, c++, cell(QString::number(g.accuracy.n), g.accuracy.n));
      m_table->setItem(row, c++, cell(meanStd(g.accuracy, 4), g.accuracy.mean));
      m_table->setItem(row, c++, cell(meanStd(g.samplesPerSec, 0), g.samplesPerSec.mean));
      QString wall = formatDuration(g.wallS.mean);
      if (g.wallS.n > 1) wall += QStringLiteral(" ± ") + formatDuration(g.wallS.std);
      m_table->setItem(row, c++, cell(wall, g.wallS.mean));
      m_table->setItem(row, c++, cell(formatCount(g.trainFlops.mean), g.trainFlops.mean));
      QString ttt = tr("not reached (0 of %1)").arg(g.accuracy.n);
      if (g.targetTimeS) {
        ttt = formatDuration(g.targetTimeS->mean);
        if (g.targetTimeS->n > 1) ttt += QStringLiteral(" ± ") + formatDuration(g.targetTimeS->std);
        ttt += tr(" (%1 of %2)").arg(g.reached).arg(g.accuracy.n);
      }
      m_table->setItem(row, c++, cell(ttt, g.targetTimeS ? g.targetTimeS->mean : double(INFINITY)));
      auto* front = cell(g.onFront ? QStringLiteral("✓") : QString(), g.onFront ? 1 : 0);
      front->setToolTip(
          tr("On the front: no other group is faster (mean wall time) and at least "
             "as accurate (mean test accuracy)"));
      m_table->setItem(row, c++, front);
    }
  }
  m_table->resizeColumnsToContents();
  m_table->setSortingEnabled(true);
  const QString target = locale.toString(r.target, 'f', 4);
  m_note->setText(
      (r.targetIsDefault ? tr("target %1 (the lowest best accuracy of the runs)") : tr("target %1"))
          .arg(target) +
      QStringLiteral(" · ") +
      (r.outcomes.size() == 1 ? tr("1 completed run")
                              : tr("%1 completed runs").arg(r.outcomes.size())));
}

}  // namespace stagewise::ui
