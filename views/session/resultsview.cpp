#include "session/resultsview.h"

#include "common/format.h"
#include "models/resultsmodel.h"
#include "models/resultsproxy.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <set>

namespace tilescope::views {

namespace {

QString csvField(const QString& text) {
    if (!text.contains(QLatin1Char(',')) && !text.contains(QLatin1Char('"')) && !text.contains(QLatin1Char('\n')) &&
        !text.contains(QLatin1Char('\r')))
        return text;
    QString quoted = text;
    quoted.replace(QLatin1Char('"'), QStringLiteral("\"\""));
    return QLatin1Char('"') + quoted + QLatin1Char('"');
}

} // namespace

ResultsView::ResultsView(QWidget* parent)
    : QWidget(parent)
    , m_model(new ResultsModel(this))
    , m_proxy(new ResultsProxyModel(this))
    , m_filterEdit(new QLineEdit(this))
    , m_countLabel(new QLabel(this))
    , m_copyButton(new QPushButton(tr("Copy CSV"), this))
    , m_table(new QTableView(this))
    , m_filterTimer(new QTimer(this)) {
    m_proxy->setResultsModel(m_model);

    m_filterEdit->setPlaceholderText(
        tr("Filter: text in any column, or column op value (regs > 128 and status == ok)"));
    m_filterEdit->setClearButtonEnabled(true);
    m_filterEdit->setToolTip(
        tr("Text shows the rows that contain it in any column. A comparison \"column op value\" (op: < <= > >= == "
           "!=) filters on a column, named by its header or its short name: regs, time (µs), status, spill_st, "
           "spill_ld, occupancy, achieved, objective, a parameter. Join several with \"and\"."));
    m_copyButton->setToolTip(tr("Copy the selected rows, or every row shown, as CSV (Ctrl+C)"));
    m_countLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);

    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(-1, Qt::AscendingOrder); // arrival order until the user sorts
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_table->setAlternatingRowColors(true);
    m_table->setWordWrap(false);
    m_table->verticalHeader()->setVisible(false);
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    m_table->horizontalHeader()->setSectionsMovable(true);
    m_table->horizontalHeader()->setDefaultSectionSize(80);
    m_table->horizontalHeader()->setStretchLastSection(true);

    auto* copy = new QAction(tr("Copy as CSV"), m_table);
    copy->setShortcut(QKeySequence::Copy);
    copy->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    m_table->addAction(copy);
    m_table->setContextMenuPolicy(Qt::ActionsContextMenu);
    connect(copy, &QAction::triggered, this, &ResultsView::copyCsv);
    connect(m_copyButton, &QPushButton::clicked, this, &ResultsView::copyCsv);

    m_filterTimer->setSingleShot(true);
    m_filterTimer->setInterval(200);
    connect(m_filterTimer, &QTimer::timeout, this, &ResultsView::applyFilter);
    connect(m_filterEdit, &QLineEdit::textChanged, m_filterTimer, qOverload<>(&QTimer::start));
    connect(m_filterEdit, &QLineEdit::returnPressed, this, &ResultsView::applyFilter);

    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this, &ResultsView::onCurrentChanged);
    // A reset (a new session, or a large batch of a live one) loses the selection: keep the config.
    connect(m_model, &QAbstractItemModel::modelAboutToBeReset, this, [this]() { m_keptConfig = currentConfig(); });
    connect(m_model, &QAbstractItemModel::modelReset, this, [this]() {
        if (!m_keptConfig.isEmpty())
            selectConfig(m_keptConfig);
        updateCount();
        fitHeaders();
    });
    connect(m_proxy, &QAbstractItemModel::columnsInserted, this, &ResultsView::fitHeaders);
    // A width the user gives a column is its name's: another session's columns in other places
    // (another problem's parameters) keep it where that name is, and nothing else does.
    connect(m_table->horizontalHeader(), &QHeaderView::sectionResized, this, [this](int logical, int, int size) {
        if (!m_fitting && logical < m_proxy->columnCount() - 1) // the last column stretches
            m_userWidths.insert(m_proxy->headerData(logical, Qt::Horizontal).toString(), size);
    });
    connect(m_proxy, &QAbstractItemModel::rowsInserted, this, &ResultsView::updateCount);
    connect(m_proxy, &QAbstractItemModel::rowsRemoved, this, &ResultsView::updateCount);
    connect(m_proxy, &QAbstractItemModel::layoutChanged, this, &ResultsView::updateCount);

    auto* top = new QHBoxLayout;
    top->setContentsMargins(0, 0, 0, 0);
    top->addWidget(m_filterEdit, 1);
    top->addWidget(m_countLabel);
    top->addWidget(m_copyButton);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(top);
    layout->addWidget(m_table, 1);
    updateCount();
    fitHeaders(); // the columns a table without results shows too
}

ResultsView::~ResultsView() = default;

void ResultsView::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    // Another font or style: the names take another width.
    if (event->type() == QEvent::FontChange || event->type() == QEvent::StyleChange)
        fitHeaders();
}

void ResultsView::fitHeaders() {
    // Each column at least as wide as its name ("block_size_x", "objective: time (µs)"), so that a
    // header is never cut, and at least the default width; the user's own widths of columns of the
    // same names are kept.
    QHeaderView* header = m_table->horizontalHeader();
    const QFontMetrics metrics(header->font());
    const int padding = metrics.averageCharWidth() * 3; // the sort arrow and the margins
    // The status column as wide as its longest word too ("compile_error"): a status is never cut.
    int statusWidth = 0;
    const QFontMetrics cellMetrics(m_table->font());
    for (const ResultStatus status : kAllStatuses)
        statusWidth =
            std::max(statusWidth, cellMetrics.horizontalAdvance(QString::fromUtf8(std::string(statusName(status)))));
    const int statusColumn = m_model->columnOf(ResultsModel::ColumnKind::Status);
    for (int c = 0; c < m_proxy->columnCount(); ++c) {
        const QString name = m_proxy->headerData(c, Qt::Horizontal).toString();
        int wanted = metrics.horizontalAdvance(name) + padding;
        if (c == statusColumn)
            wanted = std::max(wanted, statusWidth + padding);
        m_fitting = true;
        header->resizeSection(c, std::max({header->defaultSectionSize(), m_userWidths.value(name, 0), wanted}));
        m_fitting = false;
    }
}

