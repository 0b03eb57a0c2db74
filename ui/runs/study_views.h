#pragma once
// A search's study views in one plot frame (Runs → Groups): parallel coordinates (one axis per
// searched key and the choosing metric, log axes for log distributions, pruned trials faint),
// the best value so far against trials, the metric against one searched key (slice), and each
// key's importance. The data comes from study::searchViews (Qt-free, tested there); this only
// draws it, one colour per point of the vary grid.

#include <QWidget>

#include "stagewise/study/search_views.h"

class QComboBox;
class QCustomPlot;

namespace stagewise::ui {

class PlotFrame;

class StudyViews : public QWidget {
  Q_OBJECT
 public:
  enum View { Parallel, BestSoFar, Slice, Importance };
  explicit StudyViews(QWidget* parent = nullptr);

  void setViews(study::SearchViews views);
  const study::SearchViews& views() const { return m_views; }
  QComboBox* viewCombo() const { return m_view; }
  /// The key a slice plots against (a searched key).
  QComboBox* keyCombo() const { return m_key; }
  PlotFrame* frame() const { return m_frame; }
  QCustomPlot* plot() const;

 private:
  void draw();
  void drawParallel();
  void drawBestSoFar();
  void drawSlice();
  void drawImportance();

  study::SearchViews m_views;
  PlotFrame* m_frame;
  QComboBox* m_view;
  QComboBox* m_key;
};

}  // namespace stagewise::ui
