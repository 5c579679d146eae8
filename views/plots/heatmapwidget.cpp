#include "plots/heatmapwidget.h"

#include "common/flowlayout.h"
#include "common/format.h"
#include "model/configjson.h"
#include "plots/plotstyle.h"

#include <qcustomplot.h>

#include <QCheckBox>
#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QSignalBlocker>
#include <QStyle>
#include <QStyleOptionComboBox>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <utility>

namespace tilescope::views {

namespace {

// Grids of at most this many cells print their values in the cells (when the text fits).
constexpr int kMaxValueLabels = 400;

QCPRange colourRange(const HeatmapGrid& grid, bool logScale) {
    double lower = logScale ? grid.minPositive : grid.minValue;
    double upper = grid.maxValue;
    if (!std::isfinite(lower) || !std::isfinite(upper))
        return QCPRange(logScale ? 1.0 : 0.0, logScale ? 10.0 : 1.0);
    if (upper <= lower) {
        // One value: a range around it, so that the colour scale still has ticks.
        if (logScale)
            return QCPRange(lower / 1.1, upper * 1.1);
        const double pad = std::max(std::abs(lower) * 0.05, 0.5);
        return QCPRange(lower - pad, upper + pad);
    }
    return QCPRange(lower, upper);
}

// A coordinate range in which n cells centred on 0..n-1 fill the axis. QCPColorMapData spreads
// n > 1 cells over [0, n-1] with half a cell beyond each end, but stretches a single cell over
// its whole range.
QCPRange cellRange(int n) {
    return n > 1 ? QCPRange(0, n - 1) : QCPRange(-0.5, 0.5);
}

/// A combo that asks for the width of its current text ("theoretical occupancy (%)" whole where
/// the row has room) and gives way to its minimum contents length where it has not.
class CurrentTextCombo : public QComboBox {
public:
    using QComboBox::QComboBox;

