#include "designer/model_panel.h"

#include "common/invalid_outline.h"

#include <QComboBox>
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
#include "designer/training_form.h"
#include "designer/vary_action.h"

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
  m_presetJson.push_back(std::string());
  for (const auto& preset : builtinPresets()) {
    m_preset->addItem(preset.title, preset.path);
    std::string json;  // the box names the preset the design still is (refresh)
    try {
      json = engine::specToJson(readSpecFile(preset.path));
    } catch (const std::exception&) {
    }
    m_presetJson.push_back(json);
  }
  m_preset->setToolTip(tr("Start from a ready-made experiment (replaces the current one)."));
  m_name = new QLineEdit(this);
  m_name->setToolTip(tr("The experiment's name, shown in the run list."));

  m_family = new ModelFamilyForm(doc, this);

  m_dataset = new QComboBox(this);
  m_dataset->addItem(tr("Fashion-MNIST (built-in)"), QStringLiteral("fashion-mnist"));
  m_dataset->addItem(tr("IDX folder (MNIST format)"), QStringLiteral("idx"));
  m_dataset->addItem(tr("CIFAR-10 folder (binary)"), QStringLiteral("cifar10"));
  m_dataset->addItem(tr("Image folder (train/ and test/ class subfolders)"),
                     QStringLiteral("image_folder"));
  m_dataset->addItem(tr("Synthetic clusters"), QStringLiteral("synthetic"));
  m_dataset->addItem(tr("Text (bytes; Debian's fortunes or your file/folder)"),
                     QStringLiteral("text"));
  m_path = new QLineEdit(this);
  m_path->setPlaceholderText(tr("folder with the dataset files"));
  m_pathTip =
      tr("The folder holding the dataset's files (IDX: train-images-idx3-ubyte and the "
         "rest, optionally .gz; CIFAR-10: the binary batches; image folder: train/<class>/ and "
         "test/<class>/ with .png, .jpg or .bmp images; text: a UTF-8 file or a folder of them, "
         "empty for Debian's fortunes).");
  m_path->setToolTip(m_pathTip);
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

  m_limitTest = spin(this, 0, 100000000,
                     tr("Use only the first N test samples (0: all). Evaluation may use "
                        "fewer: see Eval samples."));
  m_limitTest->setSpecialValueText(tr("all"));
  m_syntheticTrain = spin(this, 1, 100000000, tr("Training samples of the synthetic dataset."));
  m_syntheticTest = spin(this, 1, 100000000, tr("Test samples of the synthetic dataset."));
  m_syntheticTrain->setSuffix(tr(" train"));
  m_syntheticTest->setSuffix(tr(" test"));
  m_syntheticSizeRow = new QWidget(this);
  auto* sizes = new QHBoxLayout(m_syntheticSizeRow);
  sizes->setContentsMargins(0, 0, 0, 0);
  sizes->addWidget(m_syntheticTrain, 1);
  sizes->addWidget(m_syntheticTest, 1);
  m_training = new TrainingForm(doc, this);

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
  mf->addRow(tr("Synthetic size"), m_syntheticSizeRow);
  mf->addRow(tr("Train samples"), m_limit);
  mf->addRow(tr("Test samples"), m_limitTest);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(model);
  layout->addWidget(m_training);
  layout->addStretch();

  connect(m_preset, &QComboBox::activated, this, [this](int index) {
    const QString path = m_preset->itemData(index).toString();
    refreshPreset();  // until the chosen one is loaded (it may be refused)
    if (!path.isEmpty()) Q_EMIT presetChosen(path);
  });
  connect(m_name, &QLineEdit::editingFinished, this, [this] {
    edit(kName, tr("Rename"), [v = m_name->text().toStdString()](auto& s) { s.name = v; });
  });
  connect(m_dataset, &QComboBox::activated, this, [this] {
    const std::string kind = m_dataset->currentData().toString().toStdString();
    edit(kDataset, tr("Dataset"), [kind](auto& s) { s.dataset.kind = kind; });
    if ((kind == "idx" || kind == "cifar10" || kind == "image_folder") &&
        m_doc->spec().dataset.path.empty())
      browseDataset();
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
  intEdit(m_limitTest, kLimitTest, tr("Test samples"),
          [](auto& s, int v) { s.dataset.limitTest = v; });
  intEdit(m_syntheticTrain, kSyntheticTrain, tr("Synthetic train samples"),
          [](auto& s, int v) { s.dataset.syntheticTrain = v; });
  intEdit(m_syntheticTest, kSyntheticTest, tr("Synthetic test samples"),
          [](auto& s, int v) { s.dataset.syntheticTest = v; });
  connect(m_training, &TrainingForm::varyRequested, this, &ModelPanel::varyRequested);
  const auto vary = [this](const QString& key) { Q_EMIT varyRequested(key); };
  for (auto [editor, key] : {std::pair<QWidget*, const char*>{m_dataset, "dataset.kind"},
                             {m_limit, "dataset.limit_train"},
                             {m_family->kindCombo(), "model.kind"},
                             {m_family->widthsEdit(), "model.hidden"},
                             {m_family->channelsEdit(), "model.channels"}})
    offerVary(editor, QString::fromLatin1(key), vary);
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
  const bool needsPath =
      s.dataset.kind == "idx" || s.dataset.kind == "cifar10" || s.dataset.kind == "image_folder";
  m_path->setText(QString::fromStdString(s.dataset.path));
  m_path->setEnabled(needsPath || s.dataset.kind == "fashion-mnist" || s.dataset.kind == "text");
  m_browse->setEnabled(m_path->isEnabled());
  QStringList pathProblems;
  for (const auto& p : m_doc->problems())
    if (p.field == "dataset.path") pathProblems << QString::fromStdString(p.message);
  setInvalidOutline(m_path, !pathProblems.isEmpty());
  m_path->setToolTip(pathProblems.isEmpty()
                         ? m_pathTip
                         : QStringLiteral("dataset.path: %1\n\n%2")
                               .arg(pathProblems.join(QLatin1Char('\n')), m_pathTip));
  m_syntheticRow->setEnabled(s.dataset.kind == "synthetic");
  m_features->setValue(s.dataset.syntheticFeatures);
  m_classes->setValue(s.dataset.syntheticClasses);
  m_limit->setValue(int(std::min<int64_t>(s.dataset.limitTrain, m_limit->maximum())));
  m_limitTest->setValue(int(std::min<int64_t>(s.dataset.limitTest, m_limitTest->maximum())));
  m_syntheticSizeRow->setEnabled(s.dataset.kind == "synthetic");
  m_syntheticTrain->setValue(
      int(std::clamp<int64_t>(s.dataset.syntheticTrain, 1, m_syntheticTrain->maximum())));
  m_syntheticTest->setValue(
      int(std::clamp<int64_t>(s.dataset.syntheticTest, 1, m_syntheticTest->maximum())));
  refreshPreset();
  m_updating = false;
}

void ModelPanel::refreshPreset() {
  // Issue 36 §3: the box said "Choose a preset…" whatever was loaded. It names the preset the
  // design equals, or says the design is the user's own.
  const std::string json = engine::specToJson(m_doc->spec());
  int index = 0;
  for (int i = 1; i < int(m_presetJson.size()); ++i)
    if (!m_presetJson[size_t(i)].empty() && m_presetJson[size_t(i)] == json) index = i;
  m_preset->setItemText(0, tr("Custom (choose a preset…)"));
  const QSignalBlocker block(m_preset);
  m_preset->setCurrentIndex(index);
}

}  // namespace stagewise::ui
