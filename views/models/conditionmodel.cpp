#include "models/conditionmodel.h"

#include "common/format.h"
#include "models/spacetypes.h"
#include "spec/tuningproblem.h"

#include <QStringList>

namespace tilescope::views {

ConditionModel::ConditionModel(QObject* parent)
    : QAbstractTableModel(parent) {}

void ConditionModel::setProblem(const std::shared_ptr<const TuningProblem>& problem) {
    beginResetModel();
    m_rows.clear();
    m_rawSize = 0;
    if (problem) {
        const expr::Scope scope = problem->scope();
        const int parameterCount = static_cast<int>(problem->parameters.size());
        for (const Condition& c : problem->conditions) {
            Row row;
            row.expression = QString::fromStdString(c.expression);
            // What the expression reads counts, not the T1 "Parameters" list as written.
            try {
                const expr::Expression e = expr::Expression::compile(c.expression, scope);
                QStringList names;
                for (int slot : e.usedSlots())
                    if (slot < parameterCount)
                        names << QString::fromStdString(scope.nameOf(slot));
                row.parameters = names.join(QStringLiteral(", "));
            } catch (const expr::ExprError&) {
                // A loaded problem compiles; a problem made in memory may not: no names then.
            }
            m_rows.push_back(std::move(row));
        }
    }
    endResetModel();
}

void ConditionModel::setStats(const SpaceStats* stats) {
    for (Row& row : m_rows) {
        row.errors.reset();
        row.firstError.clear();
        if (stats)
            row.errors = 0;
    }
    if (stats) {
        for (const ConditionFailure& f : stats->failures) {
            if (f.condition < 0 || f.condition >= static_cast<int>(m_rows.size()))
                continue;
            Row& row = m_rows[static_cast<std::size_t>(f.condition)];
            row.errors = f.count;
            row.firstError = QString::fromStdString(f.firstError);
        }
    }
    emitColumnsChanged(ErrorsColumn, ErrorsColumn);
}

void ConditionModel::setImpact(const std::shared_ptr<const ConditionImpactSet>& impact) {
    m_impactPending = false;
    m_rawSize = impact ? impact->rawSize : 0;
    for (std::size_t i = 0; i < m_rows.size(); ++i) {
        Row& row = m_rows[i];
        row.rejected.reset();
        row.removed.reset();
        if (impact && i < impact->conditions.size()) {
            row.rejected = impact->conditions[i].rejected;
            row.removed = impact->conditions[i].removed;
        }
    }
    emitColumnsChanged(RejectsColumn, RemovesColumn);
}

void ConditionModel::setImpactPending(bool pending) {
    if (pending == m_impactPending)
        return;
    m_impactPending = pending;
    emitColumnsChanged(RejectsColumn, ErrorsColumn);
}

void ConditionModel::emitColumnsChanged(int first, int last) {
    if (!m_rows.empty())
        emit dataChanged(index(0, first), index(rowCount() - 1, last));
}

int ConditionModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int ConditionModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ConditionModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row& row = m_rows[static_cast<std::size_t>(index.row())];
    const QString unknown = m_impactPending ? QStringLiteral("…") : QStringLiteral("—");
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case NumberColumn:
            return index.row() + 1;
        case ExpressionColumn:
            return row.expression;
        case RejectsColumn:
            if (row.rejected && *row.rejected == 0)
                return QStringLiteral("0 %");
            return row.rejected ? formatShare(*row.rejected, m_rawSize) : unknown;
        case RemovesColumn:
            return row.removed ? formatCount(*row.removed) : unknown;
        case ErrorsColumn:
            return row.errors ? formatCount(*row.errors) : unknown;
        }
        break;
    case SortRole:
        switch (index.column()) {
        case NumberColumn:
            return index.row() + 1;
        case RejectsColumn:
            return row.rejected ? QVariant(*row.rejected) : QVariant(-1.0);
        case RemovesColumn:
            return row.removed ? QVariant(static_cast<qulonglong>(*row.removed)) : QVariant(qulonglong(0));
        case ErrorsColumn:
            return row.errors ? QVariant(static_cast<qulonglong>(*row.errors)) : QVariant(qulonglong(0));
        default:
            return data(index, Qt::DisplayRole);
        }
    case Qt::ToolTipRole:
        switch (index.column()) {
        case NumberColumn:
        case ExpressionColumn:
            return tr("%1\nReads: %2")
                .arg(row.expression, row.parameters.isEmpty() ? tr("no parameter") : row.parameters);
        case RejectsColumn:
            if (row.rejected)
                return tr("On its own, this condition rejects %1 of the %2 raw combinations")
                    .arg(formatCount(*row.rejected), formatCount(m_rawSize));
            break;
        case RemovesColumn:
            if (row.removed)
                return *row.removed == 0
                           ? tr("No valid config depends on this condition alone for this shape")
                           : tr("Dropping this condition would add %1 valid configs").arg(formatCount(*row.removed));
            break;
        case ErrorsColumn:
            if (row.errors && *row.errors > 0)
                return tr("Raised %1 times while enumerating (those configs count as invalid).\nFirst: %2")
                    .arg(formatCount(*row.errors), row.firstError);
            break;
        }
        break;
    case Qt::TextAlignmentRole:
        if (index.column() != ExpressionColumn)
            return numberAlignment();
        break;
    }
    return {};
}

QVariant ConditionModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal)
        return QAbstractTableModel::headerData(section, orientation, role);
    if (role == Qt::DisplayRole) {
        switch (section) {
        case NumberColumn:
            return tr("#");
        case ExpressionColumn:
            return tr("Condition");
        case RejectsColumn:
            return tr("Rejects");
        case RemovesColumn:
            return tr("Removes");
        case ErrorsColumn:
            return tr("Errors");
        }
    } else if (role == Qt::ToolTipRole) {
        switch (section) {
        case RejectsColumn:
            return tr("Share of all raw combinations that fail this condition on its own");
        case RemovesColumn:
            return tr("Valid configs that only this condition rejects: dropping it would add this many");
        case ErrorsColumn:
            return tr("How often the condition raised (division by zero, ...) while enumerating");
        }
    } else if (role == Qt::TextAlignmentRole) {
        return section == ExpressionColumn ? textAlignment() : numberAlignment();
    }
    return {};
}

} // namespace tilescope::views
