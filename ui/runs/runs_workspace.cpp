#include "runs/runs_workspace.h"

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
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <fstream>

#include "runs/compare_panel.h"
#include "runs/run_table_model.h"
#include "stagewise/storage/export.h"

namespace stagewise::ui {

RunsWorkspace::RunsWorkspace(std::shared_ptr<storage::RunStore> store, QWidget* parent)
    : QWidget(parent), m_executor(std::make_unique<StoreExecutor>(std::move(store))) {
  m_search = new QLineEdit(this);
  m_search->setPlaceholderText(tr("Filter by name, notes or tag…"));
  m_search->setClearButtonEnabled(true);
  m_status = new QComboBox(this);
  m_status->addItem(tr("Any status"), QString());
  for (const char* s : {"running", "completed", "stopped", "failed", "interrupted"})
    m_status->addItem(QString::fromLatin1(s), QString::fromLatin1(s));
  m_mode = new QComboBox(this);
  m_mode->addItem(tr("Any mode"), QString());
  m_mode->addItem(QStringLiteral("local"), QStringLiteral("local"));
  m_mode->addItem(QStringLiteral("backprop"), QStringLiteral("backprop"));
  m_count = new QLabel(this);
  auto* refresh = new QPushButton(tr("Refresh"), this);
  auto* filterBar = new QHBoxLayout;
  filterBar->addWidget(m_search, 1);
  filterBar->addWidget(m_status);
  filterBar->addWidget(m_mode);
  filterBar->addWidget(m_count);
  filterBar->addWidget(refresh);

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
  m_table->horizontalHeader()->resizeSection(RunTableModel::kName, 220);
  m_table->horizontalHeader()->resizeSection(RunTableModel::kDate, 130);
  m_table->setWordWrap(false);

  m_compare = new ComparePanel(m_executor.get(), this);

  m_tags = new QLineEdit(this);
  m_tags->setPlaceholderText(tr("comma-separated, e.g. baseline, 4-stage"));
  m_notes = new QPlainTextEdit(this);
  m_notes->setPlaceholderText(tr("What was this run about?"));
  m_saveMeta = new QPushButton(tr("Save notes and tags"), this);
  m_open = new QPushButton(tr("Open spec in Design"), this);
  m_open->setToolTip(tr("Load this run's experiment into the Design workspace."));
  m_resume = new QPushButton(tr("Resume ▶"), this);
  m_resume->setVisible(false);
  m_delete = new QPushButton(tr("Delete…"), this);
  m_export = new QPushButton(tr("Export CSV…"), this);
  m_export->setToolTip(tr("Every point of the selected runs (or all listed runs) as CSV."));
  auto* details = new QGroupBox(tr("Selected run"), this);
  auto* form = new QFormLayout;
  form->addRow(tr("Tags"), m_tags);
  form->addRow(tr("Notes"), m_notes);
  auto* detailsLayout = new QVBoxLayout(details);
  detailsLayout->addLayout(form);
  detailsLayout->addWidget(m_saveMeta);
  detailsLayout->addWidget(m_open);
  detailsLayout->addWidget(m_resume);
  detailsLayout->addWidget(m_export);
  detailsLayout->addWidget(m_delete);
  detailsLayout->addStretch();
  details->setMaximumWidth(340);

  auto* bottom = new QSplitter(Qt::Horizontal, this);
  bottom->addWidget(m_compare);
  bottom->addWidget(details);
  bottom->setStretchFactor(0, 1);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(m_table);
  split->addWidget(bottom);
  split->setSizes({300, 520});
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
  connect(refresh, &QPushButton::clicked, m_model, &RunTableModel::reload);
  connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
          &RunsWorkspace::selectionChanged);
  connect(m_model, &RunTableModel::reloaded, this, [this] {
    m_count->setText(tr("%n run(s)", nullptr, m_model->rowCount()));
    selectionChanged();
  });
  connect(m_model, &RunTableModel::pageLoaded, this, &RunsWorkspace::restoreSelection);
  connect(m_model, &RunTableModel::loadFailed, this,
          [this](const QString& m) { Q_EMIT message(tr("Run store: %1").arg(m)); });
  connect(m_table, &QTableView::doubleClicked, this, &RunsWorkspace::openSelectedInDesign);
  connect(m_open, &QPushButton::clicked, this, &RunsWorkspace::openSelectedInDesign);
  connect(m_resume, &QPushButton::clicked, this, &RunsWorkspace::resumeSelected);
  connect(m_delete, &QPushButton::clicked, this, [this] { deleteSelected(true); });
  connect(m_export, &QPushButton::clicked, this, [this] { exportCsv(); });
  connect(m_saveMeta, &QPushButton::clicked, this, &RunsWorkspace::saveNotesAndTags);
  m_poll.setInterval(2000);
  connect(&m_poll, &QTimer::timeout, this, &RunsWorkspace::poll);
  m_poll.start();
  takeBaseline();
  selectionChanged();
}

RunsWorkspace::~RunsWorkspace() {
  m_poll.stop();
  // Children (the model, the compare panel) post to the executor: delete them while it lives.
  disconnect(m_table->selectionModel(), nullptr, this, nullptr);
  delete m_table;
  delete m_model;
  delete m_compare;
}

