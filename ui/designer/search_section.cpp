#include "designer/search_section.h"

#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "common/invalid_outline.h"
#include "stagewise/study/search.h"
#include "stagewise/study/study.h"

namespace stagewise::ui {

namespace {

const char* const kKinds[] = {"log_uniform", "uniform", "int", "choice"};
const char* const kMetrics[] = {"val_accuracy", "val_loss"};

using Kind = study::Distribution::Kind;

int kindIndex(Kind k) {
  switch (k) {
    case Kind::LogUniform:
      return 0;
    case Kind::Uniform:
      return 1;
    case Kind::Int:
      return 2;
    case Kind::Choice:
      return 3;
  }
  return 0;
}

QString number(double v) {
  return QString::number(v, 'g', 6);
}

/// The range cell's text: "low, high", or the choices as a JSON list.
QString rangeText(const study::Distribution& d) {
  if (d.kind == Kind::Choice) {
    QStringList c;
    for (const auto& v : d.choices) c << QString::fromStdString(v);
    return QLatin1Char('[') + c.join(QStringLiteral(", ")) + QLatin1Char(']');
  }
  return number(d.low) + QStringLiteral(", ") + number(d.high);
}

/// The distribution's JSON from a kind and a range text ("1e-5, 0.1", "1e-5:0.1", "[32, 128]").
std::string distributionJson(const QString& kind, const QString& range) {
  QString r = range.trimmed();
  if (kind == QLatin1String("choice")) {
    if (!r.startsWith(QLatin1Char('['))) r = QLatin1Char('[') + r + QLatin1Char(']');
    return "{\"choice\": " + r.toStdString() + "}";
  }
  if (r.startsWith(QLatin1Char('[')) && r.endsWith(QLatin1Char(']'))) r = r.mid(1, r.size() - 2);
  const QStringList parts =
      r.split(QRegularExpression(QStringLiteral("\\s*[,:;]\\s*|\\s+")), Qt::SkipEmptyParts);
  return "{\"" + kind.toStdString() + "\": [" + parts.join(QLatin1Char(',')).toStdString() + "]}";
}

/// The dotted keys of the spec's numbers, strings and booleans (what a search can draw).
QStringList formatKeys(const nlohmann::json& j, const std::string& prefix = {}) {
  QStringList out;
  if (!j.is_object()) return out;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (it->is_object())
      out << formatKeys(*it, key);
    else if (it->is_primitive() && !it->is_null() && key != "name" && key != "mode" &&
             key != "train.seed")
      out << QString::fromStdString(key);
  }
  return out;
}

}  // namespace

