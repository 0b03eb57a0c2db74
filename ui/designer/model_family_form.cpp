#include "designer/model_family_form.h"

#include "common/invalid_outline.h"
#include "common/spec_io.h"
#include "designer/layer_list_editor.h"

#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QPushButton>
#include <QToolTip>
#include <QFormLayout>
#include <QLineEdit>
#include <tuple>
#include <QRegularExpression>
#include <QSpinBox>
#include <QStackedWidget>
#include <QVBoxLayout>

namespace stagewise::ui {

std::optional<std::vector<int>> parseWidths(const QString& text) {
  std::vector<int> out;
  for (const QString& part :
       text.split(QRegularExpression(QStringLiteral("[,\\s]+")), Qt::SkipEmptyParts)) {
    bool ok = false;
    const int w = part.toInt(&ok);
    if (!ok) return std::nullopt;
    out.push_back(w);
  }
  if (out.empty()) return std::nullopt;
  return out;
}

static QString joined(const std::vector<int>& values) {
  QStringList parts;
  for (int v : values) parts << QString::number(v);
  return parts.join(QStringLiteral(", "));
}

ModelFamilyForm::ModelFamilyForm(DesignDocument* doc, QWidget* parent)
    : QWidget(parent), m_doc(doc) {
  m_kind = new QComboBox(this);
  m_kind->addItem(tr("MLP"), QStringLiteral("mlp"));
  m_kind->addItem(tr("Residual CNN"), QStringLiteral("cnn"));
  m_kind->addItem(tr("Vision transformer"), QStringLiteral("vit"));
  m_kind->addItem(tr("Layer list (your own)"), QStringLiteral("layers"));
  m_kind->addItem(tr("TorchScript file"), QStringLiteral("torchscript"));
  m_kind->addItem(tr("GPT (language model, text)"), QStringLiteral("gpt"));
  m_kind->setToolTip(
      tr("The model: a family (MLP, residual CNN, ViT), your own list of layers, or a "
         "TorchScript file. Each layer block on the canvas is one cuttable unit (an MLP layer, "
         "a residual block, an encoder block, an entry of the list)."));

  auto* mlp = new QWidget(this);
  m_widths = new QLineEdit(mlp);
  m_widths->setToolTip(
      tr("Hidden widths of the MLP, one per layer, e.g. 512, 512, 256. The "
         "classifier layer is added after them."));
  m_activation = new QComboBox(mlp);
  for (const char* a : {"relu", "gelu", "tanh"})
    m_activation->addItem(QString::fromLatin1(a), QString::fromLatin1(a));
  auto* mlpForm = new QFormLayout(mlp);
  mlpForm->setContentsMargins(0, 0, 0, 0);
  mlpForm->addRow(tr("Widths"), m_widths);
  mlpForm->addRow(tr("Activation"), m_activation);

  auto* cnn = new QWidget(this);
  m_channels = new QLineEdit(cnn);
  m_channels->setToolTip(
      tr("Width of each group of residual blocks, e.g. 16, 32, 64. Groups "
         "after the first halve the image size."));
  m_blocks = new QLineEdit(cnn);
  m_blocks->setToolTip(tr("Residual blocks in each group, e.g. 2, 1, 1 (one entry per group)."));
  auto* cnnForm = new QFormLayout(cnn);
  cnnForm->setContentsMargins(0, 0, 0, 0);
  cnnForm->addRow(tr("Channels"), m_channels);
  cnnForm->addRow(tr("Blocks"), m_blocks);

  auto* vit = new QWidget(this);
  auto* vitForm = new QFormLayout(vit);
  m_vitForm = vitForm;
  vitForm->setContentsMargins(0, 0, 0, 0);
  m_patchSpin = vitSpin(1, 1024,
                        tr("Patch size in pixels (must divide the image height and width)."), 1,
                        tr("ViT patch"), &engine::ModelSpec::patch);
  vitForm->addRow(tr("Patch"), m_patchSpin);
  vitForm->addRow(tr("Width"), vitSpin(1, 65536, tr("Token width."), 2, tr("ViT width"),
                                       &engine::ModelSpec::dim));
  vitForm->addRow(tr("Depth"), vitSpin(1, 256, tr("Encoder blocks."), 3, tr("ViT depth"),
                                       &engine::ModelSpec::depth));
  vitForm->addRow(tr("Heads"), vitSpin(1, 256, tr("Attention heads (must divide the width)."), 4,
                                       tr("ViT heads"), &engine::ModelSpec::heads));
  vitForm->addRow(tr("MLP ratio"), vitSpin(1, 64, tr("MLP hidden width = width × ratio."), 5,
                                           tr("ViT MLP ratio"), &engine::ModelSpec::mlpRatio));

  m_layers = new LayerListEditor(doc, this);
  auto* script = new QWidget(this);
  m_scriptPath = new QLabel(script);
  m_scriptPath->setWordWrap(true);
  m_scriptPath->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_reinit = new QCheckBox(tr("New starting weights from the seed"), script);
  m_reinit->setToolTip(tr("model.reinit: draw the layers' weights from the run's seed instead "
                          "of using the file's."));
  auto* importOther = new QPushButton(tr("Import another…"), script);
  importOther->setToolTip(tr("Import a TorchScript model (torch.jit.script(model).save(path))."));
  auto* scriptForm = new QFormLayout(script);
  scriptForm->setContentsMargins(0, 0, 0, 0);
  scriptForm->addRow(tr("File"), m_scriptPath);
  scriptForm->addRow(m_reinit);
  scriptForm->addRow(importOther);
  connect(importOther, &QPushButton::clicked, this, &ModelFamilyForm::importRequested);
  connect(m_reinit, &QCheckBox::toggled, this, [this](bool on) {
    edit(10, tr("Reinitialise weights"), [on](auto& m) { m.reinit = on; });
  });

  m_pages = new QStackedWidget(this);
  m_pages->addWidget(mlp);
  m_pages->addWidget(cnn);
  m_pages->addWidget(vit);
  m_pages->addWidget(m_layers);
  m_pages->addWidget(script);
  m_editAsLayers = new QPushButton(tr("Edit as layers"), this);
  m_editAsLayers->setToolTip(
      tr("Turn the family into its list of layers (the same network, the same starting weights "
         "for a seed), to add, remove or change layers one by one."));
  connect(m_editAsLayers, &QPushButton::clicked, this, &ModelFamilyForm::editAsLayers);
  auto* top = new QFormLayout;
  top->setContentsMargins(0, 0, 0, 0);
  top->addRow(tr("Model"), m_kind);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(top);
  layout->addWidget(m_pages);
  layout->addWidget(m_editAsLayers, 0, Qt::AlignLeft);

  connect(m_kind, &QComboBox::activated, this, [this] {
    const std::string kind = m_kind->currentData().toString().toStdString();
    if (kind == m_doc->spec().model.kind) return;
    if (kind == "layers") return editAsLayers();
    if (kind == "torchscript") {
      refresh();  // the kind changes once a file is imported
      Q_EMIT importRequested();
      return;
    }
    // Aux heads that only fit another family fall back to the linear head; a GPT reads text
    // and learns each stage from the lm head, an image family reads Fashion-MNIST again.
    engine::ExperimentSpec next = m_doc->spec();
    next.model.kind = kind;
    if (kind == "gpt" && next.dataset.kind != "text") {
      next.dataset.kind = "text";
      next.dataset.path.clear();  // the default corpus (Debian's fortunes)
    } else if (kind != "gpt" && next.dataset.kind == "text") {
      next.dataset.kind = "fashion-mnist";
      next.dataset.path.clear();
    }
    next.model.layers.clear();  // a family is its fields (undo brings the list back)
    next.model.path.clear();
    next.model.reinit = false;
    auto fit = [&](std::string& head) {
      if (kind == "gpt") head = "lm";
      else if ((head == "conv" && kind != "cnn") || (head == "token" && kind != "vit") ||
               head == "lm")
        head = "linear";
    };
    fit(next.stageDefaults.auxHead);
    for (auto& s : next.stages)
      if (s.auxHead) fit(*s.auxHead);
    if (engine::specToJson(next) != engine::specToJson(m_doc->spec()))
      m_doc->edit(next, tr("Model family"), 200);
  });
  listEdit(m_widths, 6, tr("MLP widths"), &engine::ModelSpec::hidden, "model.hidden");
  listEdit(m_channels, 7, tr("CNN channels"), &engine::ModelSpec::channels, "model.channels");
  listEdit(m_blocks, 8, tr("CNN blocks"), &engine::ModelSpec::blocks, "model.blocks");
  connect(m_activation, &QComboBox::activated, this, [this] {
    edit(9, tr("Activation"),
         [v = m_activation->currentData().toString().toStdString()](auto& m) { m.activation = v; });
  });
  connect(doc, &DesignDocument::changed, this, &ModelFamilyForm::refresh);
  refresh();
}

void ModelFamilyForm::editAsLayers() {
  const auto& spec = m_doc->spec();
  if (spec.model.kind == "torchscript") {
    // A TorchScript file's modules are not layer entries: the box goes back, and says why.
    refresh();
    const QString why = tr("A TorchScript model cannot become a layer list: choose a preset or "
                           "a family first, then Layer list (your own).");
    m_kind->setStatusTip(why);
    QToolTip::showText(m_kind->mapToGlobal(QPoint(0, m_kind->height())), why, m_kind);
    return;
  }
  if (spec.model.kind == "layers") return;
  engine::ExperimentSpec next = spec;
  try {
    next.model.layers = engine::familyLayers(spec.model, m_doc->plan().input);
  } catch (const std::exception&) {
    refresh();  // a family with bad fields: its problems are listed; fix them first
    return;
  }
  // Only what a layer list reads is kept: the family's widths and depths now live in the
  // entries, and left in the spec they would read as settings that still apply.
  engine::ModelSpec model;
  model.kind = "layers";  // one entry per family layer: the cuts keep their places
  model.layers = std::move(next.model.layers);
  model.init = spec.model.init;
  next.model = std::move(model);
  // A preset-style name says where the network came from ("cnn-layers-fmnist-4stage"); a name
  // of the user's own is kept.
  if (spec.name == autoExperimentName(spec))
    next.name = spec.model.kind + "-" + autoExperimentName(next);
  m_doc->edit(next, tr("Edit as layers"));
}

QSpinBox* ModelFamilyForm::vitSpin(int lo, int hi, const QString& tip, int field,
                                   const QString& text, int engine::ModelSpec::*member) {
  auto* box = new QSpinBox(this);
  box->setRange(lo, hi);
  box->setToolTip(tip);
  box->setKeyboardTracking(false);
  connect(box, &QSpinBox::valueChanged, this, [this, field, text, member](int v) {
    edit(field, text, [member, v](auto& m) { m.*member = v; });
  });
  m_vit.emplace_back(box, member);
  return box;
}

void ModelFamilyForm::listEdit(QLineEdit* line, int field, const QString& text,
                               std::vector<int> engine::ModelSpec::*member, const char* key) {
  connect(line, &QLineEdit::editingFinished, this, [this, line, field, text, member, key] {
    const auto values = parseWidths(line->text());
    setInvalidOutline(line, !values);
    // Until the text parses, the design cannot run: it would train the last good value.
    m_doc->setFieldError(key, values ? QString()
                                     : tr("'%1' is not a list of whole numbers above 0, such as "
                                          "512, 256")
                                           .arg(line->text()));
    if (values) edit(field, text, [member, v = *values](auto& m) { m.*member = v; });
  });
}

void ModelFamilyForm::edit(int field, const QString& text,
                           const std::function<void(engine::ModelSpec&)>& change) {
  if (m_updating) return;
  engine::ExperimentSpec next = m_doc->spec();
  change(next.model);
  if (engine::specToJson(next) == engine::specToJson(m_doc->spec())) return;
  m_doc->edit(next, text, 200 + field);
}

void ModelFamilyForm::refresh() {
  m_updating = true;
  const auto& m = m_doc->spec().model;
  const int kind = m_kind->findData(QString::fromStdString(m.kind));
  m_kind->setCurrentIndex(kind);
  // A GPT has the ViT's width, depth, heads and MLP ratio (no patch: its tokens are bytes).
  m_pages->setCurrentIndex(m.kind == "gpt" ? 2 : std::max(0, kind));
  if (m_vitForm && m_patchSpin) m_vitForm->setRowVisible(m_patchSpin, m.kind != "gpt");
  // A stacked widget is as tall as its tallest page: let hidden pages take no room.
  for (int i = 0; i < m_pages->count(); ++i)
    m_pages->widget(i)->setSizePolicy(QSizePolicy::Preferred, i == m_pages->currentIndex()
                                                                  ? QSizePolicy::Preferred
                                                                  : QSizePolicy::Ignored);
  // Not adjustSize(): that resized the stack to its hint, half the form's width, until the
  // next full layout (a theme switch); the layout only needs to know the hint changed.
  m_pages->updateGeometry();
  for (auto [line, values, key] :
       {std::tuple{m_widths, &m.hidden, "model.hidden"},
        std::tuple{m_channels, &m.channels, "model.channels"},
        std::tuple{m_blocks, &m.blocks, "model.blocks"}})
    if (!line->hasFocus() && !m_doc->hasFieldError(key)) {
      line->setText(joined(*values));
      setInvalidOutline(line, false);
    }
  m_activation->setCurrentIndex(m_activation->findData(QString::fromStdString(m.activation)));
  m_editAsLayers->setVisible(m.kind == "mlp" || m.kind == "cnn" || m.kind == "vit" ||
                             m.kind == "gpt");
  m_scriptPath->setText(QString::fromStdString(m.path));
  m_reinit->setChecked(m.reinit);
  for (auto& [box, member] : m_vit) box->setValue(m.*member);
  m_updating = false;
}

}  // namespace stagewise::ui
