#include "designer/layer_list_editor.h"

#include <QAbstractItemModel>
#include <QColor>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QPushButton>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>

#include "common/format.h"
#include "common/invalid_outline.h"

namespace stagewise::ui {

namespace {

// The numeric fields each type takes (the rest: the JSON field below them).
struct FieldInfo {
  const char* key;
  const char* label;
  int lo, hi;
  const char* tip;
};
const std::vector<FieldInfo>& fieldsOf(const std::string& type) {
  static const FieldInfo out{"out", "Out", 1, 1 << 20, "Output features (linear) or channels (conv2d)."};
  static const FieldInfo kernel{"kernel", "Kernel", 1, 64, "Kernel side in pixels."};
  static const FieldInfo stride{"stride", "Stride", 0, 64, "Step between windows (0: the default)."};
  static const FieldInfo padding{"padding", "Padding", 0, 64, "Zeros added on each side."};
  static const FieldInfo groups{"groups", "Groups", 1, 4096, "Channel groups (divides both)."};
  static const FieldInfo patch{"patch", "Patch", 1, 1024, "Patch side (divides H and W)."};
  static const FieldInfo dim{"dim", "Width", 0, 65536, "Token width (0: the input's)."};
  static const FieldInfo heads{"heads", "Heads", 1, 256, "Attention heads (divide the width)."};
  static const FieldInfo ratio{"mlp_ratio", "MLP ratio", 1, 64, "MLP hidden width = width × ratio."};
  static const std::map<std::string, std::vector<FieldInfo>> table{
      {"linear", {out}},
      {"conv2d", {out, kernel, stride, padding, groups}},
      {"maxpool2d", {kernel, stride, padding}},
      {"avgpool2d", {kernel, stride, padding}},
      {"patch_embed", {patch, dim}},
      {"transformer_block", {dim, heads, ratio}},
      {"token_embed", {dim}},
      {"causal_block", {dim, heads, ratio}}};
  static const std::vector<FieldInfo> none;
  auto it = table.find(type);
  return it == table.end() ? none : it->second;
}

int64_t fieldValue(const engine::LayerSpec& l, const std::string& key) {
  if (key == "out") return l.out;
  if (key == "kernel") return l.kernel;
  if (key == "stride") return l.stride;
  if (key == "padding") return l.padding;
  if (key == "groups") return l.groups;
  if (key == "patch") return l.patch;
  if (key == "dim") return l.dim;
  if (key == "heads") return l.heads;
  if (key == "mlp_ratio") return l.mlpRatio;
  return 0;
}

void setFieldValue(engine::LayerSpec& l, const std::string& key, double v) {
  const int i = static_cast<int>(v);
  if (key == "out") l.out = static_cast<int64_t>(v);
  else if (key == "kernel") l.kernel = i;
  else if (key == "stride") l.stride = i;
  else if (key == "padding") l.padding = i;
  else if (key == "groups") l.groups = i;
  else if (key == "patch") l.patch = i;
  else if (key == "dim") l.dim = i;
  else if (key == "heads") l.heads = i;
  else if (key == "mlp_ratio") l.mlpRatio = i;
  else if (key == "p") l.p = v;
}

// The row of layer `i` a problem's field names ("model.layers.5.kernel" -> 5), or -1.
int problemRow(const std::string& field) {
  static const std::string prefix = "model.layers.";
  if (field.rfind(prefix, 0) != 0) return -1;
  size_t end = prefix.size();
  while (end < field.size() && std::isdigit(static_cast<unsigned char>(field[end]))) ++end;
  if (end == prefix.size()) return -1;
  return std::stoi(field.substr(prefix.size(), end - prefix.size()));
}

// Cuts that still split `layers` layers into non-empty stages, in order, without repeats.
std::vector<int> validCuts(std::vector<int> cuts, int layers) {
  std::sort(cuts.begin(), cuts.end());
  std::vector<int> out;
  for (int c : cuts)
    if (c > 0 && c < layers && (out.empty() || c > out.back())) out.push_back(c);
  return out;
}

}  // namespace

QStringList LayerListEditor::layerTypes() {
  return {QStringLiteral("linear"),      QStringLiteral("conv2d"),
          QStringLiteral("batchnorm1d"), QStringLiteral("batchnorm2d"),
          QStringLiteral("layernorm"),   QStringLiteral("relu"),
          QStringLiteral("gelu"),        QStringLiteral("silu"),
          QStringLiteral("tanh"),        QStringLiteral("maxpool2d"),
          QStringLiteral("avgpool2d"),   QStringLiteral("adaptive_avgpool2d"),
          QStringLiteral("flatten"),     QStringLiteral("dropout"),
          QStringLiteral("residual"),    QStringLiteral("patch_embed"),
          QStringLiteral("transformer_block"), QStringLiteral("token_embed"),
          QStringLiteral("causal_block")};
}

engine::LayerSpec LayerListEditor::defaultLayer(const std::string& type) {
  engine::LayerSpec l;
  l.type = type;
  if (type == "linear") l.out = 128;
  if (type == "conv2d") l.out = 32, l.kernel = 3, l.padding = 1;
  if (type == "maxpool2d" || type == "avgpool2d") l.kernel = 2;
  if (type == "dropout") l.p = 0.1;
  if (type == "patch_embed") l.patch = 4, l.dim = 64;
  if (type == "transformer_block" || type == "causal_block") l.heads = 4;
  if (type == "token_embed") l.dim = 64;
  if (type == "residual") {
    // Its inner layers are added to its input (a 1x1 projection where the shapes differ).
    l.layers = {defaultLayer("conv2d"), defaultLayer("relu")};
  }
  return l;
}

LayerListEditor::LayerListEditor(DesignDocument* doc, QWidget* parent)
    : QWidget(parent), m_doc(doc) {
  m_list = new QListWidget(this);
  m_list->setDragDropMode(QAbstractItemView::InternalMove);
  m_list->setDefaultDropAction(Qt::MoveAction);
  m_list->setSelectionMode(QAbstractItemView::SingleSelection);
  m_list->setToolTip(tr("The model's layers, in order; each is one cuttable unit on the canvas. "
                        "Drag to reorder."));
  m_list->setMinimumHeight(140);

  m_add = new QToolButton(this);
  m_add->setText(tr("Add layer"));
  m_add->setPopupMode(QToolButton::InstantPopup);
  m_add->setToolTip(tr("Insert a layer after the selected one."));
  auto* menu = new QMenu(m_add);
  for (const QString& type : layerTypes())
    menu->addAction(type, this, [this, type] { addLayer(type); });
  m_add->setMenu(menu);
  m_remove = new QPushButton(tr("Remove"), this);
  m_remove->setToolTip(tr("Delete the selected layer."));
  m_up = new QPushButton(tr("Up"), this);
  m_up->setToolTip(tr("Move the selected layer one place earlier."));
  m_down = new QPushButton(tr("Down"), this);
  m_down->setToolTip(tr("Move the selected layer one place later."));
  auto* buttons = new QHBoxLayout;
  buttons->setContentsMargins(0, 0, 0, 0);
  buttons->addWidget(m_add);
  buttons->addWidget(m_remove);
  buttons->addWidget(m_up);
  buttons->addWidget(m_down);
  buttons->addStretch();

  m_problem = new QLabel(this);
  m_problem->setWordWrap(true);
  m_problem->setStyleSheet(QStringLiteral("color: #c0392b;"));
  m_problem->hide();

  m_fields = new QFormLayout;
  m_fields->setContentsMargins(0, 0, 0, 0);
  for (const char* key : {"out", "kernel", "stride", "padding", "groups", "patch", "dim", "heads",
                          "mlp_ratio"}) {
    auto* spin = new QSpinBox(this);
    spin->setKeyboardTracking(false);
    m_spins.emplace_back(key, spin);
    connect(spin, &QSpinBox::valueChanged, this,
            [this, k = std::string(key)](int v) { setField(k, v); });
  }
  m_p = new QDoubleSpinBox(this);
  m_p->setRange(0, 0.99);
  m_p->setSingleStep(0.05);
  m_p->setKeyboardTracking(false);
  m_p->setToolTip(tr("The share of features dropout zeroes in training."));
  connect(m_p, &QDoubleSpinBox::valueChanged, this, [this](double v) { setField("p", v); });
  m_json = new QLineEdit(this);
  m_json->setToolTip(
      tr("The selected layer as JSON: every field, its name and, for a residual, its inner "
         "layers (docs/experiment-format.md). Enter applies."));

  // The JSON field's error in sight, not only in its tooltip.
  m_jsonError = new QLabel(this);
  m_jsonError->setWordWrap(true);
  m_jsonError->setStyleSheet(QStringLiteral("color: #c0392b;"));
  m_jsonError->hide();

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_list, 1);
  layout->addLayout(buttons);
  layout->addWidget(m_problem);
  layout->addLayout(m_fields);
  layout->addWidget(m_json);
  layout->addWidget(m_jsonError);