SearchSection::SearchSection(DesignDocument* doc, Edit edit, QWidget* parent)
    : QWidget(parent), m_doc(doc), m_edit(std::move(edit)) {
  m_table = new QTableWidget(0, 3, this);
  m_table->setHorizontalHeaderLabels({tr("Searched"), tr("Distribution"), tr("Range")});
  m_table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  m_table->horizontalHeader()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
  m_table->horizontalHeader()->setStretchLastSection(true);
  m_table->verticalHeader()->hide();
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->setSelectionMode(QAbstractItemView::SingleSelection);
  m_table->setMinimumHeight(70);
  m_table->setMaximumHeight(130);
  m_table->setToolTip(
      tr("Keys searched rather than listed: each trial draws a value of each from its "
         "distribution. log_uniform and uniform: two numbers, low and high (log_uniform on a "
         "log scale, for rates); int: whole numbers low to high, both included; choice: a JSON "
         "list, e.g. [32, 128]. Every point of the vary grid (a method, say) gets its own "
         "search over the same draws."));

  m_keyCombo = new QComboBox(this);
  m_keyCombo->setEditable(true);
  m_keyCombo->setInsertPolicy(QComboBox::NoInsert);
  m_keyCombo->lineEdit()->setPlaceholderText(tr("a key to search, e.g. train.lr"));
  m_keyCombo->setToolTip(
      tr("Any number, string or switch of the experiment format (docs/experiment-format.md); "
         "type to complete."));
  m_add = new QPushButton(tr("Search"), this);
  m_add->setToolTip(tr("Search the key over a range around its current value; then edit it."));
  connect(m_add, &QPushButton::clicked, this, [this] {
    const QString key = m_keyCombo->currentText().trimmed();
    if (!key.isEmpty()) search(key);
  });
  m_remove = new QPushButton(tr("Remove"), this);
  m_remove->setToolTip(tr("Stop searching the selected key."));
  connect(m_remove, &QPushButton::clicked, this, &SearchSection::removeSelected);
  m_rowProblem = new QLabel(this);
  m_rowProblem->setWordWrap(true);
  m_rowProblem->setStyleSheet(QStringLiteral("color: #c62828;"));
  m_rowProblem->hide();

  m_trials = new QSpinBox(this);
  m_trials->setRange(1, 10000);
  m_trials->setKeyboardTracking(false);
  m_trials->setToolTip(
      tr("Trials per point of the vary grid: each draws the searched keys once and trains on "
         "seed 1. Every point gets the same number: the same budget for each method."));
  connect(m_trials, &QSpinBox::valueChanged, this, [this](int v) {
    if (m_updating) return;
    m_edit([v](study::StudyObject& s) { s.search.trials = v; }, tr("Search trials"));
  });
  m_sampler = new QComboBox(this);
  for (const auto& name : study::samplerNames()) m_sampler->addItem(QString::fromStdString(name));
  m_sampler->setToolTip(
      tr("random: independent draws. sobol: scrambled quasi-random draws that fill the range "
         "evenly (good for few trials). maxlipo: dlib's model-based search, which draws where "
         "the results so far promise most. All are seeded: a resumed study draws the same."));
  connect(m_sampler, &QComboBox::currentTextChanged, this, [this](const QString& v) {
    if (m_updating) return;
    const std::string name = v.toStdString();
    m_edit([name](study::StudyObject& s) { s.search.sampler = name; }, tr("Search sampler"));
  });

  m_prune = new QGroupBox(tr("Pruning"), this);
  m_prune->setCheckable(true);
  m_prune->setToolTip(
      tr("Asynchronous successive halving (ASHA): at min steps × reduction^k steps, a trial "
         "not in the best 1/reduction of its point's trials that reached that step is stopped "
         "and kept as pruned. Nothing waits for other trials. Reads validation only."));
  m_pruneMetric = new QComboBox(m_prune);
  m_minSteps = new QSpinBox(m_prune);
  m_minSteps->setRange(1, 100000000);
  m_minSteps->setKeyboardTracking(false);
  m_minSteps->setToolTip(tr("The first rung, in training steps."));
  m_reduction = new QSpinBox(m_prune);
  m_reduction->setRange(2, 100);
  m_reduction->setKeyboardTracking(false);
  m_reduction->setToolTip(tr("Rungs grow by this factor; the best 1/reduction go on."));
  auto* pruneForm = new QFormLayout(m_prune);
  pruneForm->addRow(tr("Metric"), m_pruneMetric);
  pruneForm->addRow(tr("Min steps"), m_minSteps);
  pruneForm->addRow(tr("Reduction"), m_reduction);

  m_tune = new QGroupBox(tr("Tune"), this);
  m_tune->setCheckable(true);
  m_tune->setToolTip(
      tr("Each point's best trial, chosen on the validation metric (never test), runs again on "
         "fresh seeds; those runs are the point's result, compared on test as mean ± 95 % CI."));
  m_tuneMetric = new QComboBox(m_tune);
  for (const char* m : kMetrics) {
    m_pruneMetric->addItem(QString::fromLatin1(m));
    m_tuneMetric->addItem(QString::fromLatin1(m));
  }
  m_pruneMetric->setToolTip(tr("The validation metric compared at each rung."));
  m_tuneMetric->setToolTip(tr("The validation metric that chooses each point's best trial."));
  m_tuneSeeds = new QSpinBox(m_tune);
  m_tuneSeeds->setRange(1, 1000);
  m_tuneSeeds->setKeyboardTracking(false);
  m_tuneSeeds->setToolTip(tr("Fresh seeds (2, 3, …) the best trial runs again on."));
  m_tunePer = new QLabel(m_tune);
  m_tunePer->setWordWrap(true);
  m_tunePer->setToolTip(
      tr("The varied keys (Vary… above) make the points that each get their own search and "
         "their own tuned runs: vary mode to tune each method at its own settings."));
  auto* tuneForm = new QFormLayout(m_tune);
  tuneForm->addRow(tr("Tune per"), m_tunePer);
  tuneForm->addRow(tr("Metric"), m_tuneMetric);
  tuneForm->addRow(tr("Seeds"), m_tuneSeeds);

  auto prune = [this] {
    if (m_updating) return;
    const bool on = m_prune->isChecked();
    study::PruneSpec p;
    p.metric = m_pruneMetric->currentText().toStdString();
    p.minSteps = m_minSteps->value();
    p.reduction = m_reduction->value();
    m_edit(
        [on, p](study::StudyObject& s) {
          s.search.prune = on ? std::optional<study::PruneSpec>(p) : std::nullopt;
        },
        tr("Search pruning"));
  };
  connect(m_prune, &QGroupBox::toggled, this, prune);
  connect(m_pruneMetric, &QComboBox::currentIndexChanged, this, prune);
  connect(m_minSteps, &QSpinBox::valueChanged, this, prune);
  connect(m_reduction, &QSpinBox::valueChanged, this, prune);
  auto tune = [this] {
    if (m_updating) return;
    const bool on = m_tune->isChecked();
    study::TuneSpec t;
    t.metric = m_tuneMetric->currentText().toStdString();
    t.seeds = m_tuneSeeds->value();
    m_edit(
        [on, t](study::StudyObject& s) {
          s.search.tune = on ? std::optional<study::TuneSpec>(t) : std::nullopt;
        },
        tr("Search tuning"));
  };
  connect(m_tune, &QGroupBox::toggled, this, tune);
  connect(m_tuneMetric, &QComboBox::currentIndexChanged, this, tune);
  connect(m_tuneSeeds, &QSpinBox::valueChanged, this, tune);

  auto* keyRow = new QHBoxLayout;
  keyRow->addWidget(m_keyCombo, 1);
  keyRow->addWidget(m_add);
  keyRow->addWidget(m_remove);
  auto* form = new QFormLayout;
  form->addRow(tr("Trials"), m_trials);
  form->addRow(tr("Sampler"), m_sampler);
  // One above the other: the side column is about 320 px wide.
  auto* boxes = new QVBoxLayout;
  boxes->addWidget(m_prune);
  boxes->addWidget(m_tune);
  // Until a key is searched only the key box shows: a grid study keeps its summary in view.
  m_options = new QWidget(this);
  auto* options = new QVBoxLayout(m_options);
  options->setContentsMargins(0, 0, 0, 0);
  options->addLayout(form);
  options->addLayout(boxes);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_table);
  layout->addWidget(m_rowProblem);
  layout->addLayout(keyRow);
  layout->addWidget(m_options);
  refresh();
}

