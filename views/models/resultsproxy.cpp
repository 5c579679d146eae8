#include "models/resultsproxy.h"

#include "models/resultsmodel.h"

#include <QRegularExpression>

#include <cmath>

namespace tilescope::views {

namespace {

bool compareNumbers(ResultsFilter::Op op, double a, double b) {
    switch (op) {
    case ResultsFilter::Op::Less:
        return a < b;
    case ResultsFilter::Op::LessEqual:
        return a <= b;
    case ResultsFilter::Op::Greater:
        return a > b;
    case ResultsFilter::Op::GreaterEqual:
        return a >= b;
    case ResultsFilter::Op::Equal:
        return a == b;
    case ResultsFilter::Op::NotEqual:
        return a != b;
    case ResultsFilter::Op::Contains:
        return false;
    }
    return false;
}

bool compareTexts(ResultsFilter::Op op, const QString& a, const QString& b) {
    const int c = QString::compare(a, b, Qt::CaseInsensitive);
    switch (op) {
    case ResultsFilter::Op::Less:
        return c < 0;
    case ResultsFilter::Op::LessEqual:
        return c <= 0;
    case ResultsFilter::Op::Greater:
        return c > 0;
    case ResultsFilter::Op::GreaterEqual:
        return c >= 0;
    case ResultsFilter::Op::Equal:
        return c == 0;
    case ResultsFilter::Op::NotEqual:
        return c != 0;
    case ResultsFilter::Op::Contains:
        return a.contains(b, Qt::CaseInsensitive);
    }
    return false;
}

ResultsFilter::Op opOf(const QString& text) {
    if (text == QLatin1String("<"))
        return ResultsFilter::Op::Less;
    if (text == QLatin1String("<="))
        return ResultsFilter::Op::LessEqual;
    if (text == QLatin1String(">"))
        return ResultsFilter::Op::Greater;
    if (text == QLatin1String(">="))
        return ResultsFilter::Op::GreaterEqual;
    if (text == QLatin1String("!="))
        return ResultsFilter::Op::NotEqual;
    return ResultsFilter::Op::Equal; // "=" and "=="
}

} // namespace

ResultsFilter ResultsFilter::parse(const QString& text, const ResultsModel& model) {
    static const QRegularExpression kAnd(QStringLiteral("\\s+and\\s+"), QRegularExpression::CaseInsensitiveOption);
    static const QRegularExpression kComparison(
        QStringLiteral("^\\s*([^\\s<>=!]+)\\s*(<=|>=|==|!=|=|<|>)\\s*(.*?)\\s*$"));
    ResultsFilter filter;
    for (const QString& part : text.split(kAnd, Qt::SkipEmptyParts)) {
        const QString trimmed = part.trimmed();
        if (trimmed.isEmpty())
            continue;
        Clause clause;
        const QRegularExpressionMatch match = kComparison.match(trimmed);
        if (match.hasMatch() && !match.captured(3).isEmpty()) {
            const QString column = match.captured(1);
            if (model.findColumn(column) >= 0) {
                clause.op = opOf(match.captured(2));
                clause.column = column;
                clause.text = match.captured(3);
                bool ok = false;
                clause.number = clause.text.toDouble(&ok);
                clause.numeric = ok && std::isfinite(clause.number);
                filter.clauses.push_back(clause);
                continue;
            }
            if (filter.error.isEmpty())
                filter.error = QStringLiteral("no column '%1': searching for the text instead").arg(column);
        }
        clause.op = Op::Contains;
        clause.text = trimmed.toLower();
        filter.clauses.push_back(clause);
    }
    return filter;
}

ResultsProxyModel::ResultsProxyModel(QObject* parent)
    : QSortFilterProxyModel(parent) {
    setSortRole(ResultsModel::SortRole);
    setDynamicSortFilter(true);
}

void ResultsProxyModel::setResultsModel(ResultsModel* model) {
    if (m_model)
        disconnect(m_model, nullptr, this, nullptr);
    m_model = model;
    // Columns change on a reset (metrics appear, another session): find the clauses' columns
    // again before this proxy filters the new rows.
    if (m_model)
        connect(m_model, &QAbstractItemModel::modelAboutToBeReset, this, [this]() { m_clauseColumns.clear(); });
    setSourceModel(model);
    reparse();
}

void ResultsProxyModel::setFilterExpression(const QString& text) {
    if (text == m_expression)
        return;
    m_expression = text;
    reparse();
    // All at once: invalidateFilter() would remove the rows that no longer pass one interval at a
    // time, each a signal to the views (minutes for 100,000 scattered rows).
    invalidate();
}

void ResultsProxyModel::reparse() {
    m_filter = m_model ? ResultsFilter::parse(m_expression, *m_model) : ResultsFilter{};
    m_clauseColumns.clear();
}

bool ResultsProxyModel::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
    if (!m_model || sourceParent.isValid() || m_filter.clauses.empty())
        return true;
    if (m_clauseColumns.size() != m_filter.clauses.size()) {
        auto& columns = const_cast<std::vector<int>&>(m_clauseColumns);
        columns.clear();
        for (const ResultsFilter::Clause& clause : m_filter.clauses)
            columns.push_back(clause.op == ResultsFilter::Op::Contains ? -1 : m_model->findColumn(clause.column));
    }
    for (std::size_t i = 0; i < m_filter.clauses.size(); ++i) {
        const ResultsFilter::Clause& clause = m_filter.clauses[i];
        const int column = m_clauseColumns[i];
        if (clause.op == ResultsFilter::Op::Contains || column < 0) {
            if (!m_model->rowText(sourceRow).contains(clause.op == ResultsFilter::Op::Contains ? clause.text
                                                                                               : clause.text.toLower()))
                return false;
            continue;
        }
        if (clause.numeric) {
            const std::optional<double> v = m_model->numberAt(sourceRow, column);
            const bool statusColumn =
                m_model->columns()[static_cast<std::size_t>(column)].kind == ResultsModel::ColumnKind::Status;
            if (!v || statusColumn || !compareNumbers(clause.op, *v, clause.number))
                return false;
        } else if (!compareTexts(clause.op, m_model->textAt(sourceRow, column), clause.text)) {
            return false;
        }
    }
    return true;
}