  connect(m_list, &QListWidget::currentRowChanged, this, [this] {
    if (!m_updating) showSelected();
  });
  connect(m_remove, &QPushButton::clicked, this, &LayerListEditor::removeSelected);
  connect(m_up, &QPushButton::clicked, this, [this] { moveSelected(-1); });
  connect(m_down, &QPushButton::clicked, this, [this] { moveSelected(1); });
  connect(m_list->model(), &QAbstractItemModel::rowsMoved, this,
          [this](const QModelIndex&, int start, int, const QModelIndex&, int row) {
            if (m_updating) return;
            // Qt's destination row counts the moved row itself when moving down.
            moveLayer(start, row > start ? row - 1 : row);
          });
  connect(m_json, &QLineEdit::returnPressed, this, [this] {
    const int row = m_list->currentRow();
    const auto& spec = m_doc->spec();
    if (row < 0 || row >= int(spec.model.layers.size())) return;
    try {
      const std::string json = engine::applyOverrides(
          engine::specToJson(spec),
          {"model.layers." + std::to_string(row) + "=" + m_json->text().toStdString()});
      engine::ExperimentSpec next = engine::parseSpec(json);
      showJsonError({});
      apply(next.model.layers, spec.partition.cuts, tr("Edit layer %1").arg(row + 1), row);
    } catch (const std::exception& e) {
      showJsonError(QString::fromStdString(e.what()));
    }
  });
  connect(doc, &DesignDocument::changed, this, &LayerListEditor::refresh);
  refresh();
}

