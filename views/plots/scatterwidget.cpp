#include "plots/scatterwidget.h"

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
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <utility>

namespace tilescope::views {

namespace {

constexpr double kPickRadius = 8; // pixels: how near the mouse must be to a point

// An axis range around [lower, upper] with a margin, so that no point sits on the frame.
QCPRange paddedRange(double lower, double upper, bool logarithmic) {
    if (!std::isfinite(lower) || !std::isfinite(upper))
        return logarithmic ? QCPRange(1, 10) : QCPRange(0, 1);
    if (logarithmic) {
        const double factor = upper > lower ? std::pow(upper / lower, 0.05) : 2.0;
        return QCPRange(lower / factor, upper * factor);
    }
    const double pad = upper > lower ? (upper - lower) * 0.05 : std::max(std::abs(lower) * 0.1, 0.5);
    return QCPRange(lower - pad, upper + pad);
}

void setScale(QCPAxis* axis, bool logarithmic) {
    axis->setScaleType(logarithmic ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    if (logarithmic)
        axis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    else
        axis->setTicker(QSharedPointer<QCPAxisTicker>::create());
}

} // namespace

ScatterWidget::ScatterWidget(QWidget* parent)
    : ResultPlot(parent) {
    m_xCombo = new QComboBox(this);
    m_xCombo->setToolTip(tr("The quantity along the horizontal axis"));
    m_yCombo = new QComboBox(this);
    m_yCombo->setToolTip(tr("The quantity along the vertical axis"));
    m_colourCombo = new QComboBox(this);
    m_colourCombo->setToolTip(tr("What the colour of a point shows (brighter is better)"));
    m_logXBox = new QCheckBox(tr("Log X"), this);
    m_logYBox = new QCheckBox(tr("Log Y"), this);
    m_frontBox = new QCheckBox(tr("Front"), this);
    m_frontBox->setToolTip(tr("Draw the Pareto front: the configs no other config beats on both quantities "
                              "(time against energy: the trade-offs worth choosing from)"));
    m_status = new QLabel(this);
    m_status->setForegroundRole(QPalette::PlaceholderText);
    m_status->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred); // cut rather than widen the window
    m_status->setAlignment(Qt::AlignRight | Qt::AlignVCenter);

    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("X:"), this));
    controls->addWidget(m_xCombo);
    controls->addWidget(m_logXBox);
    controls->addSpacing(fontMetrics().averageCharWidth() * 2);
    controls->addWidget(new QLabel(tr("Y:"), this));
    controls->addWidget(m_yCombo);
    controls->addWidget(m_logYBox);
    controls->addSpacing(fontMetrics().averageCharWidth() * 2);
    controls->addWidget(new QLabel(tr("Colour:"), this));
    controls->addWidget(m_colourCombo);
    controls->addSpacing(fontMetrics().averageCharWidth() * 2);
    controls->addWidget(m_frontBox);
    controls->addWidget(m_status, 1);

    m_plot = new QCustomPlot(this);
    m_plot->setMinimumSize(240, 200);
    m_plot->setMouseTracking(true);
    m_plot->setInteractions({});
    m_scale = new QCPColorScale(m_plot);
    m_scale->setType(QCPAxis::atRight);
    m_scale->setBarWidth(14);
    m_plot->plotLayout()->addElement(0, 1, m_scale);
    auto* margins = new QCPMarginGroup(m_plot);
    m_plot->axisRect()->setMarginGroup(QCP::msBottom | QCP::msTop, margins);
    m_scale->setMarginGroup(QCP::msBottom | QCP::msTop, margins);
    for (QCPAxis* axis : {m_plot->xAxis, m_plot->yAxis}) {
        QFont label = font();
        label.setBold(true);
        axis->setLabelFont(label);
        axis->grid()->setPen(QPen(QColor(225, 225, 225), 0));
    }

    auto addGraph = [this](const QCPScatterStyle& style) {
        QCPGraph* graph = m_plot->addGraph();
        graph->setLineStyle(QCPGraph::lsNone);
        graph->setScatterStyle(style);
        graph->setAdaptiveSampling(false); // it would merge scatter points; there are few enough
        graph->removeFromLegend();
        return graph;
    };
    const QColor grey(150, 150, 150);
    m_plain = addGraph(QCPScatterStyle(QCPScatterStyle::ssDisc, grey, grey, 6));
    const QCPColorGradient gradient = betterIsBrighterGradient(true);
    for (int bin = 0; bin < kColourBins; ++bin) {
        // Worst first, so that the best points are drawn on top.
        QCPColorGradient copy = gradient;
        const QColor colour = QColor::fromRgb(copy.color((bin + 0.5) / kColourBins, QCPRange(0, 1)));
        m_bins.push_back(addGraph(QCPScatterStyle(QCPScatterStyle::ssDisc, colour, colour, 6)));
    }
    m_frontGraph = addGraph(QCPScatterStyle(QCPScatterStyle::ssDiamond, QColor(200, 30, 30), QColor(200, 30, 30), 9));
    m_frontGraph->setLineStyle(QCPGraph::lsLine);
    m_frontGraph->setPen(QPen(QColor(200, 30, 30), 1.5, Qt::DashLine));
    m_selectionGraph = addGraph(QCPScatterStyle(QCPScatterStyle::ssCircle, selectionPen(), Qt::NoBrush, 16));

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(m_plot, 1);

    for (QComboBox* combo : {m_xCombo, m_yCombo, m_colourCombo})
        connect(combo, &QComboBox::activated, this, [this]() { specFromControls(); });
    for (QCheckBox* box : {m_logXBox, m_logYBox, m_frontBox})
        connect(box, &QCheckBox::toggled, this, [this]() { specFromControls(); });
    connect(m_plot, &QCustomPlot::mouseMove, this, &ScatterWidget::onMouseMove);
    connect(m_plot, &QCustomPlot::mousePress, this, &ScatterWidget::notePress);
    connect(m_plot, &QCustomPlot::mouseRelease, this, &ScatterWidget::onMouseRelease);
    m_plot->installEventFilter(this);
}

