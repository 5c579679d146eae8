#pragma once

// The table of the cross-GPU view: one row per config, its parameter values, then for each
// quantity one column per arch side by side (registers on sm_80, sm_86, ...; spill bytes; occupancy;
// the limiter), and a column that says what differs. Cells are tinted where a config spills on
// one arch and not on another (red where it spills, green where it does not) and where its
// theoretical occupancy changes between archs (amber). Rows arrive in batches as the compiles
// finish (appendRows); the data is immutable once in.

#include "analysis/staticanalysis.h"

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>
#include <QStringList>

#include <string>
#include <vector>

namespace tilescope::views {

/// One config on every arch.
struct CrossGpuRow {
    std::uint64_t index = 0;             ///< in the ConfigSpace
    QStringList values;                  ///< the parameter values as text
    std::string configJson;              ///< compact JSON, name -> value (for selection sync)
    std::vector<ConfigAnalysis> perArch; ///< one per arch, in the model's arch order
    bool spillDiffers = false;           ///< spills on one arch, compiles without spilling on another
    bool occupancyDiffers = false;       ///< launchable on several archs with different occupancy
    QString differences;                 ///< for people: "spills on sm_90 only · occupancy 25–50 %"
};

/// Fills the derived fields of a row (differences and their text) from its perArch results.
void describeDifferences(CrossGpuRow& row, const std::vector<std::string>& archs);

class CrossGpuModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum class Quantity { Registers, SpillBytes, Occupancy, Limiter };
    static constexpr int kQuantities = 4;
    /// Rows carry this role: their space index (qulonglong) in column 0, their config JSON in every column.
    static constexpr int ConfigJsonRole = Qt::UserRole + 1;
    /// Whether the row differs across archs (bool), for the "only differences" filter.
    static constexpr int DiffersRole = Qt::UserRole + 2;
    /// The number behind a cell, for sorting (NaN-free: missing values sort first).
    static constexpr int SortRole = Qt::UserRole + 3;

    explicit CrossGpuModel(QObject* parent = nullptr);

    /// Clears the table and sets its columns.
    void reset(std::vector<std::string> parameterNames, std::vector<std::string> archs);
    /// Adds analysed configs at the end.
    void appendRows(std::vector<CrossGpuRow> rows);

    const std::vector<std::string>& archs() const { return m_archs; }
    const std::vector<std::string>& parameterNames() const { return m_parameterNames; }
    const std::vector<CrossGpuRow>& rows() const { return m_rows; }
    /// The row of a config (compact JSON, any key order), or -1.
    int rowOf(const QString& configJson) const;

    /// Columns: the index, one per parameter, then kQuantities groups of one column per arch, then "differences".
    int firstArchColumn() const { return 1 + static_cast<int>(m_parameterNames.size()); }
    int column(Quantity quantity, int arch) const;
    int differencesColumn() const { return firstArchColumn() + kQuantities * static_cast<int>(m_archs.size()); }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;

private:
    QVariant archCell(const CrossGpuRow& row, Quantity quantity, int arch, int role) const;

    std::vector<std::string> m_parameterNames;
    std::vector<std::string> m_archs;
    std::vector<CrossGpuRow> m_rows;
};

/// The cross-GPU table as the view shows it: sorted by the number behind a cell (set the sort
/// role to CrossGpuModel::SortRole) and, on request, only the rows that differ across archs.
class CrossGpuProxy : public QSortFilterProxyModel {
    Q_OBJECT
public:
    using QSortFilterProxyModel::QSortFilterProxyModel;

    /// Shows only the rows whose DiffersRole is true (or every row again).
    void setOnlyDifferences(bool on);
    bool onlyDifferences() const { return m_only; }

protected:
    bool filterAcceptsRow(int row, const QModelIndex& parent) const override;

private:
    bool m_only = false;
};

} // namespace tilescope::views
