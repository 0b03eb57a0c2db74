#include "runs/study_groups.h"

#include <QAction>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QScrollArea>
#include <QSplitter>
#include <QStyle>
#include <QTableWidget>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <set>

#include "common/app_settings.h"
#include "common/format.h"
#include "common/table_export.h"
#include "runs/study_views.h"
#include "stagewise/engine/number_text.h"
#include "stagewise/study/search_views.h"

namespace stagewise::ui {

namespace {

/// "mean ± half" for a symmetric spread, "mean [lo, hi]" for min–max, to the decimal place the
/// spread supports (significant digits, as `study show` writes them); `scale` and `unit` write
/// seconds as minutes or hours.
QString meanSpread(const study::Stat& s, study::Spread spread, double scale = 1,
                   const QString& unit = QString()) {
  if (s.n < 2) return QString::fromStdString(engine::significant(s.mean / scale, 4)) + unit;
  const auto [lo, hi] = study::spreadBounds(s, spread);
  if (spread == study::Spread::MinMax) {
    const int d = engine::spreadDecimals((hi - lo) / scale / 2);
    auto at = [d, scale](double v) {
      return QString::fromStdString(engine::atDecimals(v / scale, d));
    };
    return at(s.mean) + unit + QStringLiteral(" [") + at(lo) + QStringLiteral(", ") + at(hi) +
           QLatin1Char(']');
  }
  return formatMeanSpread(s.mean / scale, (hi - s.mean) / scale, unit);
}

/// Seconds in the unit the mean calls for (s, min, h), the spread in the same.
QString durationSpread(const study::Stat& s, study::Spread spread) {
  if (!(s.mean >= 0) || !std::isfinite(s.mean)) return QStringLiteral("—");
  if (s.mean >= 7200) return meanSpread(s, spread, 3600, QStringLiteral(" h"));
  if (s.mean >= 120) return meanSpread(s, spread, 60, QStringLiteral(" min"));
  return meanSpread(s, spread, 1, QStringLiteral(" s"));
}

QString unquoted(const std::string& json) {
  return formatSpecValue(json);
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

/// Export CSV's stored number(s) behind a cell's text (kExportRole): full precision, one value
/// a field, where the text rounds, joins a mean and its spread, or adds a unit (issue 36's
/// walkthrough: "0.718 ± 0.004" in one field).
QTableWidgetItem* exporting(QTableWidgetItem* item, const QVariant& value) {
  item->setData(kExportRole, value);
  return item;
}

QVariant number(double v) {
  return std::isfinite(v) ? QVariant(v) : QVariant(QString());
}

QVariant number(const std::optional<double>& v) {
  return v ? number(*v) : QVariant(QString());
}

/// A mean and its sample std, two fields (empty: no runs; the std of one run).
QVariantList meanStd(const study::Stat& s) {
  return {s.n > 0 ? number(s.mean) : QVariant(QString()),
          s.n > 1 ? number(s.std) : QVariant(QString())};
}

/// Names a column's exported fields (kExportRole of its header item).
void exportHeader(QTableWidget* table, const QStringList& headers, const QString& shown,
                  const QVariant& names) {
  const int column = int(headers.indexOf(shown));
  if (column >= 0 && table->horizontalHeaderItem(column))
    table->horizontalHeaderItem(column)->setData(kExportRole, names);
}

}  // namespace

StudyGroupTable::StudyGroupTable(StoreExecutor* executor, QWidget* parent)
    : QWidget(parent), m_executor(executor) {
  m_groupBy = new QComboBox(this);
  m_groupBy->addItem(tr("Groups of the chosen keys"));
  m_groupBy->addItem(tr("Each run"));
  m_groupBy->setToolTip(
      tr("Groups: the runs equal in the chosen keys (every varied key by default, so a group "
         "pools the seeds), as mean and the spread chosen beside. Each run: one row per run."));
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
  m_spread = new QComboBox(this);
  m_spread->addItem(tr("± std"), QStringLiteral("std"));
  m_spread->addItem(tr("± standard error"), QStringLiteral("sem"));
  m_spread->addItem(tr("± 95 % CI"), QStringLiteral("ci95"));
  m_spread->addItem(tr("min–max"), QStringLiteral("minmax"));
  m_spread->setToolTip(
      tr("What follows a mean: the sample standard deviation; the standard error of the mean "
         "(std / √n); the 95 % confidence interval of the mean (Student's t, n − 1 degrees of "
         "freedom); or the smallest and largest value. The overlay's band in Compare follows."));
  m_spread->setCurrentIndex(std::max(
      0, m_spread->findData(QString::fromStdString(study::spreadId(AppSettings::spread())))));
  m_note = new QLabel(this);
  m_note->setWordWrap(true);
  m_tunedNote = new QLabel(this);
  m_tunedNote->setWordWrap(true);
  m_tunedTable = new QTableWidget(this);
  m_tunedTable->verticalHeader()->hide();
  m_tunedTable->setAlternatingRowColors(true);
  m_tunedTable->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_tunedTable->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_tunedTable->horizontalHeader()->setStretchLastSection(true);
  m_tunedTable->setToolTip(
      tr("The tuned comparison: each point's search chose its settings on the validation "
         "metric (never on test); its best trial then ran again on fresh seeds, and those runs' "
         "test accuracy is the point's result, mean ± 95 % CI (Student t) over the seeds."));
  m_tunedBox = new QWidget(this);
  auto* tunedLayout = new QVBoxLayout(m_tunedBox);
  tunedLayout->setContentsMargins(0, 0, 0, 0);
  auto* tunedTitle = new QLabel(tr("<b>Tuned comparison</b>"), m_tunedBox);
  tunedLayout->addWidget(tunedTitle);
  tunedLayout->addWidget(m_tunedNote);
  tunedLayout->addWidget(m_tunedTable, 1);
  m_tunedBox->hide();
  m_views = new StudyViews(this);
  m_views->hide();
  m_table = new QTableWidget(this);
  m_table->setSortingEnabled(true);
  m_table->verticalHeader()->hide();
  m_table->setAlternatingRowColors(true);
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_table->horizontalHeader()->setStretchLastSection(true);
  // Rows a text line high, not the style's 30 px: at 1366x768 those showed 3 of a grid's rows
  // (issue 36 walkthrough).
  for (QTableWidget* t : {m_table, m_tunedTable}) {
    t->verticalHeader()->setMinimumSectionSize(rowHeight());
    t->verticalHeader()->setDefaultSectionSize(rowHeight());
  }

  auto* bar = new QHBoxLayout;
  m_groupsBar = bar;
  bar->addWidget(new QLabel(tr("Group by"), this));
  bar->addWidget(m_groupBy);
  bar->addWidget(m_keys);
  bar->addWidget(m_target);
  bar->addWidget(m_spread);
  bar->addWidget(m_note, 1);
  auto* groupsBox = new QWidget(this);
  m_groupsBox = groupsBox;
  auto* groupsLayout = new QVBoxLayout(groupsBox);
  groupsLayout->setContentsMargins(0, 0, 0, 0);
  groupsLayout->addLayout(bar);
  groupsLayout->addWidget(m_table, 1);
  // A search's tuned comparison (a few columns) beside the groups, not above them: stacked,
  // the groups kept ~2 rows at 1366x768 (issue 36). The study views below.
  auto* beside = new QSplitter(Qt::Horizontal, this);
  beside->addWidget(m_tunedBox);
  beside->addWidget(groupsBox);
  beside->setStretchFactor(0, 2);
  beside->setStretchFactor(1, 3);
  beside->setChildrenCollapsible(false);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(beside);
  split->addWidget(m_views);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);
  // A search stacks the tuned comparison, the groups and the study views: their least heights
  // add up past a small screen's (the main window grew to 1040 px on 1366x768). The tab scrolls
  // instead, so it never sets the window's least size.
  auto* scroll = new QScrollArea(this);
  scroll->setWidget(split);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(scroll, 1);
  connect(m_spread, &QComboBox::currentIndexChanged, this, [this] {
    AppSettings::setSpread(study::spreadFromId(m_spread->currentData().toString().toStdString()));
    fill();
  });

