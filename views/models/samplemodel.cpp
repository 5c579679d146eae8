#include "models/samplemodel.h"

#include "common/format.h"
#include "models/spacetypes.h"

namespace tilescope::views {

namespace {

QVariant sortKey(const expr::Value& v) {
    switch (v.kind) {
    case expr::Kind::Int:
    case expr::Kind::Bool:
        return QVariant(static_cast<qlonglong>(v.i));
    case expr::Kind::Float:
        return QVariant(v.f);
    default:
        return QVariant(formatValue(v));
    }
}

} // namespace

SampleModel::SampleModel(QObject* parent)
    : QAbstractTableModel(parent) {}

void SampleModel::setSamples(const std::shared_ptr<const SampleSet>& samples) {
    beginResetModel();
    m_parameters.clear();
    m_rows.clear();
    if (samples && samples->space) {
        const ConfigSpace& space = *samples->space;
        for (int p = 0; p < space.parameterCount(); ++p)
            m_parameters << QString::fromStdString(space.parameterName(p));
        m_rows.reserve(samples->configs.size());
        for (std::size_t i = 0; i < samples->configs.size() && i < samples->indices.size(); ++i) {
            const Config& config = samples->configs[i];
            Row row;
            row.index = samples->indices[i];
            for (int p = 0; p < space.parameterCount(); ++p) {
                const expr::Value& v = space.value(config, p);
                row.values << formatValue(v);
                row.sortKeys.push_back(sortKey(v));
            }
            row.description = QString::fromStdString(space.describe(config));
            m_rows.push_back(std::move(row));
        }
    }
    endResetModel();
}

int SampleModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int SampleModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() || m_parameters.isEmpty() ? 0 : 1 + static_cast<int>(m_parameters.size());
}

QVariant SampleModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row& row = m_rows[static_cast<std::size_t>(index.row())];
    const int p = index.column() - 1;
    switch (role) {
    case Qt::DisplayRole:
        if (index.column() == IndexColumn)
            return formatCount(row.index);
        return row.values.at(p);
    case SortRole:
        if (index.column() == IndexColumn)
            return QVariant(static_cast<qulonglong>(row.index));
        return row.sortKeys[static_cast<std::size_t>(p)];
    case Qt::ToolTipRole:
        return tr("Config %1 of the space\n%2").arg(formatCount(row.index), row.description);
    case Qt::TextAlignmentRole:
        return numberAlignment();
    }
    return {};
}

QVariant SampleModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || section < 0 || section >= columnCount())
        return QAbstractTableModel::headerData(section, orientation, role);
    if (role == Qt::DisplayRole)
        return section == IndexColumn ? tr("Index") : m_parameters.at(section - 1);
    if (role == Qt::ToolTipRole && section == IndexColumn)
        return tr("The config's index in the space (0 to the valid size - 1)");
    if (role == Qt::TextAlignmentRole)
        return numberAlignment();
    return {};
}

QString SampleModel::describe(int row) const {
    if (row < 0 || row >= rowCount())
        return {};
    return m_rows[static_cast<std::size_t>(row)].description;
}

} // namespace tilescope::views
