#include "live/steer_events.h"

#include <QRegularExpression>

namespace stagewise::ui {

QString cutsLabel(const std::vector<int>& cuts) {
  QStringList parts;
  for (const int c : cuts) parts << QString::number(c);
  return QLatin1Char('[') + parts.join(QLatin1Char(',')) + QLatin1Char(']');
}

QString SteerEvent::label() const {
  switch (kind) {
    case Kind::Repartition:
      return QStringLiteral("cuts %1 → %2").arg(before, QString::fromStdString(change.value));
    case Kind::Setting: {
      const QString key = QString::fromStdString(change.key);
      return QStringLiteral("S%1 %2 = %3")
          .arg(stage + 1)
          .arg(key.section(QLatin1Char('.'), 2), QString::fromStdString(change.value));
    }
    case Kind::StagePause:
      return QStringLiteral("S%1 paused").arg(stage + 1);
    case Kind::StageResume:
      return QStringLiteral("S%1 resumed").arg(stage + 1);
    case Kind::Refused:
      return reason;
  }
  return {};
}

std::optional<SteerEvent> steerEventFrom(const engine::RunEvent& event) {
  const QString message = QString::fromStdString(event.message);
  SteerEvent out;
  if (event.kind == engine::EventKind::Warning) {
    // "repartition to [2] refused: why", "change of stages.1.delay_ms refused: why",
    // "pausing S2 refused: why", "change at step 5: KEY=VALUE refused: why".
    static const QRegularExpression refused(
        QStringLiteral("^(repartition to |change of stages\\.|pausing |resuming |"
                       "change at step ).*? refused: (.*)$"));
    const auto m = refused.match(message);
    if (!m.hasMatch()) return std::nullopt;
    out.kind = SteerEvent::Kind::Refused;
    out.stage = event.stage;
    out.reason = m.captured(2);
    return out;
  }
  if (event.kind != engine::EventKind::Info) return std::nullopt;
  // "S2 paused at step 412"; runs stored before stages were numbered from 1 in the engine's
  // messages say "stage 1 paused" (index 1, no step).
  static const QRegularExpression pause(
      QStringLiteral("^(?:S(\\d+)|stage (\\d+)) (paused|resumed)(?: at step (\\d+))?$"));
  if (const auto m = pause.match(message); m.hasMatch()) {
    out.kind = m.captured(3) == QLatin1String("paused") ? SteerEvent::Kind::StagePause
                                                        : SteerEvent::Kind::StageResume;
    out.stage = m.captured(1).isEmpty() ? m.captured(2).toInt() : m.captured(1).toInt() - 1;
    out.change.step = m.captured(4).isEmpty() ? -1 : m.captured(4).toLongLong();
    return out;
  }
  const auto change = engine::changeFromEvent(event.message);
  if (!change) return std::nullopt;
  out.change = *change;
  if (change->key == "partition.cuts") {
    out.kind = SteerEvent::Kind::Repartition;
    static const QRegularExpression was(QStringLiteral("\\(was (\\[[0-9,]*\\])\\)"));
    out.before = was.match(message).captured(1);
    // "...; 3 stage(s): S1: layers 1-2, S2: layers 3-3, S3: layers 4-5; ..." (numbered from 1;
    // runs stored before say "0: layers 0-1", from 0).
    static const QRegularExpression layers(QStringLiteral("(S?)(\\d+): layers (\\d+)-(\\d+)"));
    for (auto it = layers.globalMatch(message); it.hasNext();) {
      const auto m = it.next();
      const int base = m.captured(1).isEmpty() ? 0 : 1;
      out.layout.emplace_back(m.captured(3).toInt() - base, m.captured(4).toInt() - base);
    }
    return out;
  }
  static const QRegularExpression key(QStringLiteral("^stages\\.(\\d+)\\."));
  const auto m = key.match(QString::fromStdString(change->key));
  if (!m.hasMatch()) return std::nullopt;
  out.kind = SteerEvent::Kind::Setting;
  out.stage = m.captured(1).toInt();
  return out;
}

}  // namespace stagewise::ui