    QSize sizeHint() const override {
        QStyleOptionComboBox option;
        initStyleOption(&option);
        const QSize text(fontMetrics().horizontalAdvance(currentText()), fontMetrics().height());
        const QSize whole = style()->sizeFromContents(QStyle::CT_ComboBox, &option, text, this);
        return QSize(whole.width(), QComboBox::sizeHint().height()).expandedTo(minimumSizeHint());
    }
};

} // namespace

HeatmapWidget::HeatmapWidget(QWidget* parent)
    : ResultPlot(parent) {
    m_xCombo = new QComboBox(this);
    m_xCombo->setToolTip(tr("The parameter along the horizontal axis"));
    m_yCombo = new QComboBox(this);
    m_yCombo->setToolTip(tr("The parameter along the vertical axis"));
    m_quantityCombo = new CurrentTextCombo(this);
    m_quantityCombo->setToolTip(tr("What the colour of a cell shows"));
    m_reductionCombo = new QComboBox(this);
    m_reductionCombo->addItem(tr("best"), static_cast<int>(Reduction::Best));
    m_reductionCombo->addItem(tr("median"), static_cast<int>(Reduction::Median));
    m_reductionCombo->setToolTip(
        tr("How a cell reduces the configs of its other parameters: the best value (the least time, the most "
           "throughput) or the median"));
    m_logBox = new QCheckBox(tr("Log scale"), this);
    m_logBox->setToolTip(tr("A logarithmic colour scale, for values spread over orders of magnitude"));
    // The axis and reduction combos keep their text whole; the quantity gives way when the dock is
    // narrow, down to 12 characters.
    for (QComboBox* combo : {m_xCombo, m_yCombo, m_reductionCombo}) {
        combo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
        combo->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
    }
    m_quantityCombo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_quantityCombo->setMinimumContentsLength(12);
    m_status = new QLabel(this);
    m_status->setForegroundRole(QPalette::PlaceholderText);

    // The controls and the slice wrap onto more rows when the panel is narrow (a problem of many
    // parameters has a slice combo each), so that the window never grows past the screen.
    auto* controls = new FlowLayout;
    controls->addGroup({new QLabel(tr("X:"), this), m_xCombo});
    controls->addGroup({new QLabel(tr("Y:"), this), m_yCombo});
    controls->addGroup({new QLabel(tr("Colour:"), this), m_quantityCombo, m_reductionCombo});
    controls->addWidget(m_logBox);

    // One "all or a value" combo per parameter (those of the two axes hidden), then the counts.
    m_sliceLayout = new FlowLayout;
    m_sliceLabel = new QLabel(tr("Slice:"), this);
    m_status->setAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    m_sliceLayout->addWidget(m_sliceLabel);
    m_sliceLayout->addWidget(m_status);

    m_plot = new QCustomPlot(this);
    m_plot->setMinimumSize(240, 200);
    buildPlot();

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addLayout(m_sliceLayout);
    layout->addWidget(m_plot, 1);

    const auto changed = [this]() { specFromControls(); };
    connect(m_xCombo, &QComboBox::activated, this, [this]() {
        // Picking the other axis' parameter swaps the axes rather than showing a diagonal.
        if (m_xCombo->currentText() == m_yCombo->currentText()) {
            const QSignalBlocker blocker(m_yCombo);
            m_yCombo->setCurrentText(QString::fromStdString(m_spec.xParameter));
        }
        specFromControls();
    });
    connect(m_yCombo, &QComboBox::activated, this, [this]() {
        if (m_xCombo->currentText() == m_yCombo->currentText()) {
            const QSignalBlocker blocker(m_xCombo);
            m_xCombo->setCurrentText(QString::fromStdString(m_spec.yParameter));
        }
        specFromControls();
    });
    connect(m_quantityCombo, &QComboBox::activated, this, changed);
    connect(m_reductionCombo, &QComboBox::activated, this, changed);
    connect(m_logBox, &QCheckBox::toggled, this, [this](bool on) {
        m_spec.logScale = on;
        showGrid(); // the colour scale only: no new aggregation
    });
    connect(m_plot, &QCustomPlot::mouseMove, this, &HeatmapWidget::onMouseMove);
    connect(m_plot, &QCustomPlot::mousePress, this, &HeatmapWidget::notePress);
    connect(m_plot, &QCustomPlot::mouseRelease, this, &HeatmapWidget::onMouseRelease);
    connect(m_plot, &QCustomPlot::afterLayout, this, &HeatmapWidget::fitToCellSize);
    connect(m_plot, &QCustomPlot::afterLayout, this, &HeatmapWidget::thinTickLabels);
    m_plot->installEventFilter(this);
    syncControls();
}

void HeatmapWidget::buildPlot() {
    m_plot->setMouseTracking(true); // hover tooltips without a button held
    m_plot->setInteractions({});    // the grid is the whole picture: no dragging or zooming
    QFont small = font();
    small.setPointSizeF(small.pointSizeF() * 0.9);

    m_plot->plotLayout()->insertRow(0);
    QFont titleFont = font();
    titleFont.setBold(true);
    m_title = new QCPTextElement(m_plot, QString(), titleFont);
    m_plot->plotLayout()->addElement(0, 0, m_title);

    for (QCPAxis* axis : {m_plot->xAxis, m_plot->yAxis}) {
        axis->grid()->setVisible(false);
        axis->setSubTicks(false);
        axis->setTicker(QSharedPointer<QCPAxisTickerText>::create());
        QFont label = font();
        label.setBold(true);
        axis->setLabelFont(label);
    }

    m_map = new QCPColorMap(m_plot->xAxis, m_plot->yAxis);
    m_map->setInterpolate(false); // a cell is one config group, not a sample of a continuum
    m_map->setTightBoundary(false);
    m_map->removeFromLegend();
    m_scale = new QCPColorScale(m_plot);
    m_scale->setType(QCPAxis::atRight);
    m_scale->setBarWidth(14);
    m_plot->plotLayout()->addElement(1, 1, m_scale);
    m_map->setColorScale(m_scale);
    auto* margins = new QCPMarginGroup(m_plot);
    m_plot->axisRect()->setMarginGroup(QCP::msBottom | QCP::msTop, margins);
    m_scale->setMarginGroup(QCP::msBottom | QCP::msTop, margins);

    auto addMarkerGraph = [this](const QString& name, const QCPScatterStyle& style) {
        QCPGraph* graph = m_plot->addGraph();
        graph->setName(name);
        graph->setLineStyle(QCPGraph::lsNone);
        graph->setScatterStyle(style);
        graph->setAdaptiveSampling(false);
        return graph;
    };
    m_failedGraph = addMarkerGraph(tr("only failed results"), failedMarkerStyle(11));
    m_spillGraph = addMarkerGraph(tr("best config spills registers"), spillMarkerStyle(11));
    m_tiedGraph = addMarkerGraph(tr("as good as the best (95 % intervals overlap)"),
                                 QCPScatterStyle(QCPScatterStyle::ssDiamond, bestOutlinePen(), Qt::NoBrush, 9));
    m_bestLegend =
        addMarkerGraph(tr("best cell"), QCPScatterStyle(QCPScatterStyle::ssSquare, bestOutlinePen(), Qt::NoBrush, 11));
    m_untestedLegend = addMarkerGraph(
        tr("blank: untested"), QCPScatterStyle(QCPScatterStyle::ssSquare, QPen(QColor(170, 170, 170)), Qt::white, 11));

    m_bestRect = new QCPItemRect(m_plot);
    m_bestRect->setPen(bestOutlinePen());
    m_bestRect->setBrush(Qt::NoBrush);
    m_bestRect->setSelectable(false);
    m_bestRect->setVisible(false);
    m_selectionRect = new QCPItemRect(m_plot);
    m_selectionRect->setPen(selectionPen());
    m_selectionRect->setBrush(Qt::NoBrush);
    m_selectionRect->setSelectable(false);
    m_selectionRect->setVisible(false);

    // The legend explains the markers, in one row under the plot, out of the cells' way.
    m_plot->legend->setVisible(true);
    m_plot->legend->setFont(small);
    m_plot->legend->setBorderPen(Qt::NoPen);
    m_plot->legend->setBrush(Qt::NoBrush);
    m_plot->legend->setFillOrder(QCPLegend::foColumnsFirst);
    m_plot->legend->setColumnSpacing(fontMetrics().averageCharWidth() * 3);
    // Packed to the left: a filler column takes the width the legend does not need.
    auto* legendRow = new QCPLayoutGrid;
    m_plot->plotLayout()->addElement(2, 0, legendRow);
    legendRow->addElement(0, 0, m_plot->legend);
    legendRow->addElement(0, 1, new QCPLayoutElement(m_plot));
    legendRow->setColumnStretchFactor(0, 0.001);
    m_plot->plotLayout()->setRowStretchFactor(0, 0.001);
    m_plot->plotLayout()->setRowStretchFactor(2, 0.001);
}

bool HeatmapWidget::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_plot && event->type() == QEvent::Leave) {
        m_hoverCell = {};
        QToolTip::hideText();
    }
    return QWidget::eventFilter(watched, event);
}

