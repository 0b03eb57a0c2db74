#include "runs/runs_workspace.h"

#include <QAbstractItemView>
#include <QAction>
#include <QComboBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QSplitter>
#include <QTabBar>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <fstream>
#include <optional>
#include <utility>

#include "common/app_settings.h"
#include "common/table_export.h"
#include "runs/compare_panel.h"
#include "runs/query_filter.h"
#include "runs/run_history.h"
#include "runs/run_table_columns.h"
#include "runs/run_table_model.h"
#include "runs/study_groups.h"
#include "stagewise/storage/export.h"
#include "stagewise/study/results.h"

namespace stagewise::ui {

RunsWorkspace::RunsWorkspace(std::shared_ptr<storage::RunStore> store, QWidget* parent)
    : QWidget(parent), m_executor(std::make_unique<StoreExecutor>(std::move(store))) {
  m_search = new QLineEdit(this);
  m_search->setPlaceholderText(
      tr("Filter by name, notes, tag, mode, status or #id, or a query: train.lr < 1e-3 and "
         "max(test_accuracy) > 0.8…"));
  m_search->setClearButtonEnabled(true);
  m_saved = new SavedQueriesButton(
      m_search,
      [this] {
        m_filterDelay.stop();
        applyFilter();
      },
      this);
  m_status = new QComboBox(this);
  m_status->addItem(tr("Any status"), QString());
  for (const char* s : {"running", "completed", "stopped", "failed", "interrupted"})
    m_status->addItem(QString::fromLatin1(s), QString::fromLatin1(s));
  m_mode = new QComboBox(this);
  m_mode->addItem(tr("Any mode"), QString());
  m_mode->addItem(QStringLiteral("local"), QStringLiteral("local"));
  m_mode->addItem(QStringLiteral("pipeline"), QStringLiteral("pipeline"));
  m_mode->addItem(QStringLiteral("backprop"), QStringLiteral("backprop"));
  m_study = new QComboBox(this);
  m_study->addItem(tr("Any study"), QVariant::fromValue<qlonglong>(-1));
  m_study->setToolTip(
      tr("Only the runs of one study (Design → Study, or stagewise-cli study run), replaced "
         "runs included; its groups are in the Groups tab"));
  // As wide as about 28 characters, never its longest study's label: that squeezed the query
  // box (issue 36). The list opens as wide as its labels; the chosen one's label is its tooltip.
  m_study->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  m_study->setMinimumContentsLength(28);
  m_study->setMaximumWidth(m_study->fontMetrics().averageCharWidth() * 40 + 40);
  m_count = new QLabel(this);
  auto* refresh = new QPushButton(tr("Refresh"), this);
  m_report = new QPushButton(tr("Replication report…"), this);
  m_report->setToolTip(
      tr("Check each of the paper's findings against runs of the designed experiment, made "
         "here: one study per finding, stored runs of the same spec reused (Run → Replication "
         "report…)"));
  connect(m_report, &QPushButton::clicked, this, &RunsWorkspace::reportRequested);
  auto* filterBar = new QHBoxLayout;
  filterBar->addWidget(m_search, 1);
  filterBar->addWidget(m_saved);
  filterBar->addWidget(m_status);
  filterBar->addWidget(m_mode);
  filterBar->addWidget(m_study);
  filterBar->addWidget(m_count);
  filterBar->addWidget(refresh);
  filterBar->addWidget(m_report);

  m_model = new RunTableModel(m_executor.get(), this);
  m_table = new QTableView(this);
  m_table->setModel(m_model);
  m_table->setSortingEnabled(true);
  m_table->sortByColumn(RunTableModel::kDate, Qt::DescendingOrder);
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
  m_table->setAlternatingRowColors(true);
  m_table->verticalHeader()->hide();
  m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 8);
  m_table->horizontalHeader()->setStretchLastSection(true);
  m_table->setWordWrap(false);
  // issue 36: a live, sorted list moved rows under the mouse; it holds still while pointed at.
  m_table->viewport()->installEventFilter(this);
  m_clickHold.setSingleShot(true);
  m_clickHold.setInterval(1000);
  connect(&m_clickHold, &QTimer::timeout, this, &RunsWorkspace::updateOrderFreeze);
  // Long values (lists) keep both ends; the Name column elides by RunTableColumns::elideName.
  m_table->setTextElideMode(Qt::ElideMiddle);
  // The differing spec keys after Name; the fixed columns narrow (issue 36, at 1366 px).
  m_columns = new RunTableColumns(m_table, m_model);
  // Export CSV… (every listed run, its pages loaded first) and Ctrl+C on the selection.
  m_exportTable = attachTableExport(m_table, QStringLiteral("runs"),
                                    [this](auto ready) { m_model->loadAll(std::move(ready)); });
  // The command palette lists the window's own actions: the run list's export is found there.
  if (parent && parent->window() != this) {
    auto* paletteExport = new QAction(tr("Export the run list as CSV…"), this);
    paletteExport->setToolTip(m_exportTable->toolTip());
    paletteExport->setProperty("exportMenu", true);
    connect(paletteExport, &QAction::triggered, m_exportTable, &QAction::trigger);
    parent->window()->addAction(paletteExport);
  }

