#include "models/parametermodel.h"

#include "common/format.h"
#include "spec/tuningproblem.h"

#include <algorithm>

namespace tilescope::views {

ParameterModel::ParameterModel(QObject* parent)
    : QAbstractTableModel(parent) {}

void ParameterModel::setProblem(const std::shared_ptr<const TuningProblem>& problem) {
    beginResetModel();
    m_rows.clear();
    if (problem) {
        m_rows.reserve(problem->parameters.size());
        for (const TuningParameter& p : problem->parameters) {
            Row row;
            row.name = QString::fromStdString(p.name);
            row.type = QString::fromStdString(p.type);
            QStringList values;
            values.reserve(static_cast<qsizetype>(p.values.size()));
            for (const expr::Value& v : p.values)
                values << formatValue(v);
            row.values = values.join(QStringLiteral(", "));
            row.valueLabels = values;
            row.valuesText = QString::fromStdString(p.valuesText);
            row.count = static_cast<int>(p.values.size());
            m_rows.push_back(std::move(row));
        }
    }
    endResetModel();
}

void ParameterModel::setValueCounts(const std::vector<std::vector<double>>& counts, bool estimated) {
    m_estimated = estimated;
    for (std::size_t r = 0; r < m_rows.size(); ++r) {
        const bool fits = r < counts.size() && counts[r].size() == static_cast<std::size_t>(m_rows[r].count);
        m_rows[r].kept = fits ? counts[r] : std::vector<double>();
    }
    if (!m_rows.empty())
        emit dataChanged(index(0, KeptColumn), index(rowCount() - 1, KeptColumn));
}

int ParameterModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int ParameterModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ParameterModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row& row = m_rows[static_cast<std::size_t>(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case NameColumn:
            return row.name;
        case TypeColumn:
            return row.type;
        case ValuesColumn:
            return row.values;
        case CountColumn:
            return row.count;
        }
        break;
    case SortRole:
        if (index.column() == KeptColumn) {
            // Parameters with dead values first when sorted ascending.
            return row.kept.empty() ? QVariant() : QVariant(*std::min_element(row.kept.begin(), row.kept.end()));
        }
        return index.column() == CountColumn ? QVariant(row.count) : data(index, Qt::DisplayRole);
    case ValueCountsRole:
        if (index.column() == KeptColumn) {
            QVariantList list;
            for (double k : row.kept)
                list << k;
            return list;
        }
        break;
    case Qt::ToolTipRole:
        if (index.column() == KeptColumn) {
            if (row.kept.empty())
                return tr("How many valid configs keep each value: counting…");
            QStringList lines;
            int dead = 0;
            for (std::size_t v = 0; v < row.kept.size(); ++v) {
                const bool none = row.kept[v] <= 0;
                dead += none ? 1 : 0;
                lines << tr("%1 = %2: %3%4")
                             .arg(row.name, row.valueLabels.value(static_cast<qsizetype>(v)),
                                  m_estimated && !none ? QStringLiteral("≈ ") : QString(),
                                  none ? tr("no valid config (a dead value)") : formatCount(row.kept[v]));
            }
            QString head = m_estimated ? tr("Valid configs that keep each value (estimated from a sample):")
                                       : tr("Valid configs that keep each value:");
            if (dead > 0)
                head += QLatin1Char('\n') + tr("%n dead value(s): no condition-satisfying config uses them", "", dead);
            return head + QLatin1Char('\n') + lines.join(QLatin1Char('\n'));
        }
        if (index.column() == ValuesColumn || index.column() == NameColumn)
            return tr("%1: %2 values\nAs written: %3").arg(row.name).arg(row.count).arg(row.valuesText);
        break;
    case Qt::TextAlignmentRole:
        if (index.column() == CountColumn)
            return numberAlignment();
        break;
    }
    return {};
}

QVariant ParameterModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal)
        return QAbstractTableModel::headerData(section, orientation, role);
    if (role == Qt::DisplayRole) {
        switch (section) {
        case NameColumn:
            return tr("Parameter");
        case TypeColumn:
            return tr("Type");
        case ValuesColumn:
            return tr("Values");
        case CountColumn:
            return tr("Count");
        case KeptColumn:
            return tr("Kept");
        }
    } else if (role == Qt::ToolTipRole && section == CountColumn) {
        return tr("Number of values the parameter can take");
    } else if (role == Qt::ToolTipRole && section == KeptColumn) {
        return tr("For each value, how many valid configs keep it (a red mark: a dead value no valid config uses)");
    } else if (role == Qt::TextAlignmentRole) {
        return section == CountColumn ? numberAlignment() : textAlignment();
    }
    return {};
}

} // namespace tilescope::views
