#include "problem/parametermodel.h"

#include "common/format.h"
#include "spec/tuningproblem.h"

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
            row.valuesText = QString::fromStdString(p.valuesText);
            row.count = static_cast<int>(p.values.size());
            m_rows.push_back(std::move(row));
        }
    }
    endResetModel();
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
        return index.column() == CountColumn ? QVariant(row.count) : data(index, Qt::DisplayRole);
    case Qt::ToolTipRole:
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
        }
    } else if (role == Qt::ToolTipRole && section == CountColumn) {
        return tr("Number of values the parameter can take");
    } else if (role == Qt::TextAlignmentRole) {
        return section == CountColumn ? numberAlignment() : textAlignment();
    }
    return {};
}

} // namespace tilescope::views