bool ResultsProxyModel::staticTieLessThan(int column, int left, int right) const {
    // Analysed results alike in the column sorted on go in the order they rank by it (then by
    // what else compiling told, then by the space), not in the order their compiles finished.
    // Occupancy sorts higher first (descending), registers and spills fewer first (ascending).
    const ResultRecord* a = m_model->recordAt(left);
    const ResultRecord* b = m_model->recordAt(right);
    if (!a || !b || !a->ranksStatically() || !b->ranksStatically())
        return false;
    switch (m_model->columns()[static_cast<std::size_t>(column)].kind) {
    case ResultsModel::ColumnKind::TheoreticalOccupancy:
        return ranksBefore(*b, *a, StaticRank::Occupancy);
    case ResultsModel::ColumnKind::Registers:
        return ranksBefore(*a, *b, StaticRank::Registers);
    case ResultsModel::ColumnKind::SpillStores:
    case ResultsModel::ColumnKind::SpillLoads:
        return ranksBefore(*a, *b, StaticRank::Spills);
    default:
        return false;
    }
}

bool ResultsProxyModel::lessThan(const QModelIndex& left, const QModelIndex& right) const {
    if (!m_model)
        return QSortFilterProxyModel::lessThan(left, right);
    const int column = left.column();
    const auto& columns = m_model->columns();
    if (column < 0 || static_cast<std::size_t>(column) >= columns.size())
        return false;
    const ResultsModel::Column& col = columns[static_cast<std::size_t>(column)];
    if (col.numeric || col.kind == ResultsModel::ColumnKind::Status) {
        const std::vector<double>& numbers = m_model->columnNumbers(column);
        const double a = numbers[static_cast<std::size_t>(left.row())];
        const double b = numbers[static_cast<std::size_t>(right.row())];
        const bool hasA = !std::isnan(a);
        const bool hasB = !std::isnan(b);
        if (hasA && hasB && a != b)
            return a < b;
        if (hasA && hasB)
            return staticTieLessThan(column, left.row(), right.row()); // else arrival order: the sort is stable
        if (hasA != hasB) // empty cells after the others, in either order (descending asks lessThan(right, left))
            return sortOrder() == Qt::AscendingOrder ? hasA : hasB;
        if (col.numeric) // both empty; parameters may be strings
            return QString::compare(m_model->textAt(left.row(), column), m_model->textAt(right.row(), column)) < 0;
        return false;
    }
    return QString::compare(m_model->textAt(left.row(), column), m_model->textAt(right.row(), column),
                            Qt::CaseInsensitive) < 0;
}

} // namespace tilescope::views
