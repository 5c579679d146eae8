#include "models/crossgpumodel.h"

#include "common/format.h"

#include <nlohmann/json.hpp>

#include <QBrush>
#include <QColor>
#include <QLocale>

#include <algorithm>
#include <cmath>

namespace tilescope::views {

namespace {

// Translucent tints: they blend with the view's base colour, so they read on light and dark palettes.
QBrush spillTint() {
    return QColor(230, 60, 60, 80);
}
QBrush cleanTint() {
    return QColor(60, 170, 90, 70);
}
QBrush occupancyTint() {
    return QColor(240, 170, 0, 90);
}

QString limiterText(Limiter limiter) {
    QString name =
        QString::fromLatin1(limiterName(limiter).data(), static_cast<qsizetype>(limiterName(limiter).size()));
    return name.replace(QLatin1Char('_'), QLatin1Char(' '));
}

bool occupancyKnown(const ConfigAnalysis& a) {
    return a.compiled() && a.geometry.error.empty() && a.occupancy.launchable;
}

QString bytes(std::int64_t n) {
    return QObject::tr("%1 B").arg(QLocale().toString(static_cast<qlonglong>(n)));
}

QString archTooltip(const ConfigAnalysis& a) {
    const QString arch = QString::fromStdString(a.arch);
    if (!a.compiled())
        return QObject::tr("%1: %2\n%3")
            .arg(arch,
                 a.status == CompileStatus::Cancelled ? QObject::tr("not compiled (cancelled)")
                                                      : QObject::tr("does not compile"),
                 QString::fromStdString(a.message));
    QString text =
        QObject::tr("%1: %2 registers / thread\nspill stores %3, spill loads %4 per thread (%5)\nstack %6, "
                    "shared memory %7 per block")
            .arg(arch)
            .arg(a.info.registers)
            .arg(bytes(a.info.spillStores), bytes(a.info.spillLoads),
                 QString::fromLatin1(spillClassName(a.spill).data()), bytes(a.info.stackFrame), bytes(a.sharedBytes()));
    if (!a.geometry.error.empty())
        text += QLatin1Char('\n') + QObject::tr("launch geometry: %1").arg(QString::fromStdString(a.geometry.error));
    else if (!a.occupancy.launchable)
        text += QLatin1Char('\n') + QObject::tr("cannot launch: %1").arg(QString::fromStdString(a.occupancy.reason));
    else
        text += QLatin1Char('\n') + QObject::tr("%1 threads / block; occupancy %2 % (%3 of %4 warps, %5 blocks / SM), "
                                                "limited by %6")
                                        .arg(a.geometry.threadsPerBlock())
                                        .arg(QLocale().toString(a.occupancy.percent(), 'f', 1))
                                        .arg(a.occupancy.activeWarps)
                                        .arg(a.occupancy.maxWarps)
                                        .arg(a.occupancy.activeBlocks)
                                        .arg(limiterText(a.occupancy.limiter));
    text += QLatin1Char('\n') + (a.cached ? QObject::tr("from the compile cache")
                                          : QObject::tr("compiled in %1").arg(formatDuration(a.compileSeconds)));
    return text;
}

} // namespace

void describeDifferences(CrossGpuRow& row, const std::vector<std::string>& archs) {
    QStringList spilling, clean;
    double low = 0, high = 0;
    bool anyOccupancy = false;
    for (std::size_t a = 0; a < row.perArch.size() && a < archs.size(); ++a) {
        const ConfigAnalysis& r = row.perArch[a];
        if (!r.compiled())
            continue;
        (r.spills() ? spilling : clean) << QString::fromStdString(archs[a]);
        if (occupancyKnown(r)) {
            const double p = r.occupancy.percent();
            low = anyOccupancy ? std::min(low, p) : p;
            high = anyOccupancy ? std::max(high, p) : p;
            anyOccupancy = true;
        }
    }
    row.spillDiffers = !spilling.isEmpty() && !clean.isEmpty();
    row.occupancyDiffers = anyOccupancy && std::abs(high - low) > 0.05;
    QStringList parts;
    if (row.spillDiffers)
        parts << QObject::tr("spills on %1 only").arg(spilling.join(QStringLiteral(", ")));
    if (row.occupancyDiffers)
        parts
            << QObject::tr("occupancy %1–%2 %").arg(QLocale().toString(low, 'f', 1), QLocale().toString(high, 'f', 1));
    row.differences = parts.join(QStringLiteral(" · "));
}

CrossGpuModel::CrossGpuModel(QObject* parent)
    : QAbstractTableModel(parent) {}

void CrossGpuModel::reset(std::vector<std::string> parameterNames, std::vector<std::string> archs) {
    beginResetModel();
    m_parameterNames = std::move(parameterNames);
    m_archs = std::move(archs);
    m_rows.clear();
    endResetModel();
}

void CrossGpuModel::appendRows(std::vector<CrossGpuRow> rows) {
    if (rows.empty())
        return;
    const int first = rowCount();
    beginInsertRows({}, first, first + static_cast<int>(rows.size()) - 1);
    for (CrossGpuRow& row : rows)
        m_rows.push_back(std::move(row));
    endInsertRows();
}

int CrossGpuModel::rowOf(const QString& configJson) const {
    const nlohmann::json wanted = nlohmann::json::parse(configJson.toStdString(), nullptr, false);
    if (wanted.is_discarded() || !wanted.is_object())
        return -1;
    for (std::size_t i = 0; i < m_rows.size(); ++i) {
        if (nlohmann::json::parse(m_rows[i].configJson, nullptr, false) == wanted)
            return static_cast<int>(i);
    }
    return -1;
}

int CrossGpuModel::column(Quantity quantity, int arch) const {
    return firstArchColumn() + static_cast<int>(quantity) * static_cast<int>(m_archs.size()) + arch;
}

int CrossGpuModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int CrossGpuModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : differencesColumn() + 1;
}

