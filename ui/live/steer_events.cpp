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
    // "pausing stage 1 refused: why", "change at step 5: KEY=VALUE refused: why".
    static const QRegularExpression refused(
        QStringLiteral("^(repartition to |change of stages\\.|pausing stage |resuming stage |"
                       "change at step ).*? refused: (.*)$"));
    const auto m = refused.match(message);
    if (!m.hasMatch()) return std::nullopt;
    out.kind = SteerEvent::Kind::Refused;
    out.stage = event.stage;
    out.reason = m.captured(2);
    return out;
  }
  if (event.kind != engine::EventKind::Info) return std::nullopt;
  static const QRegularExpression pause(QStringLiteral("^stage (\\d+) (paused|resumed)$"));
  if (const auto m = pause.match(message); m.hasMatch()) {
    out.kind = m.captured(2) == QLatin1String("paused") ? SteerEvent::Kind::StagePause
                                                        : SteerEvent::Kind::StageResume;
    out.stage = m.captured(1).toInt();
    return out;
  }
  const auto change = engine::changeFromEvent(event.message);
  if (!change) return std::nullopt;
  out.change = *change;
  if (change->key == "partition.cuts") {
    out.kind = SteerEvent::Kind::Repartition;
    static const QRegularExpression was(QStringLiteral("\\(was (\\[[0-9,]*\\])\\)"));
    out.before = was.match(message).captured(1);
    // "...; 3 stage(s): 0: layers 0-1, 1: layers 2-2, 2: layers 3-4; ..."
    static const QRegularExpression layers(QStringLiteral("(\\d+): layers (\\d+)-(\\d+)"));
    for (auto it = layers.globalMatch(message); it.hasNext();) {
      const auto m = it.next();
      out.layout.emplace_back(m.captured(2).toInt(), m.captured(3).toInt());
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
