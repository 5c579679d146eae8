#pragma once

// A layout that places its items left to right and starts a new row when the next one does not
// fit: a bar of many controls (the heatmap's slice combos, one per parameter) takes more rows on
// a narrow screen instead of making the window wider than the screen.

#include <QLayout>
#include <QList>

class QWidget;

namespace tilescope::views {

class FlowLayout : public QLayout {
public:
    explicit FlowLayout(QWidget* parent = nullptr, int horizontalSpacing = -1, int verticalSpacing = -1);
    ~FlowLayout() override;

    /// Puts `widgets` in one box that wraps as a whole (a label and the control it names).
    /// Returns the box (hide it to hide them all).
    QWidget* addGroup(std::initializer_list<QWidget*> widgets);

    void addItem(QLayoutItem* item) override;
    int count() const override;
    QLayoutItem* itemAt(int index) const override;
    QLayoutItem* takeAt(int index) override;
    Qt::Orientations expandingDirections() const override;
    bool hasHeightForWidth() const override;
    int heightForWidth(int width) const override;
    QSize minimumSize() const override;
    QSize sizeHint() const override;
    void setGeometry(const QRect& rect) override;

    int horizontalSpacing() const;
    int verticalSpacing() const;

private:
    /// Lays the items out in `rect` (only measures when `apply` is false); returns the height used.
    int arrange(const QRect& rect, bool apply) const;

    QList<QLayoutItem*> m_items;
    int m_hSpace;
    int m_vSpace;
};

} // namespace tilescope::views
