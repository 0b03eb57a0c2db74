#include "stagewise/study/points.h"

#include "stagewise/engine/dataset.h"
#include "stagewise/engine/partition.h"
#include "stagewise/study/results.h"

namespace stagewise::study {

ResolvedPoint resolvePoint(const std::string& baseSpecJson, const StudyPlan& plan,
                           const GridPoint& point, const std::vector<std::string>& devices,
                           ShapeCache& shapes) {
  const std::string where =
      "grid point " + std::to_string(point.index + 1) + " (" + describePoint(plan, point) + ")";
  try {
    ResolvedPoint r;
    r.spec = engine::parseSpec(engine::applyOverrides(baseSpecJson, pointSets(plan, point)));
    const std::string datasetKey = r.spec.dataset.kind + "\n" + r.spec.dataset.path;
    auto it = shapes.find(datasetKey);
    if (it == shapes.end())
      it = shapes.emplace(datasetKey, engine::probeInputShape(r.spec.dataset)).first;
    const engine::ModelPlan model = engine::planModel(r.spec.model, it->second);
    auto problems = engine::validateSpec(r.spec, static_cast<int>(model.layers.size()), devices);
    if (problems.empty()) problems = engine::validatePartition(r.spec, model);
    if (!problems.empty())
      throw StudyError(where + ": " + problems.front().field + ": " + problems.front().message);
    r.identity = specIdentity(engine::specToJson(r.spec));
    return r;
  } catch (const engine::SpecError& e) {
    throw StudyError(where + ": " + e.what());
  } catch (const engine::DatasetError& e) {
    throw StudyError(where + ": " + e.what());
  }
}

std::string pointValuesJson(const GridPoint& point) {
  std::string out = "[";
  for (size_t i = 0; i < point.values.size(); ++i) out += (i ? "," : "") + point.values[i];
  return out + "]";
}

void nameStudyRun(engine::ExperimentSpec& spec, const std::string& studyName, int64_t studyId,
                  const StudyPlan& plan, const GridPoint& point) {
  spec.name = studyName + " · " + describePoint(plan, point);
  if (!spec.checkpoint.dir.empty())
    spec.checkpoint.dir +=
        "/study-" + std::to_string(studyId) + "-run-" + std::to_string(point.index + 1);
}

storage::NewStudy newStudyRecord(const std::string& name, const std::string& baseSpecJson,
                                 const StudyPlan& plan, std::optional<double> target,
                                 size_t points) {
  storage::NewStudy ns;
  ns.name = name;
  ns.baseSpecJson = baseSpecJson;
  for (const auto& k : plan.keys) {
    std::string list = "[";
    for (size_t i = 0; i < k.values.size(); ++i) list += (i ? "," : "") + k.values[i];
    ns.keys.push_back({k.key, list + "]"});
  }
  ns.seeds = plan.seeds;
  ns.sample = plan.sample;
  ns.sampleSeed = static_cast<int64_t>(plan.sampleSeed);
  ns.target = target;
  ns.runsTotal = static_cast<int>(points);
  if (plan.isSearch()) {
    StudyObject search;
    search.search = plan.search;
    ns.searchJson = studyObjectJson(search);
    ns.runsTotal = searchPointCount(plan);
  }
  return ns;
}

StudyPlan planOf(const StudyObject& study) {
  StudyPlan plan;
  plan.keys = study.keys;
  plan.seeds = study.seeds.value_or(1);
  plan.sample = study.sample.value_or(0);
  plan.sampleSeed = static_cast<uint64_t>(study.sampleSeed.value_or(1));
  plan.search = study.search;
  return plan;
}

}  // namespace stagewise::study