void HeatmapWidget::setResults(std::shared_ptr<const std::vector<ResultRecord>> results,
                               std::vector<std::string> parameterNames, std::string objectiveName) {
    const bool namesChanged = parameterNames != m_parameterNames;
    m_results = std::move(results);
    m_parameterNames = std::move(parameterNames);
    m_objectiveName = std::move(objectiveName);

    // Keep what the user chose where it still fits these results.
    const auto known = [this](const std::string& name) {
        return std::find(m_parameterNames.begin(), m_parameterNames.end(), name) != m_parameterNames.end();
    };
    if (!m_parameterNames.empty()) {
        if (!known(m_spec.xParameter))
            m_spec.xParameter = m_parameterNames.front();
        if (!known(m_spec.yParameter) || m_spec.yParameter == m_spec.xParameter) {
            m_spec.yParameter = m_parameterNames.size() > 1 && m_parameterNames[0] == m_spec.xParameter
                                    ? m_parameterNames[1]
                                    : m_parameterNames.front();
        }
    }
    for (auto it = m_spec.fixedValues.begin(); it != m_spec.fixedValues.end();)
        it = known(it->first) ? std::next(it) : m_spec.fixedValues.erase(it);

    if (namesChanged) {
        const QSignalBlocker blockX(m_xCombo);
        const QSignalBlocker blockY(m_yCombo);
        m_xCombo->clear();
        m_yCombo->clear();
        for (const std::string& name : m_parameterNames) {
            m_xCombo->addItem(QString::fromStdString(name));
            m_yCombo->addItem(QString::fromStdString(name));
        }
        rebuildFixedCombos();
    }
    m_needSummary = true;
    syncControls();
    refresh();
}