QSpinBox* LayerListEditor::fieldSpin(const QString& key) const {
  for (const auto& [k, spin] : m_spins)
    if (QString::fromStdString(k) == key) return spin->isVisibleTo(this) ? spin : nullptr;
  return nullptr;
}

void LayerListEditor::apply(std::vector<engine::LayerSpec> layers, std::vector<int> cuts,
                            const QString& text, int select, int mergeId, int droppedStage) {
  engine::ExperimentSpec next = m_doc->spec();
  next.model.kind = "layers";
  next.model.layers = std::move(layers);
  next.partition.cuts = validCuts(std::move(cuts), int(next.model.layers.size()));
  // A stage that lost its only layer is gone: so is its entry of `stages` (else the list would
  // name more stages than the cut makes); the other stages keep theirs.
  if (droppedStage >= 0 && droppedStage < int(next.stages.size()))
    next.stages.erase(next.stages.begin() + droppedStage);
  if (!next.stages.empty()) next.stages.resize(next.partition.cuts.size() + 1);
  if (engine::specToJson(next) == engine::specToJson(m_doc->spec())) return;
  m_doc->edit(next, text, mergeId);
  if (select >= 0 && select < m_list->count()) m_list->setCurrentRow(select);
}

void LayerListEditor::addLayer(const QString& type) {
  auto layers = m_doc->spec().model.layers;
  const int selected = m_list->currentRow();
  const int at = selected >= 0 ? std::min(selected + 1, int(layers.size())) : int(layers.size());
  layers.insert(layers.begin() + at, defaultLayer(type.toStdString()));
  std::vector<int> cuts = m_doc->spec().partition.cuts;
  for (int& c : cuts)
    if (c >= at) ++c;  // the new layer joins the stage of the layer before it
  apply(std::move(layers), std::move(cuts), tr("Add %1 layer").arg(type), at);
}

