#pragma once

// One selected config for the whole window: whichever view picks a config (a heatmap cell, a
// scatter point, a table row, a cross-GPU or compare row), every view that follows shows it.

#include <QObject>
#include <QString>

#include <functional>
#include <vector>

namespace tilescope::views {

/// The selected config and the views that pick and follow it.
class ConfigSelection : public QObject {
    Q_OBJECT
public:
    explicit ConfigSelection(QObject* parent = nullptr);

    /// A view whose `signal` (carrying a config's compact JSON) selects a config.
    template <typename View, typename Signal>
    void addSource(View* view, Signal signal) {
        connect(view, signal, this, &ConfigSelection::select);
    }
    /// A view that shows the selection: `show` is called with each new one ("" cleared).
    void addFollower(std::function<void(const QString&)> show);
    /// A view whose member `show` shows the selection.
    template <typename View, typename Result>
    void addFollower(View* view, Result (View::*show)(const QString&)) {
        addFollower([view, show](const QString& configJson) { (view->*show)(configJson); });
    }
    /// A view that both selects configs (`signal`) and shows the selection (`show`).
    template <typename View, typename Signal, typename Result>
    void addView(View* view, Signal signal, Result (View::*show)(const QString&)) {
        addSource(view, signal);
        addFollower(view, show);
    }

    /// Selects a config (compact JSON) in every follower; "" clears. The followers' own signals
    /// while they follow are ignored.
    void select(const QString& configJson);
    QString current() const { return m_current; }

private:
    std::vector<std::function<void(const QString&)>> m_followers;
    QString m_current;
    bool m_selecting = false;
};

} // namespace tilescope::views