void HeatmapWidget::setSpec(const HeatmapSpec& spec) {
    const bool onlyScale = m_grid && [&] {
        HeatmapSpec a = spec;
        HeatmapSpec b = m_spec;
        a.logScale = b.logScale = false;
        return a == b;
    }();
    m_spec = spec;
    syncControls();
    if (onlyScale)
        showGrid();
    else
        refresh();
}

QComboBox* HeatmapWidget::fixedValueCombo(const std::string& parameter) const {
    for (std::size_t p = 0; p < m_parameterNames.size() && p < m_fixedCombos.size(); ++p) {
        if (m_parameterNames[p] == parameter)
            return m_fixedCombos[p];
    }
    return nullptr;
}

void HeatmapWidget::rebuildFixedCombos() {
    for (QWidget* group : m_fixedGroups)
        delete group; // its label and combo with it
    m_fixedGroups.clear();
    m_fixedLabels.clear();
    m_fixedCombos.clear();
    m_sliceLayout->removeWidget(m_status);
    for (const std::string& name : m_parameterNames) {
        auto* label = new QLabel(QString::fromStdString(name), this);
        auto* combo = new QComboBox(this);
        combo->setToolTip(tr("All values of %1 (reduced into each cell), or only one").arg(label->text()));
        combo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
        label->setBuddy(combo);
        m_fixedGroups.push_back(m_sliceLayout->addGroup({label, combo}));
        m_fixedLabels.push_back(label);
        m_fixedCombos.push_back(combo);
        connect(combo, &QComboBox::activated, this, [this]() { specFromControls(); });
    }
    m_sliceLayout->addWidget(m_status);
}

void HeatmapWidget::applySummary(const ResultSummary& summary) {
    // Results arrive at up to 10 Hz during a run: combos are refilled only when their items
    // change, so that an open popup stays open.
    std::vector<Quantity> quantities = availableQuantities(summary, m_objectiveName);
    if (std::find(quantities.begin(), quantities.end(), m_spec.quantity) == quantities.end())
        quantities.push_back(m_spec.quantity); // asked for by setSpec, though no result has it yet
    QStringList labels;
    for (const Quantity& quantity : quantities)
        labels << quantityLabel(quantity, m_objectiveName);
    QStringList shown;
    for (int i = 0; i < m_quantityCombo->count(); ++i)
        shown << m_quantityCombo->itemText(i);
    m_quantities = std::move(quantities);
    if (labels != shown) {
        const QSignalBlocker blocker(m_quantityCombo);
        m_quantityCombo->clear();
        m_quantityCombo->addItems(labels);
    }
    for (std::size_t p = 0; p < m_fixedCombos.size() && p < summary.parameterValues.size(); ++p) {
        QComboBox* combo = m_fixedCombos[p];
        const QStringList items = QStringList{tr("all")} + summary.parameterValues[p];
        QStringList current;
        for (int i = 0; i < combo->count(); ++i)
            current << combo->itemText(i);
        if (current == items)
            continue;
        const QSignalBlocker blocker(combo);
        combo->clear();
        combo->addItems(items);
    }
    syncControls();
}

void HeatmapWidget::syncControls() {
    const QSignalBlocker blockX(m_xCombo);
    const QSignalBlocker blockY(m_yCombo);
    const QSignalBlocker blockQuantity(m_quantityCombo);
    const QSignalBlocker blockReduction(m_reductionCombo);
    const QSignalBlocker blockLog(m_logBox);
    m_xCombo->setCurrentText(QString::fromStdString(m_spec.xParameter));
    m_yCombo->setCurrentText(QString::fromStdString(m_spec.yParameter));
    auto quantity = std::find(m_quantities.begin(), m_quantities.end(), m_spec.quantity);
    if (quantity == m_quantities.end() && m_summary) {
        // Asked for by setSpec, though no result has it (yet).
        m_quantities.push_back(m_spec.quantity);
        m_quantityCombo->addItem(quantityLabel(m_spec.quantity, m_objectiveName));
        quantity = m_quantities.end() - 1;
    }
    if (quantity != m_quantities.end())
        m_quantityCombo->setCurrentIndex(static_cast<int>(quantity - m_quantities.begin()));
    m_quantityCombo->updateGeometry(); // its width follows its text
    m_reductionCombo->setCurrentIndex(m_reductionCombo->findData(static_cast<int>(m_spec.reduction)));
    m_logBox->setChecked(m_spec.logScale);
    for (std::size_t p = 0; p < m_fixedCombos.size(); ++p) {
        const std::string& name = m_parameterNames[p];
        const bool axis = name == m_spec.xParameter || name == m_spec.yParameter;
        m_fixedGroups[p]->setVisible(!axis);
        QComboBox* combo = m_fixedCombos[p];
        const QSignalBlocker blocker(combo);
        const auto it = m_spec.fixedValues.find(name);
        if (it == m_spec.fixedValues.end()) {
            combo->setCurrentIndex(0);
            continue;
        }
        const QString value = QString::fromStdString(it->second);
        if (combo->findText(value) < 0)
            combo->addItem(value); // fixed by setSpec to a value not seen yet
        combo->setCurrentIndex(combo->findText(value));
    }
    m_sliceLabel->setVisible(m_parameterNames.size() > 2);
}