bool ScatterWidget::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_plot && event->type() == QEvent::Leave) {
        m_hoverPoint = -1;
        QToolTip::hideText();
    }
    return QWidget::eventFilter(watched, event);
}

void ScatterWidget::setResults(std::shared_ptr<const std::vector<ResultRecord>> results,
                               std::vector<std::string> parameterNames, std::string objectiveName) {
    m_results = std::move(results);
    m_parameterNames = std::move(parameterNames);
    m_objectiveName = std::move(objectiveName);
    m_needSummary = true;
    refresh();
}

void ScatterWidget::setSpec(const ScatterSpec& spec) {
    m_specChosen = true;
    if (spec == m_spec && m_data)
        return;
    m_spec = spec;
    syncControls();
    refresh();
}

void ScatterWidget::applySummary(const ResultSummary& summary) {
    const std::vector<Quantity> previous = std::move(m_quantities);
    m_quantities = availableQuantities(summary, m_objectiveName);
    const auto has = [this](QuantityKind kind) {
        return std::any_of(m_quantities.begin(), m_quantities.end(), [&](const Quantity& q) { return q.kind == kind; });
    };
    if (!m_specChosen) {
        // The spill diagnosis view: what registers cost in throughput, spilling configs stand out.
        m_spec.x = {has(QuantityKind::Registers) ? QuantityKind::Registers : QuantityKind::LatencyUs, {}, false};
        m_spec.y = {has(QuantityKind::Objective) ? QuantityKind::Objective : QuantityKind::LatencyUs, {}, false};
        if (m_spec.x == m_spec.y && has(QuantityKind::TheoreticalOccupancy))
            m_spec.x = {QuantityKind::TheoreticalOccupancy, {}, false};
        m_spec.colour = has(QuantityKind::SpillStores)
                            ? std::optional<Quantity>(Quantity{QuantityKind::SpillStores, {}, false})
                            : std::nullopt;
        // Results with energy: the time-energy trade-off, its front drawn.
        const Quantity energy{QuantityKind::Metric, kEnergyMetric, false};
        if (std::find(m_quantities.begin(), m_quantities.end(), energy) != m_quantities.end()) {
            m_spec.x = {QuantityKind::LatencyUs, {}, false};
            m_spec.y = energy;
            m_spec.colour = std::nullopt;
            m_spec.front = true;
        }
    }
    for (const Quantity& q : {m_spec.x, m_spec.y}) {
        if (std::find(m_quantities.begin(), m_quantities.end(), q) == m_quantities.end())
            m_quantities.push_back(q);
    }
    if (m_spec.colour && std::find(m_quantities.begin(), m_quantities.end(), *m_spec.colour) == m_quantities.end())
        m_quantities.push_back(*m_spec.colour);
    if (m_xCombo->count() == static_cast<int>(m_quantities.size()) && m_quantities == previous) {
        syncControls(); // unchanged: an open popup stays open
        return;
    }
    const QSignalBlocker blockX(m_xCombo);
    const QSignalBlocker blockY(m_yCombo);
    const QSignalBlocker blockColour(m_colourCombo);
    m_xCombo->clear();
    m_yCombo->clear();
    m_colourCombo->clear();
    m_colourCombo->addItem(tr("none"));
    for (const Quantity& quantity : m_quantities) {
        const QString label = quantityLabel(quantity, m_objectiveName);
        m_xCombo->addItem(label);
        m_yCombo->addItem(label);
        m_colourCombo->addItem(label);
    }
    syncControls();
}

