#pragma once

// Draws a parameter's per-value counts (ParameterModel::ValueCountsRole) as small bars, one per
// value in value order, heights relative to the largest; a value no valid config keeps is a red
// mark on the baseline, so dead values show at a glance.

#include <QStyledItemDelegate>

namespace tilescope::views {

class ValueBarsDelegate : public QStyledItemDelegate {
    Q_OBJECT
public:
    using QStyledItemDelegate::QStyledItemDelegate;

    void paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const override;
    QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override;
};

} // namespace tilescope::views
