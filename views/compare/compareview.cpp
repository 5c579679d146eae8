#include "compare/compareview.h"

#include "common/format.h"
#include "plots/plotstyle.h"

#include <qcustomplot.h>

#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QTextBrowser>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace tilescope::views {

namespace {

// A table cell that sorts by number.
class NumberItem : public QTableWidgetItem {
public:
    using QTableWidgetItem::QTableWidgetItem;
    bool operator<(const QTableWidgetItem& other) const override {
        const QVariant a = data(Qt::UserRole);
        const QVariant b = other.data(Qt::UserRole);
        if (a.isValid() && b.isValid())
            return a.toDouble() < b.toDouble();
        return QTableWidgetItem::operator<(other);
    }
};

QTableWidgetItem* cell(double value, const QString& text) {
    auto* item = new NumberItem;
    item->setData(Qt::DisplayRole, text);
    item->setData(Qt::UserRole, value);
    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return item;
}

} // namespace

CompareView::CompareView(QWidget* parent)
    : QWidget(parent) {
    m_choose = new QPushButton(tr("Compare with a recording…"), this);
    m_choose->setToolTip(tr("Open results of the same problem from another GPU, or measured in another context: a "
                            "Tilescope database, a T4 file or a Kernel Tuner cache"));
    connect(m_choose, &QPushButton::clicked, this, &CompareView::chooseFile);
    m_heading = new QLabel(this);
    m_heading->setWordWrap(true);
    m_heading->setTextFormat(Qt::RichText);
    m_summary = new QTextBrowser(this); // scrolls where the panel is short
    m_summary->setFrameShape(QFrame::NoFrame);
    m_summary->setOpenLinks(false);

    m_plot = new QCustomPlot(this);
    m_plot->setMinimumSize(220, 160);
    for (QCPAxis* axis : {m_plot->xAxis, m_plot->yAxis}) {
        axis->setScaleType(QCPAxis::stLogarithmic);
        axis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
        axis->setNumberFormat(QStringLiteral("gb"));
    }
    m_diagonal = m_plot->addGraph();
    m_diagonal->setPen(QPen(QColor(150, 150, 150), 1, Qt::DashLine));
    m_diagonal->setName(tr("median ratio"));
    m_points = m_plot->addGraph();
    m_points->setLineStyle(QCPGraph::lsNone);
    m_points->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QColor(31, 119, 180), 5));
    m_points->setName(tr("config"));
    m_winnerA = m_plot->addGraph();
    m_winnerA->setLineStyle(QCPGraph::lsNone);
    m_winnerA->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssSquare, QPen(QColor(214, 39, 40), 2), Qt::NoBrush, 11));
    m_winnerA->setName(tr("A's winner"));
    m_winnerB = m_plot->addGraph();
    m_winnerB->setLineStyle(QCPGraph::lsNone);
    m_winnerB->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssDiamond, QPen(QColor(148, 103, 189), 2), Qt::NoBrush, 13));
    m_winnerB->setName(tr("B's winner"));
    // The legend in one row under the plot, out of the points' way.
    m_plot->legend->setVisible(true);
    QFont small = font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    m_plot->legend->setFont(small);
    m_plot->legend->setBorderPen(Qt::NoPen);
    m_plot->legend->setBrush(Qt::NoBrush);
    m_plot->legend->setWrap(2); // two entries a row, so that narrow panels keep the words
    m_plot->legend->setFillOrder(QCPLegend::foColumnsFirst, true);
    m_plot->axisRect()->insetLayout()->take(m_plot->legend);
    m_plot->plotLayout()->addElement(1, 0, m_plot->legend);
    m_plot->plotLayout()->setRowStretchFactor(1, 0.001);
    m_plot->setInteraction(QCP::iSelectPlottables, true);
    m_points->setSelectable(QCP::stSingleData);
    connect(m_plot, &QCustomPlot::plottableClick, this, [this](QCPAbstractPlottable* p, int index, QMouseEvent*) {
        if (p != m_points || !m_comparison || index < 0 || index >= static_cast<int>(m_comparison->configs.size()))
            return;
        emit configSelected(qs(configJson(m_comparison->configs[static_cast<std::size_t>(index)].config)));
    });

    m_table = new QTableWidget(this);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    m_table->setSortingEnabled(true);
    connect(m_table, &QTableWidget::itemSelectionChanged, this, [this]() {
        const auto rows = m_table->selectionModel()->selectedRows();
        if (rows.isEmpty())
            return;
        if (QTableWidgetItem* item = m_table->item(rows.front().row(), 0))
            emit configSelected(item->data(Qt::UserRole + 1).toString());
    });

    auto* top = new QHBoxLayout;
    top->addWidget(m_choose);
    top->addWidget(m_heading, 1);
    // The plot takes the whole height on the left; the summary sits over the table on the right.
    auto* right = new QSplitter(Qt::Vertical, this);
    right->addWidget(m_summary);
    right->addWidget(m_table);
    right->setStretchFactor(0, 1);
    right->setStretchFactor(1, 1);
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(m_plot);
    split->addWidget(right);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 3);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(split, 1);
    applyPlotPalette(m_plot, palette());
    display();
}