void LayerListEditor::removeSelected() {
  auto layers = m_doc->spec().model.layers;
  const int row = m_list->currentRow();
  if (row < 0 || row >= int(layers.size())) return;
  const std::string type = layers[size_t(row)].type;
  layers.erase(layers.begin() + row);
  std::vector<int> cuts = m_doc->spec().partition.cuts;
  // The stage the layer was in, and whether it was that stage's only layer.
  const int stage = int(std::upper_bound(cuts.begin(), cuts.end(), row) - cuts.begin());
  const int first = stage == 0 ? 0 : cuts[size_t(stage - 1)];
  const int last = stage < int(cuts.size()) ? cuts[size_t(stage)] - 1
                                            : int(m_doc->spec().model.layers.size()) - 1;
  const bool emptied = first == last;
  for (int& c : cuts)
    if (c > row) --c;
  if (emptied) {
    // The stage's cut goes with it (the one before it, or the first when it was stage 1).
    const int gone = stage > 0 ? stage - 1 : 0;
    if (gone < int(cuts.size())) cuts.erase(cuts.begin() + gone);
  }
  apply(std::move(layers), std::move(cuts),
        tr("Remove layer %1 (%2)").arg(row + 1).arg(QString::fromStdString(type)),
        std::min(row, int(m_doc->spec().model.layers.size()) - 2), -1, emptied ? stage : -1);
}

void LayerListEditor::moveSelected(int delta) {
  const int row = m_list->currentRow();
  moveLayer(row, row + delta);
}

void LayerListEditor::moveLayer(int from, int to) {
  auto layers = m_doc->spec().model.layers;
  const int n = int(layers.size());
  if (from < 0 || from >= n || to < 0 || to >= n || from == to) {
    refresh();  // a drop that changes nothing: show the spec's order again
    return;
  }
  const engine::LayerSpec moved = layers[size_t(from)];
  layers.erase(layers.begin() + from);
  layers.insert(layers.begin() + to, moved);
  // The cuts stay where they are: the moved layer joins the stage at its new place.
  apply(std::move(layers), m_doc->spec().partition.cuts,
        tr("Move layer %1 to %2").arg(from + 1).arg(to + 1), to);
}

void LayerListEditor::setField(const std::string& key, double value) {
  if (m_updating) return;
  const int row = m_list->currentRow();
  auto layers = m_doc->spec().model.layers;
  if (row < 0 || row >= int(layers.size())) return;
  setFieldValue(layers[size_t(row)], key, value);
  // Stepping one field merges into one undo step (per layer and field).
  const int merge = 5000 + row * 16 + int(std::hash<std::string>{}(key) % 16);
  apply(std::move(layers), m_doc->spec().partition.cuts,
        tr("Layer %1 %2").arg(row + 1).arg(QString::fromStdString(key)), row, merge);
}