void ScatterWidget::syncControls() {
    const QSignalBlocker blockX(m_xCombo);
    const QSignalBlocker blockY(m_yCombo);
    const QSignalBlocker blockColour(m_colourCombo);
    const QSignalBlocker blockLogX(m_logXBox);
    const QSignalBlocker blockLogY(m_logYBox);
    const QSignalBlocker blockFront(m_frontBox);
    const auto indexOf = [this](const Quantity& q) {
        const auto it = std::find(m_quantities.begin(), m_quantities.end(), q);
        return it == m_quantities.end() ? -1 : static_cast<int>(it - m_quantities.begin());
    };
    m_xCombo->setCurrentIndex(indexOf(m_spec.x));
    m_yCombo->setCurrentIndex(indexOf(m_spec.y));
    m_colourCombo->setCurrentIndex(m_spec.colour ? indexOf(*m_spec.colour) + 1 : 0);
    m_logXBox->setChecked(m_spec.logX);
    m_logYBox->setChecked(m_spec.logY);
    m_frontBox->setChecked(m_spec.front);
}

void ScatterWidget::specFromControls() {
    ScatterSpec spec = m_spec;
    const auto quantityAt = [this](int index) -> std::optional<Quantity> {
        if (index < 0 || static_cast<std::size_t>(index) >= m_quantities.size())
            return std::nullopt;
        return m_quantities[static_cast<std::size_t>(index)];
    };
    if (const auto x = quantityAt(m_xCombo->currentIndex()))
        spec.x = *x;
    if (const auto y = quantityAt(m_yCombo->currentIndex()))
        spec.y = *y;
    spec.colour = quantityAt(m_colourCombo->currentIndex() - 1);
    spec.logX = m_logXBox->isChecked();
    spec.logY = m_logYBox->isChecked();
    spec.front = m_frontBox->isChecked();
    setSpec(spec);
}

void ScatterWidget::refresh() {
    if (waitUntilShown())
        return;
    // A job that summarizes may find that the default spec changes with the summary: apply()
    // then starts another for the new spec.
    auto job = [results = m_results, names = m_parameterNames, spec = m_spec, objective = m_objectiveName,
                summarizeToo = m_needSummary]() {
        Computed computed;
        static const std::vector<ResultRecord> none;
        const std::vector<ResultRecord>& all = results ? *results : none;
        if (summarizeToo)
            computed.summary = std::make_shared<const ResultSummary>(summarize(all, names));
        computed.data = std::make_shared<const ScatterData>(scatterPoints(all, spec, objective, kMaxPoints));
        computed.results = results;
        return computed;
    };
    compute(
        std::move(job), [this](const Computed& computed) { apply(computed); }, m_status,
        tr("Preparing %1 results…").arg(formatCount(static_cast<std::uint64_t>(m_results ? m_results->size() : 0))));
}

