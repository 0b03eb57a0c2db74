#include "designer/design_document.h"

#include <algorithm>

#include <QUndoCommand>
#include <regex>

#include "common/spec_io.h"
#include "designer/spec_edits.h"
#include "stagewise/engine/dataset.h"

namespace stagewise::ui {

namespace {

class SpecEditCommand : public QUndoCommand {
 public:
  SpecEditCommand(DesignDocument* doc, engine::ExperimentSpec before, engine::ExperimentSpec after,
                  const QString& text, int mergeId)
      : QUndoCommand(text),
        m_doc(doc),
        m_before(std::move(before)),
        m_after(std::move(after)),
        m_mergeId(mergeId) {}
  void undo() override { m_doc->setSpecDirect(m_before); }
  void redo() override { m_doc->setSpecDirect(m_after); }
  int id() const override { return m_mergeId; }
  bool mergeWith(const QUndoCommand* other) override {
    m_after = static_cast<const SpecEditCommand*>(other)->m_after;
    return true;
  }

 private:
  DesignDocument* m_doc;
  engine::ExperimentSpec m_before;
  engine::ExperimentSpec m_after;
  int m_mergeId;
};

class StudyEditCommand : public QUndoCommand {
 public:
  StudyEditCommand(DesignDocument* doc, study::StudyObject before, study::StudyObject after,
                   const QString& text)
      : QUndoCommand(text), m_doc(doc), m_before(std::move(before)), m_after(std::move(after)) {}
  void undo() override { m_doc->setStudyDirect(m_before); }
  void redo() override { m_doc->setStudyDirect(m_after); }

