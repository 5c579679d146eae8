#include "plots/plotstyle.h"

#include <qcustomplot.h>

#include <cmath>

namespace tilescope::views {

QCPColorGradient betterIsBrighterGradient(bool higherIsBetter) {
    QCPColorGradient gradient;
    gradient.setColorInterpolation(QCPColorGradient::ciRGB);
    gradient.setColorStops({
        {0.00, QColor(68, 1, 84)},
        {0.25, QColor(59, 82, 139)},
        {0.50, QColor(33, 145, 140)},
        {0.75, QColor(94, 201, 98)},
        {1.00, QColor(253, 231, 37)},
    });
    if (!higherIsBetter)
        gradient = gradient.inverted();
    gradient.setNanHandling(QCPColorGradient::nhTransparent);
    return gradient;
}

QCPScatterStyle failedMarkerStyle(double size) {
    return QCPScatterStyle(QCPScatterStyle::ssCross, QPen(QColor(200, 30, 30), 2), Qt::NoBrush, size);
}

QCPScatterStyle spillMarkerStyle(double size) {
    // Orange on a dark outline: a warning sign that stands out on every colour of the gradient.
    return QCPScatterStyle(QCPScatterStyle::ssTriangle, QPen(QColor(20, 20, 20), 1.2), QBrush(QColor(255, 150, 0)),
                           size);
}

QPen bestOutlinePen() {
    QPen pen(QColor(230, 20, 20), 2.5);
    pen.setJoinStyle(Qt::MiterJoin);
    return pen;
}

QPen selectionPen() {
    QPen pen(Qt::black, 2, Qt::DashLine);
    pen.setJoinStyle(Qt::MiterJoin);
    return pen;
}

QColor textColourOn(const QColor& background) {
    const double luminance = 0.299 * background.redF() + 0.587 * background.greenF() + 0.114 * background.blueF();
    return luminance > 0.5 ? QColor(Qt::black) : QColor(Qt::white);
}

void applyPlotPalette(QCustomPlot* plot, const QPalette& palette) {
    if (!plot)
        return;
    const QColor base = palette.color(QPalette::Base);
    const QColor text = palette.color(QPalette::Text);
    QColor grid = text;
    grid.setAlpha(40);
    plot->setBackground(base);
    auto styleAxis = [&](QCPAxis* axis) {
        QPen basePen = axis->basePen();
        basePen.setColor(text);
        axis->setBasePen(basePen);
        QPen tick = axis->tickPen();
        tick.setColor(text);
        axis->setTickPen(tick);
        QPen sub = axis->subTickPen();
        sub.setColor(text);
        axis->setSubTickPen(sub);
        axis->setTickLabelColor(text);
        axis->setLabelColor(text);
        if (axis->grid()) {
            QPen gridPen = axis->grid()->pen();
            gridPen.setColor(grid);
            axis->grid()->setPen(gridPen);
        }
    };
    for (QCPAxisRect* rect : plot->axisRects()) {
        rect->setBackground(Qt::NoBrush);
        for (QCPAxis* axis : rect->axes())
            styleAxis(axis);
    }
    for (QCPLayoutElement* element : plot->plotLayout()->elements(true)) {
        if (auto* scale = qobject_cast<QCPColorScale*>(element); scale && scale->axis())
            styleAxis(scale->axis());
        else if (auto* title = qobject_cast<QCPTextElement*>(element))
            title->setTextColor(text);
        else if (auto* legend = qobject_cast<QCPLegend*>(element))
            legend->setTextColor(text);
    }
    if (plot->legend) {
        plot->legend->setTextColor(text);
        for (int i = 0; i < plot->legend->itemCount(); ++i)
            if (QCPAbstractLegendItem* item = plot->legend->item(i))
                item->setTextColor(text);
    }
    plot->replot(QCustomPlot::rpQueuedReplot);
}

QString compactNumber(double value) {
    if (!std::isfinite(value))
        return {};
    const double magnitude = std::abs(value);
    if (magnitude >= 1e6)
        return QString::number(value / 1e6, 'f', magnitude >= 1e8 ? 0 : 1) + QLatin1Char('M');
    if (magnitude >= 1e4)
        return QString::number(value / 1e3, 'f', magnitude >= 1e5 ? 0 : 1) + QLatin1Char('k');
    if (magnitude >= 100 || value == std::round(value))
        return QString::number(value, 'f', 0);
    if (magnitude >= 10)
        return QString::number(value, 'f', 1);
    if (magnitude >= 1)
        return QString::number(value, 'f', 2);
    return QString::number(value, 'g', 3);
}

} // namespace tilescope::views
