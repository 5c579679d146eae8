#include "shapes/shapesview.h"

#include "common/emptystate.h"
#include "common/format.h"
#include "plots/plotstyle.h"

#include "base/error.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QStackedWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace tilescope::views {

namespace {

// "memory · flat", "compute · +35 %": the regime in a cell.
QString shortRegime(const ShapeRegime& r) {
    QString bound;
    switch (r.roofline.bound()) {
    case Roofline::Bound::Memory:
        bound = QStringLiteral("memory");
        break;
    case Roofline::Bound::Compute:
        bound = QStringLiteral("compute");
        break;
    case Roofline::Bound::Unknown:
        break;
    }
    if (const auto f = r.roofline.fraction(r.spread.bestMs))
        bound += (bound.isEmpty() ? QString() : QStringLiteral(" ")) + formatPercent(*f);
    const QString spread =
        r.spread.flat ? QStringLiteral("flat") : QStringLiteral("+%1").arg(formatPercent(r.spread.gainOverMedian));
    return bound.isEmpty() ? spread : bound + QStringLiteral(" · ") + spread;
}

QString configText(const ConfigValues& config) {
    return qs(describeConfig(config));
}

} // namespace

ShapesView::ShapesView(QWidget* parent)
    : QWidget(parent) {
    m_empty = emptyStateLabel(
        tr("<h3>No shape set</h3><p>A shape set is one kernel tuned at several shapes in one database: "
           "<code>tilescope-cli tune PROBLEM --shapes all --cross-eval 4 --db set.db</code>. Open that "
           "database to see the regret of each config on each shape, the smallest dispatch table within a "
           "bound, and where tuning helps.</p>"),
        this);

    m_shapeCombo = new QComboBox(this);
    m_shapeCombo->setObjectName(QStringLiteral("shapeCombo"));
    m_shapeCombo->setToolTip(tr("The shape the heatmap, the results and the details show"));
    m_shapeCombo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_regretSpin = new QDoubleSpinBox(this);
    m_regretSpin->setObjectName(QStringLiteral("regretSpin"));
    m_regretSpin->setRange(0, 100);
    m_regretSpin->setDecimals(1);
    m_regretSpin->setSingleStep(0.5);
    m_regretSpin->setValue(3);
    m_regretSpin->setSuffix(QStringLiteral(" %"));
    m_regretSpin->setToolTip(tr("The dispatch table runs every tuned shape within this much of its own best"));
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("shapesSummary"));
    m_summary->setWordWrap(true);
    m_verdict = new QLabel(this);
    m_verdict->setObjectName(QStringLiteral("shapeVerdict"));
    m_verdict->setWordWrap(true);
    m_verdict->setTextFormat(Qt::RichText);

    m_heat = new QTableWidget(this);
    m_heat->setObjectName(QStringLiteral("regretHeatmap"));
    m_heat->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_heat->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_heat->setSelectionMode(QAbstractItemView::SingleSelection);
    m_heat->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_heat->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_heat->setToolTip(tr("Each cell: the config's time on the shape against the shape's best (0 % is the best). "
                          "Bold with a check: the table's entry that shape runs; – : not measured there"));

    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Shape"), this));
    controls->addWidget(m_shapeCombo);
    controls->addSpacing(12);
    controls->addWidget(new QLabel(tr("Table within"), this));
    controls->addWidget(m_regretSpin);
    controls->addStretch(1);

    auto* page = new QWidget(this);
    auto* layout = new QVBoxLayout(page);
    layout->setContentsMargins(6, 6, 6, 6);
    layout->addLayout(controls);
    layout->addWidget(m_summary);
    layout->addWidget(m_verdict);
    layout->addWidget(m_heat, 1);

    m_stack = new QStackedWidget(this);
    m_stack->addWidget(m_empty);
    m_stack->addWidget(page);
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    outer->addWidget(m_stack);

    connect(m_shapeCombo, &QComboBox::currentIndexChanged, this, [this](int row) {
        if (!m_updating)
            setCurrentShape(row);
    });
    connect(m_regretSpin, &QDoubleSpinBox::valueChanged, this, [this]() {
        if (!m_updating)
            replan();
    });
    connect(m_heat, &QTableWidget::currentCellChanged, this, [this](int row) {
        if (!m_updating && row >= 0 && row != currentShape())
            setCurrentShape(row);
    });
}

void ShapesView::setSessions(std::shared_ptr<const std::vector<SessionData>> sessions) {
    m_sessions = std::move(sessions);
    rebuild();
}

void ShapesView::setMaxRegret(double regret) {
    m_regretSpin->setValue(100 * regret);
}

double ShapesView::maxRegret() const {
    return m_regretSpin->value() / 100;
}

