#include "problem/kernelspecdialog.h"

#include "base/error.h"
#include "problem/problemdocument.h"
#include "spec/problemedit.h"
#include "spec/t1common.h"
#include "spec/tuningproblem.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QTableWidget>
#include <QVBoxLayout>

namespace tilescope::views {

namespace {

using Json = nlohmann::ordered_json;

QString qs(const std::string& s) {
    return QString::fromStdString(s);
}

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

enum ArgumentColumn { ArgName, ArgType, ArgMemory, ArgAccess, ArgSize, ArgFill, ArgFillValue, ArgColumns };

// The T1 field a column edits (Size or Value: by the memory type).
const char* argumentKey(int column, bool scalar) {
    switch (column) {
    case ArgName:
        return "Name";
    case ArgType:
        return "Type";
    case ArgMemory:
        return "MemoryType";
    case ArgAccess:
        return "AccessType";
    case ArgSize:
        return scalar ? "Value" : "Size";
    case ArgFill:
        return "FillType";
    case ArgFillValue:
        return "FillValue";
    }
    return "";
}

} // namespace

KernelSpecDialog::KernelSpecDialog(ProblemDocument* document, QWidget* parent)
    : QDialog(parent)
    , m_document(document) {
    setWindowTitle(tr("Kernel and Launch"));
    m_form = new QFormLayout;
    m_form->setFieldGrowthPolicy(QFormLayout::ExpandingFieldsGrow);
    addField(QStringLiteral("kernelName"), tr("Kernel name:"),
             tr("The __global__ function as C++ names it; template arguments may name parameters"));
    addField(QStringLiteral("kernelFile"), tr("Kernel file:"), tr("Relative to the problem file"));
    addField(QStringLiteral("compilerOptions"), tr("Compiler options:"),
             tr("NVRTC options, separated by spaces: -use_fast_math -std=c++17"));
    addField(QStringLiteral("problemSize"), tr("Problem size:"),
             tr("Comma-separated integers or expressions of the shape: M, N"));
    for (const char* axis : {"X", "Y", "Z"})
        addField(QStringLiteral("global") + axis, tr("Global size %1:").arg(QLatin1String(axis)),
                 tr("Threads (or blocks with GlobalSizeType CUDA); empty: Kernel Tuner's ProblemSize rule"));
    for (const char* axis : {"X", "Y", "Z"})
        addField(QStringLiteral("local") + axis, tr("Block size %1:").arg(QLatin1String(axis)),
                 tr("Threads per block; empty: block_size_%1 or Kernel Tuner's default")
                     .arg(QString::fromLatin1(axis).toLower()));
    addField(QStringLiteral("sharedMemory"), tr("Dynamic shared memory:"), tr("Bytes per block, an expression"));
    m_arguments = new QTableWidget(0, ArgColumns, this);
    m_arguments->setObjectName(QStringLiteral("arguments"));
    m_arguments->setHorizontalHeaderLabels(
        {tr("Name"), tr("Type"), tr("Memory"), tr("Access"), tr("Size or value"), tr("Fill"), tr("Fill value")});
    m_arguments->verticalHeader()->hide();
    m_arguments->horizontalHeader()->setSectionResizeMode(ArgSize, QHeaderView::Stretch);
    m_arguments->setToolTip(tr("Types: float, double, half, bfloat16, int32, ...; Memory: Vector or Scalar; Access: "
                               "ReadOnly, WriteOnly or ReadWrite; Size: elements, an expression (M*K); a Scalar's "
                               "value: an expression (N); Fill: Constant, Random or BinaryRaw"));
    m_arguments->setMinimumHeight(fontMetrics().lineSpacing() * 7);
    auto* addArgumentButton = new QPushButton(tr("Add Argument"), this);
    addArgumentButton->setObjectName(QStringLiteral("addArgument"));
    auto* removeArgumentButton = new QPushButton(tr("Remove Argument"), this);
    removeArgumentButton->setObjectName(QStringLiteral("removeArgument"));
    connect(addArgumentButton, &QPushButton::clicked, this, &KernelSpecDialog::addArgument);
    connect(removeArgumentButton, &QPushButton::clicked, this, &KernelSpecDialog::removeSelectedArgument);
    auto* argumentButtons = new QHBoxLayout;
    argumentButtons->addWidget(addArgumentButton);
    argumentButtons->addWidget(removeArgumentButton);
    argumentButtons->addStretch(1);
    auto* argumentBox = new QVBoxLayout;
    argumentBox->addWidget(m_arguments);
    argumentBox->addLayout(argumentButtons);
    m_form->addRow(tr("Arguments:"), argumentBox);

    m_shapes = new QPlainTextEdit(this);
    m_shapes->setObjectName(QStringLiteral("shapes"));
    m_shapes->setPlaceholderText(tr("One shape a line: M=4096 N=4096 K=4096"));
    m_shapes->setMaximumHeight(fontMetrics().lineSpacing() * 6);
    m_form->addRow(tr("Shapes:"), m_shapes);
    addField(QStringLiteral("objectiveName"), tr("Objective name:"), tr("TFLOP/s, GB/s, ...; empty: time"));
    addField(QStringLiteral("objectiveCount"), tr("Objective count:"), tr("Work per launch: 2 * M * N * K"));
    addField(QStringLiteral("objectiveScale"), tr("Objective scale:"), tr("The objective is count / seconds / scale"));
    addField(QStringLiteral("metrics"), tr("Metrics:"),
             tr("CUPTI metrics to collect, separated by spaces: default, or names such as dram__bytes_read.sum"));

    m_error = new QLabel(this);
    m_error->setObjectName(QStringLiteral("specError"));
    m_error->setWordWrap(true);
    m_error->setStyleSheet(QStringLiteral("color: #c62828;"));
    m_error->hide();
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    connect(buttons, &QDialogButtonBox::accepted, this, &KernelSpecDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &KernelSpecDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(m_form);
    layout->addWidget(m_error);
    layout->addWidget(buttons);
    reload();
}

QLineEdit* KernelSpecDialog::addField(const QString& name, const QString& label, const QString& tip) {
    auto* edit = new QLineEdit(this);
    edit->setObjectName(name);
    edit->setToolTip(tip);
    m_form->addRow(label, edit);
    return edit;
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
    QStringList metrics;
    for (const std::string& m : p.metrics)
        metrics << qs(m);
    field(QStringLiteral("metrics"))->setText(metrics.join(QLatin1Char(' ')));
    const Json json = Json::parse(p.toJson());
    const Json* arguments = nullptr;
    if (json.contains("KernelSpecification") && json["KernelSpecification"].contains("Arguments"))
        arguments = &json["KernelSpecification"]["Arguments"];
    m_arguments->setRowCount(0);
    for (std::size_t r = 0; arguments && r < arguments->size(); ++r) {
        const Json& a = (*arguments)[r];
        const bool scalar = a.value("MemoryType", std::string()) == "Scalar";
        const int row = m_arguments->rowCount();
        m_arguments->insertRow(row);
        for (int c = 0; c < ArgColumns; ++c) {
            const char* key = argumentKey(c, scalar);
            QString text;
            if (a.contains(key))
                text = a[key].is_string() ? qs(a[key].get<std::string>()) : qs(a[key].dump());
            m_arguments->setItem(row, c, new QTableWidgetItem(text));
        }
    }
    m_arguments->resizeColumnsToContents();
    field(QStringLiteral("objectiveName"))->setText(p.objective ? qs(p.objective->name) : QString());
    field(QStringLiteral("objectiveCount"))->setText(p.objective ? qs(p.objective->count) : QString());
    field(QStringLiteral("objectiveScale"))
        ->setText(p.objective ? QString::number(p.objective->scale, 'g', 12) : QString());
}

bool KernelSpecDialog::apply() {
    const auto problem = m_document->problem();
    if (!problem)
        return false;
    auto fail = [this](const QString& why) {
        m_error->setText(why);
        m_error->show();
        return false;
    };
    std::vector<std::pair<std::string, Json>> fields;
    fields.emplace_back("/KernelSpecification/KernelName", textOrNull(field(QStringLiteral("kernelName"))));
    fields.emplace_back("/KernelSpecification/KernelFile", textOrNull(field(QStringLiteral("kernelFile"))));
    Json options = Json::array();
    for (const QString& o :
         field(QStringLiteral("compilerOptions"))->text().split(QLatin1Char(' '), Qt::SkipEmptyParts))
        options.push_back(o.toStdString());
    fields.emplace_back("/KernelSpecification/CompilerOptions", options.empty() ? Json(nullptr) : options);
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

    Json shapes = Json::array();
    static const QRegularExpression dim(QStringLiteral(R"(^([A-Za-z_]\w*)\s*=\s*(-?\d+)$)"));
    const QStringList lines = m_shapes->toPlainText().split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    for (int l = 0; l < lines.size(); ++l) {
        Json shape = Json::object();
        for (const QString& part : lines[l].split(QRegularExpression(QStringLiteral("[\\s,]+")), Qt::SkipEmptyParts)) {
            const auto m = dim.match(part);
            if (!m.hasMatch())
                return fail(tr("Shapes, line %1: '%2' is not NAME=INTEGER").arg(l + 1).arg(part));
            shape[m.captured(1).toStdString()] = m.captured(2).toLongLong();
        }
        shapes.push_back(std::move(shape));
    }
    fields.emplace_back("/Tilescope/Shapes", shapes.empty() ? Json(nullptr) : shapes);

    const Json name = textOrNull(field(QStringLiteral("objectiveName")));
    const Json count = textOrNull(field(QStringLiteral("objectiveCount")));
    const QString scaleText = field(QStringLiteral("objectiveScale"))->text().trimmed();
    Json scale = nullptr;
    if (!scaleText.isEmpty()) {
        bool ok = false;
        const double value = scaleText.toDouble(&ok);
        if (!ok)
            return fail(tr("Objective scale: '%1' is not a number").arg(scaleText));
        scale = value;
    }
    Json metrics = Json::array();
    for (const QString& m : field(QStringLiteral("metrics"))->text().split(QLatin1Char(' '), Qt::SkipEmptyParts))
        metrics.push_back(m.toStdString());
    fields.emplace_back("/Tilescope/Metrics", metrics.empty() ? Json(nullptr) : metrics);

    // The arguments: each row over the argument it was (its other fields kept), new rows new.
    const Json current = Json::parse(problem->toJson());
    Json before = Json::array();
    if (current.contains("KernelSpecification") && current["KernelSpecification"].contains("Arguments"))
        before = current["KernelSpecification"]["Arguments"];
    Json arguments = Json::array();
    for (int row = 0; row < m_arguments->rowCount(); ++row) {
        Json a = row < static_cast<int>(before.size()) ? before[static_cast<std::size_t>(row)] : Json::object();
        auto cell = [&](int column) {
            const QTableWidgetItem* item = m_arguments->item(row, column);
            return item ? item->text().trimmed() : QString();
        };
        const bool scalar = cell(ArgMemory) == QStringLiteral("Scalar");
        a.erase(scalar ? "Size" : "Value");
        for (int c = 0; c < ArgColumns; ++c) {
            const char* key = argumentKey(c, scalar);
            const QString text = cell(c);
            if (text.isEmpty()) {
                a.erase(key);
            } else if (c == ArgFillValue) {
                bool ok = false;
                const double v = text.toDouble(&ok);
                if (!ok)
                    return fail(tr("Argument %1: the fill value '%2' is not a number").arg(row + 1).arg(text));
                a[key] = v;
            } else if (c == ArgSize && !scalar) {
                a[key] = integerOrExpression(text);
            } else {
                a[key] = text.toStdString();
            }
        }
        arguments.push_back(std::move(a));
    }
    fields.emplace_back("/KernelSpecification/Arguments", arguments.empty() ? Json(nullptr) : arguments);

    fields.emplace_back("/Tilescope/Objective/Name", name);
    fields.emplace_back("/Tilescope/Objective/Count", count);
    fields.emplace_back("/Tilescope/Objective/Scale", scale);

    try {
        auto edited = std::make_shared<const TuningProblem>(edit::setFields(*problem, fields));
        if (edited->toJson() != problem->toJson())
            m_document->applyEdit(std::move(edited), tr("Edit the kernel and launch"));
    } catch (const InputError& e) {
        return fail(QStringLiteral("%1: %2").arg(qs(e.location()), qs(e.message())));
    }
    m_error->hide();
    return true;
}

void KernelSpecDialog::addArgument() {
    const int row = m_arguments->rowCount();
    m_arguments->insertRow(row);
    const QStringList defaults = {QStringLiteral("arg%1").arg(row),
                                  QStringLiteral("float"),
                                  QStringLiteral("Vector"),
                                  QStringLiteral("ReadWrite"),
                                  QStringLiteral("ProblemSize[0]"),
                                  QStringLiteral("Constant"),
                                  QStringLiteral("0")};
    for (int c = 0; c < ArgColumns; ++c)
        m_arguments->setItem(row, c, new QTableWidgetItem(defaults[c]));
    m_arguments->setCurrentCell(row, ArgName);
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
