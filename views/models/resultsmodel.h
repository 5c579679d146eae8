#pragma once

// The results of a session as a table: one row per result, in arrival order; columns for the
// parameters, the status, the time, the objective, registers, spill stores and loads, the
// theoretical and the achieved occupancy, every other metric the results carry, and the message.
// It holds an immutable snapshot; a newer snapshot that extends the current one (a live run)
// inserts only the new rows, so views and proxies keep their state.

#include "models/resultssnapshot.h"

#include <QAbstractTableModel>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace tilescope::views {

class ResultsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Role {
        /// A double for numeric cells (NaN when empty), else the display text: what sorting compares.
        SortRole = Qt::UserRole + 1,
        /// The row's config as compact JSON (any column).
        ConfigJsonRole,
        /// The cell for CSV: numbers in full precision, without digit grouping.
        CsvRole,
    };

    enum class ColumnKind : std::uint8_t {
        Parameter,
        Status,
        Time, ///< median, µs
        Objective,
        Registers,
        SpillStores,
        SpillLoads,
        TheoreticalOccupancy,
        AchievedOccupancy, ///< the CUPTI metric behind it
        Metric,            ///< any other metric, by name
        Message,
    };

    struct Column {
        ColumnKind kind = ColumnKind::Status;
        std::string name;    ///< the parameter or metric name
        QString header;      ///< "BLOCK_M", "time (µs)", "TFLOP/s", "regs", ...
        QString key;         ///< what a filter calls it: "BLOCK_M", "time", "regs", "dram__bytes_read.sum", ...
        QStringList aliases; ///< other names a filter accepts ("registers", "us", ...), lower case
        bool numeric = true;
    };

    /// A snapshot extending the current one by more rows than this resets the model instead of
    /// inserting: a sorted proxy then sorts once, rather than inserting each row at its place.
    static constexpr int kInsertLimit = 512;

    explicit ResultsModel(QObject* parent = nullptr);
    ~ResultsModel() override;

    /// Shows `results` (null: none), whose configs have `parameterNames` (in order), with the
    /// session's objective ("TFLOP/s"; "" none).
    void setResults(ResultsSnapshot results, std::vector<std::string> parameterNames, std::string objectiveName);
    void clear();

    ResultsSnapshot results() const { return m_results; }
    const std::vector<std::string>& parameterNames() const { return m_parameterNames; }
    const std::string& objectiveName() const { return m_objectiveName; }
    const std::vector<Column>& columns() const { return m_columns; }
    /// The column of a kind (and name, for parameters and metrics), or -1.
    int columnOf(ColumnKind kind, const std::string& name = {}) const;
    /// The column a filter names: its key, header or an alias, ignoring case; -1 if none.
    int findColumn(const QString& name) const;

    /// The compact JSON of the config in `row` ("" out of range).
    QString configJsonAt(int row) const;
    /// The row of the config (compact JSON, as configJsonAt gives), or -1.
    int rowOfConfig(const QString& configJson) const;
    const ResultRecord* recordAt(int row) const;

    /// The cell's number (nullopt when empty or not numeric): what filters and sorting compare.
    std::optional<double> numberAt(int row, int column) const;
    /// The cell as shown.
    QString textAt(int row, int column) const;
    /// The cell for CSV.
    QString csvAt(int row, int column) const;
    /// Every cell of the row as shown, joined and lower-cased (cached): what a text filter searches.
    const QString& rowText(int row) const;
    /// The numbers of a column, one per row (NaN when empty), built when first asked and kept
    /// up to date as rows arrive: what sorting compares (a lookup instead of a JSON search).
    const std::vector<double>& columnNumbers(int column) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<Column> buildColumns(const std::vector<std::string>& metrics) const;
    void appendNumbers(int column, std::vector<double>& numbers) const;
    bool extends(const ResultsSnapshot& next, const std::vector<std::string>& parameterNames,
                 const std::string& objectiveName) const;

    ResultsSnapshot m_results;
    std::vector<std::string> m_parameterNames;
    std::string m_objectiveName;
    std::vector<std::string> m_metricNames; // the metric columns, in first-seen order
    std::vector<Column> m_columns;
    mutable std::vector<QString> m_rowText;                     // lazily filled
    mutable std::vector<std::vector<double>> m_columnNumbers;   // per column, lazily built (empty: not yet)
    mutable std::unordered_map<std::string, int> m_rowOfConfig; // lazily built, up to m_indexedRows
    mutable int m_indexedRows = 0;
};

} // namespace tilescope::views
