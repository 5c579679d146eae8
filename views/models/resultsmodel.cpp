#include "models/resultsmodel.h"

#include "common/format.h"
#include "models/quantity.h"

#include "measure/metricnames.h"

#include <QBrush>
#include <QColor>

#include <algorithm>
#include <cmath>
#include <limits>

namespace tilescope::views {

namespace {

const Metric* findMetric(const ResultRecord& r, const std::string& name) {
    for (const Metric& m : r.measurement.metrics)
        if (m.name == name)
            return &m;
    return nullptr;
}

// A short key for a metric's label: "local load sectors" -> "local_load_sectors".
QString metricKey(const std::string& name) {
    QString label = qs(metricLabel(name)).toLower();
    label.replace(QLatin1Char('%'), QString());
    label = label.trimmed();
    label.replace(QLatin1Char(' '), QLatin1Char('_'));
    return label;
}

// Metric names in first-seen order, from `from` on, added to `names`. A session has a handful,
// so a scan beats hashing every name of every result.
void collectMetrics(const std::vector<ResultRecord>& results, std::size_t from, std::vector<std::string>& names) {
    for (std::size_t i = from; i < results.size(); ++i)
        for (const Metric& m : results[i].measurement.metrics)
            if (std::find(names.begin(), names.end(), m.name) == names.end() && m.name != kAchievedOccupancyMetric)
                names.push_back(m.name);
}

QString csvNumber(double v) {
    if (v == std::round(v) && std::abs(v) < 1e15)
        return QString::number(static_cast<qlonglong>(v));
    return QString::number(v, 'g', 10);
}

} // namespace

ResultsModel::ResultsModel(QObject* parent)
    : QAbstractTableModel(parent) {
    m_columns = buildColumns({});
}

ResultsModel::~ResultsModel() = default;

std::vector<ResultsModel::Column> ResultsModel::buildColumns(const std::vector<std::string>& metrics) const {
    std::vector<Column> columns;
    for (const std::string& name : m_parameterNames)
        columns.push_back({ColumnKind::Parameter, name, qs(name), qs(name), {}, true});
    columns.push_back({ColumnKind::Status, {}, tr("status"), QStringLiteral("status"), {}, false});
    columns.push_back({ColumnKind::Time,
                       {},
                       tr("time (µs)"),
                       QStringLiteral("time"),
                       {QStringLiteral("us"), QStringLiteral("time_us"), QStringLiteral("µs")},
                       true});
    // Without an objective of its own a session's objective is its time (Kernel Tuner's "time").
    const QString objective = m_objectiveName.empty() ? tr("objective: time (µs)") : qs(m_objectiveName);
    columns.push_back({ColumnKind::Objective,
                       {},
                       objective,
                       QStringLiteral("objective"),
                       {objective.toLower(), objective.toLower().remove(QLatin1Char('/'))},
                       true});
    columns.push_back(
        {ColumnKind::Registers, {}, tr("regs"), QStringLiteral("regs"), {QStringLiteral("registers")}, true});
    columns.push_back({ColumnKind::SpillStores,
                       {},
                       tr("spill st (B)"),
                       QStringLiteral("spill_st"),
                       {QStringLiteral("spill"), QStringLiteral("spills"), QStringLiteral("spill_stores")},
                       true});
    columns.push_back({ColumnKind::SpillLoads,
                       {},
                       tr("spill ld (B)"),
                       QStringLiteral("spill_ld"),
                       {QStringLiteral("spill_loads")},
                       true});
    columns.push_back({ColumnKind::TheoreticalOccupancy,
                       {},
                       tr("occupancy %"),
                       QStringLiteral("occupancy"),
                       {QStringLiteral("occ"), QStringLiteral("theoretical_occupancy")},
                       true});
    columns.push_back({ColumnKind::AchievedOccupancy,
                       kAchievedOccupancyMetric,
                       tr("achieved occ. %"),
                       QStringLiteral("achieved"),
                       {QStringLiteral("achieved_occupancy"), QString::fromLatin1(kAchievedOccupancyMetric)},
                       true});
    for (const std::string& name : metrics)
        columns.push_back(
            {ColumnKind::Metric, name, qs(metricLabel(name)), metricKey(name), {qs(name).toLower()}, true});
    columns.push_back({ColumnKind::Message, {}, tr("message"), QStringLiteral("message"), {}, false});
    return columns;
}

bool ResultsModel::extends(const ResultsSnapshot& next, const std::vector<std::string>& parameterNames,
                           const std::string& objectiveName) const {
    if (!m_results || !next || m_results->empty() || next->size() < m_results->size() ||
        parameterNames != m_parameterNames || objectiveName != m_objectiveName)
        return false;
    // Store ids identify results: the same ids in the same places are the same results. Results
    // without ids (read from a file) never count as the same.
    const std::vector<ResultRecord>& a = *m_results;
    const std::vector<ResultRecord>& b = *next;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i].id == 0 || a[i].id != b[i].id || a[i].sessionId != b[i].sessionId)
            return false;
    return true;
}