QComboBox* SearchSection::distributionCombo(int row) const {
  return qobject_cast<QComboBox*>(m_table->cellWidget(row, 1));
}

void SearchSection::search(const QString& key) {
  const std::string k = key.trimmed().toStdString();
  auto& keys = m_doc->study().search.keys;
  auto found = std::find_if(keys.begin(), keys.end(),
                            [&](const study::SearchedKey& s) { return s.key == k; });
  if (found == keys.end()) {
    const auto current = study::valueAt(engine::specToJson(m_doc->spec()), k);
    if (!current) {
      Q_EMIT message(tr("The experiment has no setting '%1' (see docs/experiment-format.md)")
                         .arg(key.trimmed()));
      return;
    }
    const nlohmann::json v = nlohmann::json::parse(*current, nullptr, false);
    study::SearchedKey added{k, {}};
    if (v.is_number_integer() && !v.is_boolean()) {
      const auto x = v.get<int64_t>();
      added.dist.kind = Kind::Int;
      added.dist.low = double(std::max<int64_t>(1, x / 2));
      added.dist.high = double(std::max<int64_t>(2, x * 2));
    } else if (v.is_number() && v.get<double>() > 0) {
      added.dist.kind = Kind::LogUniform;
      added.dist.low = v.get<double>() / 10;
      added.dist.high = v.get<double>() * 10;
    } else if (v.is_number()) {
      added.dist.kind = Kind::Uniform;
      added.dist.low = v.get<double>();
      added.dist.high = v.get<double>() + 1;
    } else {
      added.dist.kind = Kind::Choice;
      added.dist.choices = {v.dump()};
    }
    m_edit(
        [&](study::StudyObject& s) {
          s.search.keys.push_back(added);
          if (s.search.trials == 0) s.search.trials = study::kDefaultTrials;
        },
        tr("Search %1").arg(key.trimmed()));
  }
  const auto& now = m_doc->study().search.keys;
  const int row = int(std::find_if(now.begin(), now.end(),
                                   [&](const study::SearchedKey& s) { return s.key == k; }) -
                      now.begin());
  if (row < m_table->rowCount()) m_table->setCurrentCell(row, 2);
}