int ShapesView::currentShape() const {
    return hasShapeSet() ? m_shapeCombo->currentIndex() : -1;
}

std::int64_t ShapesView::sessionOf(int row) const {
    return row >= 0 && static_cast<std::size_t>(row) < m_sessionOf.size() ? m_sessionOf[row] : 0;
}

void ShapesView::setCurrentShape(int row) {
    if (!hasShapeSet() || row < 0 || static_cast<std::size_t>(row) >= m_matrix.shapes.size())
        return;
    showShape(row);
    if (const std::int64_t id = sessionOf(row))
        emit shapeChosen(id);
}

void ShapesView::showShape(int row) {
    m_updating = true;
    m_shapeCombo->setCurrentIndex(row);
    m_heat->setCurrentCell(row, 0);
    m_updating = false;
    m_verdict->setText(verdictText());
}

QString ShapesView::summaryText() const {
    if (!hasShapeSet())
        return {};
    const std::size_t n = m_table.entries.size();
    return tr("%1 %2 the %3 shapes of %4 within %5 of their best (worst %6, mean %7)%8.")
        .arg(n)
        .arg(n == 1 ? tr("config runs") : tr("configs run"))
        .arg(m_matrix.shapes.size())
        .arg(qs(m_matrix.kernel), formatPercent(maxRegret()), formatPercent(m_table.worstRegret),
             formatPercent(m_table.meanRegret), m_table.proven ? QString() : tr(" (greedy: the search hit its limit)"));
}

QString ShapesView::verdictText() const {
    const int row = currentShape();
    if (row < 0 || static_cast<std::size_t>(row) >= m_regimes.size())
        return {};
    const std::size_t entry = m_table.choice[row];
    return tr("<b>%1</b>: %2. The table runs entry %3 there, %4 from its best.")
        .arg(qs(m_matrix.shapeLabel(row)).toHtmlEscaped(), qs(m_regimes[row].verdict).toHtmlEscaped())
        .arg(entry + 1)
        .arg(formatPercent(m_table.regret[row]));
}

void ShapesView::rebuild() {
    m_matrix = {};
    m_table = {};
    m_regimes.clear();
    m_sessionOf.clear();
    m_columns.clear();
    if (m_sessions && m_sessions->size() >= 2) {
        try {
            ShapeConfigMatrix matrix = buildShapeConfigMatrix(*m_sessions, std::string(), "the recording");
            if (matrix.shapes.size() >= 2)
                m_matrix = std::move(matrix);
        } catch (const InputError&) {
            // several kernels, or shapes of different names: not one shape set
        }
    }
    if (!hasShapeSet()) {
        m_stack->setCurrentWidget(m_empty);
        return;
    }
    m_regimes = shapeRegimes(*m_sessions, m_matrix);
    // Per shape the session with the most results there (the search, not a cross-evaluation).
    m_sessionOf.assign(m_matrix.shapes.size(), 0);
    std::vector<std::size_t> most(m_matrix.shapes.size(), 0);
    for (const SessionData& s : *m_sessions) {
        if (s.info.kernel != m_matrix.kernel)
            continue;
        std::vector<std::int64_t> dims;
        for (const auto& [name, value] : s.info.shape)
            dims.push_back(value);
        for (std::size_t row = 0; row < m_matrix.shapes.size(); ++row)
            if (m_matrix.shapes[row] == dims && s.results.size() > most[row]) {
                most[row] = s.results.size();
                m_sessionOf[row] = s.info.id;
            }
    }
    m_updating = true;
    m_shapeCombo->clear();
    for (std::size_t row = 0; row < m_matrix.shapes.size(); ++row)
        m_shapeCombo->addItem(qs(m_matrix.shapeLabel(row)));
    m_updating = false;
    m_stack->setCurrentIndex(1);
    replan();
    showShape(static_cast<int>(m_matrix.shapes.size()) - 1); // the largest: where tiles matter most
}