void ResultsModel::setResults(ResultsSnapshot results, std::vector<std::string> parameterNames,
                              std::string objectiveName) {
    if (results == m_results && parameterNames == m_parameterNames && objectiveName == m_objectiveName)
        return;
    if (extends(results, parameterNames, objectiveName)) {
        const std::size_t oldRows = m_results->size();
        const std::size_t newRows = results->size();
        std::vector<std::string> metrics = m_metricNames;
        collectMetrics(*results, oldRows, metrics);
        if (metrics == m_metricNames) {
            if (newRows == oldRows) {
                m_results = std::move(results);
                return;
            }
            // The rows so far stay what they were: their caches stay valid, whether the new
            // rows are inserted or (a large batch) the model resets.
            const bool insert = newRows - oldRows <= static_cast<std::size_t>(kInsertLimit);
            if (insert)
                beginInsertRows({}, static_cast<int>(oldRows), static_cast<int>(newRows) - 1);
            else
                beginResetModel();
            m_results = std::move(results);
            m_rowText.resize(newRows);
            for (std::size_t c = 0; c < m_columnNumbers.size(); ++c)
                if (!m_columnNumbers[c].empty())
                    appendNumbers(static_cast<int>(c), m_columnNumbers[c]);
            if (insert)
                endInsertRows();
            else
                endResetModel();
            return;
        }
    }
    beginResetModel();
    m_results = std::move(results);
    m_parameterNames = std::move(parameterNames);
    m_objectiveName = std::move(objectiveName);
    m_metricNames.clear();
    if (m_results)
        collectMetrics(*m_results, 0, m_metricNames);
    m_columns = buildColumns(m_metricNames);
    m_rowText.assign(m_results ? m_results->size() : 0, QString());
    m_columnNumbers.assign(m_columns.size(), {});
    m_rowOfConfig.clear();
    m_indexedRows = 0;
    endResetModel();
}

void ResultsModel::clear() {
    setResults(nullptr, {}, {});
}

int ResultsModel::columnOf(ColumnKind kind, const std::string& name) const {
    for (std::size_t c = 0; c < m_columns.size(); ++c)
        if (m_columns[c].kind == kind && (name.empty() || m_columns[c].name == name))
            return static_cast<int>(c);
    return -1;
}

int ResultsModel::findColumn(const QString& name) const {
    const QString wanted = name.trimmed().toLower();
    if (wanted.isEmpty())
        return -1;
    for (std::size_t c = 0; c < m_columns.size(); ++c) {
        const Column& col = m_columns[c];
        if (col.key.toLower() == wanted || col.header.toLower() == wanted || col.aliases.contains(wanted))
            return static_cast<int>(c);
    }
    return -1;
}

const ResultRecord* ResultsModel::recordAt(int row) const {
    if (!m_results || row < 0 || static_cast<std::size_t>(row) >= m_results->size())
        return nullptr;
    return &(*m_results)[static_cast<std::size_t>(row)];
}

