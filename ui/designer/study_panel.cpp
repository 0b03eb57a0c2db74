#include "designer/study_panel.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>

#include "common/format.h"
#include "designer/search_section.h"
#include "stagewise/engine/dataset.h"

namespace stagewise::ui {

namespace {

/// Settings people sweep most, offered in the key box (any dotted key of the format can be typed).
const char* const kSuggestedKeys[] = {
    "mode",
    "train.lr",
    "train.seed",
    "train.batch_size",
    "train.optimizer",
    "partition.cuts",
    "local.overlap",
    "train.queue_capacity",
    "train.weight_decay",
    "train.lr_schedule",
    "train.warmup_steps",
    "train.clip_norm",
    "model.hidden",
    "pipeline.micro_batches",
    "pipeline.schedule",
    "dataset.augment",
};

QString listText(const study::VariedKey& key) {
  QStringList values;
  for (const auto& v : key.values) values << QString::fromStdString(v);
  return QLatin1Char('[') + values.join(QStringLiteral(", ")) + QLatin1Char(']');
}

int64_t stepsOf(const engine::ExperimentSpec& spec, int64_t trainSamples) {
  if (spec.train.maxSteps > 0) return spec.train.maxSteps;
  const int64_t b = std::max(1, spec.train.batchSize);
  return (trainSamples + b - 1) / b * spec.train.epochs;
}

}  // namespace

StudyPanel::StudyPanel(DesignDocument* doc, QWidget* parent) : QWidget(parent), m_doc(doc) {
  m_keys = new QTableWidget(0, 2, this);
  m_keys->setHorizontalHeaderLabels({tr("Setting"), tr("Values")});
  m_keys->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  m_keys->horizontalHeader()->setStretchLastSection(true);
  m_keys->verticalHeader()->hide();
  m_keys->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_keys->setSelectionMode(QAbstractItemView::SingleSelection);
  m_keys->setMinimumHeight(90);
  m_keys->setMaximumHeight(150);
  m_keys->setToolTip(
      tr("The settings the study varies. Edit a setting's values as a JSON list, e.g. "
         "[0.001, 0.0003] or [\"local\", \"backprop\"]. The runs are every combination (the "
         "first setting varying slowest), each once per seed. Delete removes a setting."));
  connect(m_keys, &QTableWidget::itemChanged, this, [this](QTableWidgetItem* item) {
    if (m_updating || item->column() != 1) return;
    const QString key = m_keys->item(item->row(), 0)->text();
    if (!setValues(key, item->text())) showKeys();  // put the stored values back
  });

  m_keyCombo = new QComboBox(this);
  m_keyCombo->setEditable(true);
  for (const char* k : kSuggestedKeys) m_keyCombo->addItem(QString::fromLatin1(k));
  m_keyCombo->setCurrentText(QString());
  m_keyCombo->lineEdit()->setPlaceholderText(tr("a setting, e.g. mode or train.lr"));
  m_keyCombo->setToolTip(
      tr("Any setting of the experiment format (docs/experiment-format.md), e.g. train.lr or "
         "mode. Right-click a field of the form and choose Vary… to add it from there."));
  m_addKey = new QPushButton(tr("Vary"), this);
  m_addKey->setToolTip(tr("Add the setting with its current value; then type its other values."));
  connect(m_addKey, &QPushButton::clicked, this, [this] {
    const QString key = m_keyCombo->currentText().trimmed();
    if (!key.isEmpty()) vary(key);
  });
  m_addCut = new QPushButton(tr("Add the current cut"), this);
  m_addCut->setToolTip(
      tr("Cuts are set on the canvas: add the current one as a value of partition.cuts, move "
         "the cuts, add again."));
  connect(m_addCut, &QPushButton::clicked, this, &StudyPanel::addCurrentCut);
  m_remove = new QPushButton(tr("Remove"), this);
  m_remove->setToolTip(tr("Stop varying the selected setting (Delete)."));
  connect(m_remove, &QPushButton::clicked, this, &StudyPanel::removeSelected);

  m_seeds = new QSpinBox(this);
  m_seeds->setRange(1, 1000);
  m_seeds->setKeyboardTracking(false);
  m_seeds->setToolTip(
      tr("Each combination runs with train.seed 1..N (unless the seed is varied)."));
  connect(m_seeds, &QSpinBox::valueChanged, this, [this](int v) {
    edit([v](study::StudyObject& s) { s.seeds = v > 1 ? std::optional<int>(v) : std::nullopt; },
         tr("Study seeds"));
  });
  m_sample = new QSpinBox(this);
  m_sample->setRange(0, 1000000);
  m_sample->setSpecialValueText(tr("every point"));
  m_sample->setKeyboardTracking(false);
  m_sample->setToolTip(tr("Run N combinations drawn at random (seeded) instead of all of them."));
  connect(m_sample, &QSpinBox::valueChanged, this, [this](int v) {
    edit([v](study::StudyObject& s) { s.sample = v > 0 ? std::optional<int>(v) : std::nullopt; },
         tr("Study sample"));
  });
  m_target = new QDoubleSpinBox(this);
  m_target->setRange(0, 1);
  m_target->setDecimals(3);
  m_target->setSingleStep(0.01);
  m_target->setSpecialValueText(tr("default"));
  m_target->setKeyboardTracking(false);
  m_target->setToolTip(
      tr("The test accuracy for time-to-target. Default: the lowest best accuracy of the "
         "study's completed runs, so every run reaches it."));
  connect(m_target, &QDoubleSpinBox::valueChanged, this, [this](double v) {
    edit([v](study::StudyObject& s) { s.target = v > 0 ? std::optional<double>(v) : std::nullopt; },
         tr("Study target"));
  });
  m_name = new QLineEdit(this);
  m_name->setToolTip(tr("The study's name in Runs (default: the experiment's name + \" study\")."));
  connect(m_name, &QLineEdit::editingFinished, this, [this] {
    const std::string v = m_name->text().trimmed().toStdString();
    edit([v](study::StudyObject& s) { s.name = v.empty() ? std::nullopt : std::optional(v); },
         tr("Study name"));
  });

  m_summary = new QLabel(this);
  m_summary->setWordWrap(true);
  m_problem = new QLabel(this);
  m_problem->setWordWrap(true);
  m_problem->setStyleSheet(QStringLiteral("color: #c62828;"));
  m_problem->hide();
  m_run = new QPushButton(tr("Run study ▶"), this);
  m_run->setToolTip(tr("Queue the study's runs in Train, one at a time (Ctrl+Shift+R)."));
  connect(m_run, &QPushButton::clicked, this, [this] {
    if (runCount() > 0 && m_problemText.isEmpty()) Q_EMIT runStudyRequested();
  });

  auto* keyRow = new QHBoxLayout;
  keyRow->addWidget(m_keyCombo, 1);
  keyRow->addWidget(m_addKey);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(m_addCut);
  buttons->addStretch(1);
  buttons->addWidget(m_remove);
  auto* form = new QFormLayout;
  form->addRow(tr("Seeds"), m_seeds);
  form->addRow(tr("Sample"), m_sample);
  form->addRow(tr("Target"), m_target);
  form->addRow(tr("Name"), m_name);
  m_search = new SearchSection(
      doc,
      [this](const std::function<void(study::StudyObject&)>& change, const QString& text) {
        edit(change, text);
      },
      this);
  connect(m_search, &SearchSection::message, this, &StudyPanel::message);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_keys);
  layout->addLayout(keyRow);
  layout->addLayout(buttons);
  layout->addWidget(m_search);
  layout->addLayout(form);
  layout->addWidget(m_summary);
  layout->addWidget(m_problem);
  layout->addWidget(m_run, 0, Qt::AlignRight);