Qt::ItemFlags CrossGpuModel::flags(const QModelIndex& index) const {
    if (!index.isValid() || !checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return Qt::NoItemFlags;
    return Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemNeverHasChildren;
}

QVariant CrossGpuModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || !checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const CrossGpuRow& row = m_rows[static_cast<std::size_t>(index.row())];
    const int column = index.column();
    if (role == ConfigJsonRole)
        return QString::fromStdString(row.configJson);
    if (role == DiffersRole)
        return row.spillDiffers || row.occupancyDiffers;
    if (column == 0) {
        if (role == Qt::DisplayRole)
            return QString::number(row.index);
        if (role == SortRole)
            return static_cast<qulonglong>(row.index);
        if (role == Qt::TextAlignmentRole)
            return numberAlignment();
        return {};
    }
    if (column < firstArchColumn()) {
        const QString& value = row.values.value(column - 1);
        if (role == Qt::DisplayRole)
            return value;
        if (role == SortRole) {
            bool ok = false;
            const double number = value.toDouble(&ok);
            return ok ? QVariant(number) : QVariant(value);
        }
        if (role == Qt::TextAlignmentRole)
            return numberAlignment();
        return {};
    }
    if (column == differencesColumn()) {
        if (role == Qt::DisplayRole || role == Qt::ToolTipRole || role == SortRole)
            return row.differences;
        if (role == Qt::TextAlignmentRole)
            return textAlignment();
        return {};
    }
    const int arches = static_cast<int>(m_archs.size());
    const int offset = column - firstArchColumn();
    return archCell(row, static_cast<Quantity>(offset / arches), offset % arches, role);
}