QString ResultsModel::configJsonAt(int row) const {
    const ResultRecord* r = recordAt(row);
    return r ? qs(configJson(r->config)) : QString();
}

int ResultsModel::rowOfConfig(const QString& configJsonText) const {
    if (!m_results)
        return -1;
    // Indexed lazily and incrementally: rows only ever get appended between resets.
    const int rows = rowCount();
    for (; m_indexedRows < rows; ++m_indexedRows)
        m_rowOfConfig.emplace(configJson((*m_results)[static_cast<std::size_t>(m_indexedRows)].config), m_indexedRows);
    const auto it = m_rowOfConfig.find(configJsonText.toStdString());
    return it == m_rowOfConfig.end() ? -1 : it->second;
}

std::optional<double> ResultsModel::numberAt(int row, int column) const {
    const ResultRecord* r = recordAt(row);
    if (!r || column < 0 || static_cast<std::size_t>(column) >= m_columns.size())
        return std::nullopt;
    const Column& col = m_columns[static_cast<std::size_t>(column)];
    const auto& info = r->measurement.staticInfo;
    switch (col.kind) {
    case ColumnKind::Parameter: {
        const ConfigValue* it = r->config.find(col.name);
        if (!it)
            return std::nullopt;
        if (it->isNumber())
            return it->asNumber();
        if (it->isBool())
            return it->asBool() ? 1.0 : 0.0;
        return std::nullopt;
    }
    case ColumnKind::Status:
        return static_cast<double>(r->status());
    case ColumnKind::Time:
        if (r->measurement.time.samples > 0 || r->timeMs() > 0)
            return r->timeMs() * 1000.0;
        return std::nullopt;
    case ColumnKind::Objective:
        if (r->objective || !m_objectiveName.empty())
            return r->objective;
        if (r->ok() && (r->measurement.time.samples > 0 || r->timeMs() > 0))
            return r->timeMs() * 1000.0;
        return std::nullopt;
    case ColumnKind::Registers:
        if (info && info->registers >= 0)
            return info->registers;
        return std::nullopt;
    case ColumnKind::SpillStores:
        if (info && info->registers >= 0)
            return static_cast<double>(info->spillStores);
        return std::nullopt;
    case ColumnKind::SpillLoads:
        if (info && info->registers >= 0)
            return static_cast<double>(info->spillLoads);
        return std::nullopt;
    case ColumnKind::TheoreticalOccupancy:
        return r->occupancy;
    case ColumnKind::AchievedOccupancy:
    case ColumnKind::Metric:
        if (const Metric* m = findMetric(*r, col.name))
            return m->value;
        return std::nullopt;
    case ColumnKind::Message:
        return std::nullopt;
    }
    return std::nullopt;
}

QString ResultsModel::textAt(int row, int column) const {
    const ResultRecord* r = recordAt(row);
    if (!r || column < 0 || static_cast<std::size_t>(column) >= m_columns.size())
        return {};
    const Column& col = m_columns[static_cast<std::size_t>(column)];
    switch (col.kind) {
    case ColumnKind::Parameter: {
        const ConfigValue* it = r->config.find(col.name);
        return !it ? QString() : valueText(*it);
    }
    case ColumnKind::Status:
        return qs(std::string(statusName(r->status())));
    case ColumnKind::Message:
        return qs(r->measurement.message).section(QLatin1Char('\n'), 0, 0);
    default:
        break;
    }
    const std::optional<double> v = numberAt(row, column);
    return v ? formatNumber(*v) : QString();
}

QString ResultsModel::csvAt(int row, int column) const {
    const ResultRecord* r = recordAt(row);
    if (!r || column < 0 || static_cast<std::size_t>(column) >= m_columns.size())
        return {};
    const Column& col = m_columns[static_cast<std::size_t>(column)];
    if (col.kind == ColumnKind::Message)
        return qs(r->measurement.message);
    if (col.kind == ColumnKind::Status || col.kind == ColumnKind::Parameter) {
        if (col.kind == ColumnKind::Parameter) {
            const ConfigValue* it = r->config.find(col.name);
            if (it && it->isFloat())
                return QString::number(it->asNumber(), 'g', 17);
        }
        return textAt(row, column);
    }
    const std::optional<double> v = numberAt(row, column);
    return v ? csvNumber(*v) : QString();
}

