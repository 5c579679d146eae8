#pragma once

// The sessions an export can draw from, one row each, with a check box: what was tuned (kernel,
// shape, device), how many results and the best one. A snapshot: setSessions() replaces it all.
// In exclusive mode (T4 holds one session) checking a row unchecks the others.

#include "model/records.h"

#include <QAbstractTableModel>

#include <memory>
#include <vector>

namespace tilescope::views {

class SessionListModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { SessionColumn, KernelColumn, ShapeColumn, DeviceColumn, ResultsColumn, BestColumn, ColumnCount };

    explicit SessionListModel(QObject* parent = nullptr);

    /// The sessions to list; every one starts checked (only the first with results in exclusive mode).
    void setSessions(std::shared_ptr<const std::vector<SessionData>> sessions);
    std::shared_ptr<const std::vector<SessionData>> sessions() const { return m_sessions; }

    /// Exclusive: at most one row checked. Turning it on keeps the first checked row only; turning
    /// it off checks again the rows checked before.
    void setExclusive(bool exclusive);
    bool isExclusive() const { return m_exclusive; }

    bool isChecked(int row) const;
    void setChecked(int row, bool checked);
    /// The checked rows, ascending.
    std::vector<int> checkedRows() const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

signals:
    /// The set of checked rows changed.
    void checkedChanged();

private:
    struct Row {
        QString best; ///< "0.3956 ms · 43.43 TFLOP/s", or "—"
        int okCount = 0;
        int analysed = 0; ///< compiled and analysed, never run
    };

    void emitCheckColumn();

    std::shared_ptr<const std::vector<SessionData>> m_sessions;
    std::vector<Row> m_rows;
    std::vector<bool> m_checked;
    std::vector<bool> m_beforeExclusive; // the rows checked when exclusive mode began
    bool m_exclusive = false;
};

} // namespace tilescope::views
