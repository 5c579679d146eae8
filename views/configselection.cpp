#include "configselection.h"

namespace tilescope::views {

ConfigSelection::ConfigSelection(QObject* parent)
    : QObject(parent) {}

void ConfigSelection::addFollower(std::function<void(const QString&)> show) {
    m_followers.push_back(std::move(show));
}

void ConfigSelection::select(const QString& configJson) {
    if (m_selecting || configJson == m_current)
        return;
    m_selecting = true; // the views' own signals while they follow come back here: ignored
    m_current = configJson;
    for (const auto& show : m_followers)
        show(configJson);
    m_selecting = false;
}

} // namespace tilescope::views
