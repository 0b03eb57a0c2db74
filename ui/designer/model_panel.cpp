#include "designer/model_panel.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QVBoxLayout>

#include "common/spec_io.h"
#include "designer/model_family_form.h"

namespace stagewise::ui {

static QSpinBox* spin(QWidget* parent, int lo, int hi, const QString& tip) {
  auto* s = new QSpinBox(parent);
  s->setRange(lo, hi);
  s->setToolTip(tip);
  s->setKeyboardTracking(false);
  return s;
}

ModelPanel::ModelPanel(DesignDocument* doc, QWidget* parent) : QWidget(parent), m_doc(doc) {
  m_preset = new QComboBox(this);
  m_preset->addItem(tr("Choose a preset…"), QString());
  for (const auto& preset : builtinPresets()) m_preset->addItem(preset.title, preset.path);
  m_preset->setToolTip(tr("Start from a ready-made experiment (replaces the current one)."));
  m_name = new QLineEdit(this);
  m_name->setToolTip(tr("The experiment's name, shown in the run list."));

  m_family = new ModelFamilyForm(doc, this);

  m_dataset = new QComboBox(this);
  m_dataset->addItem(tr("Fashion-MNIST (built-in)"), QStringLiteral("fashion-mnist"));
  m_dataset->addItem(tr("IDX folder (MNIST format)"), QStringLiteral("idx"));
  m_dataset->addItem(tr("CIFAR-10 folder (binary)"), QStringLiteral("cifar10"));
  m_dataset->addItem(tr("Synthetic clusters"), QStringLiteral("synthetic"));
  m_path = new QLineEdit(this);
  m_path->setPlaceholderText(tr("folder with the dataset files"));
  m_browse = new QPushButton(tr("Browse…"), this);
  m_features = spin(this, 1, 100000, tr("Features per synthetic sample."));
  m_classes = spin(this, 2, 1000, tr("Classes of the synthetic dataset."));
  m_syntheticRow = new QWidget(this);
  auto* synth = new QHBoxLayout(m_syntheticRow);
  synth->setContentsMargins(0, 0, 0, 0);
  m_features->setSuffix(tr(" features"));
  m_classes->setSuffix(tr(" classes"));
  synth->addWidget(m_features, 1);
  synth->addWidget(m_classes, 1);
  m_limit = spin(this, 0, 100000000, tr("Use only the first N training samples (0: all)."));
  m_limit->setSpecialValueText(tr("all"));

  m_batch = spin(this, 1, 65536, tr("Samples per step."));
  m_steps = spin(this, 0, 100000000, tr("Steps to train (0: run whole epochs)."));
  m_steps->setSpecialValueText(tr("epochs"));
  m_epochs = spin(this, 1, 10000, tr("Epochs, when max steps is 0."));
  m_lr = new QDoubleSpinBox(this);
  m_lr->setDecimals(6);
  m_lr->setRange(1e-6, 10);
  m_lr->setSingleStep(1e-4);
  m_lr->setKeyboardTracking(false);
  m_lr->setToolTip(tr("Learning rate (scaled per stage in the stage inspector)."));
  m_optimizer = new QComboBox(this);
  m_optimizer->addItem(QStringLiteral("adam"), QStringLiteral("adam"));
  m_optimizer->addItem(QStringLiteral("sgd"), QStringLiteral("sgd"));
  m_queue = spin(this, 1, 1024,
                 tr("Capacity of the queue between stages: how far a stage may "
                    "run ahead of the next (allowed staleness)."));
  m_seed = spin(this, 0, 2147483647, tr("Seed: a local run is reproducible bit for bit."));
  m_eval = spin(this, 0, 100000000, tr("Steps between test-set evaluations (0: only at the end)."));

  auto* pathRow = new QHBoxLayout;
  pathRow->addWidget(m_path, 1);
  pathRow->addWidget(m_browse);
  auto* model = new QGroupBox(tr("Model and data"), this);
  auto* mf = new QFormLayout(model);
  mf->addRow(tr("Preset"), m_preset);
  mf->addRow(tr("Name"), m_name);
  mf->addRow(m_family);
  mf->addRow(tr("Dataset"), m_dataset);
  mf->addRow(tr("Folder"), pathRow);
  mf->addRow(tr("Synthetic"), m_syntheticRow);
  mf->addRow(tr("Train samples"), m_limit);
  auto* train = new QGroupBox(tr("Training"), this);
  auto* tf = new QFormLayout(train);
  tf->addRow(tr("Batch size"), m_batch);
  tf->addRow(tr("Max steps"), m_steps);
  tf->addRow(tr("Epochs"), m_epochs);
  tf->addRow(tr("Learning rate"), m_lr);
  tf->addRow(tr("Optimizer"), m_optimizer);
  tf->addRow(tr("Queue capacity"), m_queue);
  tf->addRow(tr("Eval every"), m_eval);
  tf->addRow(tr("Seed"), m_seed);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(model);
  layout->addWidget(train);
  layout->addStretch();

  connect(m_preset, &QComboBox::activated, this, [this](int index) {
    const QString path = m_preset->itemData(index).toString();
    m_preset->setCurrentIndex(0);
    if (!path.isEmpty()) Q_EMIT presetChosen(path);
  });
  connect(m_name, &QLineEdit::editingFinished, this, [this] {
    edit(kName, tr("Rename"), [v = m_name->text().toStdString()](auto& s) { s.name = v; });
  });
  connect(m_dataset, &QComboBox::activated, this, [this] {
    const std::string kind = m_dataset->currentData().toString().toStdString();
    edit(kDataset, tr("Dataset"), [kind](auto& s) { s.dataset.kind = kind; });
    if ((kind == "idx" || kind == "cifar10") && m_doc->spec().dataset.path.empty()) browseDataset();
  });
  connect(m_path, &QLineEdit::editingFinished, this, [this] {
    edit(kPath, tr("Dataset folder"),
         [v = m_path->text().toStdString()](auto& s) { s.dataset.path = v; });
  });
  connect(m_browse, &QPushButton::clicked, this, &ModelPanel::browseDataset);
  auto intEdit = [this](QSpinBox* box, Field field, const QString& text,
                        std::function<void(engine::ExperimentSpec&, int)> set) {
    connect(box, &QSpinBox::valueChanged, this, [this, field, text, set](int v) {
      edit(field, text, [&set, v](auto& s) { set(s, v); });
    });
  };
  intEdit(m_features, kFeatures, tr("Synthetic features"),
          [](auto& s, int v) { s.dataset.syntheticFeatures = v; });
  intEdit(m_classes, kClasses, tr("Synthetic classes"),
          [](auto& s, int v) { s.dataset.syntheticClasses = v; });
  intEdit(m_limit, kLimit, tr("Train samples"), [](auto& s, int v) { s.dataset.limitTrain = v; });
  intEdit(m_batch, kBatch, tr("Batch size"), [](auto& s, int v) { s.train.batchSize = v; });
  intEdit(m_steps, kSteps, tr("Max steps"), [](auto& s, int v) { s.train.maxSteps = v; });
  intEdit(m_epochs, kEpochs, tr("Epochs"), [](auto& s, int v) { s.train.epochs = v; });
  intEdit(m_queue, kQueue, tr("Queue capacity"), [](auto& s, int v) { s.train.queueCapacity = v; });
  intEdit(m_seed, kSeed, tr("Seed"), [](auto& s, int v) { s.train.seed = uint64_t(v); });
  intEdit(m_eval, kEval, tr("Eval interval"), [](auto& s, int v) { s.eval.interval = v; });
  connect(m_lr, &QDoubleSpinBox::valueChanged, this,
          [this](double v) { edit(kLr, tr("Learning rate"), [v](auto& s) { s.train.lr = v; }); });
  connect(m_optimizer, &QComboBox::activated, this, [this] {
    edit(kOptimizer, tr("Optimizer"),
         [v = m_optimizer->currentData().toString().toStdString()](auto& s) {
           s.train.optimizer = v;
         });
  });
  connect(doc, &DesignDocument::changed, this, &ModelPanel::refresh);
  refresh();
}

QLineEdit* ModelPanel::widthsEdit() const {
  return m_family->widthsEdit();
}

void ModelPanel::edit(Field field, const QString& text,
                      const std::function<void(engine::ExperimentSpec&)>& change) {
  if (m_updating) return;
  engine::ExperimentSpec next = m_doc->spec();
  change(next);
  if (engine::specToJson(next) == engine::specToJson(m_doc->spec())) return;
  m_doc->edit(next, text, 100 + field);
}

void ModelPanel::browseDataset() {
  const QString dir = QFileDialog::getExistingDirectory(
      this, tr("Dataset folder"), QString::fromStdString(m_doc->spec().dataset.path));
  if (dir.isEmpty()) return;
  edit(kPath, tr("Dataset folder"), [v = dir.toStdString()](auto& s) { s.dataset.path = v; });
}

void ModelPanel::refresh() {
  m_updating = true;
  const auto& s = m_doc->spec();
  m_name->setText(QString::fromStdString(s.name));
  m_dataset->setCurrentIndex(m_dataset->findData(QString::fromStdString(s.dataset.kind)));
  const bool needsPath = s.dataset.kind == "idx" || s.dataset.kind == "cifar10";
  m_path->setText(QString::fromStdString(s.dataset.path));
  m_path->setEnabled(needsPath || s.dataset.kind == "fashion-mnist");
  m_browse->setEnabled(m_path->isEnabled());
  m_syntheticRow->setEnabled(s.dataset.kind == "synthetic");
  m_features->setValue(s.dataset.syntheticFeatures);
  m_classes->setValue(s.dataset.syntheticClasses);
  m_limit->setValue(int(std::min<int64_t>(s.dataset.limitTrain, m_limit->maximum())));
  m_batch->setValue(s.train.batchSize);
  m_steps->setValue(int(std::min<int64_t>(s.train.maxSteps, m_steps->maximum())));
  m_epochs->setValue(s.train.epochs);
  m_epochs->setEnabled(s.train.maxSteps == 0);
  m_lr->setValue(s.train.lr);
  m_optimizer->setCurrentIndex(m_optimizer->findData(QString::fromStdString(s.train.optimizer)));
  m_queue->setValue(s.train.queueCapacity);
  m_seed->setValue(int(std::min<uint64_t>(s.train.seed, uint64_t(m_seed->maximum()))));
  m_eval->setValue(int(std::min<int64_t>(s.eval.interval, m_eval->maximum())));
  m_updating = false;
}

}  // namespace stagewise::ui