  m_compare = new ComparePanel(m_executor.get(), this);
  m_groups = new StudyGroupTable(m_executor.get(), this);
  // One choice of spread: the overlay's band and the groups' tables follow each other.
  connect(m_compare, &ComparePanel::spreadChanged, this, [this](study::Spread spread) {
    QComboBox* combo = m_groups->spreadCombo();
    const int i = combo->findData(QString::fromStdString(study::spreadId(spread)));
    if (i >= 0 && i != combo->currentIndex()) combo->setCurrentIndex(i);
  });
  connect(m_groups->spreadCombo(), &QComboBox::currentIndexChanged, this, [this] {
    m_compare->setSpread(
        study::spreadFromId(m_groups->spreadCombo()->currentData().toString().toStdString()));
  });
  attachTableExport(m_groups->table(), QStringLiteral("groups"));
  attachTableExport(m_groups->tunedTable(), QStringLiteral("tuned"));
  attachTableExport(m_compare->diffTable(), QStringLiteral("spec-diff"));
  m_listTabs = new QTabWidget(this);
  m_listTabs->setDocumentMode(true);
  m_listTabs->addTab(m_table, tr("Runs"));
  m_listTabs->addTab(m_groups, tr("Groups"));
  m_listTabs->setTabToolTip(1, tr("The chosen study's runs that the filter admits, grouped: mean ± "
                                  "std, time-to-target and the front (choose a study in the "
                                  "filter)"));

  m_tags = new QLineEdit(this);
  m_tags->setPlaceholderText(tr("comma-separated, e.g. baseline, 4-stage"));
  m_notes = new QPlainTextEdit(this);
  m_notes->setPlaceholderText(tr("What was this run about?"));
  m_saveMeta = new QPushButton(tr("Save notes and tags"), this);
  m_open = new QPushButton(tr("Open spec in Design"), this);
  m_open->setToolTip(tr("Load this run's experiment into the Design workspace."));
  m_resume = new QPushButton(tr("Resume ▶"), this);
  m_resume->setVisible(false);
  m_runAgain = new QPushButton(tr("Run again ▶"), this);
  m_runAgain->setToolTip(
      tr("Train this run's spec again with the changes it recorded (cuts moved, stage settings) "
         "at the same steps, as stagewise-cli train --replay: the same seed and history give "
         "the same losses."));
  m_history = new QLabel(this);
  m_history->setWordWrap(true);
  m_history->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_history->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  // A long history (many changes, every setting) scrolls rather than being cut off.
  m_historyScroll = new QScrollArea(this);
  m_historyScroll->setWidget(m_history);
  m_historyScroll->setWidgetResizable(true);
  m_historyScroll->setFrameShape(QFrame::NoFrame);
  // Always there, its least height fixed: a selection fills it, it does not appear and take
  // the run list's height (issue 36: 8 rows became 5 when one run was selected).
  m_historyScroll->setMinimumHeight(40);  // more would raise the pane's least height (Groups rows)
  m_delete = new QPushButton(tr("Delete…"), this);
  m_export = new QPushButton(tr("Export CSV…"), this);
  m_export->setToolTip(tr("Every point of the selected runs (or all listed runs) as CSV."));
  // The selected run's buttons are the window's actions too, so the command palette finds them
  // (issue 36), enabled as the buttons are (updatePaletteActions).
  if (parent && parent->window() != this) {
    const std::pair<QPushButton*, QString> mirrored[] = {
        {m_export, tr("Export the selected runs' points as CSV…")},
        {m_saveMeta, tr("Save notes and tags")},
        {m_resume, tr("Resume the selected run")},
        {m_runAgain, tr("Run the selected run again")}};
    for (const auto& [button, text] : mirrored) {
      auto* action = new QAction(text, this);
      action->setProperty("palettePath", tr("Runs"));
      action->setProperty("exportMenu", button == m_export);
      connect(action, &QAction::triggered, button, &QPushButton::click);
      m_paletteActions.emplace_back(button, action);
      parent->window()->addAction(action);
    }
  }
  auto* details = new QGroupBox(tr("Selected run"), this);
  auto* form = new QFormLayout;
  form->addRow(tr("Tags"), m_tags);
  form->addRow(tr("Notes"), m_notes);
  auto* detailsLayout = new QVBoxLayout(details);
  detailsLayout->addLayout(form);
  detailsLayout->addWidget(m_saveMeta);
  detailsLayout->addWidget(m_open);
  detailsLayout->addWidget(m_historyScroll, 1);
  detailsLayout->addWidget(m_resume);
  detailsLayout->addWidget(m_runAgain);
  detailsLayout->addWidget(m_export);
  detailsLayout->addWidget(m_delete);
  detailsLayout->addStretch();
  details->setMaximumWidth(340);

  auto* bottom = new QSplitter(Qt::Horizontal, this);
  bottom->addWidget(m_compare);
  bottom->addWidget(details);
  bottom->setStretchFactor(0, 1);
  auto* split = new QSplitter(Qt::Vertical, this);
  m_split = split;
  split->addWidget(m_listTabs);
  split->addWidget(bottom);
  split->setSizes({300, 520});
  connect(m_listTabs, &QTabWidget::currentChanged, this, &RunsWorkspace::fitGroupsPane);
  // A search's tab needs more than a grid's: fit again once the study has loaded.
  connect(m_groups, &StudyGroupTable::loaded, this, &RunsWorkspace::fitGroupsPane);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(filterBar);
  layout->addWidget(split, 1);

