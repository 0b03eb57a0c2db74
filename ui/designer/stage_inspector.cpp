#include "designer/stage_inspector.h"

#include "common/invalid_outline.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QVBoxLayout>

#include "designer/spec_edits.h"

namespace stagewise::ui {

StageInspector::StageInspector(DesignDocument* doc, QWidget* parent) : QWidget(parent), m_doc(doc) {
  m_title = new QLabel(this);
  QFont bold = m_title->font();
  bold.setBold(true);
  m_title->setFont(bold);
  m_title->setWordWrap(true);

  m_device = new QComboBox(this);
  m_device->setToolTip(
      tr("Where this stage's layers and aux head run. Devices this machine "
         "does not have are greyed out; hover them for the reason."));
  m_cores = new QLineEdit(this);
  m_cores->setPlaceholderText(tr("any core (e.g. 0,1 or 2-3)"));
  m_cores->setToolTip(tr("CPU cores the stage's thread is pinned to. Empty: no pinning."));
  m_threads = new QSpinBox(this);
  m_threads->setRange(1, 256);
  m_threads->setToolTip(
      tr("Intra-op threads of the stage's compute thread. More threads than "
         "cores slows every stage down."));
  m_auxHead = new QComboBox(this);
  m_auxHead->addItem(tr("linear"), QStringLiteral("linear"));
  m_auxHead->addItem(tr("MLP (one hidden layer)"), QStringLiteral("mlp"));
  m_auxHead->addItem(tr("conv (CNN)"), QStringLiteral("conv"));
  m_auxHead->addItem(tr("token (ViT)"), QStringLiteral("token"));
  m_auxHead->addItem(tr("lm (GPT)"), QStringLiteral("lm"));
  m_auxHead->setToolTip(tr("The small classifier that gives this stage its local loss."));
  m_auxHidden = new QSpinBox(this);
  m_auxHidden->setRange(1, 65536);
  m_auxHidden->setToolTip(tr("Hidden width of an MLP aux head."));
  m_lrScale = new QDoubleSpinBox(this);
  m_lrScale->setRange(0, 100);
  m_lrScale->setDecimals(3);
  m_lrScale->setSingleStep(0.1);
  m_lrScale->setToolTip(tr("Multiplies the learning rate for this stage."));
  m_delay = new QSpinBox(this);
  m_delay->setRange(0, 60000);
  m_delay->setSuffix(tr(" ms"));
  m_delay->setToolTip(
      tr("Straggler injection: the stage sleeps this long every step, to see "
         "how the pipeline copes with a slow stage."));
  m_problems = new QLabel(this);
  m_problems->setWordWrap(true);
  m_problems->setStyleSheet(QStringLiteral("color: #d03030;"));
  m_applyAll = new QPushButton(tr("Apply to all stages"), this);
  m_applyAll->setToolTip(tr("Copy this stage's settings to every stage (one undo step)."));

  auto* form = new QFormLayout;
  form->addRow(tr("Device"), m_device);
  form->addRow(tr("CPU cores"), m_cores);
  form->addRow(tr("Threads"), m_threads);
  form->addRow(tr("Aux head"), m_auxHead);
  form->addRow(tr("Aux hidden"), m_auxHidden);
  form->addRow(tr("LR scale"), m_lrScale);
  form->addRow(tr("Straggler delay"), m_delay);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(m_title);
  layout->addLayout(form);
  layout->addWidget(m_problems);
  layout->addWidget(m_applyAll, 0, Qt::AlignLeft);
  layout->addStretch();

  connect(m_device, &QComboBox::activated, this, [this](int index) {
    const std::string id = m_device->itemData(index).toString().toStdString();
    apply(kDevice, tr("Stage device"), [id](auto& s) { s.device = id; });
  });
  connect(m_cores, &QLineEdit::editingFinished, this, [this] {
    const auto cores = parseCoreList(m_cores->text().toStdString());
    if (!cores) {
      setInvalidOutline(m_cores, true);
      m_cores->setToolTip(tr("Not a core list: write e.g. 0,1 or 2-3"));
      return;
    }
    setInvalidOutline(m_cores, false);
    apply(kCores, tr("Stage cores"), [c = *cores](auto& s) { s.cores = c; });
  });
  connect(m_threads, &QSpinBox::valueChanged, this,
          [this](int v) { apply(kThreads, tr("Stage threads"), [v](auto& s) { s.threads = v; }); });
  connect(m_auxHead, &QComboBox::activated, this, [this](int index) {
    const std::string kind = m_auxHead->itemData(index).toString().toStdString();
    apply(kAuxHead, tr("Aux head"), [kind](auto& s) { s.auxHead = kind; });
  });
  connect(m_auxHidden, &QSpinBox::valueChanged, this, [this](int v) {
    apply(kAuxHidden, tr("Aux hidden width"), [v](auto& s) { s.auxHidden = v; });
  });
  connect(m_lrScale, &QDoubleSpinBox::valueChanged, this,
          [this](double v) { apply(kLrScale, tr("LR scale"), [v](auto& s) { s.lrScale = v; }); });
  connect(m_delay, &QSpinBox::valueChanged, this,
          [this](int v) { apply(kDelay, tr("Straggler delay"), [v](auto& s) { s.delayMs = v; }); });
  connect(m_applyAll, &QPushButton::clicked, this, &StageInspector::applyToAll);
  connect(doc, &DesignDocument::changed, this, &StageInspector::refresh);
  connect(doc, &DesignDocument::selectedStageChanged, this, &StageInspector::refresh);
  refresh();
}

void StageInspector::apply(Field field, const QString& text,
                           const std::function<void(engine::StageSettings&)>& change) {
  if (m_updating) return;
  const int stage = m_doc->selectedStage();
  engine::StageSettings s = m_doc->spec().stageSettings(stage);
  change(s);
  if (s.device == m_doc->spec().stageSettings(stage).device && field == kDevice) return;
  m_doc->edit(withStageSettings(m_doc->spec(), stage, s),
              tr("%1 (stage %2)").arg(text).arg(stage + 1), 1000 + field * 256 + stage);
}

void StageInspector::applyToAll() {
  const int stage = m_doc->selectedStage();
  const engine::StageSettings s = m_doc->spec().stageSettings(stage);
  engine::ExperimentSpec next = m_doc->spec();
  for (int k = 0; k < next.stageCount(); ++k) {
    // The settings shown here, not where the stage runs: each keeps its own process (rank).
    engine::StageSettings copy = s;
    copy.rank = next.stageSettings(k).rank;
    next = withStageSettings(next, k, copy);
  }
  m_doc->edit(next, tr("Apply stage %1 settings to all stages").arg(stage + 1));
}

void StageInspector::fillDevices(const std::string& current) {
  m_device->clear();
  auto* model = qobject_cast<QStandardItemModel*>(m_device->model());
  bool found = false;
  for (const auto& choice : deviceChoices(m_doc->engineDescription())) {
    const QString id = QString::fromStdString(choice.id);
    m_device->addItem(choice.available ? id : tr("%1 (unavailable)").arg(id), id);
    auto* item = model->item(m_device->count() - 1);
    if (!choice.available) {
      item->setEnabled(false);
      item->setToolTip(QString::fromStdString(choice.reason));
    }
    found |= choice.id == current;
  }
  if (!found) {
    // A spec written elsewhere may name a device this machine lacks: show it, flagged.
    const QString id = QString::fromStdString(current);
    m_device->addItem(tr("%1 (not on this machine)").arg(id), id);
    model->item(m_device->count() - 1)->setToolTip(tr("%1 does not exist here").arg(id));
  }
  m_device->setCurrentIndex(m_device->findData(QString::fromStdString(current)));
}

void StageInspector::refresh() {
  m_updating = true;
  const auto& spec = m_doc->spec();
  const int stage = m_doc->selectedStage();
  const int count = spec.stageCount();
  const engine::StageSettings s = spec.stageSettings(stage);
  const auto& stages = m_doc->partition().stages;
  const bool isLast = stage + 1 == count;
  QString title = tr("Stage %1 of %2").arg(stage + 1).arg(count);
  if (size_t(stage) < stages.size()) {
    const auto& layers = m_doc->plan().layers;
    const auto& sp = stages[size_t(stage)];
    title += tr(" · %1 – %2")
                 .arg(QString::fromStdString(layers[size_t(sp.firstLayer)].name),
                      QString::fromStdString(layers[size_t(sp.lastLayer)].name));
  }
  m_title->setText(title);
  fillDevices(s.device);
  m_cores->setText(QString::fromStdString(formatCoreList(s.cores)));
  setInvalidOutline(m_cores, false);
  m_threads->setValue(s.threads);
  // Family-specific heads only fit their family: grey the others, with the reason.
  auto* heads = qobject_cast<QStandardItemModel*>(m_auxHead->model());
  const std::string& kind = spec.model.kind;
  for (int i = 0; i < m_auxHead->count(); ++i) {
    const QString id = m_auxHead->itemData(i).toString();
    const bool text = spec.dataset.kind == "text";
    const bool fits = text ? (id == QLatin1String("lm") || kind == "layers")
                           : (id != QLatin1String("conv") || kind == "cnn" || kind == "layers") &&
                                 (id != QLatin1String("token") || kind == "vit" || kind == "layers") &&
                                 id != QLatin1String("lm");
    heads->item(i)->setEnabled(fits);
    heads->item(i)->setToolTip(fits                          ? QString()
                               : text                        ? tr("a language model's stages predict every next token: use lm")
                               : id == QLatin1String("lm")   ? tr("needs a GPT model on text")
                               : id == QLatin1String("conv") ? tr("needs a residual CNN model")
                                                             : tr("needs a vision transformer"));
  }
  m_auxHead->setCurrentIndex(m_auxHead->findData(QString::fromStdString(s.auxHead)));
  m_auxHead->setEnabled(!isLast);
  m_auxHead->setToolTip(isLast ? tr("The last stage learns from the model's own classifier.")
                               : tr("The small classifier that gives this stage its local loss."));
  m_auxHidden->setValue(s.auxHidden);
  m_auxHidden->setEnabled(!isLast && s.auxHead == "mlp");
  m_lrScale->setValue(s.lrScale);
  m_delay->setValue(s.delayMs);
  QStringList problems;
  for (const auto& p : m_doc->problemsForStage(stage))
    problems << QString::fromStdString(p.field + ": " + p.message);
  m_problems->setText(problems.join(QLatin1Char('\n')));
  m_problems->setVisible(!problems.isEmpty());
  m_updating = false;
}

}  // namespace stagewise::ui
