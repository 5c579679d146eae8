#pragma once

// Sampled configs of a space: one row per config, its index in the space and one column per
// parameter. An immutable snapshot of a SampleSet.

#include <QAbstractTableModel>
#include <QString>
#include <QStringList>
#include <QVariant>

#include <cstdint>
#include <memory>
#include <vector>

namespace tilescope::views {

struct SampleSet;

class SampleModel : public QAbstractTableModel {
    Q_OBJECT
public:
    /// Column 0 is the config's index in the space; column 1 + p is parameter p.
    static constexpr int IndexColumn = 0;
    /// Qt::UserRole: a value to sort by (numbers as numbers).
    static constexpr int SortRole = Qt::UserRole;

    explicit SampleModel(QObject* parent = nullptr);

    /// Takes a snapshot of the samples (null: empty).
    void setSamples(const std::shared_ptr<const SampleSet>& samples);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    /// "BLOCK_M=64 BLOCK_N=128 ..." for a row, as the engine describes configs.
    QString describe(int row) const;

private:
    struct Row {
        std::uint64_t index = 0;
        QStringList values;
        std::vector<QVariant> sortKeys;
        QString description;
    };
    QStringList m_parameters;
    std::vector<Row> m_rows;
};

} // namespace tilescope::views