void CompareView::setCurrent(const SessionInfo& info, std::shared_ptr<const std::vector<ResultRecord>> results,
                             const QString& label) {
    m_aInfo = info;
    m_aResults = std::move(results);
    m_aLabel = label.toStdString();
    if (m_b) // nothing to compare with: nothing to do for each snapshot of a run
        recompute();
}

void CompareView::chooseFile() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Compare with a recording"),
                                                      m_path.isEmpty() ? QString() : QFileInfo(m_path).absolutePath(),
                                                      tr("Recorded results (*.db *.json *.json.gz);;All files (*)"));
    if (!path.isEmpty())
        compareWith(path);
}

void CompareView::compareWith(const QString& path) {
    m_path = path;
    m_loading = true;
    m_heading->setText(tr("Reading %1…").arg(QFileInfo(path).fileName().toHtmlEscaped()));
    const std::string file = path.toStdString();
    struct Read {
        std::shared_ptr<const CompareSide> side;
        QString error;
    };
    m_reader.start(
        [file]() {
            Read out;
            try {
                // Labelled as side A is, by device and file.
                out.side = std::make_shared<const CompareSide>(readCompareSide(file, std::nullopt, false));
            } catch (const std::exception& e) {
                out.error = QString::fromUtf8(e.what());
            }
            return out;
        },
        [this](Read read) {
            m_loading = false;
            m_b = std::move(read.side);
            m_error = read.error;
            recompute();
        });
}

void CompareView::recompute() {
    m_comparison.reset();
    if (m_b && m_aResults) {
        m_error.clear();
        try {
            CompareRequest request;
            request.a = std::make_shared<const CompareSide>(CompareSide{m_aLabel, m_aInfo, *m_aResults});
            request.b = m_b;
            m_comparison = runCompare(request).comparison;
        } catch (const std::exception& e) {
            m_error = QString::fromUtf8(e.what());
        }
    }
    display();
    if (m_b || !m_error.isEmpty())
        emit compared();
}

