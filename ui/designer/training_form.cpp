#include "designer/training_form.h"

#include "common/invalid_outline.h"
#include "common/u64_spin_box.h"
#include "designer/vary_action.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QPoint>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>
#include <limits>

namespace stagewise::ui {

namespace {

// A spin box that names some of its values ("never", "at the end"), where QSpinBox can only
// name its minimum.
class NamedSpinBox : public QSpinBox {
 public:
  NamedSpinBox(QWidget* parent, std::map<int, QString> names)
      : QSpinBox(parent), m_names(std::move(names)) {}

 protected:
  QString textFromValue(int value) const override {
    auto it = m_names.find(value);
    return it != m_names.end() ? it->second : QSpinBox::textFromValue(value);
  }
  int valueFromText(const QString& text) const override {
    for (const auto& [value, name] : m_names)
      if (name.compare(text.trimmed(), Qt::CaseInsensitive) == 0) return value;
    return QSpinBox::valueFromText(text);
  }
  QValidator::State validate(QString& text, int& pos) const override {
    for (const auto& [value, name] : m_names)
      if (name.startsWith(text.trimmed(), Qt::CaseInsensitive) && !text.trimmed().isEmpty())
        return name.compare(text.trimmed(), Qt::CaseInsensitive) == 0 ? QValidator::Acceptable
                                                                      : QValidator::Intermediate;
    return QSpinBox::validate(text, pos);
  }

