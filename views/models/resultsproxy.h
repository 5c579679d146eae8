#pragma once

// Sorting and filtering of a ResultsModel. A filter is one or more clauses joined by "and":
// "col op value" (op one of < <= > >= == = !=) compares a column, named by its key, header or
// an alias ("regs > 128", "status != ok", "time <= 500", "BLOCK_M == 64"); any other text must
// appear in some cell of the row (ignoring case). Sorting compares numbers as numbers, empty
// cells last, statuses in their natural order (ok first).

#include <QSortFilterProxyModel>
#include <QString>

#include <cstdint>
#include <vector>

namespace tilescope::views {

class ResultsModel;

/// A parsed filter.
struct ResultsFilter {
    enum class Op : std::uint8_t { Less, LessEqual, Greater, GreaterEqual, Equal, NotEqual, Contains };
    struct Clause {
        Op op = Op::Contains;
        QString column; ///< the column's name as written ("" for Contains)
        QString text;   ///< the value as written (lower case for Contains)
        bool numeric = false;
        double number = 0;
    };
    std::vector<Clause> clauses; ///< all must hold; none = every row
    QString error;               ///< why a clause could not be read as a comparison ("" fine)

    /// Parses `text`; `model` names the columns (unknown names make the clause a text search
    /// and set `error`).
    static ResultsFilter parse(const QString& text, const ResultsModel& model);
};

class ResultsProxyModel : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit ResultsProxyModel(QObject* parent = nullptr);

    void setResultsModel(ResultsModel* model);
    ResultsModel* resultsModel() const { return m_model; }

    /// Applies a filter (see the header comment); "" shows every row.
    void setFilterExpression(const QString& text);
    QString filterExpression() const { return m_expression; }
    /// Why part of the filter was taken as plain text ("" when it read fine).
    QString filterError() const { return m_filter.error; }

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;
    bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;

private:
    void reparse();
    /// Whether source row `left` sorts before `right` where both have the same number in
    /// `column`: analysed results by their static rank; false for the others (arrival order).
    bool staticTieLessThan(int column, int left, int right) const;

    ResultsModel* m_model = nullptr;
    QString m_expression;
    ResultsFilter m_filter;
    std::vector<int> m_clauseColumns; // the source column of each clause (-1: text search)
};

} // namespace tilescope::views
