#pragma once
// Versions of everything the workbench runs on: Stagewise, Qt, QCustomPlot, LibTorch, BLAS,
// devices and the run store.

#include <QString>

#include "common/services.h"

class QWidget;

namespace stagewise::ui {

/// The About text as HTML (also used by tests).
QString aboutText(const EngineDescription& engine, const QString& storePath);
void showAboutDialog(QWidget* parent, const EngineDescription& engine, const QString& storePath);

}  // namespace stagewise::ui