 private:
  DesignDocument* m_doc;
  study::StudyObject m_before;
  study::StudyObject m_after;
};

// "stages[2].device" -> 2, "partition.cuts[1]" -> cut 1.
void locate(DesignProblem& p) {
  static const std::regex stageRe(R"(^stages\[(\d+)\])");
  static const std::regex cutRe(R"(^partition\.cuts\[(\d+)\])");
  std::smatch m;
  if (std::regex_search(p.field, m, stageRe)) p.stage = std::stoi(m[1].str());
  if (std::regex_search(p.field, m, cutRe)) p.cut = std::stoi(m[1].str());
}

}  // namespace

DesignDocument::DesignDocument(EngineDescription engine, QObject* parent)
    : QObject(parent), m_engine(std::move(engine)), m_cores(std::max(1, m_engine.hardwareCores)) {
  recompute();
}

void DesignDocument::setFieldError(const std::string& field, const QString& message) {
  const auto it = m_fieldErrors.find(field);
  if (message.isEmpty() ? it == m_fieldErrors.end()
                        : it != m_fieldErrors.end() && it->second == message)
    return;
  if (message.isEmpty())
    m_fieldErrors.erase(it);
  else
    m_fieldErrors[field] = message;
  recompute();
  Q_EMIT changed();
}

void DesignDocument::load(const engine::ExperimentSpec& spec, const QString& filePath,
                          const study::StudyObject& study) {
  m_undo.clear();
  m_fieldErrors.clear();
  m_spec = spec;
  m_study = study;
  recompute();
  // The canvas edits explicit cuts: resolve balance=flops once, on load.
  if (m_spec.partition.balance == "flops" && !m_plan.layers.empty()) {
    m_spec = resolvedForDesign(m_spec, m_plan);
    recompute();
  }
  m_selectedStage = 0;
  setFilePath(filePath);
  Q_EMIT selectedStageChanged(m_selectedStage);
  Q_EMIT changed();
  Q_EMIT studyChanged();
  Q_EMIT loaded();
}

std::string DesignDocument::studyName() const {
  if (m_study.name && !m_study.name->empty()) return *m_study.name;
  return (m_spec.name.empty() ? std::string("experiment") : m_spec.name) + " study";
}

void DesignDocument::editStudy(const study::StudyObject& next, const QString& text) {
  if (study::studyObjectJson(next) == study::studyObjectJson(m_study)) return;
  m_undo.push(new StudyEditCommand(this, m_study, next, text));
}

void DesignDocument::setStudyDirect(const study::StudyObject& study) {
  m_study = study;
  Q_EMIT studyChanged();
}

void DesignDocument::edit(const engine::ExperimentSpec& next, const QString& text, int mergeId) {
  // A name that still follows the presets' pattern follows the design (issue 36 §3: it said
  // "mlp-fmnist-4stage" after the family became a CNN); a name of the user's own is kept.
  // "mlp-layers-fmnist-4stage" (Edit as layers keeps the family in front) follows too.
  const std::string automatic = autoExperimentName(m_spec);
  const std::string& name = m_spec.name;
  const size_t prefix = name.size() >= automatic.size() ? name.size() - automatic.size() : 0;
  const bool follows = name.size() >= automatic.size() &&
                       name.compare(prefix, automatic.size(), automatic) == 0 &&
                       (prefix == 0 || name[prefix - 1] == '-');
  if (next.name == m_spec.name && follows) {
    engine::ExperimentSpec renamed = next;
    renamed.name = name.substr(0, prefix) + autoExperimentName(next);
    m_undo.push(new SpecEditCommand(this, m_spec, renamed, text, mergeId));
    return;
  }
  m_undo.push(new SpecEditCommand(this, m_spec, next, text, mergeId));
}

void DesignDocument::setSpecDirect(const engine::ExperimentSpec& spec) {
  m_spec = spec;
  recompute();
  if (m_selectedStage >= m_spec.stageCount()) selectStage(m_spec.stageCount() - 1);
  Q_EMIT changed();
}

void DesignDocument::setFilePath(const QString& path) {
  if (path == m_filePath) return;
  m_filePath = path;
  Q_EMIT filePathChanged(path);
}

void DesignDocument::selectStage(int stage) {
  stage = std::clamp(stage, 0, std::max(0, m_spec.stageCount() - 1));
  if (stage == m_selectedStage) return;
  m_selectedStage = stage;
  Q_EMIT selectedStageChanged(stage);
}

void DesignDocument::setEstimateCores(int cores) {
  cores = std::max(1, cores);
  if (cores == m_cores) return;
  m_cores = cores;
  recompute();
  Q_EMIT changed();
}

std::vector<DesignProblem> DesignDocument::problemsForStage(int stage) const {
  std::vector<DesignProblem> out;
  for (const auto& p : m_problems)
    if (p.stage == stage) out.push_back(p);
  return out;
}

QString DesignDocument::problemText(const DesignProblem& p) {
  // A cut's message names it as the canvas does ("cut 2", counted from 1): the JSON path
  // beside it ("partition.cuts[1]", counted from 0) would mix the two numberings.
  if (p.cut >= 0 || p.field.empty()) return QString::fromStdString(p.message);
  return QString::fromStdString(p.field + ": " + p.message);
}

QString DesignDocument::blockReason() const {
  QStringList lines;
  for (const auto& p : m_problems) lines << problemText(p);
  return lines.join(QLatin1Char('\n'));
}

engine::InputShape DesignDocument::inputShapeFor(const engine::DatasetSpec& d) {
  const std::string key = d.kind + "\n" + d.path + "\n" + std::to_string(d.syntheticFeatures) +
                          "\n" + std::to_string(d.syntheticClasses) + "\n" +
                          std::to_string(d.channels) + "\n" +
                          (d.size.size() == 2 ? std::to_string(d.size[0]) + "x" +
                                                    std::to_string(d.size[1])
                                              : std::string());
  if (key != m_probedKey) {
    m_probedKey = key;
    m_probeError.clear();
    try {
      m_probedShape = engine::probeInputShape(d);
    } catch (const std::exception& e) {
      m_probeError = e.what();
      // A stand-in shape keeps the canvas and the estimate useful while the data is missing.
      m_probedShape = {};
      m_probedShape.dims =
          d.kind == "cifar10" ? std::vector<int64_t>{3, 32, 32} : std::vector<int64_t>{1, 28, 28};
      m_probedShape.numClasses = 10;
    }
  }
  m_inputGuessed = !m_probeError.empty();
  return m_probedShape;
}

void DesignDocument::recompute() {
  m_problems.clear();
  m_partition = {};
  m_estimate.reset();
  // A field whose text does not parse holds no value in the spec: until it is fixed, the spec
  // is not what the form shows, so the run waits (it would train the last good value).
  for (const auto& [field, message] : m_fieldErrors)
    m_problems.push_back({field, message.toStdString()});
  const engine::InputShape shape = inputShapeFor(m_spec.dataset);
  // The dataset's folder is the field to fix; an empty one is already named by validation.
  const bool needsPath = m_spec.dataset.kind == "idx" || m_spec.dataset.kind == "cifar10" ||
                         m_spec.dataset.kind == "image_folder";
  if (!m_probeError.empty() && !(needsPath && m_spec.dataset.path.empty()))
    m_problems.push_back({"dataset.path", m_probeError});
  // A bad layer does not empty the canvas: the layers before it are drawn, it is marked.
  m_plan = engine::planModelPrefix(m_spec.model, shape, m_modelError);
  if (!m_modelError.empty()) m_problems.push_back({m_modelError.field, m_modelError.message});
  // The cuts are checked against a model that plans; a partial one would flag every cut past it.
  const int checkedLayers = m_modelError.empty() ? layerCount() : 0;
  for (const auto& p : engine::validateSpec(m_spec, checkedLayers, m_engine.devices))
    m_problems.push_back({p.field, p.message});
  // An invalid spec gets no estimate (batch size 0 is not batch size 1); missing data does, on
  // the stand-in shape.
  const bool valid = std::all_of(m_problems.begin(), m_problems.end(),
                                 [](const DesignProblem& p) { return p.field == "dataset.path"; });
  if (m_modelError.empty() && !m_plan.layers.empty() &&
      engine::validateCuts(m_spec.partition.cuts, layerCount()).empty()) {
    try {
      m_partition = engine::makePartition(m_spec, m_plan, m_spec.partition.cuts);
      if (valid)
        m_estimate = engine::estimateSpeed(m_partition, m_plan, m_spec.train.batchSize, m_cores);
    } catch (const engine::SpecError& e) {
      m_problems.push_back({e.field(), e.message()});
    }
  }
  // Duplicates come from the model being checked twice (plan and validation).
  std::vector<DesignProblem> unique;
  for (auto& p : m_problems) {
    locate(p);
    bool seen = false;
    for (const auto& u : unique) seen |= u.field == p.field && u.message == p.message;
    if (!seen) unique.push_back(p);
  }
  m_problems = std::move(unique);
  m_pipelineWarnings.clear();
  if (m_spec.mode != engine::Mode::Pipeline) {
    engine::ExperimentSpec asPipeline = m_spec;
    asPipeline.mode = engine::Mode::Pipeline;
    for (const auto& p : engine::validateSpec(asPipeline, checkedLayers, m_engine.devices)) {
      if (p.field.rfind("pipeline.", 0) != 0) continue;
      DesignProblem w{p.field, p.message};
      bool seen = false;
      for (const auto& q : m_problems) seen |= q.field == w.field && q.message == w.message;
      if (!seen) m_pipelineWarnings.push_back(w);
    }
  }
}

}  // namespace stagewise::ui
