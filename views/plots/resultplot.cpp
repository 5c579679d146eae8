#include "plots/resultplot.h"

#include <qcustomplot.h>

#include <QMouseEvent>
#include <QShowEvent>

namespace tilescope::views {

ResultPlot::ResultPlot(QWidget* parent)
    : QWidget(parent) {}

ResultPlot::~ResultPlot() {
    m_task.stop();
}

bool ResultPlot::savePng(const QString& path, int width, int height) {
    return m_plot->savePng(path, width, height);
}

bool ResultPlot::savePdf(const QString& path, int width, int height) {
    return m_plot->savePdf(path, width, height);
}

bool ResultPlot::waitUntilShown() {
    if (window()->isVisible() && !isVisible()) {
        m_refreshWhenShown = true;
        return true;
    }
    return false;
}

void ResultPlot::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    if (m_refreshWhenShown) {
        m_refreshWhenShown = false;
        refresh();
    }
}

void ResultPlot::notePress(QMouseEvent* event) {
    m_pressed = event->button() == Qt::LeftButton;
    m_pressPos = event->position();
}

bool ResultPlot::isClick(QMouseEvent* event) {
    const bool click =
        m_pressed && event->button() == Qt::LeftButton && (event->position() - m_pressPos).manhattanLength() <= 4;
    m_pressed = false;
    return click;
}

} // namespace tilescope::views