void HeatmapWidget::specFromControls() {
    HeatmapSpec spec = m_spec;
    spec.xParameter = m_xCombo->currentText().toStdString();
    spec.yParameter = m_yCombo->currentText().toStdString();
    const int quantity = m_quantityCombo->currentIndex();
    if (quantity >= 0 && static_cast<std::size_t>(quantity) < m_quantities.size())
        spec.quantity = m_quantities[static_cast<std::size_t>(quantity)];
    spec.reduction = static_cast<Reduction>(m_reductionCombo->currentData().toInt());
    spec.logScale = m_logBox->isChecked();
    spec.fixedValues.clear();
    for (std::size_t p = 0; p < m_fixedCombos.size(); ++p) {
        if (m_fixedCombos[p]->currentIndex() > 0)
            spec.fixedValues[m_parameterNames[p]] = m_fixedCombos[p]->currentText().toStdString();
    }
    if (spec != m_spec)
        setSpec(spec);
}

void HeatmapWidget::refresh() {
    if (waitUntilShown())
        return;
    // Everything the job reads is copied or shared immutably: the GUI thread may move on.
    auto job = [results = m_results, names = m_parameterNames, spec = m_spec, objective = m_objectiveName,
                summarizeToo = m_needSummary]() {
        Computed computed;
        static const std::vector<ResultRecord> none;
        const std::vector<ResultRecord>& all = results ? *results : none;
        if (summarizeToo)
            computed.summary = std::make_shared<const ResultSummary>(summarize(all, names));
        computed.grid = std::make_shared<const HeatmapGrid>(aggregate(all, names, spec, objective));
        return computed;
    };
    compute(
        std::move(job), [this](const Computed& computed) { apply(computed); }, m_status,
        tr("Aggregating %1 results…").arg(formatCount(static_cast<std::uint64_t>(m_results ? m_results->size() : 0))));
}

void HeatmapWidget::apply(const Computed& computed) {
    if (computed.summary) {
        m_needSummary = false;
        m_summary = computed.summary;
        applySummary(*computed.summary);
    }
    m_grid = computed.grid;
    m_hoverCell = {};
    showGrid();
    emit gridChanged();
}

