#include "problem/kernelspecdialog.h"

#include "base/error.h"
#include "common/format.h"
#include "problem/problemdocument.h"
#include "spec/problemedit.h"
#include "spec/tuningproblem.h"

#include <nlohmann/json.hpp>

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QScreen>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include <optional>
#include <stdexcept>
#include <utility>

namespace tilescope::views {

namespace {

using Json = nlohmann::ordered_json;

// Empty text removes the field.
Json textOrNull(const QLineEdit* edit) {
    const QString text = edit->text().trimmed();
    return text.isEmpty() ? Json(nullptr) : Json(text.toStdString());
}

// An integer literal stays a JSON integer (as T1 writes ProblemSize), anything else an expression.
Json integerOrExpression(const QString& text) {
    if (const auto n = spec::parseIntegerLiteral(text.trimmed().toStdString()))
        return *n;
    return text.trimmed().toStdString();
}

// A column of a table that edits a JSON array of objects: the field it edits and how its text
// is written. `scalarKey`: the field instead when the row's MemoryType is Scalar (then as text).
struct TableColumn {
    const char* header;
    const char* key;
    enum Kind { Text, Number, Integer, IntegerOrExpression } kind = Text;
    const char* scalarKey = nullptr;
};

const std::vector<TableColumn>& argumentColumns() {
    static const std::vector<TableColumn> columns = {
        {QT_TR_NOOP("Name"), "Name"},
        {QT_TR_NOOP("Type"), "Type"},
        {QT_TR_NOOP("Memory"), "MemoryType"},
        {QT_TR_NOOP("Access"), "AccessType"},
        {QT_TR_NOOP("Size or value"), "Size", TableColumn::IntegerOrExpression, "Value"},
        {QT_TR_NOOP("Fill"), "FillType"},
        {QT_TR_NOOP("Fill value"), "FillValue", TableColumn::Number},
    };
    return columns;
}

const std::vector<TableColumn>& referenceColumns() {
    static const std::vector<TableColumn> columns = {
        {QT_TR_NOOP("Name"), "Name"},
        {QT_TR_NOOP("Checks"), "TargetName"},
        {QT_TR_NOOP("Fill"), "FillType"},
        {QT_TR_NOOP("Fill value"), "FillValue", TableColumn::Number},
        {QT_TR_NOOP("Data source"), "DataSource"},
        {QT_TR_NOOP("Seed"), "RandomSeed", TableColumn::Integer},
        {QT_TR_NOOP("Validation"), "ValidationMethod"},
        {QT_TR_NOOP("Threshold"), "ValidationThreshold", TableColumn::Number},
    };
    return columns;
}

bool isScalar(const Json& row) {
    return row.is_object() && row.value("MemoryType", std::string()) == "Scalar";
}

QTableWidget* makeTable(const std::vector<TableColumn>& columns, const QString& name, QWidget* parent) {
    auto* table = new QTableWidget(0, static_cast<int>(columns.size()), parent);
    table->setObjectName(name);
    QStringList headers;
    for (const TableColumn& c : columns)
        headers << KernelSpecDialog::tr(c.header);
    table->setHorizontalHeaderLabels(headers);
    table->verticalHeader()->hide();
    table->horizontalHeader()->setStretchLastSection(true);
    table->setMinimumHeight(table->fontMetrics().lineSpacing() * 6);
    return table;
}

void fillTable(QTableWidget* table, const std::vector<TableColumn>& columns, const Json& rows) {
    table->setRowCount(0);
    for (std::size_t r = 0; rows.is_array() && r < rows.size(); ++r) {
        const Json& a = rows[r];
        const int row = table->rowCount();
        table->insertRow(row);
        for (std::size_t c = 0; c < columns.size(); ++c) {
            const char* key = isScalar(a) && columns[c].scalarKey ? columns[c].scalarKey : columns[c].key;
            QString text;
            if (a.contains(key))
                text = a[key].is_string() ? qs(a[key].get<std::string>()) : qs(a[key].dump());
            table->setItem(row, static_cast<int>(c), new QTableWidgetItem(text));
        }
    }
    table->resizeColumnsToContents();
}

// The table as a JSON array: each row over the entry it was (its other fields kept), new rows
// new; an empty cell removes its field. Throws the reason (with `what` and the row) for a bad cell.
Json readTable(const QTableWidget* table, const std::vector<TableColumn>& columns, const Json& before,
               const QString& what) {
    Json rows = Json::array();
    for (int row = 0; row < table->rowCount(); ++row) {
        Json a = before.is_array() && row < static_cast<int>(before.size()) ? before[static_cast<std::size_t>(row)]
                                                                            : Json::object();
        auto cell = [&](std::size_t column) {
            const QTableWidgetItem* item = table->item(row, static_cast<int>(column));
            return item ? item->text().trimmed() : QString();
        };
        bool scalar = false;
        for (std::size_t c = 0; c < columns.size(); ++c)
            scalar = scalar || (std::string(columns[c].key) == "MemoryType" && cell(c) == QStringLiteral("Scalar"));
        for (std::size_t c = 0; c < columns.size(); ++c) {
            const TableColumn& column = columns[c];
            const bool alternative = scalar && column.scalarKey;
            const char* key = alternative ? column.scalarKey : column.key;
            if (column.scalarKey)
                a.erase(alternative ? column.key : column.scalarKey);
            const QString text = cell(c);
            bool ok = true;
            if (text.isEmpty())
                a.erase(key);
            else if (alternative || column.kind == TableColumn::Text)
                a[key] = text.toStdString();
            else if (column.kind == TableColumn::Number)
                a[key] = text.toDouble(&ok);
            else if (column.kind == TableColumn::Integer)
                a[key] = text.toLongLong(&ok);
            else
                a[key] = integerOrExpression(text);
            if (!ok)
                throw std::invalid_argument(KernelSpecDialog::tr("%1 %2: %3 '%4' is not a number")
                                                .arg(what)
                                                .arg(row + 1)
                                                .arg(KernelSpecDialog::tr(column.header).toLower(), text)
                                                .toStdString());
        }
        rows.push_back(std::move(a));
    }
    return rows;
}

// A section of the problem's JSON, or null.
Json sectionOf(const Json& problem, std::initializer_list<const char*> path) {
    const Json* at = &problem;
    for (const char* key : path) {
        if (!at->is_object() || !at->contains(key))
            return nullptr;
        at = &(*at)[key];
    }
    return *at;
}

QString budgetText(const Json& budget, const char* type) {
    for (const Json& b : budget.is_array() ? budget : Json::array())
        if (b.value("Type", std::string()) == type && b.contains("BudgetValue"))
            return qs(b["BudgetValue"].dump());
    return {};
}

} // namespace

KernelSpecDialog::KernelSpecDialog(ProblemDocument* document, QWidget* parent)
    : QDialog(parent)
    , m_document(document) {
    setWindowTitle(tr("Kernel and Launch"));
    m_tabs = new QTabWidget(this);
    m_tabs->setObjectName(QStringLiteral("specTabs"));

    QFormLayout* kernel = addPage(tr("Kernel"));
    addField(kernel, QStringLiteral("kernelName"), tr("Kernel name:"),
             tr("The __global__ function as C++ names it; template arguments may name parameters"));
    addField(kernel, QStringLiteral("kernelFile"), tr("Kernel file:"), tr("Relative to the problem file"));
    addField(kernel, QStringLiteral("compilerOptions"), tr("Compiler options:"),
             tr("NVRTC options, separated by spaces: -use_fast_math -std=c++17"));
    addField(kernel, QStringLiteral("deviceName"), tr("Device name:"),
             tr("The GPU the problem was written for (Kernel Tuner's Device Name); informative"));
    addField(kernel, QStringLiteral("deviceId"), tr("Device id:"),
             tr("The device index the file names (Kernel Tuner's DeviceId); kept in the file, informative: the Run "
                "panel and tune --backend cuda:DEVICES choose the devices that run"));

    QFormLayout* launch = addPage(tr("Launch"));
    addField(launch, QStringLiteral("problemSize"), tr("Problem size:"),
             tr("Comma-separated integers or expressions of the shape: M, N"));
    for (const char* axis : {"X", "Y", "Z"})
        addField(launch, QStringLiteral("global") + axis, tr("Global size %1:").arg(QLatin1String(axis)),
                 tr("Threads (or blocks with GlobalSizeType CUDA); empty: Kernel Tuner's ProblemSize rule"));
    for (const char* axis : {"X", "Y", "Z"})
        addField(launch, QStringLiteral("local") + axis, tr("Block size %1:").arg(QLatin1String(axis)),
                 tr("Threads per block; empty: block_size_%1 or Kernel Tuner's default")
                     .arg(QString::fromLatin1(axis).toLower()));
    addField(launch, QStringLiteral("sharedMemory"), tr("Dynamic shared memory:"),
             tr("Bytes per block, an expression"));

    QFormLayout* arguments = addPage(tr("Arguments"), true);
    m_arguments = makeTable(argumentColumns(), QStringLiteral("arguments"), this);
    m_arguments->setToolTip(tr(
        "Types: float, double, half, bfloat16, float8_e4m3, float8_e5m2, int32, ...; Memory: Vector or Scalar; Access: "
        "ReadOnly, WriteOnly or ReadWrite; Size: elements, an expression (M*K); a Scalar's "
        "value: an expression (N); Fill: Constant, Random or BinaryRaw"));
    arguments->addRow(tr("Arguments:"), withButtons(m_arguments, QStringLiteral("Argument")));
    m_references = makeTable(referenceColumns(), QStringLiteral("referenceArguments"), this);
    m_references->setToolTip(tr("The expected content of an output argument: Checks names the argument; Fill: "
                                "BinaryRaw (Data source: a file) or Constant; Validation: AbsoluteDifference or "
                                "RelativeDifference under Threshold. Without one, outputs are checked against the "
                                "problem's reference config"));
    arguments->addRow(tr("Reference outputs:"), withButtons(m_references, QStringLiteral("Reference")));

    QFormLayout* objective = addPage(tr("Shapes and Objective"));
    m_shapes = new QPlainTextEdit(this);
    m_shapes->setObjectName(QStringLiteral("shapes"));
    m_shapes->setPlaceholderText(tr("One shape a line: M=4096 N=4096 K=4096"));
    m_shapes->setMaximumHeight(fontMetrics().lineSpacing() * 6);
    objective->addRow(tr("Shapes:"), m_shapes);
    addField(objective, QStringLiteral("objectiveName"), tr("Objective name:"), tr("TFLOP/s, GB/s, ...; empty: time"));
    addField(objective, QStringLiteral("objectiveCount"), tr("Objective count:"), tr("Work per launch: 2 * M * N * K"));
    addField(objective, QStringLiteral("objectiveScale"), tr("Objective scale:"),
             tr("The objective is count / seconds / scale"));
    addField(objective, QStringLiteral("metrics"), tr("Metrics:"),
             tr("CUPTI metrics to collect, separated by spaces: default, or names such as dram__bytes_read.sum"));

    QFormLayout* search = addPage(tr("Budget and Search"));
    addField(search, QStringLiteral("budgetDuration"), tr("Time budget (s):"),
             tr("Stop tuning after this many seconds; empty: no limit"));
    addField(search, QStringLiteral("budgetCount"), tr("Config budget:"),
             tr("Stop after measuring this many configs; empty: no limit"));
    addField(search, QStringLiteral("budgetFraction"), tr("Fraction budget:"),
             tr("Stop after measuring this fraction of the valid space (0 to 1]; empty: no limit"));
    addField(search, QStringLiteral("searchName"), tr("Search:"),
             tr("The strategy the file asks for (Kernel Tuner's name, such as random_sample or bayes_opt); "
                "the Run panel and tune --strategy choose the one that runs"));
    m_searchAttributes = new QPlainTextEdit(this);
    m_searchAttributes->setObjectName(QStringLiteral("searchAttributes"));
    m_searchAttributes->setPlaceholderText(tr("One attribute a line: fraction = 0.1"));
    m_searchAttributes->setToolTip(tr("NAME = VALUE; a value in quotes stays a string"));
    m_searchAttributes->setMaximumHeight(fontMetrics().lineSpacing() * 5);
    search->addRow(tr("Search attributes:"), m_searchAttributes);

    m_error = new QLabel(this);
    m_error->setObjectName(QStringLiteral("specError"));
    m_error->setWordWrap(true);
    m_error->setStyleSheet(QStringLiteral("color: #c62828;"));
    m_error->hide();
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    connect(buttons, &QDialogButtonBox::accepted, this, &KernelSpecDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &KernelSpecDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_tabs);
    layout->addWidget(m_error);
    layout->addWidget(buttons);
    // Wide enough for the argument table's columns, within the screen.
    const QRect screen = parent && parent->screen() ? parent->screen()->availableGeometry() : QRect(0, 0, 1280, 800);
    const int em = fontMetrics().averageCharWidth();
    resize(std::min(em * 110, screen.width() * 9 / 10), std::min(em * 80, screen.height() * 9 / 10));
    reload();
}

QFormLayout* KernelSpecDialog::addPage(const QString& title, bool grows) {
    auto* page = new QWidget(m_tabs);
    auto* form = new QFormLayout;
    form->setFieldGrowthPolicy(QFormLayout::ExpandingFieldsGrow);
    auto* layout = new QVBoxLayout(page);
    layout->addLayout(form, grows ? 1 : 0);
    if (!grows)
        layout->addStretch(1); // the fields at the top, not spread over the tab
    m_tabs->addTab(page, title);
    return form;
}

QLineEdit* KernelSpecDialog::addField(QFormLayout* form, const QString& name, const QString& label,
                                      const QString& tip) {
    auto* edit = new QLineEdit(this);
    edit->setObjectName(name);
    edit->setToolTip(tip);
    form->addRow(label, edit);
    return edit;
}

QWidget* KernelSpecDialog::withButtons(QTableWidget* table, const QString& what) {
    auto* box = new QWidget(this);
    auto* add = new QPushButton(tr("Add %1").arg(tr(qPrintable(what))), box);
    add->setObjectName(QStringLiteral("add") + what);
    auto* remove = new QPushButton(tr("Remove %1").arg(tr(qPrintable(what))), box);
    remove->setObjectName(QStringLiteral("remove") + what);
    connect(add, &QPushButton::clicked, this, [this, table] { addRow(table); });
    connect(remove, &QPushButton::clicked, this, [table] {
        if (const int row = table->currentRow(); row >= 0)
            table->removeRow(row);
    });
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(add);
    buttons->addWidget(remove);
    buttons->addStretch(1);
    auto* layout = new QVBoxLayout(box);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(table);
    layout->addLayout(buttons);
    return box;
}

QLineEdit* KernelSpecDialog::field(const QString& name) const {
    return findChild<QLineEdit*>(name);
}

void KernelSpecDialog::reload() {
    m_error->hide();
    const auto problem = m_document->problem();
    if (!problem)
        return;
    const TuningProblem& p = *problem;
    field(QStringLiteral("kernelName"))->setText(qs(p.kernelName));
    field(QStringLiteral("kernelFile"))->setText(qs(p.kernelFile));
    QStringList options;
    for (const std::string& o : p.compilerOptions)
        options << qs(o);
    field(QStringLiteral("compilerOptions"))->setText(options.join(QLatin1Char(' ')));
    field(QStringLiteral("deviceName"))->setText(p.device ? qs(p.device->name) : QString());
    field(QStringLiteral("deviceId"))
        ->setText(p.device && p.device->deviceId ? QString::number(*p.device->deviceId) : QString());
    QStringList sizes;
    for (const std::string& s : p.problemSize)
        sizes << qs(s);
    field(QStringLiteral("problemSize"))->setText(sizes.join(QStringLiteral(", ")));
    field(QStringLiteral("globalX"))->setText(qs(p.globalSize.x));
    field(QStringLiteral("globalY"))->setText(qs(p.globalSize.y));
    field(QStringLiteral("globalZ"))->setText(qs(p.globalSize.z));
    field(QStringLiteral("localX"))->setText(qs(p.localSize.x));
    field(QStringLiteral("localY"))->setText(qs(p.localSize.y));
    field(QStringLiteral("localZ"))->setText(qs(p.localSize.z));
    field(QStringLiteral("sharedMemory"))->setText(qs(p.sharedMemory));
    QStringList shapes;
    for (const Shape& s : p.shapes)
        shapes << qs(s.label());
    m_shapes->setPlainText(shapes.join(QLatin1Char('\n')));
    m_loadedShapes = m_shapes->toPlainText();
    QStringList metrics;
    for (const std::string& m : p.metrics)
        metrics << qs(m);
    field(QStringLiteral("metrics"))->setText(metrics.join(QLatin1Char(' ')));
    const Json json = Json::parse(p.toJson());
    fillTable(m_arguments, argumentColumns(), sectionOf(json, {"KernelSpecification", "Arguments"}));
    fillTable(m_references, referenceColumns(), sectionOf(json, {"KernelSpecification", "ReferenceArguments"}));
    field(QStringLiteral("objectiveName"))->setText(p.objective ? qs(p.objective->name) : QString());
    field(QStringLiteral("objectiveCount"))->setText(p.objective ? qs(p.objective->count) : QString());
    field(QStringLiteral("objectiveScale"))
        ->setText(p.objective ? QString::number(p.objective->scale, 'g', 12) : QString());

    const Json budget = sectionOf(json, {"Budget"});
    field(QStringLiteral("budgetDuration"))->setText(budgetText(budget, "TuningDuration"));
    field(QStringLiteral("budgetCount"))->setText(budgetText(budget, "ConfigurationCount"));
    field(QStringLiteral("budgetFraction"))->setText(budgetText(budget, "ConfigurationFraction"));
    field(QStringLiteral("searchName"))->setText(qs(p.searchName));
    QStringList attributes;
    for (const TuningProblem::SearchAttribute& a : p.searchAttributes)
        attributes << QStringLiteral("%1 = %2").arg(qs(a.name), a.valueIsJson ? qs(a.value) : qs(Json(a.value).dump()));
    m_searchAttributes->setPlainText(attributes.join(QLatin1Char('\n')));
}

namespace {

// The budget: an entry per type, in the file's order (its other fields kept), new ones after.
// `texts`: each type's text ("" for none). Sets `error` for a value that is not a number.
Json budgetOf(const Json& before, const std::vector<std::pair<const char*, QString>>& texts, QString& error) {
    std::vector<std::pair<std::string, Json>> wanted;
    for (const auto& [type, text] : texts) {
        if (text.isEmpty())
            continue;
        bool ok = false;
        const double value = text.toDouble(&ok);
        if (!ok) {
            error = KernelSpecDialog::tr("Budget %1: '%2' is not a number").arg(QLatin1String(type), text);
            return {};
        }
        wanted.emplace_back(type, value);
    }
    Json budget = Json::array();
    for (const Json& b : before.is_array() ? before : Json::array()) {
        for (auto& [type, value] : wanted) {
            if (!value.is_null() && b.value("Type", std::string()) == type) {
                Json entry = b;
                entry["BudgetValue"] = std::exchange(value, nullptr);
                budget.push_back(std::move(entry));
            }
        }
    }
    for (const auto& [type, value] : wanted)
        if (!value.is_null())
            budget.push_back(Json{{"Type", type}, {"BudgetValue", value}});
    return budget;
}

// The search's attributes, a line each ("NAME = VALUE"), each line over the attribute it was.
// Sets `error` for a line that is not NAME = VALUE.
Json searchAttributesOf(const Json& before, const QStringList& lines, QString& error) {
    Json attributes = Json::array();
    for (int l = 0; l < lines.size(); ++l) {
        const qsizetype eq = lines[l].indexOf(QLatin1Char('='));
        const QString name = eq < 0 ? QString() : lines[l].left(eq).trimmed();
        if (name.isEmpty()) {
            error =
                KernelSpecDialog::tr("Search attributes, line %1: '%2' is not NAME = VALUE").arg(l + 1).arg(lines[l]);
            return {};
        }
        const std::string valueText = lines[l].mid(eq + 1).trimmed().toStdString();
        Json value = Json::parse(valueText, nullptr, false);
        if (value.is_discarded() || !(value.is_primitive()) || value.is_null())
            value = valueText; // a bare word is a string
        Json a = before.is_array() && l < static_cast<int>(before.size()) ? before[static_cast<std::size_t>(l)]
                                                                          : Json::object();
        a["Name"] = name.toStdString();
        a["Value"] = std::move(value);
        attributes.push_back(std::move(a));
    }
    return attributes;
}

// The fields of the problem the form sets, by JSON pointer, in the order they are set.
using Fields = std::vector<std::pair<std::string, Json>>;

// The kernel and device tab's fields and the launch tab's; why one is refused.
std::optional<QString> kernelFields(const KernelSpecDialog& dialog, Fields& fields) {
    const auto field = [&dialog](const QString& name) { return dialog.field(name); };
    fields.emplace_back("/KernelSpecification/KernelName", textOrNull(field(QStringLiteral("kernelName"))));
    fields.emplace_back("/KernelSpecification/KernelFile", textOrNull(field(QStringLiteral("kernelFile"))));
    Json options = Json::array();
    for (const QString& o :
         field(QStringLiteral("compilerOptions"))->text().split(QLatin1Char(' '), Qt::SkipEmptyParts))
        options.push_back(o.toStdString());
    fields.emplace_back("/KernelSpecification/CompilerOptions", options.empty() ? Json(nullptr) : options);
    fields.emplace_back("/KernelSpecification/Device/Name", textOrNull(field(QStringLiteral("deviceName"))));
    const QString deviceId = field(QStringLiteral("deviceId"))->text().trimmed();
    const auto id = spec::parseIntegerLiteral(deviceId.toStdString());
    if (!deviceId.isEmpty() && !id)
        return KernelSpecDialog::tr("Device id: '%1' is not an integer").arg(deviceId);
    fields.emplace_back("/KernelSpecification/Device/DeviceId", id ? Json(*id) : Json(nullptr));
    Json sizes = Json::array();
    for (const QString& s : field(QStringLiteral("problemSize"))->text().split(QLatin1Char(','), Qt::SkipEmptyParts))
        sizes.push_back(integerOrExpression(s));
    fields.emplace_back("/KernelSpecification/ProblemSize", sizes.empty() ? Json(nullptr) : sizes);
    for (const char* axis : {"X", "Y", "Z"}) {
        fields.emplace_back(std::string("/KernelSpecification/GlobalSize/") + axis,
                            textOrNull(field(QStringLiteral("global") + axis)));
        fields.emplace_back(std::string("/KernelSpecification/LocalSize/") + axis,
                            textOrNull(field(QStringLiteral("local") + axis)));
    }
    const QString shared = field(QStringLiteral("sharedMemory"))->text().trimmed();
    fields.emplace_back("/KernelSpecification/SharedMemory",
                        shared.isEmpty() ? Json(nullptr) : integerOrExpression(shared));
    return std::nullopt;
}

// The shapes, a line each (NAME=INTEGER, ...); generated shapes left as they were stay
// generated (the file keeps its form).
std::optional<QString> shapesField(const QString& text, const QString& loadedText, const TuningProblem& problem,
                                   Fields& fields) {
    Json shapes = Json::array();
    if (text == loadedText && !problem.shapesSource.empty())
        shapes = Json::parse(problem.shapesSource);
    static const QRegularExpression dim(QStringLiteral(R"(^([A-Za-z_]\w*)\s*=\s*(-?\d+)$)"));
    const QStringList lines = shapes.empty() ? text.split(QLatin1Char('\n'), Qt::SkipEmptyParts) : QStringList();
    for (int l = 0; l < lines.size(); ++l) {
        Json shape = Json::object();
        for (const QString& part : lines[l].split(QRegularExpression(QStringLiteral("[\\s,]+")), Qt::SkipEmptyParts)) {
            const auto m = dim.match(part);
            if (!m.hasMatch())
                return KernelSpecDialog::tr("Shapes, line %1: '%2' is not NAME=INTEGER").arg(l + 1).arg(part);
            shape[m.captured(1).toStdString()] = m.captured(2).toLongLong();
        }
        shapes.push_back(std::move(shape));
    }
    fields.emplace_back("/Tilescope/Shapes", shapes.empty() ? Json(nullptr) : shapes);
    return std::nullopt;
}

// The metrics, the arguments' and reference outputs' tables, and the objective.
std::optional<QString> tableAndObjectiveFields(const KernelSpecDialog& dialog, const Json& current, Fields& fields) {
    const QString scaleText = dialog.field(QStringLiteral("objectiveScale"))->text().trimmed();
    Json scale = nullptr;
    if (!scaleText.isEmpty()) {
        bool ok = false;
        const double value = scaleText.toDouble(&ok);
        if (!ok)
            return KernelSpecDialog::tr("Objective scale: '%1' is not a number").arg(scaleText);
        scale = value;
    }
    Json metrics = Json::array();
    for (const QString& m : dialog.field(QStringLiteral("metrics"))->text().split(QLatin1Char(' '), Qt::SkipEmptyParts))
        metrics.push_back(m.toStdString());
    fields.emplace_back("/Tilescope/Metrics", metrics.empty() ? Json(nullptr) : metrics);

    try {
        const Json arguments =
            readTable(dialog.argumentTable(), argumentColumns(),
                      sectionOf(current, {"KernelSpecification", "Arguments"}), KernelSpecDialog::tr("Argument"));
        fields.emplace_back("/KernelSpecification/Arguments", arguments.empty() ? Json(nullptr) : arguments);
        const Json references = readTable(dialog.referenceTable(), referenceColumns(),
                                          sectionOf(current, {"KernelSpecification", "ReferenceArguments"}),
                                          KernelSpecDialog::tr("Reference output"));
        fields.emplace_back("/KernelSpecification/ReferenceArguments", references.empty() ? Json(nullptr) : references);
    } catch (const std::invalid_argument& e) {
        return QString::fromStdString(e.what());
    }

    fields.emplace_back("/Tilescope/Objective/Name", textOrNull(dialog.field(QStringLiteral("objectiveName"))));
    fields.emplace_back("/Tilescope/Objective/Count", textOrNull(dialog.field(QStringLiteral("objectiveCount"))));
    fields.emplace_back("/Tilescope/Objective/Scale", scale);
    return std::nullopt;
}

// The budget tab's fields and the search tab's.
std::optional<QString> budgetAndSearchFields(const KernelSpecDialog& dialog, const Json& current, Fields& fields) {
    const auto text = [&dialog](const char* name) { return dialog.field(QLatin1String(name))->text().trimmed(); };
    QString error;
    const Json budget = budgetOf(sectionOf(current, {"Budget"}),
                                 {{"TuningDuration", text("budgetDuration")},
                                  {"ConfigurationCount", text("budgetCount")},
                                  {"ConfigurationFraction", text("budgetFraction")}},
                                 error);
    if (!error.isEmpty())
        return error;
    fields.emplace_back("/Budget", budget.empty() ? Json(nullptr) : budget);
    const Json attributes = searchAttributesOf(
        sectionOf(current, {"Search", "Attributes"}),
        dialog.searchAttributesEdit()->toPlainText().split(QLatin1Char('\n'), Qt::SkipEmptyParts), error);
    if (!error.isEmpty())
        return error;
    const Json searchName = textOrNull(dialog.field(QStringLiteral("searchName")));
    if (searchName.is_null() && !attributes.empty())
        return KernelSpecDialog::tr("Search attributes need a search name");
    fields.emplace_back("/Search/Name", searchName);
    fields.emplace_back("/Search/Attributes", attributes.empty() ? Json(nullptr) : attributes);
    return std::nullopt;
}

} // namespace

bool KernelSpecDialog::apply() {
    const auto problem = m_document->problem();
    if (!problem)
        return false;
    const Json current = Json::parse(problem->toJson());
    Fields fields;
    // The tabs' fields in order: the first refused is the one named.
    std::optional<QString> refused = kernelFields(*this, fields);
    if (!refused)
        refused = shapesField(m_shapes->toPlainText(), m_loadedShapes, *problem, fields);
    if (!refused)
        refused = tableAndObjectiveFields(*this, current, fields);
    if (!refused)
        refused = budgetAndSearchFields(*this, current, fields);
    if (!refused) {
        try {
            auto edited = std::make_shared<const TuningProblem>(edit::setFields(*problem, fields));
            if (edited->toJson() != problem->toJson())
                m_document->applyEdit(std::move(edited), tr("Edit the kernel and launch"));
        } catch (const InputError& e) {
            refused = QStringLiteral("%1: %2").arg(qs(e.location()), qs(e.message()));
        }
    }
    if (refused) {
        m_error->setText(*refused);
        m_error->show();
        return false;
    }
    m_error->hide();
    return true;
}

void KernelSpecDialog::addRow(QTableWidget* table) {
    const int row = table->rowCount();
    table->insertRow(row);
    QStringList defaults;
    if (table == m_arguments) {
        defaults = {QStringLiteral("arg%1").arg(row),
                    QStringLiteral("float"),
                    QStringLiteral("Vector"),
                    QStringLiteral("ReadWrite"),
                    QStringLiteral("ProblemSize[0]"),
                    QStringLiteral("Constant"),
                    QStringLiteral("0")};
    } else {
        const QTableWidgetItem* first = m_arguments->rowCount() > 0 ? m_arguments->item(0, 0) : nullptr;
        const QString target = first ? first->text() : QString();
        defaults = {
            target + QStringLiteral("_ref"), target,    QStringLiteral("BinaryRaw"),          QString(),
            target + QStringLiteral(".bin"), QString(), QStringLiteral("AbsoluteDifference"), QStringLiteral("1e-3")};
    }
    for (int c = 0; c < table->columnCount(); ++c)
        table->setItem(row, c, new QTableWidgetItem(c < defaults.size() ? defaults[c] : QString()));
    table->setCurrentCell(row, 0);
}

void KernelSpecDialog::addArgument() {
    addRow(m_arguments);
}

void KernelSpecDialog::removeSelectedArgument() {
    if (const int row = m_arguments->currentRow(); row >= 0)
        m_arguments->removeRow(row);
}

void KernelSpecDialog::accept() {
    if (apply())
        QDialog::accept();
}

} // namespace tilescope::views
