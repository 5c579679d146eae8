#pragma once

// How the main window's panels talk to each other beyond the config picked (ConfigSelection):
// the Compile Check and the Kernel Source panel share an arch and its errors' lines, the Kernel
// Source panel counts a line over the heatmap's results and shows the counts there, and the
// launch warnings of a space go to the error banner.

#include <QStringList>

#include <memory>

class QDockWidget;

namespace tilescope::views {

class CompileCheckPanel;
class ErrorBanner;
class HeatmapWidget;
class KernelSourcePanel;
struct SpaceResult;

/// The source panel reads a config's lines for the check's arch; an error's line double-clicked
/// in the check shows in the source (its dock raised).
void linkCompileCheckToSource(CompileCheckPanel* check, KernelSourcePanel* source, QDockWidget* sourceDock);

/// A line's counts asked for by the source panel are counted over the configs of the heatmap's
/// results, and shown on the heatmap (its dock raised).
void linkSourceToHeatmap(KernelSourcePanel* source, HeatmapWidget* heatmap, QDockWidget* heatmapDock);

/// A launch that cannot be right is said before any GPU time: a warning banner titled for
/// `problemName`, once per problem and shape as long as the warnings stay the same (`shown`, the
/// warnings said last, is updated); an error shown stays, and the banner goes when an edit fixes
/// the launch.
void sayLaunchWarnings(ErrorBanner* banner, const SpaceResult& result, const QString& problemName, QStringList& shown);

} // namespace tilescope::views
