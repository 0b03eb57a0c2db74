#include "runs/run_history.h"

#include <QObject>
#include <nlohmann/json.hpp>

#include "live/steer_events.h"

namespace stagewise::ui {

static QString layoutText(const std::vector<std::pair<int, int>>& layout) {
  QStringList parts;
  for (size_t k = 0; k < layout.size(); ++k)
    parts << QObject::tr("S%1 layers %2–%3")
                 .arg(k + 1)
                 .arg(layout[k].first + 1)
                 .arg(layout[k].second + 1);
  return parts.join(QStringLiteral(" · "));
}

RunHistory runHistory(const engine::ExperimentSpec& spec,
                      const std::vector<storage::EventRecord>& events) {
  RunHistory out;
  QString start = spec.partition.cuts.empty()
                      ? QObject::tr("%n stage(s), cut by %1", nullptr, spec.stageCount())
                            .arg(QString::fromStdString(spec.partition.balance))
                      : QObject::tr("cuts %1").arg(cutsLabel(spec.partition.cuts));
  out.partitions << QObject::tr("from step 0: %1").arg(start);
  out.stageCounts.emplace_back(0, spec.stageCount());
  for (const auto& e : events) {
    // Only the engine's applied changes (info); refusals are warnings.
    if (e.kind != "info") continue;
    const auto steer = steerEventFrom({engine::EventKind::Info, e.timeS, e.stage, e.message});
    if (!steer) continue;
    using Kind = SteerEvent::Kind;
    if (steer->kind == Kind::StagePause || steer->kind == Kind::StageResume) {
      // Shown, not replayed: holding a stage changes when its steps run, never what they compute.
      out.lines << (steer->change.step >= 0
                        ? QObject::tr("step %1: %2 (not replayed)").arg(steer->change.step).arg(steer->label())
                        : QObject::tr("%1 (not replayed)").arg(steer->label()));
      continue;
    }
    if (steer->kind != Kind::Repartition && steer->kind != Kind::Setting) continue;
    out.changes.push_back(steer->change);
    QString line = QObject::tr("step %1: %2").arg(steer->change.step).arg(steer->label());
    if (steer->kind == Kind::Repartition) {
      line += QObject::tr(", training paused %1 s").arg(steer->change.pauseS, 0, 'f', 3);
      // The value is the cuts the engine applied ("[2]"): one stage more than cuts.
      const auto cuts = nlohmann::json::parse(steer->change.value, nullptr, false);
      if (cuts.is_array()) out.stageCounts.emplace_back(steer->change.step, int(cuts.size()) + 1);
      out.partitions << QObject::tr("from step %1: %2")
                            .arg(steer->change.step)
                            .arg(steer->layout.empty()
                                     ? QObject::tr("cuts %1").arg(
                                           QString::fromStdString(steer->change.value))
                                     : layoutText(steer->layout));
    }
    out.lines << line;
  }
  return out;
}

namespace {
void differing(const nlohmann::json& mine, const nlohmann::json& base, const std::string& prefix,
               QStringList& out) {
  for (auto it = mine.begin(); it != mine.end(); ++it) {
    const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
    const nlohmann::json* other = base.is_object() && base.contains(it.key()) ? &base[it.key()]
                                                                              : nullptr;
    if (it->is_object()) {
      differing(*it, other ? *other : nlohmann::json::object(), key, out);
    } else if (!other || *other != *it) {
      out << QStringLiteral("%1 = %2").arg(QString::fromStdString(key),
                                           QString::fromStdString(it->dump()));
    }
  }
}
}  // namespace

QStringList settingsDifferingFromDefaults(const engine::ExperimentSpec& spec) {
  QStringList out;
  differing(nlohmann::json::parse(engine::specToJson(spec)),
            nlohmann::json::parse(engine::specToJson(engine::ExperimentSpec{})), "", out);
  // The default 0 micro-batches means one per stage: a pipeline run says the M it used
  // (issue 36: "0" read as none).
  if (spec.mode == engine::Mode::Pipeline && spec.pipeline.microBatches == 0)
    out << QStringLiteral("pipeline.micro_batches = 0 (M=%1)").arg(spec.stageCount());
  return out;
}

}  // namespace stagewise::ui