  // Typing filters after a short pause, not on every key.
  m_filterDelay.setSingleShot(true);
  m_filterDelay.setInterval(250);
  connect(m_search, &QLineEdit::textChanged, &m_filterDelay, qOverload<>(&QTimer::start));
  connect(&m_filterDelay, &QTimer::timeout, this, &RunsWorkspace::applyFilter);
  connect(m_status, &QComboBox::currentIndexChanged, this, &RunsWorkspace::applyFilter);
  connect(m_mode, &QComboBox::currentIndexChanged, this, &RunsWorkspace::applyFilter);
  connect(m_study, &QComboBox::currentIndexChanged, this, &RunsWorkspace::applyFilter);
  connect(refresh, &QPushButton::clicked, m_model, &RunTableModel::reload);
  connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
          &RunsWorkspace::selectionChanged);
  connect(m_model, &RunTableModel::reloaded, this, [this] {
    m_count->setText(tr("%n run(s)", nullptr, m_model->rowCount()));
    if (!m_pendingSelection.empty()) selectRuns(std::exchange(m_pendingSelection, {}));
    restoreSelection();
  });
  connect(m_model, &QAbstractItemModel::modelAboutToBeReset, this, [this] { m_restoring = true; });
  connect(m_model, &QAbstractItemModel::modelReset, this, [this] { m_restoring = false; });
  connect(m_tags, &QLineEdit::textEdited, this, [this] { m_metaDirty = true; });
  connect(m_notes, &QPlainTextEdit::textChanged, this, [this] {
    if (m_notes->isEnabled()) m_metaDirty = true;
  });
  connect(m_model, &RunTableModel::pageLoaded, this, [this] {
    if (!m_pendingSelection.empty()) selectRuns(std::exchange(m_pendingSelection, {}));
    restoreSelection();
  });
  connect(m_model, &RunTableModel::loadFailed, this,
          [this](const QString& m) { Q_EMIT message(tr("Run store: %1").arg(m)); });
  connect(m_table, &QTableView::doubleClicked, this, &RunsWorkspace::openSelectedInDesign);
  connect(m_open, &QPushButton::clicked, this, &RunsWorkspace::openSelectedInDesign);
  connect(m_resume, &QPushButton::clicked, this, &RunsWorkspace::resumeSelected);
  connect(m_runAgain, &QPushButton::clicked, this, &RunsWorkspace::runAgainSelected);
  connect(m_delete, &QPushButton::clicked, this, [this] { deleteSelected(true); });
  connect(m_export, &QPushButton::clicked, this, [this] { exportCsv(); });
  connect(m_saveMeta, &QPushButton::clicked, this, &RunsWorkspace::saveNotesAndTags);
  m_poll.setInterval(2000);
  connect(&m_poll, &QTimer::timeout, this, &RunsWorkspace::poll);
  m_poll.start();
  takeBaseline();
  loadStudies();
  showSelected();
}

RunsWorkspace::~RunsWorkspace() {
  m_poll.stop();
  // Children (the model, the compare panel) post to the executor: delete them while it lives.
  disconnect(m_table->selectionModel(), nullptr, this, nullptr);
  m_table->viewport()->removeEventFilter(this);
  delete m_table;
  delete m_model;
  delete m_compare;
  delete m_groups;
}

void RunsWorkspace::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  fitGroupsPane();  // a session restored with the Groups tab current
}

void RunsWorkspace::fitGroupsPane() {
  if (m_listTabs->currentWidget() != m_groups || !isVisible()) return;
  QList<int> sizes = m_split->sizes();
  if (sizes.size() != 2) return;
  const int want = m_listTabs->tabBar()->sizeHint().height() + m_groups->preferredHeight();
  if (sizes[0] >= want) return;
  const int total = sizes[0] + sizes[1];
  const int bottomLeast = m_split->widget(1)->minimumSizeHint().height();
  sizes[0] = std::max(sizes[0], std::min(want, total - bottomLeast));
  sizes[1] = total - sizes[0];
  m_split->setSizes(sizes);
}

void RunsWorkspace::applyFilter() {
  storage::RunFilter filter;
  // A query that does not parse keeps the last one that did: the table does not empty while
  // the user types.
  if (auto query = readQueryField(m_search)) {
    if (!query->matchesAll()) filter.query = std::move(*query);
  } else {
    filter.query = m_model->filter().query;
  }
  if (const QString s = m_status->currentData().toString(); !s.isEmpty())
    if (auto status = storage::runStatusFromString(s.toStdString())) filter.statuses = {*status};
  filter.mode = m_mode->currentData().toString().toStdString();
  const qlonglong study = m_study->currentData().toLongLong();
  if (study > 0) filter.study = study;
  m_model->setFilter(filter);
  m_groups->setRunFilter(filter);  // the groups pool the runs the list shows (issue 36)
  m_groups->setStudy(study);
  dropFilteredOut(filter);
}

void RunsWorkspace::dropFilteredOut(const storage::RunFilter& filter) {
  // A run the filter hides leaves the overlay and the diff too (issue 36: a study filter left a
  // hidden run in the overlay): the panels show the selected runs that pass the filter.
  if (m_shown.empty()) return;
  const quint64 ticket = ++m_filterTicket;
  m_executor->post<std::vector<int64_t>>(
      this,
      [filter](storage::RunReader& reader, storage::RunStore&) {
        std::vector<int64_t> ids;
        for (const auto& r : reader.listRuns(filter)) ids.push_back(r.id);
        std::sort(ids.begin(), ids.end());
        return ids;
      },
      [this, ticket](std::vector<int64_t> passing) {
        if (ticket != m_filterTicket) return;  // a later filter decides
        std::vector<int64_t> kept;
        for (int64_t id : m_shown)
          if (std::binary_search(passing.begin(), passing.end(), id)) kept.push_back(id);
        if (kept == m_shown) return;
        saveMetaIfEdited();
        m_shown = kept;
        for (auto it = m_shownNames.begin(); it != m_shownNames.end();)
          it = std::binary_search(kept.begin(), kept.end(), it->first) ? std::next(it)
                                                                       : m_shownNames.erase(it);
        restoreSelection();
        showSelected();
      },
      [this](const QString& m) { Q_EMIT message(tr("Run store: %1").arg(m)); });
}

