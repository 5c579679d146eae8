#include "common/flowlayout.h"

#include <QHBoxLayout>
#include <QStyle>
#include <QWidget>

#include <algorithm>

namespace tilescope::views {

FlowLayout::FlowLayout(QWidget* parent, int horizontalSpacing, int verticalSpacing)
    : QLayout(parent)
    , m_hSpace(horizontalSpacing)
    , m_vSpace(verticalSpacing) {}

FlowLayout::~FlowLayout() {
    while (QLayoutItem* item = takeAt(0))
        delete item;
}

QWidget* FlowLayout::addGroup(std::initializer_list<QWidget*> widgets) {
    QWidget* parent = parentWidget() ? parentWidget() : (*widgets.begin())->parentWidget();
    auto* group = new QWidget(parent);
    auto* row = new QHBoxLayout(group);
    row->setContentsMargins(0, 0, 0, 0);
    for (QWidget* w : widgets)
        row->addWidget(w);
    addWidget(group);
    return group;
}

void FlowLayout::addItem(QLayoutItem* item) {
    m_items.append(item);
}

int FlowLayout::count() const {
    return static_cast<int>(m_items.size());
}

QLayoutItem* FlowLayout::itemAt(int index) const {
    return index >= 0 && index < m_items.size() ? m_items.at(index) : nullptr;
}

QLayoutItem* FlowLayout::takeAt(int index) {
    return index >= 0 && index < m_items.size() ? m_items.takeAt(index) : nullptr;
}

Qt::Orientations FlowLayout::expandingDirections() const {
    return {};
}

bool FlowLayout::hasHeightForWidth() const {
    return true;
}

int FlowLayout::heightForWidth(int width) const {
    return arrange(QRect(0, 0, width, 0), false);
}

QSize FlowLayout::minimumSize() const {
    // As narrow as the widest single item: everything else wraps.
    QSize size;
    for (const QLayoutItem* item : m_items)
        size = size.expandedTo(item->minimumSize());
    const QMargins m = contentsMargins();
    return size + QSize(m.left() + m.right(), m.top() + m.bottom());
}

QSize FlowLayout::sizeHint() const {
    // One row when there is room for it.
    int width = 0;
    int height = 0;
    int visible = 0;
    for (const QLayoutItem* item : m_items) {
        if (item->isEmpty())
            continue;
        width += item->sizeHint().width();
        height = std::max(height, item->sizeHint().height());
        ++visible;
    }
    const QMargins m = contentsMargins();
    return {width + std::max(visible - 1, 0) * horizontalSpacing() + m.left() + m.right(),
            height + m.top() + m.bottom()};
}

void FlowLayout::setGeometry(const QRect& rect) {
    QLayout::setGeometry(rect);
    arrange(rect, true);
}

int FlowLayout::horizontalSpacing() const {
    if (m_hSpace >= 0)
        return m_hSpace;
    const QWidget* w = parentWidget();
    return w ? w->style()->pixelMetric(QStyle::PM_LayoutHorizontalSpacing, nullptr, w) : spacing();
}

int FlowLayout::verticalSpacing() const {
    if (m_vSpace >= 0)
        return m_vSpace;
    const QWidget* w = parentWidget();
    return w ? w->style()->pixelMetric(QStyle::PM_LayoutVerticalSpacing, nullptr, w) : spacing();
}

int FlowLayout::arrange(const QRect& rect, bool apply) const {
    const QMargins m = contentsMargins();
    const QRect area = rect.adjusted(m.left(), m.top(), -m.right(), -m.bottom());
    const int hSpace = std::max(horizontalSpacing(), 0);
    const int vSpace = std::max(verticalSpacing(), 0);
    int x = area.x();
    int y = area.y();
    int rowHeight = 0;
    // Items of a row share its height and are centred in it.
    QList<QPair<QLayoutItem*, QRect>> row;
    const auto flush = [&]() {
        if (apply) {
            for (auto& [item, r] : row)
                item->setGeometry(QRect(r.x(), r.y() + (rowHeight - r.height()) / 2, r.width(), r.height()));
        }
        row.clear();
    };
    for (QLayoutItem* item : m_items) {
        if (item->isEmpty())
            continue;
        const QSize hint = item->sizeHint().boundedTo(QSize(area.width(), QWIDGETSIZE_MAX));
        if (x > area.x() && x + hint.width() > area.right() + 1) {
            flush();
            x = area.x();
            y += rowHeight + vSpace;
            rowHeight = 0;
        }
        row.append({item, QRect(QPoint(x, y), hint)});
        x += hint.width() + hSpace;
        rowHeight = std::max(rowHeight, hint.height());
    }
    flush();
    return y + rowHeight - rect.y() + m.bottom();
}

} // namespace tilescope::views