void CompareView::display() {
    m_points->data()->clear();
    m_winnerA->data()->clear();
    m_winnerB->data()->clear();
    m_diagonal->data()->clear();
    m_table->setSortingEnabled(false);
    m_table->clear();
    m_table->setRowCount(0);
    m_table->setColumnCount(0);
    if (!m_comparison) {
        m_heading->setText(
            m_error.isEmpty()
                ? tr("<b>A</b>: the results on screen. Open <b>B</b>: the same problem from another GPU "
                     "or another measurement context.")
                : tr("<span style='color:#b91c1c'>Cannot compare: %1</span>").arg(m_error.toHtmlEscaped()));
        m_summary->setHtml(m_error.isEmpty()
                               ? tr("Each config's time on both sides, their ratio, whether the order of the configs "
                                    "carries over (rank correlation) and how much each side's winner loses on the "
                                    "other. Configs match on the parameters both sides have.")
                               : QString());
        m_plot->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    const DeviceComparison& c = *m_comparison;
    m_heading->setText(
        tr("<b>A</b> %1 &nbsp;·&nbsp; <b>B</b> %2").arg(qs(c.labelA).toHtmlEscaped(), qs(c.labelB).toHtmlEscaped()));
    QString lines;
    for (const std::string& line : comparisonSentences(c))
        lines += QStringLiteral("<li>%1</li>").arg(qs(line).toHtmlEscaped());
    m_summary->setHtml(QStringLiteral("<ul style='margin:0; -qt-list-indent:1'>%1</ul>").arg(lines));

    // The scatter, in A's order (the table's first sort), with the median ratio's diagonal.
    double lo = c.configs.front().timeA;
    double hi = lo;
    for (const ComparedConfig& x : c.configs) {
        m_points->addData(x.timeA, x.timeB);
        lo = std::min({lo, x.timeA, x.timeB / c.medianRatio});
        hi = std::max({hi, x.timeA, x.timeB / c.medianRatio});
    }
    m_diagonal->addData(lo, lo * c.medianRatio);
    m_diagonal->addData(hi, hi * c.medianRatio);
    if (c.aOnB)
        m_winnerA->addData(c.configs.front().timeA, c.aOnB->timeThere);
    if (c.bOnA && c.aOnB)
        m_winnerB->addData(c.bOnA->timeThere, c.aOnB->bestThere); // its time on A, and B's best
    m_plot->xAxis->setLabel(tr("time on A (ms)"));
    m_plot->yAxis->setLabel(tr("time on B (ms)"));
    m_plot->rescaleAxes();
    for (QCPAxis* axis : {m_plot->xAxis, m_plot->yAxis}) {
        const QCPRange r = axis->range();
        axis->setRange(r.lower / 1.15, r.upper * 1.15);
    }
    m_plot->replot(QCustomPlot::rpQueuedReplot);

    QStringList headers{tr("rank A"), tr("rank B")};
    for (const std::string& p : c.shared)
        headers << qs(p);
    headers << tr("time A (ms)") << tr("time B (ms)") << tr("B / A");
    m_table->setColumnCount(static_cast<int>(headers.size()));
    m_table->setHorizontalHeaderLabels(headers);
    m_table->setRowCount(static_cast<int>(c.configs.size()));
    for (int row = 0; row < static_cast<int>(c.configs.size()); ++row) {
        const ComparedConfig& x = c.configs[static_cast<std::size_t>(row)];
        int col = 0;
        QTableWidgetItem* first = cell(x.rankA, QString::number(x.rankA));
        first->setData(Qt::UserRole + 1, qs(configJson(x.config)));
        m_table->setItem(row, col++, first);
        m_table->setItem(row, col++, cell(x.rankB, QString::number(x.rankB)));
        for (const std::string& p : c.shared) {
            const ConfigValue* v = x.config.find(p);
            m_table->setItem(row, col++,
                             cell(v && v->isNumber() ? v->asNumber() : 0.0, v ? qs(v->plain()) : QString()));
        }
        m_table->setItem(row, col++, cell(x.timeA, QString::number(x.timeA, 'g', 4)));
        m_table->setItem(row, col++, cell(x.timeB, QString::number(x.timeB, 'g', 4)));
        m_table->setItem(row, col++, cell(x.ratio, QString::number(x.ratio, 'g', 3) + QStringLiteral("×")));
    }
    m_table->setSortingEnabled(true);
    m_table->sortItems(0, Qt::AscendingOrder);
    m_table->resizeColumnsToContents();
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
}

} // namespace tilescope::views