void RunsWorkspace::loadStudies() {
  // Runs, not grid points: points that differ only in a key their mode does not read share one
  // run, counted once as `study show` counts them (issue 36: "12 of 72" beside its "4 of 34").
  using Studies = std::vector<std::pair<storage::StudyRecord, study::RunCounts>>;
  m_executor->post<Studies>(
      this,
      [](storage::RunReader& reader, storage::RunStore&) {
        Studies out;
        for (auto& s : reader.listStudies()) {
          const study::RunCounts counts = study::distinctRunCounts(reader, s);
          out.emplace_back(std::move(s), counts);
        }
        return out;
      },
      [this](Studies studies) {
        std::map<int64_t, QString> labels;
        for (const auto& [s, counts] : studies)
          labels[s.id] = tr("#%1 %2 — %3, %4 of %5 runs")
                             .arg(s.id)
                             .arg(QString::fromStdString(s.name))
                             .arg(QString::fromStdString(storage::toString(s.status)))
                             .arg(counts.completed)
                             .arg(counts.total);
        if (labels == m_studyLabels && m_pendingStudy <= 0) return;
        const qlonglong pending = std::exchange(m_pendingStudy, -1);
        const qlonglong chosen = pending > 0 ? pending : m_study->currentData().toLongLong();
        const bool chosenChanged =
            chosen > 0 && (!m_studyLabels.count(chosen) || !labels.count(chosen) ||
                           m_studyLabels[chosen] != labels[chosen]);
        m_studyLabels = labels;
        QSignalBlocker block(m_study);
        while (m_study->count() > 1) m_study->removeItem(1);
        int widest = 0;
        for (auto it = labels.rbegin(); it != labels.rend(); ++it) {  // newest first
          m_study->addItem(it->second, QVariant::fromValue<qlonglong>(it->first));
          m_study->setItemData(m_study->count() - 1, it->second, Qt::ToolTipRole);
          widest = std::max(widest, m_study->fontMetrics().horizontalAdvance(it->second));
        }
        m_study->view()->setMinimumWidth(widest + 32);
        const int index = m_study->findData(QVariant::fromValue<qlonglong>(chosen));
        m_study->setCurrentIndex(index >= 0 ? index : 0);
        if ((index < 0 && chosen > 0) || pending > 0) {
          applyFilter();  // the chosen study was deleted, or the session's is listed now
        } else if (chosenChanged) {
          m_model->reload();  // its runs moved on (a study in another process)
          m_groups->reload();
        }
      });
}