  m_keys->installEventFilter(this);
  connect(doc, &DesignDocument::changed, this, &StudyPanel::recompute);
  connect(doc, &DesignDocument::studyChanged, this, &StudyPanel::refresh);
  refresh();
}

void StudyPanel::setRateSource(std::function<std::optional<engine::MethodEstimate>()> source) {
  m_rates = std::move(source);
  recompute();
}

void StudyPanel::edit(const std::function<void(study::StudyObject&)>& change, const QString& text) {
  if (m_updating) return;
  study::StudyObject next = m_doc->study();
  change(next);
  m_doc->editStudy(next, text);
}

void StudyPanel::vary(const QString& key) {
  const std::string k = key.trimmed().toStdString();
  const auto& keys = m_doc->study().keys;
  const auto found =
      std::find_if(keys.begin(), keys.end(), [&](const study::VariedKey& v) { return v.key == k; });
  if (found == keys.end()) {
    const auto current = study::valueAt(engine::specToJson(m_doc->spec()), k);
    if (!current) {
      Q_EMIT message(tr("The experiment has no setting '%1' (see docs/experiment-format.md)")
                         .arg(key.trimmed()));
      return;
    }
    edit(
        [&](study::StudyObject& s) {
          s.keys.push_back({k, {*current}});
        },
        tr("Vary %1").arg(key.trimmed()));
  }
  const int row = int(std::find_if(m_doc->study().keys.begin(), m_doc->study().keys.end(),
                                   [&](const study::VariedKey& v) { return v.key == k; }) -
                      m_doc->study().keys.begin());
  if (row < m_keys->rowCount()) {
    m_keys->setCurrentCell(row, 1);
    if (isVisible()) m_keys->editItem(m_keys->item(row, 1));
  }
}

