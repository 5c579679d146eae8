#pragma once

// The tuning parameters of a problem: name, type, values and how many there are. An immutable
// snapshot taken from the problem; replacing the problem resets the model.

#include <QAbstractTableModel>
#include <QString>
#include <QStringList>

#include <memory>
#include <vector>

namespace tilescope {
class TuningProblem;
}

namespace tilescope::views {

class ParameterModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { NameColumn, TypeColumn, ValuesColumn, CountColumn, KeptColumn, ColumnCount };
    /// Qt::UserRole: a value to sort by (numbers as numbers).
    static constexpr int SortRole = Qt::UserRole;
    /// KeptColumn: a QVariantList of doubles, for each value how many valid configs keep it
    /// (empty until known); drawn as small bars.
    static constexpr int ValueCountsRole = Qt::UserRole + 1;

    explicit ParameterModel(QObject* parent = nullptr);

    /// Takes a snapshot of the problem's parameters (null: empty); value counts are cleared.
    void setProblem(const std::shared_ptr<const TuningProblem>& problem);
    /// For each parameter and value, how many valid configs keep it (see ConditionImpactSet);
    /// empty: not known yet.
    void setValueCounts(const std::vector<std::vector<double>>& counts, bool estimated);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row {
        QString name;
        QString type;
        QString values;     // "32, 64, 128, 256"
        QString valuesText; // as written in the file: "[32, 64, 128, 256]" or "range(1, 9)"
        int count = 0;
        QStringList valueLabels;  // each value as shown
        std::vector<double> kept; // per value: valid configs that keep it (empty: unknown)
    };
    bool m_estimated = false;
    std::vector<Row> m_rows;
};

} // namespace tilescope::views