  connect(m_groupBy, &QComboBox::currentIndexChanged, this, &StudyGroupTable::fill);
  connect(m_target, &QDoubleSpinBox::valueChanged, this, &StudyGroupTable::reload);
  fill();
}

int StudyGroupTable::rowHeight() const {
  return fontMetrics().height() + 6;
}

int StudyGroupTable::heightForRows(int rows) const {
  // The tab as a grid study shows it: the bar, the table's header and `rows` rows, its frame
  // and a horizontal scroll bar (many keys make the columns wider than the window).
  const int bar = m_groupsBar->sizeHint().height();
  const int header = m_table->horizontalHeader()->sizeHint().height();
  const int scrollBar = style()->pixelMetric(QStyle::PM_ScrollBarExtent);
  return bar + std::max(0, m_groupsBar->spacing()) + header + rows * rowHeight() +
         2 * m_table->frameWidth() + scrollBar + 4;
}

int StudyGroupTable::preferredHeight() const {
  if (!m_tunedBox->isVisibleTo(this)) return heightForRows(8);
  // A search: the groups (the tuned comparison beside them) in view with 6 rows or more; the
  // study views follow below (the tab scrolls to them).
  return std::max(m_tunedBox->minimumSizeHint().height(), heightForRows(6));
}

void StudyGroupTable::setStudy(int64_t id) {
  if (id == m_study) return;
  m_study = id;
  m_results.reset();
  m_keys->menu()->clear();
  reload();
}

// Whether `f` can leave a run out (its study aside).
static bool restricts(const storage::RunFilter& f) {
  return !f.text.empty() || !f.statuses.empty() || !f.mode.empty() || f.createdFrom ||
         f.createdTo || !f.tags.empty() || (f.query && !f.query->matchesAll());
}

void StudyGroupTable::setRunFilter(const storage::RunFilter& filter) {
  storage::RunFilter f = filter;
  f.study.reset();
  const bool was = m_filtered;
  m_filter = std::move(f);
  m_filtered = restricts(m_filter);
  // A filter that admits every run before and after changes nothing here.
  if ((was || m_filtered) && m_study > 0) reload();
}

int StudyGroupTable::groupedRuns() const {
  return m_results ? int(m_results->outcomes.size()) : 0;
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
  std::optional<storage::RunFilter> filter;
  if (m_filtered) {
    filter = m_filter;
    filter->study = id;
  }
  struct Loaded {
    study::StudyResults results;
    int all = 0;                                ///< the study's outcomes, unfiltered
    std::optional<std::set<int64_t>> admitted;  ///< the runs the filter admits
  };
  m_executor->post<Loaded>(
      this,
      [id, target, filter](storage::RunReader& reader, storage::RunStore&) {
        study::StudyResults results = study::loadStudyResults(reader, id, target);
        const int all = int(results.outcomes.size());
        if (filter) {
          // Issue 36: the Groups tab grouped every run while the list showed the filter's.
          std::set<int64_t> admitted;
          for (const auto& r : reader.listRuns(*filter)) admitted.insert(r.id);
          std::vector<study::RunOutcome> outcomes;
          std::vector<size_t> outcomeRows;
          for (size_t i = 0; i < results.outcomes.size(); ++i)
            if (admitted.count(results.rows[results.outcomeRows[i]].run.id)) {
              outcomes.push_back(std::move(results.outcomes[i]));
              outcomeRows.push_back(results.outcomeRows[i]);
            }
          results.outcomes = std::move(outcomes);
          results.outcomeRows = std::move(outcomeRows);
          return Loaded{std::move(results), all, std::move(admitted)};
        }
        return Loaded{std::move(results), all, std::nullopt};
      },
      [this, ticket](Loaded read) {
        if (ticket != m_ticket) return;
        study::StudyResults results = std::move(read.results);
        m_studyRuns = read.all;
        m_admitted = std::move(read.admitted);
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

void StudyGroupTable::fillTuned() {
  const bool search = m_results && !m_results->tuned.empty();
  m_tunedBox->setVisible(search);
  m_views->setVisible(search);
  m_views->setViews(search ? study::searchViews(*m_results) : study::SearchViews{});
  m_tunedTable->clear();
  m_tunedTable->setRowCount(0);
  if (!search) return;
  const study::StudyResults& r = *m_results;
  const QLocale locale;
  const size_t varied = r.plan.keys.size();
  QStringList headers;
  for (size_t i = 0; i < varied; ++i) headers << QString::fromStdString(r.keys[i]);
  const QString metric = QString::fromStdString(r.tuned.front().metric);
  headers << tr("chosen settings") << tr("chosen on %1").arg(metric)
          << tr("test accuracy (mean ± 95 % CI)") << tr("n") << tr("trials");
  m_tunedTable->setColumnCount(int(headers.size()));
  m_tunedTable->setHorizontalHeaderLabels(headers);
  exportHeader(m_tunedTable, headers, tr("test accuracy (mean ± 95 % CI)"),
               QStringList{tr("test accuracy mean"), tr("test accuracy std"),
                           tr("test accuracy 95 % CI low"), tr("test accuracy 95 % CI high")});
  m_tunedTable->setRowCount(int(r.tuned.size()));
  for (int row = 0; row < int(r.tuned.size()); ++row) {
    const study::TunedResult& t = r.tuned[size_t(row)];
    int c = 0;
    for (const auto& v : t.varyValues)
      m_tunedTable->setItem(row, c++, cell(unquoted(v), std::nan("")));
    QStringList chosen;
    for (size_t k = 0; k < t.best.size() && varied + k < r.keys.size(); ++k)
      chosen << QString::fromStdString(r.keys[varied + k]) + QLatin1Char('=') + unquoted(t.best[k]);
    m_tunedTable->setItem(
        row, c++,
        cell(chosen.isEmpty() ? tr("not chosen yet") : chosen.join(QStringLiteral(", ")),
             std::nan("")));
    auto* on = exporting(cell(t.bestValue ? locale.toString(*t.bestValue, 'f', 4) : QString(),
                              t.bestValue.value_or(std::nan(""))),
                         number(t.bestValue));
    if (t.bestRunId) on->setToolTip(tr("the best trial: run #%1").arg(t.bestRunId));
    m_tunedTable->setItem(row, c++, on);
    QString test;
    if (t.test.n > 0) {
      test = locale.toString(t.test.mean, 'f', 4);
      if (t.ci95)
        test += QStringLiteral(" ± ") + locale.toString(t.ci95->second - t.test.mean, 'f', 4) +
                QStringLiteral(" [") + locale.toString(t.ci95->first, 'f', 4) +
                QStringLiteral(", ") + locale.toString(t.ci95->second, 'f', 4) + QLatin1Char(']');
    } else {
      test = r.plan.search.tune ? tr("no tuned run yet") : tr("not tuned (no tune seeds)");
    }
    QVariantList testFields = meanStd(t.test);
    testFields << (t.ci95 ? number(t.ci95->first) : QVariant(QString()))
               << (t.ci95 ? number(t.ci95->second) : QVariant(QString()));
    m_tunedTable->setItem(
        row, c++, exporting(cell(test, t.test.n > 0 ? t.test.mean : std::nan("")), testFields));
    m_tunedTable->setItem(row, c++, cell(QString::number(t.test.n), t.test.n));
    auto* trials = cell(tr("%1: %2 completed, %3 pruned, %4 failed")
                            .arg(t.trials)
                            .arg(t.completed)
                            .arg(t.pruned)
                            .arg(t.failed),
                        t.trials);
    m_tunedTable->setItem(row, c++, trials);
  }
  // The verdict (test accuracy) right after the point's keys: beside the groups at 1366 px the
  // table is narrow, and it was the column cut off (the CSV keeps the model's order).
  auto* header = m_tunedTable->horizontalHeader();
  const int testColumn = int(varied) + 2;
  if (header->visualIndex(testColumn) != int(varied))
    header->moveSection(header->visualIndex(testColumn), int(varied));
  m_tunedTable->resizeColumnsToContents();
  m_tunedNote->setText(
      tr("Each point searched %1 trials (%2 sampler%3), chose on %4 (validation), and ran the "
         "best again on %5 fresh seeds; test accuracy is reported, never used to choose.")
          .arg(r.plan.search.trials)
          .arg(QString::fromStdString(r.plan.search.sampler))
          .arg(r.plan.search.prune ? tr(", pruned by successive halving") : QString())
          .arg(metric)
          .arg(r.plan.search.tune ? r.plan.search.tune->seeds : 0));
}

void StudyGroupTable::fill() {
  fillTuned();
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
  const study::Spread spread =
      study::spreadFromId(m_spread->currentData().toString().toStdString());
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
  // The mode is a column of its own unless it is one of the keys shown (then it would be twice).
  bool modeShown = false;
  for (size_t i = 0; i < r.keys.size(); ++i)
    if (r.keys[i] == "mode" && (perRun || std::find(at.begin(), at.end(), i) != at.end()))
      modeShown = true;
  if (!modeShown) headers << tr("mode");
  headers << (perRun ? tr("run") : tr("n")) << tr("test accuracy") << tr("samples/s")
          << tr("wall time") << tr("training FLOPs") << tr("time to target");
  if (!perRun) headers << tr("front");
  m_table->setColumnCount(int(headers.size()));
  m_table->setHorizontalHeaderLabels(headers);
  // Export CSV: units in the header, a group's mean and std in two columns.
  if (perRun) {
    exportHeader(m_table, headers, tr("wall time"), tr("wall time (s)"));
    exportHeader(m_table, headers, tr("time to target"), tr("time to target (s)"));
  } else {
    exportHeader(m_table, headers, tr("test accuracy"),
                 QStringList{tr("test accuracy mean"), tr("test accuracy std")});
    exportHeader(m_table, headers, tr("samples/s"),
                 QStringList{tr("samples/s mean"), tr("samples/s std")});
    exportHeader(m_table, headers, tr("wall time"),
                 QStringList{tr("wall time mean (s)"), tr("wall time std (s)")});
    exportHeader(m_table, headers, tr("training FLOPs"),
                 QStringList{tr("training FLOPs mean"), tr("training FLOPs std")});
    exportHeader(
        m_table, headers, tr("time to target"),
        QStringList{tr("time to target mean (s)"), tr("time to target std (s)"), tr("reached")});
  }

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
      if (!modeShown)
        m_table->setItem(row, c++, cell(QString::fromStdString(o.mode), std::nan("")));
      const int64_t runId = r.rows[r.outcomeRows[size_t(row)]].run.id;
      m_table->setItem(
          row, c++,
          exporting(cell(QStringLiteral("#%1").arg(runId), double(runId)), qint64(runId)));
      m_table->setItem(row, c++,
                       exporting(cell(locale.toString(o.testAccuracy, 'f', 4), o.testAccuracy),
                                 number(o.testAccuracy)));
      m_table->setItem(row, c++,
                       exporting(cell(locale.toString(o.samplesPerSec, 'f', 0), o.samplesPerSec),
                                 number(o.samplesPerSec)));
      m_table->setItem(row, c++,
                       exporting(cell(formatDuration(o.wallS), o.wallS), number(o.wallS)));
      m_table->setItem(
          row, c++, exporting(cell(formatCount(o.trainFlops), o.trainFlops), number(o.trainFlops)));
      m_table->setItem(row, c++,
                       exporting(cell(timeText(o.targetTimeS), o.targetTimeS.value_or(INFINITY)),
                                 number(o.targetTimeS)));
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
      if (!modeShown)
        m_table->setItem(row, c++, cell(QString::fromStdString(g.mode), std::nan("")));
      m_table->setItem(row, c++, cell(QString::number(g.accuracy.n), g.accuracy.n));
      m_table->setItem(
          row, c++,
          exporting(cell(meanSpread(g.accuracy, spread), g.accuracy.mean), meanStd(g.accuracy)));
      m_table->setItem(row, c++,
                       exporting(cell(meanSpread(g.samplesPerSec, spread), g.samplesPerSec.mean),
                                 meanStd(g.samplesPerSec)));
      m_table->setItem(
          row, c++,
          exporting(cell(durationSpread(g.wallS, spread), g.wallS.mean), meanStd(g.wallS)));
      m_table->setItem(row, c++,
                       exporting(cell(formatCount(g.trainFlops.mean), g.trainFlops.mean),
                                 meanStd(g.trainFlops)));
      QString ttt = tr("not reached (0 of %1)").arg(g.accuracy.n);
      if (g.targetTimeS) {
        ttt = durationSpread(*g.targetTimeS, spread);
        ttt += tr(" (%1 of %2)").arg(g.reached).arg(g.accuracy.n);
      }
      QVariantList tttFields =
          g.targetTimeS ? meanStd(*g.targetTimeS) : QVariantList{QString(), QString()};
      tttFields << g.reached;
      m_table->setItem(
          row, c++,
          exporting(cell(ttt, g.targetTimeS ? g.targetTimeS->mean : double(INFINITY)), tttFields));
      auto* front = cell(g.onFront ? QStringLiteral("✓") : QString(), g.onFront ? 1 : 0);
      front->setToolTip(
          tr("On the front: no other group is faster (mean wall time) and at least "
             "as accurate (mean test accuracy)"));
      m_table->setItem(row, c++, front);
    }
  }
  // A search's pruned trials: no group (their test accuracy is from fewer steps) but trials,
  // listed with the step their rung stopped them at and the value judged there, as `study show`
  // lists them (issue 32's walkthrough: they were missing here).
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const study::StudyRunRow& pr = r.rows[i];
    if (pr.link.replaced || pr.run.status != storage::RunStatus::Pruned) continue;
    if (m_admitted && !m_admitted->count(pr.run.id)) continue;  // the filter hides it
    const int row = m_table->rowCount();
    m_table->insertRow(row);
    int c = 0;
    for (size_t k = 0; k < r.keys.size(); ++k) {
      if (!perRun && std::find(at.begin(), at.end(), k) == at.end()) continue;
      m_table->setItem(
          row, c++, cell(k < pr.values.size() ? unquoted(pr.values[k]) : QString(), std::nan("")));
    }
    if (perRun)
      m_table->setItem(row, c++, cell(QString::number(pr.link.seed), double(pr.link.seed)));
    if (!modeShown)
      m_table->setItem(row, c++, cell(QString::fromStdString(pr.run.mode), std::nan("")));
    m_table->setItem(row, c++,
                     perRun ? cell(QStringLiteral("#%1").arg(pr.run.id), double(pr.run.id))
                            : cell(QStringLiteral("—"), std::nan("")));
    const std::string metric = r.plan.search.choosingMetric();
    const std::optional<double> judged = metric == "val_loss" ? pr.valLoss : pr.valAccuracy;
    QString text = pr.link.prunedAt ? tr("pruned at step %1").arg(*pr.link.prunedAt) : tr("pruned");
    if (judged)
      text += QStringLiteral(" (%1 %2)")
                  .arg(QString::fromStdString(metric),
                       QString::fromStdString(engine::significant(*judged, 4)));
    m_table->setItem(row, c++, cell(text, std::nan("")));
  }
  m_table->resizeColumnsToContents();
  m_table->setSortingEnabled(true);
  // Issue 36: a search's groups kept ~2 rows at 1366x768; the study views below scroll.
  m_groupsBox->setMinimumHeight(m_tunedBox->isVisibleTo(this) ? heightForRows(6) : 0);
  const QString target = locale.toString(r.target, 'f', 4);
  m_note->setText(
      (r.targetIsDefault ? tr("target %1 (the lowest best accuracy of the runs)") : tr("target %1"))
          .arg(target) +
      QStringLiteral(" · ") +
      (r.outcomes.size() == size_t(m_studyRuns)
           ? (r.outcomes.size() == 1 ? tr("1 completed run")
                                     : tr("%1 completed runs").arg(r.outcomes.size()))
           : tr("%1 of %2 completed runs (those the filter admits)")
                 .arg(r.outcomes.size())
                 .arg(m_studyRuns)));
}

}  // namespace stagewise::ui