void ResultsView::setResults(ResultsSnapshot results, std::vector<std::string> parameterNames,
                             std::string objectiveName) {
    m_model->setResults(std::move(results), std::move(parameterNames), std::move(objectiveName));
}

void ResultsView::sortWinnersFirst(const std::string& objectiveName, bool untimed) {
    if (untimed) {
        // Analysed, never run: the highest occupancy first, as they rank by default.
        if (const int column = m_model->columnOf(ResultsModel::ColumnKind::TheoreticalOccupancy); column >= 0) {
            m_table->sortByColumn(column, Qt::DescendingOrder);
            return;
        }
    }
    const bool time = objectiveName.empty();
    const int column = m_model->columnOf(time ? ResultsModel::ColumnKind::Time : ResultsModel::ColumnKind::Objective);
    if (column >= 0)
        m_table->sortByColumn(column, time ? Qt::AscendingOrder : Qt::DescendingOrder);
}

void ResultsView::showTimeColumns(bool shown) {
    for (const ResultsModel::ColumnKind kind : {ResultsModel::ColumnKind::Time, ResultsModel::ColumnKind::Objective})
        if (const int column = m_model->columnOf(kind); column >= 0 && m_table->isColumnHidden(column) == shown)
            m_table->setColumnHidden(column, !shown);
}

void ResultsView::setFilterText(const QString& text) {
    m_filterEdit->setText(text);
    applyFilter();
}

void ResultsView::applyFilter() {
    m_filterTimer->stop();
    const QString kept = currentConfig();
    m_proxy->setFilterExpression(m_filterEdit->text());
    if (!kept.isEmpty())
        selectConfig(kept);
    updateCount();
}

int ResultsView::visibleRowCount() const {
    return m_proxy->rowCount();
}

void ResultsView::updateCount() {
    const int shown = m_proxy->rowCount();
    const int total = m_model->rowCount();
    QString text =
        shown == total
            ? tr("%1 results").arg(formatCount(std::uint64_t(total)))
            : tr("%1 of %2 results").arg(formatCount(std::uint64_t(shown)), formatCount(std::uint64_t(total)));
    if (!m_proxy->filterError().isEmpty())
        text += QStringLiteral(" · ") + m_proxy->filterError();
    m_countLabel->setText(text);
}

QString ResultsView::currentConfig() const {
    const QModelIndex current = m_table->selectionModel()->currentIndex();
    if (!current.isValid())
        return {};
    return m_model->configJsonAt(m_proxy->mapToSource(current).row());
}

void ResultsView::onCurrentChanged() {
    if (m_selecting)
        return;
    const QString config = currentConfig();
    if (!config.isEmpty())
        emit configSelected(config);
}

void ResultsView::selectConfig(const QString& configJson) {
    const int sourceRow = configJson.isEmpty() ? -1 : m_model->rowOfConfig(configJson);
    const QModelIndex proxyIndex = sourceRow < 0 ? QModelIndex() : m_proxy->mapFromSource(m_model->index(sourceRow, 0));
    m_selecting = true;
    if (proxyIndex.isValid()) {
        m_table->selectionModel()->setCurrentIndex(proxyIndex,
                                                   QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        m_table->scrollTo(proxyIndex);
    } else {
        m_table->selectionModel()->clearSelection();
        m_table->selectionModel()->setCurrentIndex({}, QItemSelectionModel::NoUpdate);
    }
    m_selecting = false;
}

QString ResultsView::csvOf(const std::vector<int>& proxyRows) const {
    // Columns in the order the header shows them.
    const QHeaderView* header = m_table->horizontalHeader();
    std::vector<int> columns;
    for (int visual = 0; visual < header->count(); ++visual) {
        const int logical = header->logicalIndex(visual);
        if (!header->isSectionHidden(logical))
            columns.push_back(logical);
    }
    QString out;
    QStringList cells;
    for (const int c : columns)
        cells << csvField(m_model->columns()[static_cast<std::size_t>(c)].header);
    out += cells.join(QLatin1Char(',')) + QStringLiteral("\r\n");
    for (const int row : proxyRows) {
        const int sourceRow = m_proxy->mapToSource(m_proxy->index(row, 0)).row();
        cells.clear();
        for (const int c : columns)
            cells << csvField(m_model->csvAt(sourceRow, c));
        out += cells.join(QLatin1Char(',')) + QStringLiteral("\r\n");
    }
    return out;
}

QString ResultsView::selectionCsv() const {
    std::set<int> rows;
    for (const QItemSelectionRange& range : m_table->selectionModel()->selection())
        for (int row = range.top(); row <= range.bottom(); ++row)
            rows.insert(row);
    if (rows.empty())
        return allCsv();
    return csvOf(std::vector<int>(rows.begin(), rows.end()));
}

QString ResultsView::allCsv() const {
    std::vector<int> rows(static_cast<std::size_t>(m_proxy->rowCount()));
    for (std::size_t i = 0; i < rows.size(); ++i)
        rows[i] = static_cast<int>(i);
    return csvOf(rows);
}

void ResultsView::copyCsv() {
    QApplication::clipboard()->setText(selectionCsv());
}

} // namespace tilescope::views
