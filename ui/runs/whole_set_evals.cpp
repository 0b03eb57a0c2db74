#include "runs/whole_set_evals.h"

#include <QRegularExpression>
#include <QString>
#include <algorithm>
#include <cmath>

#include "stagewise/engine/metrics.h"

namespace stagewise::ui {

bool hasWholeSetEvaluations(const std::string& series) {
  return series == engine::series::kTestAccuracy || series == engine::series::kTestLoss;
}

std::vector<int64_t> endSteps(const std::vector<storage::EventRecord>& events) {
  static const QRegularExpression re(QStringLiteral("^(?:stopped|completed) after (\\d+) steps"));
  std::vector<int64_t> out;
  for (const auto& e : events) {
    if (e.kind != "stopped" && e.kind != "completed") continue;
    const auto m = re.match(QString::fromStdString(e.message));
    if (m.hasMatch()) out.push_back(m.captured(1).toLongLong());
  }
  return out;
}

std::vector<size_t> wholeSetIndices(const std::vector<storage::SeriesPoint>& points,
                                    const std::vector<int64_t>& ends, std::optional<double> final) {
  std::vector<size_t> out;
  for (int64_t step : ends)
    for (size_t k = points.size(); k-- > 0;)
      if (points[k].step == step) {
        out.push_back(k);
        break;
      }
  // A run recorded without its end events: the summary's value is the last point's.
  if (!points.empty() && final && std::isfinite(*final) &&
      float(points.back().value) == float(*final))
    out.push_back(points.size() - 1);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace stagewise::ui