QVariant CrossGpuModel::archCell(const CrossGpuRow& row, Quantity quantity, int arch, int role) const {
    if (arch < 0 || arch >= static_cast<int>(row.perArch.size()))
        return {};
    const ConfigAnalysis& a = row.perArch[static_cast<std::size_t>(arch)];
    if (role == Qt::ToolTipRole)
        return archTooltip(a);
    if (role == Qt::TextAlignmentRole)
        return quantity == Quantity::Limiter ? textAlignment() : numberAlignment();
    if (role == Qt::BackgroundRole) {
        if (quantity == Quantity::SpillBytes && row.spillDiffers && a.compiled())
            return a.spills() ? spillTint() : cleanTint();
        if ((quantity == Quantity::Occupancy || quantity == Quantity::Limiter) && row.occupancyDiffers &&
            occupancyKnown(a))
            return occupancyTint();
        return {};
    }
    const bool display = role == Qt::DisplayRole;
    if (!display && role != SortRole)
        return {};
    if (!a.compiled()) {
        if (role == SortRole)
            return -1.0;
        if (quantity == Quantity::Limiter)
            return a.status == CompileStatus::Cancelled ? tr("cancelled") : tr("compile error");
        return QStringLiteral("—");
    }
    switch (quantity) {
    case Quantity::Registers:
        return display ? QVariant(QString::number(a.info.registers)) : QVariant(double(a.info.registers));
    case Quantity::SpillBytes: {
        const std::int64_t spill = a.info.spillStores + a.info.spillLoads;
        return display ? QVariant(QLocale().toString(static_cast<qlonglong>(spill))) : QVariant(double(spill));
    }
    case Quantity::Occupancy:
        if (!occupancyKnown(a))
            return display ? QVariant(QStringLiteral("—")) : QVariant(-1.0);
        return display ? QVariant(QLocale().toString(a.occupancy.percent(), 'f', 1)) : QVariant(a.occupancy.percent());
    case Quantity::Limiter:
        if (!a.geometry.error.empty())
            return tr("no geometry");
        if (!a.occupancy.launchable)
            return tr("cannot launch");
        return limiterText(a.occupancy.limiter);
    }
    return {};
}

QVariant CrossGpuModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || section < 0 || section >= columnCount())
        return QAbstractTableModel::headerData(section, orientation, role);
    if (role == Qt::TextAlignmentRole)
        return section == differencesColumn() ? textAlignment() : QVariant(Qt::AlignCenter);
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole)
        return {};
    if (section == 0)
        return role == Qt::DisplayRole ? tr("index") : tr("The config's index in the space");
    if (section < firstArchColumn())
        return QString::fromStdString(m_parameterNames[static_cast<std::size_t>(section - 1)]);
    if (section == differencesColumn())
        return role == Qt::DisplayRole ? tr("differences")
                                       : tr("Where the archs disagree: spilling, or the theoretical occupancy");
    const int arches = static_cast<int>(m_archs.size());
    const int offset = section - firstArchColumn();
    const QString arch = QString::fromStdString(m_archs[static_cast<std::size_t>(offset % arches)]);
    switch (static_cast<Quantity>(offset / arches)) {
    case Quantity::Registers:
        return role == Qt::DisplayRole ? tr("regs\n%1").arg(arch) : tr("Registers per thread on %1").arg(arch);
    case Quantity::SpillBytes:
        return role == Qt::DisplayRole ? tr("spill B\n%1").arg(arch)
                                       : tr("Bytes of spill stores and loads per thread on %1").arg(arch);
    case Quantity::Occupancy:
        return role == Qt::DisplayRole ? tr("occ %\n%1").arg(arch)
                                       : tr("Theoretical occupancy on %1, percent of the SM's warps").arg(arch);
    case Quantity::Limiter:
        return role == Qt::DisplayRole ? tr("limiter\n%1").arg(arch) : tr("What bounds the occupancy on %1").arg(arch);
    }
    return {};
}

void CrossGpuProxy::setOnlyDifferences(bool on) {
    if (on == m_only)
        return;
    m_only = on;
    invalidateFilter();
}

bool CrossGpuProxy::filterAcceptsRow(int row, const QModelIndex& parent) const {
    return !m_only || sourceModel()->index(row, 0, parent).data(CrossGpuModel::DiffersRole).toBool();
}

} // namespace tilescope::views
