#include "problem/kernelspecdialog.h"

#include "base/error.h"
#include "problem/problemdocument.h"
#include "spec/problemedit.h"
#include "spec/t1common.h"
#include "spec/tuningproblem.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QRegularExpression>
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
    m_shapes = new QPlainTextEdit(this);
    m_shapes->setObjectName(QStringLiteral("shapes"));
    m_shapes->setPlaceholderText(tr("One shape a line: M=4096 N=4096 K=4096"));
    m_shapes->setMaximumHeight(fontMetrics().lineSpacing() * 6);
    m_form->addRow(tr("Shapes:"), m_shapes);
    addField(QStringLiteral("objectiveName"), tr("Objective name:"), tr("TFLOP/s, GB/s, ...; empty: time"));
    addField(QStringLiteral("objectiveCount"), tr("Objective count:"), tr("Work per launch: 2 * M * N * K"));
    addField(QStringLiteral("objectiveScale"), tr("Objective scale:"), tr("The objective is count / seconds / scale"));

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

void KernelSpecDialog::accept() {
    if (apply())
        QDialog::accept();
}

} // namespace tilescope::views