bool SearchSection::setRow(int row, const QString& kind, const QString& range) {
  const auto& keys = m_doc->study().search.keys;
  if (row < 0 || size_t(row) >= keys.size()) return false;
  const std::string key = keys[size_t(row)].key;
  study::Distribution parsed;
  try {
    parsed = study::parseDistribution(distributionJson(kind, range), "study.search." + key);
  } catch (const std::exception& e) {
    markRow(row, QString::fromStdString(e.what()));
    return false;
  }
  markRow(row, {});
  m_edit([row, parsed](study::StudyObject& s) { s.search.keys[size_t(row)].dist = parsed; },
         tr("Range of %1").arg(QString::fromStdString(key)));
  return true;
}

QString SearchSection::rowProblem(int row) const {
  return row >= 0 && size_t(row) < m_problems.size() ? m_problems[size_t(row)] : QString();
}

void SearchSection::markRow(int row, const QString& problem) {
  if (row < 0 || row >= m_table->rowCount()) return;
  if (m_problems.size() < size_t(m_table->rowCount()))
    m_problems.resize(size_t(m_table->rowCount()));
  m_problems[size_t(row)] = problem;
  for (int c = 1; c < 3; ++c)
    if (QWidget* w = m_table->cellWidget(row, c)) {
      setInvalidOutline(w, !problem.isEmpty());
      w->setToolTip(problem);
    }
  QStringList all;
  for (const auto& p : m_problems)
    if (!p.isEmpty()) all << p;
  m_rowProblem->setText(all.join(QLatin1Char('\n')));
  m_rowProblem->setVisible(!all.isEmpty());
}

void SearchSection::markKey(const std::string& key, const QString& problem) {
  const auto& keys = m_doc->study().search.keys;
  for (int r = 0; r < m_table->rowCount() && size_t(r) < keys.size(); ++r) {
    const bool named = !key.empty() && keys[size_t(r)].key == key;
    if (named || !rowProblem(r).isEmpty()) markRow(r, named ? problem : QString());
  }
}

void SearchSection::removeSelected() {
  const int row = m_table->currentRow();
  if (row < 0 || size_t(row) >= m_doc->study().search.keys.size()) return;
  const QString key = QString::fromStdString(m_doc->study().search.keys[size_t(row)].key);
  m_edit([row](study::StudyObject& s) { s.search.keys.erase(s.search.keys.begin() + row); },
         tr("Stop searching %1").arg(key));
}