void RunsWorkspace::applyFilter() {
  storage::RunFilter filter;
  filter.text = m_search->text().trimmed().toStdString();
  if (const QString s = m_status->currentData().toString(); !s.isEmpty())
    if (auto status = storage::runStatusFromString(s.toStdString())) filter.statuses = {*status};
  filter.mode = m_mode->currentData().toString().toStdString();
  m_keepSelected.clear();
  for (int64_t id : selectedRunIds()) m_keepSelected.insert(id);
  m_model->setFilter(filter);
}

std::vector<int64_t> RunsWorkspace::selectedRunIds() const {
  std::vector<int64_t> ids;
  for (const QModelIndex& index : m_table->selectionModel()->selectedRows()) {
    const int64_t id = m_model->runId(index.row());
    if (id >= 0) ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

void RunsWorkspace::restoreSelection() {
  if (m_keepSelected.empty()) return;
  auto* selection = m_table->selectionModel();
  for (auto it = m_keepSelected.begin(); it != m_keepSelected.end();) {
    const int row = m_model->rowOf(*it);
    if (row < 0) {
      ++it;
      continue;
    }
    selection->select(m_model->index(row, 0),
                      QItemSelectionModel::Select | QItemSelectionModel::Rows);
    it = m_keepSelected.erase(it);
  }
}

void RunsWorkspace::selectionChanged() {
  const auto ids = selectedRunIds();
  const bool one = ids.size() == 1;
  m_open->setEnabled(one);
  m_delete->setEnabled(!ids.empty());
  m_saveMeta->setEnabled(one);
  m_tags->setEnabled(one);
  m_notes->setEnabled(one);
  if (one) {
    const storage::RunRecord* r = m_model->record(m_model->rowOf(ids.front()));
    QStringList tags;
    if (r)
      for (const auto& t : r->tags) tags << QString::fromStdString(t);
    m_tags->setText(tags.join(QStringLiteral(", ")));
    m_notes->setPlainText(r ? QString::fromStdString(r->notes) : QString());
  } else {
    m_tags->clear();
    m_notes->clear();
  }
  m_compare->setRuns(ids);
  updateResumeButton(one ? ids.front() : -1);
}

void RunsWorkspace::setResumeAvailable(bool available) {
  m_resumeAvailable = available;
  m_resume->setVisible(available);
  selectionChanged();
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
  if (confirm &&
      QMessageBox::question(this, tr("Delete runs"),
                            tr("Delete %n run(s) with all their metrics? This cannot be undone.",
                               nullptr, int(ids.size())),
                            QMessageBox::Yes | QMessageBox::Cancel,
                            QMessageBox::Cancel) != QMessageBox::Yes)
    return;
  m_executor->post<int>(
      this,
      [ids](storage::RunReader&, storage::RunStore& store) {
        store.deleteRuns(ids);
        return int(ids.size());
      },
      [this](int n) {
        Q_EMIT message(tr("Deleted %n run(s)", nullptr, n));
        m_model->reload();
      },
      [this](const QString& m) { QMessageBox::warning(this, tr("Cannot delete"), m); });
}

void RunsWorkspace::exportCsv(const QString& chosenPath) {
  std::vector<int64_t> ids = selectedRunIds();
  QString path = chosenPath;
  if (path.isEmpty())
    path = QFileDialog::getSaveFileName(this, tr("Export runs as CSV"), QStringLiteral("runs.csv"),
                                        tr("CSV (*.csv)"));
  if (path.isEmpty()) return;
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

void RunsWorkspace::saveNotesAndTags() {
  const auto ids = selectedRunIds();
  if (ids.size() != 1) return;
  const int64_t id = ids.front();
  std::vector<std::string> tags;
  for (const QString& t : m_tags->text().split(QLatin1Char(','), Qt::SkipEmptyParts))
    if (!t.trimmed().isEmpty()) tags.push_back(t.trimmed().toStdString());
  const std::string notes = m_notes->toPlainText().toStdString();
  m_keepSelected = {id};
  m_executor->post<int>(
      this,
      [id, tags, notes](storage::RunReader&, storage::RunStore& store) {
        store.setNotes(id, notes);
        store.setTags(id, tags);
        return 0;
      },
      [this](int) {
        Q_EMIT message(tr("Saved notes and tags"));
        m_model->refreshLoadedPages();
      },
      [this](const QString& m) { QMessageBox::warning(this, tr("Cannot save"), m); });
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

void RunsWorkspace::poll() {
  m_executor->post<std::tuple<int64_t, int64_t, int64_t>>(
      this, storeSignature, [this](std::tuple<int64_t, int64_t, int64_t> signature) {
        const auto before = m_signature;
        m_signature = signature;
        if (std::get<0>(signature) != std::get<0>(before) ||
            std::get<1>(signature) != std::get<1>(before)) {
          m_keepSelected.clear();
          for (int64_t id : selectedRunIds()) m_keepSelected.insert(id);
          m_model->reload();
        } else if (std::get<2>(signature) > 0 || std::get<2>(before) > 0) {
          m_model->refreshLoadedPages();  // live runs' numbers and statuses move
        }
        // A run that stopped (or started) elsewhere changes what Resume may do.
        if (std::get<2>(signature) != std::get<2>(before)) {
          const auto ids = selectedRunIds();
          updateResumeButton(ids.size() == 1 ? ids.front() : -1);
        }
      });
}

}  // namespace stagewise::ui