void ShapesView::replan() {
    if (!hasShapeSet())
        return;
    const int row = currentShape();
    m_table = planWithinRegret(m_matrix, maxRegret());
    // Columns: the entries in table order, then the configs measured on the most shapes (then
    // the lowest mean regret over them).
    m_columns = m_table.entries;
    std::vector<std::size_t> others;
    for (std::size_t c = 0; c < m_matrix.configs.size(); ++c)
        if (std::find(m_columns.begin(), m_columns.end(), c) == m_columns.end())
            others.push_back(c);
    std::vector<std::pair<std::size_t, double>> key(m_matrix.configs.size(), {0, 0.0});
    for (std::size_t c : others) {
        for (std::size_t s = 0; s < m_matrix.shapes.size(); ++s)
            if (const auto r = m_matrix.regret(s, c)) {
                ++key[c].first;
                key[c].second += *r;
            }
        if (key[c].first > 0)
            key[c].second /= static_cast<double>(key[c].first);
    }
    std::stable_sort(others.begin(), others.end(), [&](std::size_t a, std::size_t b) {
        return key[a].first != key[b].first ? key[a].first > key[b].first : key[a].second < key[b].second;
    });
    if (others.size() > static_cast<std::size_t>(kOtherColumns))
        others.resize(kOtherColumns);
    m_columns.insert(m_columns.end(), others.begin(), others.end());
    m_summary->setText(summaryText());
    m_summary->setToolTip(tr("%1 configs measured on %2 of the %3 cells of the shape x config matrix; a config "
                             "counts only where it was measured (tune --cross-eval fills the cells that matter)")
                              .arg(m_matrix.configs.size())
                              .arg(m_matrix.measuredCells())
                              .arg(m_matrix.shapes.size() * m_matrix.configs.size()));
    fillHeatmap();
    showShape(row >= 0 ? row : 0);
}

void ShapesView::fillHeatmap() {
    m_updating = true;
    constexpr int kFixed = 2; // regime, best time
    m_heat->clear();
    m_heat->setRowCount(static_cast<int>(m_matrix.shapes.size()));
    m_heat->setColumnCount(kFixed + static_cast<int>(m_columns.size()));
    m_heat->setHorizontalHeaderItem(0, new QTableWidgetItem(tr("regime")));
    m_heat->horizontalHeaderItem(0)->setToolTip(
        tr("Against the roofline: memory- or compute-bound and how close the best runs to it; against the "
           "noise: flat (any config is as good) or what the best gains over the median config"));
    m_heat->setHorizontalHeaderItem(1, new QTableWidgetItem(tr("best ms")));
    for (std::size_t i = 0; i < m_columns.size(); ++i) {
        const bool entry = i < m_table.entries.size();
        auto* header = new QTableWidgetItem(entry ? tr("entry %1").arg(i + 1) : tr("c%1").arg(m_columns[i] + 1));
        header->setToolTip(configText(m_matrix.configs[m_columns[i]]));
        if (entry) {
            QFont bold = header->font();
            bold.setBold(true);
            header->setFont(bold);
        }
        m_heat->setHorizontalHeaderItem(kFixed + static_cast<int>(i), header);
    }
    QCPColorGradient gradient = betterIsBrighterGradient(false); // color() is not const: it caches
    const QCPRange range(0, std::log10(1 + 100.0));              // 0 % to 100 % regret and beyond, on a log axis
    for (std::size_t s = 0; s < m_matrix.shapes.size(); ++s) {
        const int row = static_cast<int>(s);
        m_heat->setVerticalHeaderItem(row, new QTableWidgetItem(qs(m_matrix.shapeLabel(s))));
        auto* regime = new QTableWidgetItem(shortRegime(m_regimes[s]));
        regime->setToolTip(qs(m_regimes[s].verdict));
        m_heat->setItem(row, 0, regime);
        auto* best = new QTableWidgetItem(QString::number(m_matrix.bestMs(s), 'g', 4));
        best->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        m_heat->setItem(row, 1, best);
        for (std::size_t i = 0; i < m_columns.size(); ++i) {
            const std::size_t c = m_columns[i];
            auto* cell = new QTableWidgetItem;
            cell->setTextAlignment(Qt::AlignCenter);
            const bool chosen = i < m_table.entries.size() && m_table.choice[s] == i;
            if (const auto r = m_matrix.regret(s, c)) {
                const double value = std::log10(1 + 100 * std::max(0.0, *r));
                const QColor background = QColor::fromRgb(gradient.color(value, range));
                cell->setBackground(background);
                cell->setForeground(textColourOn(background));
                cell->setText((chosen ? QStringLiteral("✓ ") : QString()) + formatPercent(*r));
                cell->setToolTip(tr("%1 on %2: %3 ms, %4 from the best")
                                     .arg(configText(m_matrix.configs[c]), qs(m_matrix.shapeLabel(s)))
                                     .arg(*m_matrix.ms[s][c], 0, 'g', 4)
                                     .arg(formatPercent(*r)));
                if (chosen) {
                    QFont bold = cell->font();
                    bold.setBold(true);
                    cell->setFont(bold);
                }
            } else {
                cell->setText(QStringLiteral("–"));
                cell->setToolTip(tr("not measured on this shape"));
            }
            m_heat->setItem(row, kFixed + static_cast<int>(i), cell);
        }
    }
    m_updating = false;
}

} // namespace tilescope::views