void SearchSection::showRows() {
  const auto& keys = m_doc->study().search.keys;
  m_table->setRowCount(int(keys.size()));
  m_problems.assign(keys.size(), QString());
  for (int r = 0; r < int(keys.size()); ++r) {
    const study::SearchedKey& k = keys[size_t(r)];
    auto* name = new QTableWidgetItem(QString::fromStdString(k.key));
    name->setFlags(name->flags() & ~Qt::ItemIsEditable);
    m_table->setItem(r, 0, name);
    auto* kind = new QComboBox;
    for (const char* n : kKinds) kind->addItem(QString::fromLatin1(n));
    kind->setCurrentIndex(kindIndex(k.dist.kind));
    kind->setToolTip(tr("How the key's values are drawn"));
    auto* range = new QLineEdit(rangeText(k.dist));
    range->setToolTip(tr("low, high (log_uniform, uniform, int) or a JSON list (choice)"));
    m_table->setCellWidget(r, 1, kind);
    m_table->setCellWidget(r, 2, range);
    connect(kind, &QComboBox::currentTextChanged, this, [this, r, range](const QString& text) {
      if (m_updating) return;
      // A range becomes its two ends as choices, a choice of numbers its lowest and highest.
      const auto& d = m_doc->study().search.keys.at(size_t(r)).dist;
      QString next = range->text();
      if (text == QLatin1String("choice") && d.kind != Kind::Choice)
        next = QLatin1Char('[') + number(d.low) + QStringLiteral(", ") + number(d.high) +
               QLatin1Char(']');
      else if (text != QLatin1String("choice") && d.kind == Kind::Choice) {
        std::vector<double> v;
        for (const auto& c : d.choices) {
          const auto j = nlohmann::json::parse(c, nullptr, false);
          if (j.is_number()) v.push_back(j.get<double>());
        }
        if (!v.empty())
          next = number(*std::min_element(v.begin(), v.end())) + QStringLiteral(", ") +
                 number(*std::max_element(v.begin(), v.end()));
      }
      range->setText(next);
      setRow(r, text, next);
    });
    connect(range, &QLineEdit::editingFinished, this, [this, r, kind, range] {
      if (m_updating) return;
      const auto& keys = m_doc->study().search.keys;
      if (size_t(r) < keys.size() && range->text() == rangeText(keys[size_t(r)].dist) &&
          rowProblem(r).isEmpty())
        return;
      setRow(r, kind->currentText(), range->text());
    });
  }
  m_rowProblem->hide();
}

void SearchSection::refresh() {
  m_updating = true;
  showRows();
  const study::StudyObject& s = m_doc->study();
  const bool searching = !s.search.empty();
  // Keys to complete: the format's, from the experiment as it is now.
  const QString typed = m_keyCombo->currentText();
  m_keyCombo->clear();
  m_keyCombo->addItems(
      formatKeys(nlohmann::json::parse(engine::specToJson(m_doc->spec()), nullptr, false)));
  m_keyCombo->setCurrentText(typed);
  m_trials->setValue(s.search.trials > 0 ? s.search.trials : study::kDefaultTrials);
  m_sampler->setCurrentText(QString::fromStdString(s.search.sampler));
  m_prune->setChecked(bool(s.search.prune));
  const study::PruneSpec prune = s.search.prune.value_or(study::PruneSpec{});
  m_pruneMetric->setCurrentText(QString::fromStdString(prune.metric));
  m_minSteps->setValue(int(std::min<int64_t>(prune.minSteps, m_minSteps->maximum())));
  m_reduction->setValue(prune.reduction);
  m_tune->setChecked(bool(s.search.tune));
  const study::TuneSpec tune = s.search.tune.value_or(study::TuneSpec{});
  m_tuneMetric->setCurrentText(QString::fromStdString(tune.metric));
  m_tuneSeeds->setValue(tune.seeds);
  QStringList vary;
  size_t points = 1;
  for (const auto& k : s.keys) {
    vary << QString::fromStdString(k.key);
    points *= k.values.size();
  }
  m_tunePer->setText(
      vary.isEmpty() ? tr("nothing varied: one search (vary mode to tune each method on its own)")
                     : tr("%1: %2 points, each its own search")
                           .arg(vary.join(QStringLiteral(" × ")))
                           .arg(points));
  m_table->setVisible(searching);
  m_options->setVisible(searching);
  m_remove->setVisible(searching);
  m_updating = false;
}

}  // namespace stagewise::ui
