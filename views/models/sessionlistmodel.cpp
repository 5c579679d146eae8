#include "models/sessionlistmodel.h"

#include "common/format.h"

#include <QLocale>

#include <algorithm>

namespace tilescope::views {

SessionListModel::SessionListModel(QObject* parent)
    : QAbstractTableModel(parent) {}

void SessionListModel::setSessions(std::shared_ptr<const std::vector<SessionData>> sessions) {
    beginResetModel();
    m_sessions = std::move(sessions);
    m_rows.clear();
    m_checked.clear();
    m_beforeExclusive.clear();
    if (m_sessions) {
        for (const SessionData& session : *m_sessions) {
            Row row;
            row.okCount = static_cast<int>(
                std::count_if(session.results.begin(), session.results.end(), [](const auto& r) { return r.ok(); }));
            row.analysed = static_cast<int>(std::count_if(session.results.begin(), session.results.end(),
                                                          [](const auto& r) { return r.ranksStatically(); }));
            if (const auto best = bestOf(session.results); best && best->ranksStatically()) {
                row.best = tr("%1 (not timed)").arg(QString::fromStdString(describeStatic(*best)));
            } else if (best) {
                row.best = QStringLiteral("%1 ms").arg(QLocale().toString(best->timeMs(), 'g', 4));
                if (best->objective && !session.info.objectiveName.empty())
                    row.best += QStringLiteral(" · %1 %2")
                                    .arg(QLocale().toString(*best->objective, 'f', 2),
                                         QString::fromStdString(session.info.objectiveName));
            } else {
                row.best = QStringLiteral("—");
            }
            m_rows.push_back(row);
        }
        m_checked.assign(m_rows.size(), !m_exclusive);
        m_beforeExclusive.assign(m_rows.size(), true);
        if (m_exclusive && !m_rows.empty()) {
            const auto withResults =
                std::find_if(m_rows.begin(), m_rows.end(), [](const Row& r) { return r.okCount + r.analysed > 0; });
            m_checked[withResults == m_rows.end() ? 0 : static_cast<std::size_t>(withResults - m_rows.begin())] = true;
        }
    }
    endResetModel();
    emit checkedChanged();
}

void SessionListModel::setExclusive(bool exclusive) {
    if (exclusive == m_exclusive)
        return;
    m_exclusive = exclusive;
    if (!exclusive) {
        // Back from one session to several: the choice from before, with the one picked since.
        if (m_beforeExclusive.size() == m_checked.size()) {
            for (std::size_t i = 0; i < m_checked.size(); ++i)
                m_checked[i] = m_checked[i] || m_beforeExclusive[i];
            emitCheckColumn();
            emit checkedChanged();
        }
        return;
    }
    m_beforeExclusive = m_checked;
    bool seen = false;
    for (std::size_t i = 0; i < m_checked.size(); ++i) {
        if (m_checked[i] && seen)
            m_checked[i] = false;
        seen = seen || m_checked[i];
    }
    if (!seen && !m_checked.empty())
        m_checked.front() = true;
    emitCheckColumn();
    emit checkedChanged();
}

bool SessionListModel::isChecked(int row) const {
    return row >= 0 && row < static_cast<int>(m_checked.size()) && m_checked[static_cast<std::size_t>(row)];
}

void SessionListModel::setChecked(int row, bool checked) {
    if (row < 0 || row >= static_cast<int>(m_checked.size()) || isChecked(row) == checked)
        return;
    if (m_exclusive && checked)
        std::fill(m_checked.begin(), m_checked.end(), false);
    m_checked[static_cast<std::size_t>(row)] = checked;
    emitCheckColumn();
    emit checkedChanged();
}

std::vector<int> SessionListModel::checkedRows() const {
    std::vector<int> rows;
    for (std::size_t i = 0; i < m_checked.size(); ++i)
        if (m_checked[i])
            rows.push_back(static_cast<int>(i));
    return rows;
}

void SessionListModel::emitCheckColumn() {
    if (!m_rows.empty())
        emit dataChanged(index(0, SessionColumn), index(rowCount() - 1, SessionColumn), {Qt::CheckStateRole});
}

int SessionListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int SessionListModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant SessionListModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || !checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const auto row = static_cast<std::size_t>(index.row());
    const SessionInfo& info = (*m_sessions)[row].info;
    if (role == Qt::CheckStateRole && index.column() == SessionColumn)
        return m_checked[row] ? Qt::Checked : Qt::Unchecked;
    if (role == Qt::TextAlignmentRole)
        return index.column() == ResultsColumn || index.column() == BestColumn ? numberAlignment() : textAlignment();
    if (role == Qt::ToolTipRole) {
        QString tip = tr("Backend: %1").arg(QString::fromStdString(info.backend.empty() ? "—" : info.backend));
        if (!info.strategy.empty())
            tip += QLatin1Char('\n') +
                   tr("Strategy: %1, seed %2").arg(QString::fromStdString(info.strategy)).arg(info.seed);
        if (!info.startedAt.empty())
            tip += QLatin1Char('\n') + tr("Started: %1").arg(QString::fromStdString(info.startedAt));
        return tip;
    }
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case SessionColumn:
        return QString::number(info.id > 0 ? info.id : index.row() + 1);
    case KernelColumn:
        return info.kernel.empty() ? QStringLiteral("—") : QString::fromStdString(info.kernel);
    case ShapeColumn: {
        const std::string shape = info.shapeLabel();
        return shape.empty() ? QStringLiteral("—") : QString::fromStdString(shape);
    }
    case DeviceColumn:
        return info.deviceName.empty() ? QStringLiteral("—") : QString::fromStdString(info.deviceName);
    case ResultsColumn: {
        const auto total = (*m_sessions)[row].results.size();
        const int ok = m_rows[row].okCount;
        const int analysed = m_rows[row].analysed;
        if (analysed > 0 && ok == 0)
            return static_cast<std::size_t>(analysed) == total
                       ? tr("%1 analysed").arg(formatCount(std::uint64_t(total)))
                       : tr("%1 (%2 analysed)")
                             .arg(formatCount(std::uint64_t(total)), formatCount(std::uint64_t(analysed)));
        return static_cast<std::size_t>(ok) == total
                   ? formatCount(std::uint64_t(total))
                   : tr("%1 (%2 ok)").arg(formatCount(std::uint64_t(total)), formatCount(std::uint64_t(ok)));
    }
    case BestColumn:
        return m_rows[row].best;
    default:
        return {};
    }
}