const QString& ResultsModel::rowText(int row) const {
    static const QString kEmpty;
    if (row < 0 || static_cast<std::size_t>(row) >= m_rowText.size())
        return kEmpty;
    QString& text = m_rowText[static_cast<std::size_t>(row)];
    if (text.isNull()) {
        QStringList cells;
        cells.reserve(static_cast<qsizetype>(m_columns.size()));
        for (int c = 0; c < columnCount(); ++c)
            cells << textAt(row, c);
        text = cells.join(QLatin1Char('\t')).toLower();
    }
    return text;
}

void ResultsModel::appendNumbers(int column, std::vector<double>& numbers) const {
    const int rows = rowCount();
    numbers.reserve(static_cast<std::size_t>(rows));
    for (int row = static_cast<int>(numbers.size()); row < rows; ++row)
        numbers.push_back(numberAt(row, column).value_or(std::numeric_limits<double>::quiet_NaN()));
}

const std::vector<double>& ResultsModel::columnNumbers(int column) const {
    static const std::vector<double> kNone;
    if (column < 0 || static_cast<std::size_t>(column) >= m_columnNumbers.size())
        return kNone;
    std::vector<double>& numbers = m_columnNumbers[static_cast<std::size_t>(column)];
    if (numbers.size() != static_cast<std::size_t>(rowCount()))
        appendNumbers(column, numbers);
    return numbers;
}

int ResultsModel::rowCount(const QModelIndex& parent) const {
    if (parent.isValid() || !m_results)
        return 0;
    return static_cast<int>(m_results->size());
}

int ResultsModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_columns.size());
}

QVariant ResultsModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const int row = index.row();
    const int column = index.column();
    const Column& col = m_columns[static_cast<std::size_t>(column)];
    switch (role) {
    case Qt::DisplayRole:
        return textAt(row, column);
    case Qt::ToolTipRole: {
        const ResultRecord* r = recordAt(row);
        if (col.kind == ColumnKind::Message || col.kind == ColumnKind::Status)
            return r->measurement.message.empty() ? QVariant() : QVariant(qs(r->measurement.message));
        return describeResult(*r, m_objectiveName);
    }
    case Qt::TextAlignmentRole:
        return col.numeric ? numberAlignment() : textAlignment();
    case Qt::ForegroundRole:
        if (col.kind == ColumnKind::Status) {
            const ResultStatus s = recordAt(row)->status();
            if (s != ResultStatus::Ok && s != ResultStatus::Pruned && s != ResultStatus::Skipped &&
                s != ResultStatus::Analysed)
                return QBrush(QColor(0xd3, 0x2f, 0x2f));
        }
        return {};
    case SortRole: {
        if (!col.numeric)
            return textAt(row, column);
        const std::optional<double> v = numberAt(row, column);
        return v ? *v : std::numeric_limits<double>::quiet_NaN();
    }
    case ConfigJsonRole:
        return configJsonAt(row);
    case CsvRole:
        return csvAt(row, column);
    default:
        return {};
    }
}

QVariant ResultsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || section < 0 || section >= columnCount())
        return QAbstractTableModel::headerData(section, orientation, role);
    const Column& col = m_columns[static_cast<std::size_t>(section)];
    switch (role) {
    case Qt::DisplayRole:
        return col.header;
    case Qt::ToolTipRole:
        return col.kind == ColumnKind::Metric || col.kind == ColumnKind::AchievedOccupancy
                   ? QStringLiteral("%1 (filter as \"%2\")").arg(qs(col.name), col.key)
                   : QStringLiteral("filter as \"%1\"").arg(col.key);
    case Qt::TextAlignmentRole:
        return col.numeric ? numberAlignment() : textAlignment();
    default:
        return {};
    }
}

} // namespace tilescope::views