 private:
  std::map<int, QString> m_names;
};

// Shows the spec's value even when it lies outside the editor's usual range (batch size 0 read
// from a file): the box widens its range to hold it, so the user sees the wrong value and any
// value typed over it is an edit. The range narrows back once the value is in it.
int shownInt(int64_t v, QSpinBox* box) {
  const auto nominal = box->property("nominalRange").toPoint();
  const int lo = nominal.isNull() ? box->minimum() : nominal.x();
  const int hi = nominal.isNull() ? box->maximum() : nominal.y();
  if (nominal.isNull()) box->setProperty("nominalRange", QPoint(lo, hi));
  const int value =
      int(std::clamp<int64_t>(v, std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
  box->setRange(std::min(lo, value), std::max(hi, value));
  return value;
}

}  // namespace

TrainingForm::TrainingForm(DesignDocument* doc, QWidget* parent) : QWidget(parent), m_doc(doc) {
  using Spec = engine::ExperimentSpec;
  m_batch = intField("train.batch_size", 0, 65536, tr("Samples per step."), tr("Batch size"),
                     [](Spec& s, int v) { s.train.batchSize = v; });
  m_steps = intField("train.max_steps", 0, 2147483647, tr("Steps to train (0: whole epochs)."),
                     tr("Max steps"), [](Spec& s, int v) { s.train.maxSteps = v; });
  m_steps->setSpecialValueText(tr("epochs"));
  m_epochs = intField("train.epochs", 1, 10000, tr("Epochs to train, when max steps is 0."),
                      tr("Epochs"), [](Spec& s, int v) { s.train.epochs = v; });

  m_optimizer = new QComboBox(this);
  m_optimizer->addItem(QStringLiteral("adam"), QStringLiteral("adam"));
  m_optimizer->addItem(QStringLiteral("sgd"), QStringLiteral("sgd"));
  m_optimizer->setToolTip(tr("Optimizer of every stage (and of the backprop baseline)."));
  m_editors["train.optimizer"] = m_optimizer;
  connect(m_optimizer, &QComboBox::activated, this, [this] {
    edit("train.optimizer", tr("Optimizer"),
         [v = m_optimizer->currentData().toString().toStdString()](Spec& s) {
           s.train.optimizer = v;
         });
  });
  m_lr = realField("train.lr", 1e-6, 10, 6, 1e-4,
                   tr("Learning rate (scaled per stage in the stage inspector)."),
                   tr("Learning rate"), [](Spec& s, double v) { s.train.lr = v; });
  m_momentum = realField("train.momentum", 0, 0.999, 3, 0.01,
                         tr("SGD momentum, in [0, 1). Adam does not use it."), tr("Momentum"),
                         [](Spec& s, double v) { s.train.momentum = v; });
  m_weightDecay = realField("train.weight_decay", 0, 1, 6, 1e-4,
                            tr("Weight decay (L2 penalty) of the optimizer; 0: none."),
                            tr("Weight decay"), [](Spec& s, double v) { s.train.weightDecay = v; });
  m_seed = new U64SpinBox(this);
  m_seed->setToolTip(
      tr("Seed of the initial weights and the data order (0 to 2^64 - 1): a local "
         "run is reproducible bit for bit."));
  m_editors["train.seed"] = m_seed;
  connect(m_seed, &U64SpinBox::valueChanged, this, [this](quint64 v) {
    edit("train.seed", tr("Seed"), [v](Spec& s) { s.train.seed = uint64_t(v); });
  });
  m_queue = intField("train.queue_capacity", 1, 1024,
                     tr("Capacity of the queue between stages: how far a stage may run ahead "
                        "of the next (allowed staleness)."),
                     tr("Queue capacity"), [](Spec& s, int v) { s.train.queueCapacity = v; });
  m_backpropThreads =
      intField("train.backprop_threads", 0, 256,
               tr("Intra-op threads of the backprop baseline (one stage covering every layer); "
                  "0: one per core, so the baseline is never crippled."),
               tr("Backprop threads"), [](Spec& s, int v) { s.train.backpropThreads = v; });
  m_backpropThreads->setSpecialValueText(tr("one per core"));
  m_lrSchedule = choiceField(
      "train.lr_schedule",
      {{QStringLiteral("constant"), tr("constant")},
       {QStringLiteral("cosine"), tr("cosine decay")},
       {QStringLiteral("linear"), tr("linear decay")}},
      tr("The learning rate over the run, after the warm-up: constant, or decaying to 0 at the "
         "last step along half a cosine or a straight line."),
      tr("Learning-rate schedule"), [](Spec& s, const std::string& v) { s.train.lrSchedule = v; });
  m_warmup = intField("train.warmup_steps", 0, 2147483647,
                      tr("Steps over which the learning rate rises linearly to its value "
                         "(0: no warm-up)."),
                      tr("Warm-up steps"), [](Spec& s, int v) { s.train.warmupSteps = v; });
  m_warmup->setSpecialValueText(tr("none"));
  m_clipNorm = realField("train.clip_norm", 0, 1e6, 3, 0.1,
                         tr("Clip the gradients to this global L2 norm (0: off): per stage in "
                            "local mode, over the whole model in pipeline and backprop modes."),
                         tr("Gradient clipping"), [](Spec& s, double v) { s.train.clipNorm = v; });
  m_clipNorm->setSpecialValueText(tr("off"));
  m_overlap = intField("local.overlap", 0, 1024,
                       tr("Overlapping local updates: each stage's loss also trains the last N "
                          "layers of the stage before it, applied queue capacity + 1 steps later "
                          "(0: every stage learns from its own loss only). Local mode only."),
                       tr("Overlap layers"), [](Spec& s, int v) { s.local.overlap = v; });
  m_overlap->setSpecialValueText(tr("none"));
  m_microBatches =
      intField("pipeline.micro_batches", 0, 65536,
               tr("Pipelined backprop: micro-batches each batch is split into as it flows "
                  "through the stages (0: one per stage). More fill the pipeline better; each "
                  "stage still steps once per batch."),
               tr("Micro-batches"), [](Spec& s, int v) { s.pipeline.microBatches = v; });
  m_microBatches->setSpecialValueText(tr("one per stage"));
  m_pipelineSchedule = choiceField(
      "pipeline.schedule",
      {{QStringLiteral("gpipe"), tr("GPipe (fill-drain)")},
       {QStringLiteral("1f1b"), tr("1F1B")},
       {QStringLiteral("interleaved"), tr("Interleaved 1F1B")},
       {QStringLiteral("zb-h1"), tr("Zero bubble (ZB-H1)")}},
      tr("Pipelined backprop's order: GPipe runs every forward, then every backward; 1F1B "
         "alternates them once the pipeline is full, so a stage holds fewer activations; "
         "interleaved 1F1B gives each worker several non-adjacent stages (chunks), a smaller "
         "bubble; ZB-H1 splits each backward into the input's gradient, sent up at once, and "
         "the weights' gradient, run in idle time. The gradients are the same."),
      tr("Pipeline schedule"), [](Spec& s, const std::string& v) {
        s.pipeline.schedule = v;
        // Chunks are interleaved's alone: leaving it sets them back in the same (undoable) edit.
        if (v != "interleaved") s.pipeline.chunks = 1;
      });
  m_chunks = intField("pipeline.chunks", 1, 16,
                      tr("Interleaved 1F1B: model chunks per worker. The stages are the chunks: "
                         "K stages run on K / chunks workers, stage k on worker k mod (K / "
                         "chunks). 1 for the other schedules."),
                      tr("Chunks per worker"), [](Spec& s, int v) { s.pipeline.chunks = v; });
  m_recompute = new QCheckBox(tr("Recompute activations"), this);
  m_recompute->setToolTip(
      tr("Each stage keeps only its input per micro-batch and runs its forward again before the "
         "backward: less activation memory for one more forward per micro-batch."));
  m_editors["pipeline.recompute"] = m_recompute;
  connect(m_recompute, &QCheckBox::toggled, this, [this](bool on) {
    edit("pipeline.recompute", tr("Recompute activations"),
         [on](Spec& s) { s.pipeline.recompute = on; });
  });

  m_evalInterval = intField("eval.interval", 0, 2147483647,
                            tr("Steps between test-set evaluations of the composed network "
                               "(0: only at the end)."),
                            tr("Eval interval"), [](Spec& s, int v) { s.eval.interval = v; });
  m_evalInterval->setSpecialValueText(tr("at the end"));
  m_evalSamples = intField("eval.max_samples", 0, 2147483647,
                           tr("Evaluate on the first N test samples (0: all of them)."),
                           tr("Eval samples"), [](Spec& s, int v) { s.eval.maxSamples = v; });
  m_evalSamples->setSpecialValueText(tr("all"));
  m_probeInterval = new NamedSpinBox(this, {{-1, tr("never")}, {0, tr("at the end")}});
  m_probeInterval->setRange(-1, 2147483647);
  m_probeInterval->setKeyboardTracking(false);
  m_probeInterval->setToolTip(
      tr("Steps between gradient-cosine probes: how well each stage's local gradient agrees "
         "with the end-to-end one (0: only at the end; never: no probes, a little faster)."));
  m_editors["probe.interval"] = m_probeInterval;
  connect(m_probeInterval, &QSpinBox::valueChanged, this, [this](int v) {
    edit("probe.interval", tr("Probe interval"), [v](Spec& s) { s.probe.interval = v; });
  });
  m_probeBatch = intField("probe.batch_size", 1, 65536,
                          tr("Samples of the fixed probe batch the cosine is measured on."),
                          tr("Probe batch"), [](Spec& s, int v) { s.probe.batchSize = v; });
  m_measureBudget = realField(
      "measure.budget", 0, 99, 1, 1,
      tr("The most probing and evaluating may take of the CPU time training takes. A probe or "
         "evaluation the intervals ask for is measured only while the share stays within it, "
         "but never fewer than 10 of each per run (0: no budget, every one)."),
      tr("Measurement budget"), [](Spec& s, double v) { s.measure.budget = v / 100; });
  m_measureBudget->setSuffix(tr(" %"));
  m_measureBudget->setSpecialValueText(tr("no budget"));

  m_checkpointInterval =
      intField("checkpoint.interval", 0, 2147483647,
               tr("Every N steps the pipeline drains and every stage's weights and optimizer "
                  "state are saved (0: no periodic checkpoints)."),
               tr("Checkpoint interval"), [](Spec& s, int v) { s.checkpoint.interval = v; });
  m_checkpointInterval->setSpecialValueText(tr("none"));
  m_checkpointDir = new QLineEdit(this);
  m_checkpointDir->setPlaceholderText(tr("default data folder"));
  m_checkpointDir->setToolTip(
      tr("Where checkpoints go (step-N folders). Empty: "
         "~/.local/share/stagewise/checkpoints/<name>-<time>. Setting a folder turns "
         "checkpointing on, even with no interval (a stop then saves one)."));
  m_editors["checkpoint.dir"] = m_checkpointDir;
  connect(m_checkpointDir, &QLineEdit::editingFinished, this, [this] {
    edit("checkpoint.dir", tr("Checkpoint folder"),
         [v = m_checkpointDir->text().trimmed().toStdString()](Spec& s) { s.checkpoint.dir = v; });
  });
  m_browse = new QPushButton(tr("Browse…"), this);
  m_browse->setToolTip(tr("Choose the checkpoint folder."));
  connect(m_browse, &QPushButton::clicked, this, &TrainingForm::browseCheckpointDir);
  m_atStop = new QCheckBox(tr("Save when stopped"), this);
  m_atStop->setToolTip(
      tr("A stop drains the pipeline and saves a checkpoint at the step every stage reached, "
         "so the run can be resumed exactly (Runs → Resume). Needs checkpointing on: an "
         "interval or a folder."));
  m_editors["checkpoint.at_stop"] = m_atStop;
  connect(m_atStop, &QCheckBox::toggled, this, [this](bool on) {
    edit("checkpoint.at_stop", tr("Checkpoint at stop"),
         [on](Spec& s) { s.checkpoint.atStop = on; });
  });
  m_augment = new QCheckBox(tr("Augment images"), this);
  m_augment->setToolTip(
      tr("Each training batch randomly cropped (after zero padding by an eighth of the height) "
         "and flipped left-right, the same for every run of a seed. Image datasets only."));
  m_editors["dataset.augment"] = m_augment;
  connect(m_augment, &QCheckBox::toggled, this, [this](bool on) {
    edit("dataset.augment", tr("Augment images"), [on](Spec& s) { s.dataset.augment = on; });
  });
  m_randomLabels = new QCheckBox(tr("Random labels"), this);
  m_randomLabels->setToolTip(
      tr("Every training label replaced by one drawn at random (seeded), the test set kept: "
         "whether a method can memorise what it cannot learn (the paper's random-label test)."));
  m_editors["dataset.random_labels"] = m_randomLabels;
  connect(m_randomLabels, &QCheckBox::toggled, this, [this](bool on) {
    edit("dataset.random_labels", tr("Random labels"),
         [on](Spec& s) { s.dataset.randomLabels = on; });
  });
  m_validation = realField(
      "dataset.validation", 0, 0.5, 3, 0.05,
      tr("Share of the training samples held out for validation (0 to 0.5; 0: none). The "
         "same samples for every seed and method of the dataset; training uses the rest, "
         "with their true labels kept and no augmentation. Every evaluation then measures "
         "validation accuracy and loss beside the test set's."),
      tr("Validation split"), [](Spec& s, double v) { s.dataset.validation = v; });
  m_validation->setSpecialValueText(tr("none"));
  m_init = choiceField(
      "model.init",
      {{QStringLiteral("default"), tr("LibTorch default")},
       {QStringLiteral("kaiming"), tr("Kaiming (He)")},
       {QStringLiteral("xavier"), tr("Xavier (Glorot)")}},
      tr("Initial weights of every linear and convolution layer, aux heads included: "
         "LibTorch's own (default), Kaiming/He (normal, fan-in) or Xavier/Glorot (uniform); "
         "biases start at 0 with the last two. Drawn from the seed either way."),
      tr("Initialisation"), [](Spec& s, const std::string& v) { s.model.init = v; });
  m_norm = choiceField(
      "model.norm",
      {{QStringLiteral("none"), tr("none")},
       {QStringLiteral("layernorm"), tr("LayerNorm")},
       {QStringLiteral("batchnorm"), tr("BatchNorm")}},
      tr("MLP only: a normalisation in every hidden layer, Linear → norm → activation (the "
         "classifier has none). Batch norm needs batches of 2 rows or more."),
      tr("Normalisation"), [](Spec& s, const std::string& v) { s.model.norm = v; });
  for (auto& [key, editor] : m_editors) {
    m_tips[key] = editor->toolTip();
    offerVary(editor, QString::fromStdString(key),
              [this](const QString& k) { Q_EMIT varyRequested(k); });
  }

  auto* train = new QGroupBox(tr("Training"), this);
  auto* tf = new QFormLayout(train);
  tf->addRow(tr("Batch size"), m_batch);
  tf->addRow(tr("Max steps"), m_steps);
  tf->addRow(tr("Epochs"), m_epochs);
  tf->addRow(tr("Optimizer"), m_optimizer);
  tf->addRow(tr("Learning rate"), m_lr);
  tf->addRow(tr("Momentum"), m_momentum);
  tf->addRow(tr("Weight decay"), m_weightDecay);
  tf->addRow(tr("Seed"), m_seed);
  tf->addRow(tr("Queue capacity"), m_queue);
  tf->addRow(tr("Backprop threads"), m_backpropThreads);
  tf->addRow(tr("LR schedule"), m_lrSchedule);
  tf->addRow(tr("Warm-up steps"), m_warmup);
  tf->addRow(tr("Clip gradients"), m_clipNorm);
  tf->addRow(tr("Overlap layers"), m_overlap);
  tf->addRow(tr("Initialisation"), m_init);
  tf->addRow(tr("Normalisation"), m_norm);
  tf->addRow(tr("Validation"), m_validation);
  tf->addRow(QString(), m_augment);
  tf->addRow(QString(), m_randomLabels);
  auto* pipeline = new QGroupBox(tr("Pipelined backprop"), this);
  pipeline->setToolTip(tr("Used when the Train workspace runs the pipeline mode."));
  auto* pf = new QFormLayout(pipeline);
  pf->addRow(tr("Micro-batches"), m_microBatches);
  pf->addRow(tr("Schedule"), m_pipelineSchedule);
  pf->addRow(tr("Chunks"), m_chunks);
  pf->addRow(QString(), m_recompute);
  auto* eval = new QGroupBox(tr("Evaluation and probes"), this);
  auto* ef = new QFormLayout(eval);
  ef->addRow(tr("Eval every"), m_evalInterval);
  ef->addRow(tr("Eval samples"), m_evalSamples);
  ef->addRow(tr("Probe every"), m_probeInterval);
  ef->addRow(tr("Probe batch"), m_probeBatch);
  ef->addRow(tr("Budget"), m_measureBudget);
  auto* checkpoints = new QGroupBox(tr("Checkpoints"), this);
  auto* cf = new QFormLayout(checkpoints);
  auto* dirRow = new QHBoxLayout;
  dirRow->addWidget(m_checkpointDir, 1);
  dirRow->addWidget(m_browse);
  cf->addRow(tr("Every"), m_checkpointInterval);
  cf->addRow(tr("Folder"), dirRow);
  cf->addRow(QString(), m_atStop);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(train);
  layout->addWidget(pipeline);
  layout->addWidget(eval);
  layout->addWidget(checkpoints);

  connect(doc, &DesignDocument::changed, this, &TrainingForm::refresh);
  refresh();
}

QWidget* TrainingForm::editorFor(const std::string& key) const {
  auto it = m_editors.find(key);
  return it == m_editors.end() ? nullptr : it->second;
}

QComboBox* TrainingForm::choiceField(
    const std::string& key, const std::vector<std::pair<QString, QString>>& choices,
    const QString& tip, const QString& undoText,
    std::function<void(engine::ExperimentSpec&, const std::string&)> set) {
  auto* box = new QComboBox(this);
  for (const auto& [value, label] : choices) box->addItem(label, value);
  box->setToolTip(tip);
  m_editors[key] = box;
  connect(box, &QComboBox::activated, this, [this, box, key, undoText, set] {
    edit(key, undoText,
         [&set, v = box->currentData().toString().toStdString()](engine::ExperimentSpec& s) {
           set(s, v);
         });
  });
  return box;
}

QSpinBox* TrainingForm::intField(const std::string& key, int lo, int hi, const QString& tip,
                                 const QString& undoText,
                                 std::function<void(engine::ExperimentSpec&, int)> set) {
  auto* box = new QSpinBox(this);
  box->setRange(lo, hi);
  box->setToolTip(tip);
  box->setKeyboardTracking(false);
  m_editors[key] = box;
  connect(box, &QSpinBox::valueChanged, this, [this, key, undoText, set](int v) {
    edit(key, undoText, [&set, v](engine::ExperimentSpec& s) { set(s, v); });
  });
  return box;
}

QDoubleSpinBox* TrainingForm::realField(const std::string& key, double lo, double hi, int decimals,
                                        double step, const QString& tip, const QString& undoText,
                                        std::function<void(engine::ExperimentSpec&, double)> set) {
  auto* box = new QDoubleSpinBox(this);
  box->setDecimals(decimals);
  box->setRange(lo, hi);
  box->setSingleStep(step);
  box->setToolTip(tip);
  box->setKeyboardTracking(false);
  m_editors[key] = box;
  connect(box, &QDoubleSpinBox::valueChanged, this, [this, key, undoText, set](double v) {
    edit(key, undoText, [&set, v](engine::ExperimentSpec& s) { set(s, v); });
  });
  return box;
}

void TrainingForm::edit(const std::string& key, const QString& text,
                        const std::function<void(engine::ExperimentSpec&)>& change) {
  if (m_updating) return;
  engine::ExperimentSpec next = m_doc->spec();
  change(next);
  if (engine::specToJson(next) == engine::specToJson(m_doc->spec())) return;
  // One merge id per field: stepping one spin box is one undo step. The model panel merges
  // from 100 and the family form from 200; 400 up is this form's.
  const int field = int(std::distance(m_editors.begin(), m_editors.find(key)));
  m_doc->edit(next, text, kMergeIdBase + field);
}

void TrainingForm::browseCheckpointDir() {
  const QString dir = QFileDialog::getExistingDirectory(
      this, tr("Checkpoint folder"), QString::fromStdString(m_doc->spec().checkpoint.dir));
  if (dir.isEmpty()) return;
  edit("checkpoint.dir", tr("Checkpoint folder"),
       [v = dir.toStdString()](engine::ExperimentSpec& s) { s.checkpoint.dir = v; });
}

void TrainingForm::refresh() {
  m_updating = true;
  const auto& s = m_doc->spec();
  m_batch->setValue(shownInt(s.train.batchSize, m_batch));
  m_steps->setValue(shownInt(s.train.maxSteps, m_steps));
  m_epochs->setValue(shownInt(s.train.epochs, m_epochs));
  m_epochs->setEnabled(s.train.maxSteps == 0);
  m_optimizer->setCurrentIndex(m_optimizer->findData(QString::fromStdString(s.train.optimizer)));
  m_lr->setValue(s.train.lr);
  m_momentum->setValue(s.train.momentum);
  m_momentum->setEnabled(s.train.optimizer == "sgd");
  m_weightDecay->setValue(s.train.weightDecay);
  m_seed->setValue(quint64(s.train.seed));
  m_queue->setValue(shownInt(s.train.queueCapacity, m_queue));
  m_backpropThreads->setValue(shownInt(s.train.backpropThreads, m_backpropThreads));
  m_lrSchedule->setCurrentIndex(m_lrSchedule->findData(QString::fromStdString(s.train.lrSchedule)));
  m_warmup->setValue(shownInt(s.train.warmupSteps, m_warmup));
  m_clipNorm->setValue(s.train.clipNorm);
  m_microBatches->setValue(shownInt(s.pipeline.microBatches, m_microBatches));
  m_overlap->setValue(shownInt(s.local.overlap, m_overlap));
  m_augment->setChecked(s.dataset.augment);
  m_augment->setEnabled(s.dataset.kind != "synthetic" || s.dataset.augment);
  m_randomLabels->setChecked(s.dataset.randomLabels);
  m_validation->setValue(s.dataset.validation);
  // A value the box does not offer (a typo in a file) shows as no choice, outlined red.
  m_init->setCurrentIndex(m_init->findData(QString::fromStdString(s.model.init)));
  m_norm->setCurrentIndex(m_norm->findData(QString::fromStdString(s.model.norm)));
  m_norm->setEnabled(s.model.kind == "mlp" || s.model.norm != "none");
  m_pipelineSchedule->setCurrentIndex(
      m_pipelineSchedule->findData(QString::fromStdString(s.pipeline.schedule)));
  m_chunks->setValue(s.pipeline.chunks);
  // Interleaved's alone; a file's chunks under another schedule stay editable, to be fixed.
  m_chunks->setEnabled(s.pipeline.schedule == "interleaved" || s.pipeline.chunks != 1);
  m_recompute->setChecked(s.pipeline.recompute);
  m_evalInterval->setValue(shownInt(s.eval.interval, m_evalInterval));
  m_evalSamples->setValue(shownInt(s.eval.maxSamples, m_evalSamples));
  m_probeInterval->setValue(shownInt(s.probe.interval, m_probeInterval));
  m_probeBatch->setValue(shownInt(s.probe.batchSize, m_probeBatch));
  m_probeBatch->setEnabled(s.probe.interval >= 0);
  m_measureBudget->setValue(s.measure.budget * 100);
  m_checkpointInterval->setValue(shownInt(s.checkpoint.interval, m_checkpointInterval));
  m_checkpointDir->setText(QString::fromStdString(s.checkpoint.dir));
  m_atStop->setChecked(s.checkpoint.atStop);
  m_atStop->setEnabled(s.checkpoint.enabled());
  showProblems();
  m_updating = false;
}

void TrainingForm::showProblems() {
  for (auto& [key, editor] : m_editors) {
    QStringList messages;
    for (const auto& p : m_doc->problems())
      if (p.field == key) messages << QString::fromStdString(p.message);
    for (const auto& p : m_doc->pipelineWarnings())
      if (p.field == key)
        messages << tr("pipelined backprop only: %1").arg(QString::fromStdString(p.message));
    setInvalidOutline(editor, !messages.isEmpty());
    if (messages.isEmpty()) {
      editor->setToolTip(m_tips[key]);
    } else {
      // A spec read from a file may hold a value the editor cannot show (batch size 0): the
      // outline and the tooltip say what the spec has wrong.
      editor->setToolTip(
          QStringLiteral("%1: %2\n\n%3")
              .arg(QString::fromStdString(key), messages.join(QLatin1Char('\n')), m_tips[key]));
    }
  }
}

}  // namespace stagewise::ui
