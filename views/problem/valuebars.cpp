#include "problem/valuebars.h"

#include "models/parametermodel.h"

#include <QApplication>
#include <QPainter>

#include <algorithm>

namespace tilescope::views {

namespace {
constexpr int kBarWidth = 5;
constexpr int kGap = 2;
constexpr int kMargin = 4;
} // namespace

void ValueBarsDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const {
    QStyleOptionViewItem opt = option;
    initStyleOption(&opt, index);
    opt.text.clear();
    const QWidget* widget = option.widget;
    QStyle* style = widget ? widget->style() : QApplication::style();
    style->drawControl(QStyle::CE_ItemViewItem, &opt, painter, widget);

    const QVariantList counts = index.data(ParameterModel::ValueCountsRole).toList();
    if (counts.isEmpty())
        return;
    double largest = 0;
    for (const QVariant& c : counts)
        largest = std::max(largest, c.toDouble());
    const QRect area = option.rect.adjusted(kMargin, kMargin, -kMargin, -kMargin);
    const int width = std::max(1, std::min(kBarWidth, (area.width() - kGap * static_cast<int>(counts.size())) /
                                                          std::max<int>(1, static_cast<int>(counts.size()))));
    const bool selected = option.state & QStyle::State_Selected;
    const QColor bar = selected ? option.palette.highlightedText().color() : option.palette.text().color();
    painter->save();
    painter->setRenderHint(QPainter::Antialiasing, false);
    int x = area.left();
    for (const QVariant& c : counts) {
        const double n = c.toDouble();
        if (n <= 0) {
            painter->fillRect(QRect(x, area.bottom() - 2, width, 3), QColor(0xd3, 0x2f, 0x2f));
        } else {
            const int h = std::max(1, static_cast<int>(area.height() * (largest > 0 ? n / largest : 0)));
            QColor fill = bar;
            fill.setAlphaF(0.6);
            painter->fillRect(QRect(x, area.bottom() - h + 1, width, h), fill);
        }
        x += width + kGap;
    }
    painter->restore();
}

QSize ValueBarsDelegate::sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const {
    const QSize base = QStyledItemDelegate::sizeHint(option, index);
    const auto values =
        static_cast<int>(std::max<qsizetype>(1, index.data(ParameterModel::ValueCountsRole).toList().size()));
    return {std::max(base.width(), 2 * kMargin + values * (kBarWidth + kGap)), base.height()};
}

} // namespace tilescope::views