void ScatterWidget::apply(const Computed& computed) {
    if (computed.summary) {
        m_needSummary = false;
        const ScatterSpec before = m_spec;
        applySummary(*computed.summary);
        if (m_spec != before) {
            refresh(); // the defaults changed what to plot: the points computed are for the old spec
            return;
        }
    }
    m_data = computed.data;
    m_dataResults = computed.results;
    m_hoverPoint = -1;
    showPoints();
    emit pointsChanged();
}

void ScatterWidget::showPoints() {
    m_plain->data()->clear();
    m_frontGraph->data()->clear();
    for (QCPGraph* bin : m_bins)
        bin->data()->clear();
    setScale(m_plot->xAxis, m_spec.logX);
    setScale(m_plot->yAxis, m_spec.logY);
    m_plot->xAxis->setLabel(quantityLabel(m_spec.x, m_objectiveName));
    m_plot->yAxis->setLabel(quantityLabel(m_spec.y, m_objectiveName));

    const bool coloured = m_spec.colour.has_value();
    if (coloured && !m_scale->layout()) {
        m_plot->plotLayout()->addElement(0, 1, m_scale);
        m_scale->setVisible(true);
    } else if (!coloured && m_scale->layout()) {
        m_plot->plotLayout()->take(m_scale); // an unused colour scale would still take its column
        m_plot->plotLayout()->simplify();
        m_scale->setVisible(false);
    }

    const ScatterData* shown = m_data.get();
    double xMin = std::numeric_limits<double>::quiet_NaN();
    double xMax = xMin;
    double yMin = xMin;
    double yMax = xMin;
    if (shown) {
        const bool higher = coloured && higherIsBetter(*m_spec.colour);
        const double lower = shown->colourMin;
        const double span = shown->colourMax - shown->colourMin;
        for (const ScatterPoint& point : shown->points) {
            if (!(point.x >= xMin))
                xMin = point.x;
            if (!(point.x <= xMax))
                xMax = point.x;
            if (!(point.y >= yMin))
                yMin = point.y;
            if (!(point.y <= yMax))
                yMax = point.y;
            if (!coloured || !std::isfinite(point.colour)) {
                m_plain->addData(point.x, point.y);
                continue;
            }
            // Bins by goodness: bin 0 holds the worst values, whichever way the quantity ranks.
            double fraction = span > 0 ? (point.colour - lower) / span : 0.5;
            if (!higher)
                fraction = 1.0 - fraction;
            const int bin = std::clamp(static_cast<int>(fraction * kColourBins), 0, kColourBins - 1);
            m_bins[static_cast<std::size_t>(bin)]->addData(point.x, point.y);
        }
        if (coloured) {
            m_scale->setGradient(betterIsBrighterGradient(higher));
            double top = shown->colourMax;
            double bottom = shown->colourMin;
            if (!std::isfinite(bottom)) {
                bottom = 0;
                top = 1;
            } else if (!(top > bottom)) {
                top = bottom + 1;
            }
            m_scale->setDataRange(QCPRange(bottom, top));
            m_scale->axis()->setLabel(quantityLabel(*m_spec.colour, m_objectiveName) +
                                      (higher ? tr("  ↑ better") : tr("  ↓ better")));
        }
    }
    if (shown)
        for (std::size_t i : shown->front)
            m_frontGraph->addData(shown->points[i].x, shown->points[i].y);
    m_plot->xAxis->setRange(paddedRange(xMin, xMax, m_spec.logX));
    m_plot->yAxis->setRange(paddedRange(yMin, yMax, m_spec.logY));
    placeSelection();

    QString status;
    if (shown) {
        status = shown->thinned() ? tr("%1 of %2 configs drawn (the best and an even sample)")
                                        .arg(formatCount(static_cast<std::uint64_t>(shown->points.size())),
                                             formatCount(static_cast<std::uint64_t>(shown->candidates)))
                                  : tr("%1 configs").arg(formatCount(static_cast<std::uint64_t>(shown->points.size())));
        if (!shown->front.empty())
            status += tr(", %1 on the front").arg(shown->front.size());
        if (shown->failedCount > 0)
            status += tr(", %1 failed (not drawn)").arg(formatCount(static_cast<std::uint64_t>(shown->failedCount)));
    }
    m_status->setText(status);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

QString ScatterWidget::statusText() const {
    return m_status->text();
}

void ScatterWidget::placeSelection() {
    m_selectionGraph->data()->clear();
    if (m_selectedConfig.empty() || !m_results)
        return;
    const std::optional<ConfigValues> parsed = parseConfigJson(m_selectedConfig);
    if (!parsed)
        return;
    const ConfigValues& target = *parsed;
    // Searched among all results, not only the drawn points: a thinned-out config still gets its ring.
    for (const ResultRecord& result : *m_results) {
        if (!result.ok() || result.config != target)
            continue;
        const auto x = quantityValue(result, m_spec.x);
        const auto y = quantityValue(result, m_spec.y);
        if (x && y) {
            m_selectionGraph->addData(*x, *y);
            return;
        }
    }
}

bool ScatterWidget::selectConfig(const QString& configJson) {
    m_selectedConfig = configJson.toStdString();
    placeSelection();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
    return !m_selectionGraph->data()->isEmpty();
}

int ScatterWidget::pointAtPixel(QPointF pixel) const {
    if (!m_data || !m_plot->axisRect()->rect().contains(pixel.toPoint()))
        return -1;
    int nearest = -1;
    double nearestDistance = kPickRadius * kPickRadius;
    for (std::size_t i = 0; i < m_data->points.size(); ++i) {
        const QPointF p = pixelOf(static_cast<int>(i));
        const double dx = p.x() - pixel.x();
        const double dy = p.y() - pixel.y();
        const double distance = dx * dx + dy * dy;
        if (distance < nearestDistance) { // strict: of points on one spot, the best (first) wins
            nearestDistance = distance;
            nearest = static_cast<int>(i);
        }
    }
    return nearest;
}

QPointF ScatterWidget::pixelOf(int point) const {
    if (!m_data || point < 0 || static_cast<std::size_t>(point) >= m_data->points.size())
        return {};
    const ScatterPoint& p = m_data->points[static_cast<std::size_t>(point)];
    return {m_plot->xAxis->coordToPixel(p.x), m_plot->yAxis->coordToPixel(p.y)};
}

QString ScatterWidget::pointText(const ScatterPoint& point) const {
    const ResultRecord& result = (*m_dataResults)[point.result];
    QString text = describeResult(result, m_objectiveName);
    // Metrics that describeResult does not show.
    std::vector<Quantity> shown = {m_spec.x, m_spec.y};
    if (m_spec.colour)
        shown.push_back(*m_spec.colour);
    for (const Quantity& q : shown) {
        if (q.kind != QuantityKind::Metric)
            continue;
        if (const auto value = quantityValue(result, q))
            text += QStringLiteral("\n%1: %2").arg(quantityLabel(q, m_objectiveName), formatNumber(*value));
    }
    return text;
}

void ScatterWidget::onMouseMove(QMouseEvent* event) {
    const int point = pointAtPixel(event->position());
    if (point == m_hoverPoint)
        return;
    m_hoverPoint = point;
    if (point < 0) {
        m_hoverText.clear();
        QToolTip::hideText();
        return;
    }
    m_hoverText = pointText(m_data->points[static_cast<std::size_t>(point)]);
    QToolTip::showText(event->globalPosition().toPoint(), m_hoverText, m_plot);
}

void ScatterWidget::onMouseRelease(QMouseEvent* event) {
    if (!isClick(event))
        return;
    const int point = pointAtPixel(event->position());
    if (point < 0)
        return;
    const ResultRecord& result = (*m_dataResults)[m_data->points[static_cast<std::size_t>(point)].result];
    const QString json = QString::fromStdString(configJson(result.config));
    selectConfig(json);
    emit configSelected(json);
}

} // namespace tilescope::views