void LayerListEditor::refresh() {
  m_updating = true;
  const auto& spec = m_doc->spec();
  const auto& layers = spec.model.layers;
  const auto& plan = m_doc->plan();
  std::map<int, QStringList> problems;
  QStringList general;
  for (const auto& p : m_doc->problems()) {
    if (p.field.rfind("model", 0) != 0) continue;
    const int row = problemRow(p.field);
    (row >= 0 ? problems[row] : general) << DesignDocument::problemText(p);
  }
  const int current = m_list->currentRow();
  m_list->clear();
  for (int i = 0; i < int(layers.size()); ++i) {
    const auto& l = layers[size_t(i)];
    // Layers are numbered from 1, as on the canvas (the JSON path in a problem is 0-based).
    QString text = QStringLiteral("%1  %2").arg(i + 1).arg(QString::fromStdString(l.type));
    if (!l.name.empty()) text += QStringLiteral(" “%1”").arg(QString::fromStdString(l.name));
    // The layers before a bad one are planned: they show their shapes.
    if (i < int(plan.layers.size())) {
      const auto& info = plan.layers[size_t(i)];
      text += QStringLiteral("  → %1").arg(formatShape(info.outShape));
      if (info.params > 0) text += QStringLiteral("  %1 params").arg(formatCount(info.params));
    }
    auto* item = new QListWidgetItem(text, m_list);
    if (i < int(plan.layers.size()))
      item->setToolTip(QString::fromStdString(plan.layers[size_t(i)].description));
    if (auto it = problems.find(i); it != problems.end()) {
      item->setForeground(QColor(0xc0, 0x39, 0x2b));
      item->setText(QStringLiteral("⚠ ") + text);
      item->setToolTip(it->second.join(QLatin1Char('\n')));
    }
  }
  if (current >= 0 && current < m_list->count()) m_list->setCurrentRow(current);
  QStringList all = general;
  for (const auto& [row, list] : problems) all << list;
  m_problem->setText(all.join(QLatin1Char('\n')));
  m_problem->setVisible(!all.isEmpty());
  m_updating = false;
  showSelected();
}

void LayerListEditor::showSelected() {
  m_updating = true;
  const int row = m_list->currentRow();
  const auto& layers = m_doc->spec().model.layers;
  const bool any = row >= 0 && row < int(layers.size());
  m_remove->setEnabled(any);
  m_up->setEnabled(any && row > 0);
  m_down->setEnabled(any && row + 1 < int(layers.size()));
  while (m_fields->rowCount() > 0) {
    // The spin boxes are kept (hidden below); the labels addRow made are not.
    const QFormLayout::TakeRowResult taken = m_fields->takeRow(0);
    if (taken.labelItem) {
      delete taken.labelItem->widget();
      delete taken.labelItem;
    }
    delete taken.fieldItem;
  }
  for (const auto& [key, spin] : m_spins) spin->hide();
  m_p->hide();
  m_json->setEnabled(any);
  if (!any) {
    m_json->clear();
    showJsonError({});
    m_updating = false;
    return;
  }
  const auto& l = layers[size_t(row)];
  for (const FieldInfo& f : fieldsOf(l.type))
    for (const auto& [key, spin] : m_spins)
      if (key == f.key) {
        spin->setRange(f.lo, f.hi);
        // 0 means the type's default (stride 1 for a conv, the kernel for a pool; the input's
        // width): say so rather than show a stride of 0.
        spin->setSpecialValueText(f.lo == 0 ? tr("default") : QString());
        spin->setToolTip(tr(f.tip));
        spin->setValue(int(fieldValue(l, key)));
        spin->show();
        m_fields->addRow(tr(f.label), spin);
      }
  if (l.type == "dropout") {
    m_p->setValue(l.p);
    m_p->show();
    m_fields->addRow(tr("Drop share"), m_p);
  }
  const auto doc = nlohmann::json::parse(engine::specToJson(m_doc->spec()));
  m_json->setText(QString::fromStdString(doc["model"]["layers"][size_t(row)].dump()));
  showJsonError({});
  m_updating = false;
}

void LayerListEditor::showJsonError(const QString& error) {
  setInvalidOutline(m_json, !error.isEmpty());
  m_json->setToolTip(error.isEmpty()
                         ? tr("The selected layer as JSON: every field, its name and, for a "
                              "residual, its inner layers. Enter applies.")
                         : error);
  m_jsonError->setText(error);
  m_jsonError->setVisible(!error.isEmpty());
}

}  // namespace stagewise::ui