void StudyPanel::addCurrentCut() {
  std::string cut = "[";
  for (size_t i = 0; i < m_doc->spec().partition.cuts.size(); ++i) {
    if (i) cut += ',';
    cut += std::to_string(m_doc->spec().partition.cuts[i]);
  }
  cut += "]";
  edit(
      [&](study::StudyObject& s) {
        auto it = std::find_if(s.keys.begin(), s.keys.end(),
                               [](const study::VariedKey& v) { return v.key == "partition.cuts"; });
        if (it == s.keys.end()) {
          s.keys.push_back({"partition.cuts", {cut}});
        } else if (std::find(it->values.begin(), it->values.end(), cut) == it->values.end()) {
          it->values.push_back(cut);
        }
      },
      tr("Add the cut %1").arg(QString::fromStdString(cut)));
}

bool StudyPanel::setValues(const QString& key, const QString& jsonList) {
  study::VariedKey parsed;
  try {
    parsed = study::parseVary(key.toStdString() + "=" + jsonList.toStdString());
  } catch (const study::StudyError& e) {
    Q_EMIT message(QString::fromStdString(e.what()).replace(QStringLiteral("--vary "), QString()));
    return false;
  }
  auto keys = m_doc->study().keys;
  auto it = std::find_if(keys.begin(), keys.end(),
                         [&](const study::VariedKey& v) { return v.key == parsed.key; });
  if (it == keys.end()) return false;
  edit([&](study::StudyObject& s) { s.keys[size_t(it - keys.begin())] = parsed; },
       tr("Values of %1").arg(key));
  return true;
}

void StudyPanel::removeSelected() {
  const int row = m_keys->currentRow();
  if (row < 0 || size_t(row) >= m_doc->study().keys.size()) return;
  const QString key = QString::fromStdString(m_doc->study().keys[size_t(row)].key);
  edit([row](study::StudyObject& s) { s.keys.erase(s.keys.begin() + row); },
       tr("Stop varying %1").arg(key));
}

bool StudyPanel::eventFilter(QObject* watched, QEvent* event) {
  // A cell being edited takes its own Delete key (the line edit has the focus).
  if (watched == m_keys && event->type() == QEvent::KeyPress &&
      static_cast<QKeyEvent*>(event)->key() == Qt::Key_Delete) {
    removeSelected();
    return true;
  }
  return QWidget::eventFilter(watched, event);
}

void StudyPanel::showKeys() {
  m_updating = true;
  const auto& keys = m_doc->study().keys;
  m_keys->setRowCount(int(keys.size()));
  for (int r = 0; r < int(keys.size()); ++r) {
    auto* name = new QTableWidgetItem(QString::fromStdString(keys[size_t(r)].key));
    name->setFlags(name->flags() & ~Qt::ItemIsEditable);
    m_keys->setItem(r, 0, name);
    auto* values = new QTableWidgetItem(listText(keys[size_t(r)]));
    values->setToolTip(
        tr("Values as a JSON list (%1); double-click to edit").arg(keys[size_t(r)].values.size()));
    m_keys->setItem(r, 1, values);
  }
  m_updating = false;
}

