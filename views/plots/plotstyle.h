#pragma once

// The look shared by the plots: one colour gradient in which better is always brighter (so the
// best cells and points look alike whichever way a quantity ranks), and the markers for failed
// configs, spilling configs, the best cell and the selection.

#include <QColor>
#include <QPen>
#include <QString>

class QCPColorGradient;
class QCPScatterStyle;
class QCustomPlot;
class QPalette;

namespace tilescope::views {

/// Viridis (perceptually uniform, readable in grey and by most colour-blind people), from dark
/// violet (worst) to yellow (best); reversed for quantities where less is better. NaN is transparent.
QCPColorGradient betterIsBrighterGradient(bool higherIsBetter);
/// A red cross over a cell or at a point whose configs all failed.
QCPScatterStyle failedMarkerStyle(double size);
/// A small orange triangle with a dark outline: the config spills registers.
QCPScatterStyle spillMarkerStyle(double size);
QPen bestOutlinePen();
QPen selectionPen();
/// Black or white, whichever reads better on `background` (by perceived luminance).
QColor textColourOn(const QColor& background);
/// Makes a plot follow the widget palette: its background the palette's base colour (white in a
/// light theme, dark in a dark one), axes, ticks, labels, titles and the legend its text colour.
/// The data colours (the gradient, the markers) stay: they are chosen to read on both.
void applyPlotPalette(QCustomPlot* plot, const QPalette& palette);
/// A value in at most four significant digits without an exponent, for labels inside cells:
/// 0.0123, 1.23, 12.3, 123, 1234, 12.3k.
QString compactNumber(double value);

} // namespace tilescope::views