std::vector<int64_t> RunsWorkspace::tableSelection() const {
  std::vector<int64_t> ids;
  for (const QModelIndex& index : m_table->selectionModel()->selectedRows()) {
    const int64_t id = m_model->runId(index.row());
    if (id >= 0) ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

void RunsWorkspace::restoreSelection() {
  // The model's rows are re-read in place (a live run's numbers moved it in the sort order) or
  // reloaded: the row indexes now hold other runs. Put the highlight back on the shown runs.
  m_restoring = true;
  auto* selection = m_table->selectionModel();
  QItemSelection rows;
  int current = -1;
  for (int64_t id : m_shown) {
    const int row = m_model->rowOf(id);
    if (row < 0) continue;  // on a page not loaded (yet): it stays shown
    rows.select(m_model->index(row, 0), m_model->index(row, m_model->columnCount() - 1));
    if (current < 0) current = row;
    if (const storage::RunRecord* r = m_model->record(row)) m_shownNames[id] = r->name;
  }
  selection->select(rows, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  if (current >= 0)
    selection->setCurrentIndex(
        m_model->index(current,
                       m_table->currentIndex().isValid() ? m_table->currentIndex().column() : 0),
        QItemSelectionModel::NoUpdate);
  m_restoring = false;
}

void RunsWorkspace::updatePaletteActions() {
  for (const auto& [button, action] : m_paletteActions) {
    action->setEnabled(button->isEnabled() && button->isVisibleTo(this));
    action->setToolTip(button->toolTip());
  }
}

QString RunsWorkspace::filterText() const {
  return m_search->text();
}

qint64 RunsWorkspace::studyFilter() const {
  return m_pendingStudy > 0 ? m_pendingStudy : m_study->currentData().toLongLong();
}

void RunsWorkspace::restoreFilter(const QString& text, qint64 study) {
  {
    QSignalBlocker block(m_search);
    m_search->setText(text);
  }
  // A study the filter box does not list yet (the studies load off this thread) is chosen
  // once it does.
  const int index = m_study->findData(QVariant::fromValue<qlonglong>(study));
  m_pendingStudy = study > 0 && index < 0 ? study : -1;
  {
    QSignalBlocker block(m_study);
    m_study->setCurrentIndex(std::max(index, 0));
  }
  applyFilter();
}

void RunsWorkspace::selectRuns(const std::vector<int64_t>& ids) {
  std::vector<int64_t> found;
  for (int64_t id : ids)
    if (m_model->rowOf(id) >= 0) found.push_back(id);
  // The list's count and pages arrive from the store's thread as the table asks for them: try
  // again as each arrives, until the user selects something else.
  if (found.size() < ids.size()) m_pendingSelection = ids;
  std::sort(found.begin(), found.end());
  found.erase(std::unique(found.begin(), found.end()), found.end());
  if (found.empty() || found == m_shown) return;
  saveMetaIfEdited();
  m_shown = found;
  m_shownNames.clear();
  int top = -1;
  for (int64_t id : found) {
    const int row = m_model->rowOf(id);
    if (const storage::RunRecord* r = m_model->record(row)) m_shownNames[id] = r->name;
    if (top < 0 || row < top) top = row;
  }
  restoreSelection();
  // A restored selection further down the list is scrolled to, not left out of sight.
  if (top >= 0) m_table->scrollTo(m_model->index(top, 0));
  showSelected();
}

void RunsWorkspace::selectionChanged() {
  if (m_restoring) return;
  const auto ids = tableSelection();
  // Rows whose page is not loaded yet have no id: while the table holds such rows only, the
  // panels keep what they show.
  if (ids.empty() && m_table->selectionModel()->hasSelection()) return;
  if (ids == m_shown) return;
  m_pendingSelection.clear();  // the user's choice wins over a restored one still loading
  saveMetaIfEdited();
  m_shown = ids;
  m_shownNames.clear();
  for (int64_t id : ids)
    if (const storage::RunRecord* r = m_model->record(m_model->rowOf(id)))
      m_shownNames[id] = r->name;
  showSelected();
}

void RunsWorkspace::showSelected() {
  const auto& ids = m_shown;
  const bool one = ids.size() == 1;
  m_open->setEnabled(one);
  m_delete->setEnabled(!ids.empty());
  m_saveMeta->setEnabled(one);
  m_tags->setEnabled(one);
  m_notes->setEnabled(one);
  const int64_t metaRun = one ? ids.front() : -1;
  if (metaRun != m_metaRun) {
    const QSignalBlocker blockTags(m_tags), blockNotes(m_notes);
    const storage::RunRecord* r = one ? m_model->record(m_model->rowOf(metaRun)) : nullptr;
    QStringList tags;
    if (r)
      for (const auto& t : r->tags) tags << QString::fromStdString(t);
    m_tags->setText(tags.join(QStringLiteral(", ")));
    m_notes->setPlainText(r ? QString::fromStdString(r->notes) : QString());
    m_shownTags = r ? r->tags : std::vector<std::string>{};
    m_shownNotes = r ? r->notes : std::string();
    m_metaRun = metaRun;
    m_metaDirty = false;
  }
  m_export->setToolTip(ids.empty() ? tr("Every point of all listed runs as CSV.")
                                   : tr("Every point of %1 as CSV.").arg(describeRuns(ids)));
  m_compare->setRuns(ids);
  updateResumeButton(one ? ids.front() : -1);
  updateHistory(one ? ids.front() : -1);
}

void RunsWorkspace::updateHistory(int64_t id) {
  const quint64 ticket = ++m_historyTicket;
  m_runAgain->setEnabled(id >= 0);
  if (id < 0) {
    m_history->clear();
    return;
  }
  m_executor->post<RunHistory>(
      this,
      [id](storage::RunReader& reader, storage::RunStore&) {
        const auto run = reader.run(id);
        if (!run) return RunHistory{};
        const engine::ExperimentSpec spec = engine::parseSpec(run->specJson);
        RunHistory history = runHistory(spec, reader.events(id));
        history.settings = settingsDifferingFromDefaults(spec);
        return history;
      },
      [this, ticket](RunHistory history) {
        if (ticket != m_historyTicket) return;  // the selection moved on
        QStringList parts;
        // The partition history first: which layers each stage held from which step.
        if (!history.lines.isEmpty())
          parts << tr("Partition:\n%1\n\nChanges while it trained:\n%2")
                       .arg(history.partitions.join(QLatin1Char('\n')),
                            history.lines.join(QLatin1Char('\n')));
        if (!history.settings.isEmpty())
          parts << tr("Settings (those not at their defaults):\n%1")
                       .arg(history.settings.join(QLatin1Char('\n')));
        m_history->setText(parts.join(QStringLiteral("\n\n")));
      },
      [this, ticket](const QString& m) {
        if (ticket != m_historyTicket) return;
        m_history->setText(tr("Cannot read the run's changes: %1").arg(m));
      });
}

void RunsWorkspace::runAgainSelected() {
  const auto ids = selectedRunIds();
  if (ids.size() != 1) return;
  const int64_t id = ids.front();
  struct Replay {
    engine::ExperimentSpec spec;
    std::vector<engine::RunChange> changes;
    QString title;
  };
  m_executor->post<Replay>(
      this,
      [id](storage::RunReader& reader, storage::RunStore&) {
        const auto run = reader.run(id);
        if (!run) throw std::runtime_error("run " + std::to_string(id) + " is not in the store");
        Replay r;
        r.spec = engine::parseSpec(run->specJson);
        r.changes = runHistory(r.spec, reader.events(id)).changes;
        r.title = QStringLiteral("run #%1 %2").arg(id).arg(QString::fromStdString(run->name));
        return r;
      },
      [this](Replay r) { Q_EMIT replayRequested(r.spec, r.changes, r.title); },
      [this](const QString& m) { QMessageBox::warning(this, tr("Cannot run it again"), m); });
}

QString RunsWorkspace::describeRuns(const std::vector<int64_t>& ids) const {
  QStringList parts;
  for (int64_t id : ids) {
    auto it = m_shownNames.find(id);
    parts << (it != m_shownNames.end() && !it->second.empty()
                  ? tr("#%1 “%2”").arg(id).arg(QString::fromStdString(it->second))
                  : tr("#%1").arg(id));
  }
  if (parts.size() > 8) {
    const int more = int(parts.size()) - 6;
    parts = parts.mid(0, 6);
    parts << tr("and %n more", nullptr, more);
  }
  return parts.join(QStringLiteral(", "));
}

void RunsWorkspace::saveMetaIfEdited() {
  if (!m_metaDirty || m_metaRun < 0) return;
  saveNotesAndTags();
}

void RunsWorkspace::setResumeAvailable(bool available) {
  m_resumeAvailable = available;
  m_resume->setVisible(available);
  showSelected();
}

void RunsWorkspace::updateResumeButton(int64_t id) {
  const quint64 ticket = ++m_resumeTicket;
  m_resume->setEnabled(false);
  if (!m_resumeAvailable) return;
  if (id < 0) {
    m_resume->setToolTip(tr("Select one stopped run that has a checkpoint to continue it."));
    return;
  }
  m_executor->post<ResumeCheck>(
      this,
      [id](storage::RunReader& reader, storage::RunStore&) { return checkResumable(reader, id); },
      [this, ticket, id](ResumeCheck check) {
        if (ticket != m_resumeTicket) return;  // the selection moved on
        m_resume->setEnabled(check.checkpoint.has_value());
        m_resume->setToolTip(
            check.checkpoint
                ? tr("Continue run #%1 from its checkpoint at step %2, in the same record (%3).")
                      .arg(id)
                      .arg(check.checkpoint->step)
                      .arg(QString::fromStdString(check.checkpoint->path))
                : tr("Cannot resume: %1.").arg(QString::fromStdString(check.reason)));
      });
}

void RunsWorkspace::resumeSelected() {
  const auto ids = selectedRunIds();
  if (ids.size() != 1) return;
  const int64_t id = ids.front();
  m_executor->post<ResumeTarget>(
      this,
      [id](storage::RunReader& reader, storage::RunStore&) {
        return resumeTargetForRun(reader, id);
      },
      [this](ResumeTarget target) { Q_EMIT resumeRequested(target); },
      [this](const QString& m) { QMessageBox::warning(this, tr("Cannot resume"), m); });
}

void RunsWorkspace::resumeCheckpoint(const QString& path) {
  m_executor->post<ResumeTarget>(
      this,
      [p = path.toStdString()](storage::RunReader& reader, storage::RunStore&) {
        return resumeTargetForCheckpoint(&reader, p);
      },
      [this](ResumeTarget target) { Q_EMIT resumeRequested(target); },
      [this](const QString& m) { QMessageBox::warning(this, tr("Cannot resume"), m); });
}

void RunsWorkspace::openSelectedInDesign() {
  const auto ids = selectedRunIds();
  if (ids.size() != 1) return;
  const int64_t id = ids.front();
  m_executor->post<std::optional<storage::RunRecord>>(
      this, [id](storage::RunReader& reader, storage::RunStore&) { return reader.run(id); },
      [this](std::optional<storage::RunRecord> run) {
        if (!run) return;
        try {
          const auto spec = engine::parseSpec(run->specJson);
          Q_EMIT openSpecRequested(
              spec, tr("run #%1 %2").arg(run->id).arg(QString::fromStdString(run->name)));
        } catch (const engine::SpecError& e) {
          QMessageBox::warning(this, tr("Cannot open the run's spec"),
                               QString::fromStdString(e.what()));
        }
      },
      [this](const QString& m) { Q_EMIT message(tr("Run store: %1").arg(m)); });
}

void RunsWorkspace::deleteSelected(bool confirm) {
  const auto ids = selectedRunIds();
  if (ids.empty()) return;
  if (confirm) {
    QMessageBox box(QMessageBox::Question, tr("Delete runs"),
                    tr("Delete %n run(s) with all their metrics? This cannot be undone.", nullptr,
                       int(ids.size())),
                    QMessageBox::Yes | QMessageBox::Cancel, this);
    box.setObjectName(QStringLiteral("deleteRunsBox"));
    box.setInformativeText(describeRuns(ids));
    box.setDefaultButton(QMessageBox::Cancel);
    if (box.exec() != QMessageBox::Yes) return;
  }
  m_executor->post<int>(
      this,
      [ids](storage::RunReader&, storage::RunStore& store) {
        store.deleteRuns(ids);
        return int(ids.size());
      },
      [this, ids](int n) {
        Q_EMIT message(tr("Deleted %n run(s): %1", nullptr, n).arg(describeRuns(ids)));
        m_shown.erase(std::remove_if(m_shown.begin(), m_shown.end(),
                                     [&](int64_t id) {
                                       return std::find(ids.begin(), ids.end(), id) != ids.end();
                                     }),
                      m_shown.end());
        m_metaDirty = false;
        showSelected();
        m_model->reload();
      },
      [this](const QString& m) { QMessageBox::warning(this, tr("Cannot delete"), m); });
}

void RunsWorkspace::exportCsv(const QString& chosenPath) {
  std::vector<int64_t> ids = selectedRunIds();
  QString path = chosenPath;
  if (path.isEmpty())
    path = QFileDialog::getSaveFileName(this, tr("Export runs as CSV"),
                                        AppSettings::exportPath(QStringLiteral("runs.csv")),
                                        tr("CSV (*.csv)"));
  if (AppSettings::keepExportPath(path).isEmpty()) return;
  const storage::RunFilter filter = m_model->filter();
  m_executor->post<int>(
      this,
      [ids, filter, path](storage::RunReader& reader, storage::RunStore&) mutable {
        if (ids.empty())
          for (const auto& r : reader.listRuns(filter)) ids.push_back(r.id);
        std::ofstream out(path.toStdString(), std::ios::binary);
        if (!out) throw std::runtime_error("cannot write " + path.toStdString());
        storage::exportCsv(reader, ids, out);
        out.close();
        if (!out) throw std::runtime_error("writing " + path.toStdString() + " failed");
        return int(ids.size());
      },
      [this, path](int n) { Q_EMIT message(tr("Exported %n run(s) to %1", nullptr, n).arg(path)); },
      [this](const QString& m) { QMessageBox::warning(this, tr("Export failed"), m); });
}

namespace {

std::vector<std::string> parseTags(const QString& text) {
  std::vector<std::string> tags;
  for (const QString& t : text.split(QLatin1Char(','), Qt::SkipEmptyParts))
    if (!t.trimmed().isEmpty()) tags.push_back(t.trimmed().toStdString());
  return tags;
}

QString joinTags(const std::vector<std::string>& tags) {
  QStringList list;
  for (const auto& t : tags) list << QString::fromStdString(t);
  return list.join(QStringLiteral(", "));
}

// What saving found in the store: the stored values, and which edited fields had changed there
// since they were shown (those were not written).
struct MetaSave {
  std::vector<std::string> storedTags;
  std::string storedNotes;
  bool tagsConflict = false;
  bool notesConflict = false;
};

}  // namespace

void RunsWorkspace::saveNotesAndTags() {
  // The editors hold m_metaRun's tags and notes: save them there, whatever is selected now.
  // Only the fields the user edited are written, and only where the store still holds what
  // was shown: a change made outside (stagewise-cli runs tag) is never overwritten silently.
  if (m_metaRun < 0) return;
  const int64_t id = m_metaRun;
  const std::vector<std::string> tags = parseTags(m_tags->text());
  const std::string notes = m_notes->toPlainText().toStdString();
  const bool tagsEdited = tags != m_shownTags;
  const bool notesEdited = notes != m_shownNotes;
  m_metaDirty = false;
  if (!tagsEdited && !notesEdited) return;
  const QString who = describeRuns({id});
  // The table shows what is being written at once (the run selected again before the save's
  // answer arrives must not show the old text); the answer corrects it on a conflict.
  m_model->setRunMeta(id, tagsEdited ? tags : m_shownTags, notesEdited ? notes : m_shownNotes);
  m_executor->post<MetaSave>(
      this,
      [id, tags, notes, tagsEdited, notesEdited, shownTags = m_shownTags,
       shownNotes = m_shownNotes](storage::RunReader& reader, storage::RunStore& store) {
        const auto run = reader.run(id);
        if (!run) throw std::runtime_error("run #" + std::to_string(id) + " no longer exists");
        MetaSave out{run->tags, run->notes};
        if (tagsEdited) {
          out.tagsConflict = run->tags != shownTags;
          if (!out.tagsConflict) store.setTags(id, tags), out.storedTags = tags;
        }
        if (notesEdited) {
          out.notesConflict = run->notes != shownNotes;
          if (!out.notesConflict) store.setNotes(id, notes), out.storedNotes = notes;
        }
        return out;
      },
      [this, id, who, tags, notes](const MetaSave& saved) {
        if (id == m_metaRun) {
          if (!saved.tagsConflict) m_shownTags = saved.storedTags;
          if (!saved.notesConflict) m_shownNotes = saved.storedNotes;
        }
        if (saved.tagsConflict)
          resolveConflict(id, true, saved.storedTags, saved.storedNotes, tags, notes);
        if (saved.notesConflict)
          resolveConflict(id, false, saved.storedTags, saved.storedNotes, tags, notes);
        if (!saved.tagsConflict && !saved.notesConflict)
          Q_EMIT message(tr("Saved the notes and tags of %1").arg(who));
        // What the store holds now, in the table at once (selecting the run again before the
        // pages are re-read showed the old notes).
        m_model->setRunMeta(id, saved.storedTags, saved.storedNotes);
        m_model->refreshLoadedPages();
      },
      [this](const QString& m) { QMessageBox::warning(this, tr("Cannot save"), m); });
}

void RunsWorkspace::resolveConflict(int64_t id, bool tags,
                                    const std::vector<std::string>& storedTags,
                                    const std::string& storedNotes,
                                    const std::vector<std::string>& mineTags,
                                    const std::string& mineNotes) {
  const QString field = tags ? QStringLiteral("tags") : QStringLiteral("notes");
  const QString stored = tags ? joinTags(storedTags) : QString::fromStdString(storedNotes);
  const QString mine = tags ? joinTags(mineTags) : QString::fromStdString(mineNotes);
  const QString who = describeRuns({id});
  bool keepMine = false;
  if (m_chooseConflict) {
    keepMine = m_chooseConflict(field, stored, mine);
  } else {
    QMessageBox box(QMessageBox::Question, tr("Changed outside the workbench"),
                    tr("The %1 of %2 were changed outside the workbench since they were shown.")
                        .arg(field == QLatin1String("tags") ? tr("tags") : tr("notes"), who),
                    QMessageBox::NoButton, this);
    box.setInformativeText(tr("Stored now: “%1”\nYours: “%2”").arg(stored, mine));
    QPushButton* yours = box.addButton(tr("Write mine"), QMessageBox::AcceptRole);
    box.addButton(tr("Keep the stored"), QMessageBox::RejectRole);
    box.exec();
    keepMine = box.clickedButton() == yours;
  }
  if (!keepMine) {
    // The stored value, shown in place of the user's.
    if (id == m_metaRun) {
      if (tags) {
        const QSignalBlocker block(m_tags);
        m_tags->setText(stored);
        m_shownTags = storedTags;
      } else {
        const QSignalBlocker block(m_notes);
        m_notes->setPlainText(stored);
        m_shownNotes = storedNotes;
      }
    }
    Q_EMIT message(tr("Kept the %1 stored for %2").arg(field, who));
    return;
  }
  m_executor->post<int>(
      this,
      [id, tags, mineTags, mineNotes](storage::RunReader&, storage::RunStore& store) {
        if (tags)
          store.setTags(id, mineTags);
        else
          store.setNotes(id, mineNotes);
        return 0;
      },
      [this, id, tags, mineTags, mineNotes, field, who](int) {
        if (id == m_metaRun) {
          if (tags)
            m_shownTags = mineTags;
          else
            m_shownNotes = mineNotes;
        }
        Q_EMIT message(tr("Saved the %1 of %2").arg(field, who));
        if (const storage::RunRecord* r = m_model->record(m_model->rowOf(id)))
          m_model->setRunMeta(id, tags ? mineTags : r->tags, tags ? r->notes : mineNotes);
        m_model->refreshLoadedPages();
      },
      [this](const QString& m) { QMessageBox::warning(this, tr("Cannot save"), m); });
}

void RunsWorkspace::checkMetaOutside() {
  if (m_metaRun < 0) return;
  const int64_t id = m_metaRun;
  using Meta = std::optional<std::pair<std::vector<std::string>, std::string>>;
  m_executor->post<Meta>(
      this,
      [id](storage::RunReader& reader, storage::RunStore&) -> Meta {
        const auto run = reader.run(id);
        if (!run) return std::nullopt;
        return std::pair{run->tags, run->notes};
      },
      [this, id](const Meta& meta) {
        if (!meta || id != m_metaRun) return;
        const auto& [tags, notes] = *meta;
        bool changed = false;
        // An editor the user has not edited shows the new value; an edited one keeps the
        // user's text, and saving it asks (resolveConflict).
        if (tags != m_shownTags) {
          changed = true;
          if (parseTags(m_tags->text()) == m_shownTags) {
            const QSignalBlocker block(m_tags);
            m_tags->setText(joinTags(tags));
            m_shownTags = tags;
          }
        }
        if (notes != m_shownNotes) {
          changed = true;
          if (m_notes->toPlainText().toStdString() == m_shownNotes) {
            const QSignalBlocker block(m_notes);
            m_notes->setPlainText(QString::fromStdString(notes));
            m_shownNotes = notes;
          }
        }
        if (changed) {
          // The table's copy of this run now, so selecting it again shows what the store holds
          // (CI saw the old tags come back from the loaded page); the pages re-read too.
          m_model->setRunMeta(id, tags, notes);
          m_model->refreshLoadedPages();
        }
      });
}

// A cheap signature of the store: how many runs, the newest id, how many still running.
static std::tuple<int64_t, int64_t, int64_t> storeSignature(storage::RunReader& reader,
                                                            storage::RunStore&) {
  const int64_t count = reader.countRuns();
  const auto newest = reader.listRuns({}, {storage::RunColumn::Id, true}, 1);
  storage::RunFilter running;
  running.statuses = {storage::RunStatus::Running};
  return std::make_tuple(count, newest.empty() ? int64_t(0) : newest.front().id,
                         reader.countRuns(running));
}

void RunsWorkspace::takeBaseline() {
  // Queued right after the model's first count, so both see the same store.
  m_executor->post<std::tuple<int64_t, int64_t, int64_t>>(
      this, storeSignature, [this](std::tuple<int64_t, int64_t, int64_t> s) { m_signature = s; });
}

bool RunsWorkspace::eventFilter(QObject* watched, QEvent* event) {
  if (watched == m_table->viewport()) {
    switch (event->type()) {
      case QEvent::Enter:
      case QEvent::HoverEnter:
      case QEvent::MouseMove:
        m_pointerInList = true;
        updateOrderFreeze();
        break;
      case QEvent::Leave:
      case QEvent::HoverLeave:
        m_pointerInList = false;
        updateOrderFreeze();
        break;
      case QEvent::MouseButtonPress:
      case QEvent::MouseButtonDblClick:
        m_pointerInList = true;
        m_clickHold.start();
        updateOrderFreeze();
        break;
      default:
        break;
    }
  }
  return QWidget::eventFilter(watched, event);
}

void RunsWorkspace::updateOrderFreeze() {
  const bool frozen = m_pointerInList || m_clickHold.isActive();
  m_model->setOrderFrozen(frozen);
  if (!frozen && std::exchange(m_reloadDeferred, false)) m_model->reload();
}

void RunsWorkspace::poll() {
  m_executor->post<std::tuple<int64_t, int64_t, int64_t>>(
      this, storeSignature, [this](std::tuple<int64_t, int64_t, int64_t> signature) {
        const auto before = m_signature;
        m_signature = signature;
        if (std::get<0>(signature) != std::get<0>(before) ||
            std::get<1>(signature) != std::get<1>(before)) {
          if (m_model->isOrderFrozen())
            m_reloadDeferred = true;  // rows would come and go under the pointer: later
          else
            m_model->reload();
        } else if (std::get<2>(signature) > 0 || std::get<2>(before) > 0) {
          m_model->refreshLoadedPages();  // live runs' numbers and statuses move
        }
        // A run that stopped (or started) elsewhere changes what Resume may do, and a shown
        // run that completed has its last points now: the overlay reads them.
        if (std::get<2>(signature) != std::get<2>(before)) {
          const auto ids = selectedRunIds();
          updateResumeButton(ids.size() == 1 ? ids.front() : -1);
          if (!m_shown.empty() && std::get<2>(before) >= 0) m_compare->reload();
        }
      });
  checkMetaOutside();
  loadStudies();
}

}  // namespace stagewise::ui