bool SessionListModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (!index.isValid() || !checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid) ||
        role != Qt::CheckStateRole || index.column() != SessionColumn)
        return false;
    const bool checked = value.toInt() == Qt::Checked;
    if (m_exclusive && !checked && checkedRows().size() == 1 && isChecked(index.row()))
        return false; // T4 needs one session: pick another rather than none
    setChecked(index.row(), checked);
    return true;
}

Qt::ItemFlags SessionListModel::flags(const QModelIndex& index) const {
    if (!index.isValid() || !checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return Qt::NoItemFlags;
    Qt::ItemFlags flags = Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemNeverHasChildren;
    if (index.column() == SessionColumn)
        flags |= Qt::ItemIsUserCheckable;
    return flags;
}

QVariant SessionListModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return QAbstractTableModel::headerData(section, orientation, role);
    if (role == Qt::TextAlignmentRole)
        return section == ResultsColumn || section == BestColumn ? numberAlignment() : textAlignment();
    if (role != Qt::DisplayRole)
        return {};
    switch (section) {
    case SessionColumn:
        return tr("Session");
    case KernelColumn:
        return tr("Kernel");
    case ShapeColumn:
        return tr("Shape");
    case DeviceColumn:
        return tr("Device");
    case ResultsColumn:
        return tr("Results");
    case BestColumn:
        return tr("Best");
    default:
        return {};
    }
}

} // namespace tilescope::views