void StudyPanel::refresh() {
  showKeys();
  m_search->refresh();
  m_updating = true;
  const auto& s = m_doc->study();
  m_seeds->setValue(s.seeds.value_or(1));
  m_sample->setValue(s.sample.value_or(0));
  m_target->setValue(s.target.value_or(0));
  m_name->setText(QString::fromStdString(s.name.value_or("")));
  m_updating = false;
  m_remove->setEnabled(!s.keys.empty());
  recompute();
}

std::map<engine::Mode, double> StudyPanel::secondsPerFlop() {
  // Each method's speed for the design as it is; a point's run scales it by its FLOPs.
  std::map<engine::Mode, double> out;
  const auto rates = m_rates ? m_rates() : std::nullopt;
  if (!rates || m_doc->partition().stages.empty()) return out;
  for (auto [mode, sps] : {std::pair{engine::Mode::Local, rates->localSamplesPerSec},
                           std::pair{engine::Mode::Pipeline, rates->pipelineSamplesPerSec},
                           std::pair{engine::Mode::Backprop, rates->backpropSamplesPerSec}}) {
    engine::ExperimentSpec here = m_doc->spec();
    here.mode = mode;
    const double f = engine::runTrainFlopsPerSample(here, m_doc->plan());
    if (sps > 0 && f > 0) out[mode] = 1.0 / (sps * f);
  }
  return out;
}

bool StudyPanel::addPrediction(const study::ResolvedPoint& r, double times,
                               const std::map<engine::Mode, double>& rates, double& seconds) {
  const std::string datasetKey = r.spec.dataset.kind + "\n" + r.spec.dataset.path;
  auto n = m_trainSamples.find(datasetKey);
  if (n == m_trainSamples.end())
    n = m_trainSamples.emplace(datasetKey, engine::probeTrainSamples(r.spec.dataset)).first;
  const double samples =
      double(stepsOf(r.spec, n->second)) * double(std::max(1, r.spec.train.batchSize));
  const engine::ModelPlan model = engine::planModel(r.spec.model, m_shapes.at(datasetKey));
  const double flops = samples * engine::runTrainFlopsPerSample(r.spec, model) * times;
  m_predictedFlops += flops;
  const auto rate = rates.find(r.spec.mode);
  if (rate == rates.end()) return false;
  seconds += flops * rate->second;
  return true;
}

void StudyPanel::recomputeSearch(const study::StudyPlan& given) {
  study::StudyPlan plan = given;
  if (plan.search.trials == 0) plan.search.trials = study::kDefaultTrials;
  study::checkSearch(plan);
  const std::string base = engine::specToJson(m_doc->spec());
  const std::string metric = plan.search.choosingMetric();
  if ((plan.search.prune || plan.search.tune || metric.rfind("val_", 0) == 0) &&
      !(m_doc->spec().dataset.validation > 0))
    throw study::StudyError(
        "the search chooses on " + metric +
        ", which needs a validation split: set dataset.validation in the form (e.g. 0.1), the "
        "share of the training set held out");
  const auto& devices = m_doc->engineDescription().devices;
  // Every vary point with each key at its bounds must run (as `study run` checks).
  for (const auto& p : study::searchCheckPoints(plan))
    study::resolvePoint(base, plan, p, devices, m_shapes);
  // The cost: each vary point's trials and tuned runs at the middle of each range (pruned
  // trials stop earlier: this is the most the search takes).
  std::vector<std::string> middle;
  for (const auto& k : plan.search.keys) middle.push_back(k.dist.valueAt(0.5));
  const auto rates = secondsPerFlop();
  double seconds = 0;
  bool timed = !rates.empty();
  const int points = int(study::varyGrid(plan).size());
  const int runsPerPoint = plan.search.trials + (plan.search.tune ? plan.search.tune->seeds : 0);
  for (int v = 0; v < points; ++v) {
    const auto r =
        study::resolvePoint(base, plan, study::trialPoint(plan, v, 0, middle), devices, m_shapes);
    timed &= addPrediction(r, runsPerPoint, rates, seconds);
  }
  m_runCount = points * runsPerPoint;
  if (timed) m_predictedS = seconds;
}