void HeatmapWidget::showGrid() {
    clearMarks();
    if (!m_grid || m_grid->empty()) {
        showNoGrid();
        return;
    }

    const HeatmapGrid& grid = *m_grid;
    const int columns = grid.columns();
    const int rows = grid.rows();
    const bool logScale = m_spec.logScale && std::isfinite(grid.minPositive);
    showAxes(grid);
    // The cells. NaN (untested, failed) stays transparent; a log scale cannot place zero, so
    // zeros take the lowest colour.
    QCPColorMapData* mapData = m_map->data();
    mapData->setSize(columns, rows);
    mapData->setRange(cellRange(columns), cellRange(rows));
    for (int x = 0; x < columns; ++x) {
        for (int y = 0; y < rows; ++y) {
            double value = grid.cell(x, y).value;
            if (logScale && value <= 0)
                value = grid.minPositive;
            mapData->setCell(x, y, value);
        }
    }
    QCPColorGradient gradient = betterIsBrighterGradient(grid.higherIsBetter);
    m_scale->setGradient(gradient);
    m_scale->setDataScaleType(logScale ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    if (logScale)
        m_scale->axis()->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    else
        m_scale->axis()->setTicker(QSharedPointer<QCPAxisTicker>::create());
    const QCPRange range = colourRange(grid, logScale);
    m_scale->setDataRange(range);
    m_scale->axis()->setLabel(grid.quantityLabel + (grid.higherIsBetter ? tr("  ↑ better") : tr("  ↓ better")));

    const int untested = showMarks(grid, gradient, range, logScale);
    showLegend(grid, untested);

    if (grid.best.valid()) {
        constexpr double half = 0.485; // a hair inside the cell, so the frame does not clip it at the plot's edge
        m_bestRect->topLeft->setCoords(grid.best.x - half, grid.best.y + half);
        m_bestRect->bottomRight->setCoords(grid.best.x + half, grid.best.y - half);
        m_bestRect->setVisible(true);
    }
    placeSelection();

    showCounts(grid);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void HeatmapWidget::clearMarks() {
    for (QCPItemText* label : m_valueLabels)
        m_plot->removeItem(label);
    m_valueLabels.clear();
    m_failedGraph->data()->clear();
    m_spillGraph->data()->clear();
    m_tiedGraph->data()->clear();
    m_bestRect->setVisible(false);
}

void HeatmapWidget::showNoGrid() {
    m_map->data()->clear();
    m_map->data()->setSize(0, 0);
    m_title->setText(m_results && !m_results->empty() ? tr("No results in this slice") : tr("No results yet"));
    m_status->setText(m_grid ? tr("%1 results").arg(formatCount(static_cast<std::uint64_t>(m_grid->resultCount)))
                             : QString());
    m_failedGraph->removeFromLegend();
    m_spillGraph->removeFromLegend();
    m_tiedGraph->removeFromLegend();
    m_bestLegend->removeFromLegend();
    m_untestedLegend->removeFromLegend();
    m_plot->xAxis->setLabel(QString::fromStdString(m_spec.xParameter));
    m_plot->yAxis->setLabel(QString::fromStdString(m_spec.yParameter));
    m_scale->axis()->setLabel(QString());
    m_selectionRect->setVisible(false);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void HeatmapWidget::showAxes(const HeatmapGrid& grid) {
    // Axes: one tick per value, at the cell's centre, so that 32, 64, 128, 256 are evenly spaced
    // (labelled as room allows: see thinTickLabels).
    m_plot->xAxis->setRange(-0.5, static_cast<double>(grid.xValues.size()) - 0.5);
    m_plot->yAxis->setRange(-0.5, static_cast<double>(grid.yValues.size()) - 0.5);
    m_labelSteps = {0, 0};
    thinTickLabels();
    int longest = 0;
    for (const QString& value : grid.xValues)
        longest = std::max(longest, static_cast<int>(value.size()));
    m_plot->xAxis->setTickLabelRotation(grid.columns() * std::max(longest, 2) > 60 ? -45 : 0);
    m_plot->xAxis->setLabel(QString::fromStdString(grid.spec.xParameter));
    m_plot->yAxis->setLabel(QString::fromStdString(grid.spec.yParameter));
}

int HeatmapWidget::showMarks(const HeatmapGrid& grid, QCPColorGradient& gradient, const QCPRange& range,
                             bool logScale) {
    const int columns = grid.columns();
    const int rows = grid.rows();
    int untested = 0;
    const bool labels = static_cast<int>(grid.cells.size()) <= kMaxValueLabels;
    QFont labelFont = font();
    labelFont.setPointSizeF(labelFont.pointSizeF() * 0.85);
    for (int x = 0; x < columns; ++x) {
        for (int y = 0; y < rows; ++y) {
            const HeatmapCell& cell = grid.cell(x, y);
            if (cell.tiedWithBest)
                m_tiedGraph->addData(x - 0.3, y + 0.3); // the corner opposite the spill mark
            switch (cell.marker) {
            case CellMarker::Untested:
                ++untested;
                break;
            case CellMarker::FailedOnly:
                m_failedGraph->addData(x, y);
                break;
            case CellMarker::Spilling:
                // In the cell's corner, so that the colour stays readable.
                m_spillGraph->addData(x + 0.3, y + 0.3);
                break;
            case CellMarker::Fine:
                break;
            }
            if (!labels || !std::isfinite(cell.value))
                continue;
            auto* label = new QCPItemText(m_plot);
            label->setSelectable(false);
            label->position->setCoords(x, y);
            label->setPositionAlignment(Qt::AlignCenter);
            label->setFont(labelFont);
            label->setText(compactNumber(cell.value));
            const QColor background = QColor::fromRgb(gradient.color(cell.value, range, logScale));
            label->setColor(textColourOn(background));
            m_valueLabels.push_back(label);
        }
    }
    return untested;
}

void HeatmapWidget::showLegend(const HeatmapGrid& grid, int untested) {
    auto showInLegend = [](QCPGraph* graph, bool show) {
        if (show)
            graph->addToLegend();
        else
            graph->removeFromLegend();
    };
    // Entries follow a fixed order: re-adding appends, so remove all first.
    for (QCPGraph* graph : {m_bestLegend, m_tiedGraph, m_failedGraph, m_spillGraph, m_untestedLegend})
        graph->removeFromLegend();
    showInLegend(m_bestLegend, grid.best.valid());
    showInLegend(m_tiedGraph, !m_tiedGraph->data()->isEmpty());
    showInLegend(m_failedGraph, !m_failedGraph->data()->isEmpty());
    showInLegend(m_spillGraph, !m_spillGraph->data()->isEmpty());
    m_spillGraph->setName(grid.spec.reduction == Reduction::Median ? tr("median config spills registers")
                                                                   : tr("best config spills registers"));
    showInLegend(m_untestedLegend, untested > 0);
}

void HeatmapWidget::showCounts(const HeatmapGrid& grid) {
    m_title->setText(heatmapTitle(grid));
    const QString total = formatCount(static_cast<std::uint64_t>(grid.resultCount));
    QString status =
        grid.matchedCount == grid.resultCount
            ? tr("%1 results").arg(total)
            : tr("%1 of %2 results").arg(formatCount(static_cast<std::uint64_t>(grid.matchedCount)), total);
    if (grid.failedCount > 0)
        status += tr(" · %1 failed").arg(formatCount(static_cast<std::uint64_t>(grid.failedCount)));
    m_status->setText(status);
    m_status->setToolTip(tr("Results in the slice shown, of all results; failed ones among them"));
}

void HeatmapWidget::fitToCellSize() {
    // Runs after every layout: marker sizes and value labels follow the cells' size on screen.
    if (!m_grid || m_grid->empty())
        return;
    const double width = std::abs(m_plot->xAxis->coordToPixel(1) - m_plot->xAxis->coordToPixel(0));
    const double height = std::abs(m_plot->yAxis->coordToPixel(1) - m_plot->yAxis->coordToPixel(0));
    const double side = std::min(width, height);
    m_failedGraph->setScatterStyle(failedMarkerStyle(std::clamp(side * 0.4, 5.0, 14.0)));
    m_spillGraph->setScatterStyle(spillMarkerStyle(std::clamp(side * 0.25, 6.0, 14.0)));
    if (m_valueLabels.empty())
        return;
    const QFontMetrics metrics(m_valueLabels.front()->font());
    int widest = 0;
    for (const QCPItemText* label : m_valueLabels)
        widest = std::max(widest, metrics.horizontalAdvance(label->text()));
    const bool fits = width >= widest + 6 && height >= metrics.height() + 4;
    for (QCPItemText* label : m_valueLabels)
        label->setVisible(fits);
}

void HeatmapWidget::placeSelection() {
    m_selectionRect->setVisible(false);
    if (!m_grid || m_grid->empty() || m_selectedConfig.empty())
        return;
    const std::optional<ConfigValues> parsed = parseConfigJson(m_selectedConfig);
    if (!parsed)
        return;
    const ConfigValues& config = *parsed;
    const HeatmapSpec& spec = m_grid->spec;
    const ConfigValue* xIt = config.find(spec.xParameter);
    const ConfigValue* yIt = config.find(spec.yParameter);
    if (!xIt || !yIt)
        return;
    for (const auto& [name, value] : spec.fixedValues) {
        if (name == spec.xParameter || name == spec.yParameter)
            continue;
        const ConfigValue* it = config.find(name);
        if (!it || valueText(*it) != QString::fromStdString(value))
            return; // in another slice
    }
    const int x = static_cast<int>(m_grid->xValues.indexOf(valueText(*xIt)));
    const int y = static_cast<int>(m_grid->yValues.indexOf(valueText(*yIt)));
    if (x < 0 || y < 0)
        return;
    constexpr double inset = 0.42; // inside the best cell's outline when both mark one cell
    m_selectionRect->topLeft->setCoords(x - inset, y + inset);
    m_selectionRect->bottomRight->setCoords(x + inset, y - inset);
    m_selectionRect->setVisible(true);
}

bool HeatmapWidget::selectConfig(const QString& configJson) {
    m_selectedConfig = configJson.toStdString();
    placeSelection();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
    return m_selectionRect->visible();
}

CellIndex HeatmapWidget::cellAtPixel(QPointF pixel) const {
    if (!m_grid || m_grid->empty() || !m_plot->axisRect()->rect().contains(pixel.toPoint()))
        return {};
    return cellAt(*m_grid, m_plot->xAxis->pixelToCoord(pixel.x()), m_plot->yAxis->pixelToCoord(pixel.y()));
}

void HeatmapWidget::thinTickLabels() {
    // Every value labelled when the cells leave room for it, else every second, fourth...: labels
    // of 16 rows in a short plot would print over each other. The tick marks stay on every cell.
    if (!m_grid)
        return;
    const QFontMetrics metrics(m_plot->yAxis->tickLabelFont());
    const auto stepFor = [](double pitch, int room) {
        int step = 1;
        while (pitch * step < room && step < 1 << 20)
            step *= 2;
        return step;
    };
    const QRect area = m_plot->axisRect()->rect();
    const QStringList& xs = m_grid->xValues;
    const QStringList& ys = m_grid->yValues;
    int widest = 0;
    for (const QString& value : xs)
        widest = std::max(widest, metrics.horizontalAdvance(value));
    const bool rotated = !qFuzzyIsNull(m_plot->xAxis->tickLabelRotation());
    const int xRoom = (rotated ? metrics.height() : widest) + metrics.averageCharWidth();
    // Not laid out yet (a hidden plot): every value, until the plot knows its size.
    const bool laidOut = m_plot->isVisible() && area.width() > 0 && area.height() > 0;
    const std::array<int, 2> steps =
        !laidOut
            ? std::array<int, 2>{1, 1}
            : std::array<int, 2>{
                  xs.isEmpty() ? 1 : stepFor(static_cast<double>(area.width()) / static_cast<double>(xs.size()), xRoom),
                  ys.isEmpty()
                      ? 1
                      : stepFor(static_cast<double>(area.height()) / static_cast<double>(ys.size()), metrics.height())};
    if (steps == m_labelSteps)
        return;
    m_labelSteps = steps;
    const auto setTicks = [](QCPAxis* axis, const QStringList& values, int step) {
        auto ticker = QSharedPointer<QCPAxisTickerText>::create();
        for (int i = 0; i < values.size(); ++i)
            ticker->addTick(i, i % step == 0 ? values[i] : QString());
        axis->setTicker(ticker);
    };
    setTicks(m_plot->xAxis, xs, steps[0]);
    setTicks(m_plot->yAxis, ys, steps[1]);
}

void HeatmapWidget::onMouseMove(QMouseEvent* event) {
    const CellIndex cell = cellAtPixel(event->position());
    if (cell == m_hoverCell)
        return; // the tooltip stays while the mouse stays in a cell
    m_hoverCell = cell;
    if (!cell.valid()) {
        m_hoverText.clear();
        QToolTip::hideText();
        return;
    }
    m_hoverText = tooltip(*m_grid, cell);
    // With the cell's rectangle, Qt hides the tooltip as soon as the mouse leaves the cell.
    const QRect area =
        QRectF(QPointF(m_plot->xAxis->coordToPixel(cell.x - 0.5), m_plot->yAxis->coordToPixel(cell.y + 0.5)),
               QPointF(m_plot->xAxis->coordToPixel(cell.x + 0.5), m_plot->yAxis->coordToPixel(cell.y - 0.5)))
            .normalized()
            .toAlignedRect();
    QToolTip::showText(event->globalPosition().toPoint(), m_hoverText, m_plot, area);
}

void HeatmapWidget::onMouseRelease(QMouseEvent* event) {
    if (!isClick(event))
        return;
    const CellIndex cell = cellAtPixel(event->position());
    if (!cell.valid() || !m_grid->cell(cell).record)
        return;
    const QString json = QString::fromStdString(configJson(m_grid->cell(cell).record->config));
    selectConfig(json);
    emit configSelected(json);
}

} // namespace tilescope::views
