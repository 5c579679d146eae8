#pragma once

// The conditions of a problem with what each does to the space of the current shape: the share
// of raw combinations it rejects on its own, the valid configs that only it rejects, and how
// often it raised while enumerating. The impact columns fill in when the space controller
// delivers them; until then they read "…".

#include <QAbstractTableModel>
#include <QString>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace tilescope {
class TuningProblem;
struct SpaceStats;
} // namespace tilescope

namespace tilescope::views {

struct ConditionImpactSet;

class ConditionModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { NumberColumn, ExpressionColumn, RejectsColumn, RemovesColumn, ErrorsColumn, ColumnCount };
    /// Qt::UserRole: a value to sort by (numbers as numbers).
    static constexpr int SortRole = Qt::UserRole;

    explicit ConditionModel(QObject* parent = nullptr);

    /// Takes a snapshot of the problem's conditions (null: empty); impact and errors are cleared.
    void setProblem(const std::shared_ptr<const TuningProblem>& problem);
    /// Condition errors from the enumeration (null: unknown).
    void setStats(const SpaceStats* stats);
    /// What each condition removes (null: not known yet).
    void setImpact(const std::shared_ptr<const ConditionImpactSet>& impact);
    /// The impact columns show "…" (computing) when pending, "—" when not known.
    void setImpactPending(bool pending);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row {
        QString expression;
        QString parameters; // the parameters it reads, "BLOCK_M, THREAD_M"
        std::optional<double> rejected;
        std::optional<std::uint64_t> removed;
        std::optional<std::uint64_t> errors;
        QString firstError;
    };
    void emitColumnsChanged(int first, int last);

    std::vector<Row> m_rows;
    double m_rawSize = 0;
    bool m_impactPending = false;
};

} // namespace tilescope::views