void StudyPanel::recompute() {
  m_name->setPlaceholderText(QString::fromStdString(m_doc->spec().name.empty()
                                                        ? std::string("experiment")
                                                        : m_doc->spec().name) +
                             tr(" study"));
  m_points.clear();
  m_runCount = 0;
  m_problemText.clear();
  m_predictedS = -1;
  m_predictedFlops = 0;
  m_search->markKey({}, {});
  const study::StudyObject& object = m_doc->study();
  QString summary;
  const study::StudyPlan plan = study::planOf(object);
  if (object.empty()) {
    summary =
        tr("No study: vary a setting (right-click a field of the form → Vary…, or name "
           "one above), search one, or run more than one seed.");
  } else {
    try {
      if (plan.isSearch()) {
        recomputeSearch(plan);
      } else {
        std::vector<study::GridPoint> points = study::expandGrid(plan);
        const std::string base = engine::specToJson(m_doc->spec());
        const auto rates = secondsPerFlop();
        double seconds = 0;
        bool timed = !rates.empty();
        for (const auto& p : points) {
          const study::ResolvedPoint r =
              study::resolvePoint(base, plan, p, m_doc->engineDescription().devices, m_shapes);
          timed &= addPrediction(r, 1, rates, seconds);
        }
        m_points = std::move(points);
        m_runCount = int(m_points.size());
        if (timed) m_predictedS = seconds;
      }
    } catch (const study::StudyError& e) {
      m_problemText =
          QString::fromStdString(e.what()).replace(QStringLiteral("--vary "), QString());
    } catch (const std::exception& e) {
      m_problemText = QString::fromStdString(e.what());
    }
    if (!m_problemText.isEmpty()) {
      m_runCount = 0;
      // A problem that names a searched key outlines its row.
      for (const auto& k : object.search.keys)
        if (m_problemText.contains(QString::fromStdString("study.search." + k.key)))
          m_search->markKey(k.key, m_problemText);
    }
    if (m_problemText.isEmpty()) {
      const QString cost =
          m_predictedS >= 0
              ? tr("about %1, from the measured estimate").arg(formatDuration(m_predictedS))
              : tr("%1 FLOP of training; Measure in the estimate to predict the time")
                    .arg(formatCount(m_predictedFlops));
      if (plan.isSearch()) {
        const int points = int(study::varyGrid(plan).size());
        const int trials = plan.search.trials > 0 ? plan.search.trials : study::kDefaultTrials;
        const int tuned = plan.search.tune ? plan.search.tune->seeds : 0;
        summary = tr("%1 runs at most: %2 × (%3 trials%4)")
                      .arg(runCount())
                      .arg(points == 1 ? tr("1 search") : tr("%1 searches").arg(points))
                      .arg(trials)
                      .arg(tuned ? tr(" + %1 tuned runs").arg(tuned) : QString()) +
                  (plan.search.prune ? tr(", fewer steps where trials are pruned") : QString()) +
                  QStringLiteral(" · ") + cost;
      } else {
        const int seeds =
            std::any_of(object.keys.begin(), object.keys.end(),
                        [](const study::VariedKey& k) { return k.key == "train.seed"; })
                ? 1
                : plan.seeds;
        const int combinations = runCount() / seeds;
        summary =
            (runCount() == 1 ? tr("1 run") : tr("%1 runs").arg(runCount())) +
            (seeds > 1 ? (combinations == 1 ? tr(": 1 combination × %1 seeds")
                                            : tr(": %1 combinations × %2 seeds").arg(combinations))
                             .arg(seeds)
                       : QString()) +
            QStringLiteral(" · ") + cost;
      }
    }
  }
  m_summary->setText(summary);
  m_problem->setText(m_problemText);
  m_problem->setVisible(!m_problemText.isEmpty());
  const bool canRun = runCount() > 0 && m_problemText.isEmpty();
  m_run->setEnabled(canRun);
  m_addCut->setEnabled(!m_doc->partition().stages.empty());
  Q_EMIT runsChanged(runCount());
}

}  // namespace stagewise::ui
