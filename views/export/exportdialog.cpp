#include "export/exportdialog.h"

#include "base/error.h"
#include "common/format.h"
#include "exchange/recording.h"
#include "models/sessionlistmodel.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTableView>
#include <QVBoxLayout>

#include <exception>
#include <utility>

namespace tilescope::views {

namespace {

QString formatHelp(ExportFormat format) {
    switch (format) {
    case ExportFormat::T4:
        return QObject::tr("Every result of one session in the community T4 format (Kernel Tuner's results schema "
                           "1.0.0). Tilescope reads it back as it was. T4 holds one session.");
    case ExportFormat::BestConfigsJson:
        return QObject::tr("The best config per (kernel, shape, device) of the chosen sessions, as a JSON cache "
                           "keyed by \"kernel | shape | device\".");
    case ExportFormat::Triton:
        return QObject::tr("Python with a list of triton.Config per kernel: the top configs of every (shape, "
                           "device), best first. Parameters named like warps and stages become num_warps= and "
                           "num_stages=.");
    case ExportFormat::CppHeader:
        return QObject::tr("A self-contained C++17 header: per kernel a Config struct, a table of the best config "
                           "per (shape, device) and lookup(shape...) / find(shape...), usable at compile time.");
    case ExportFormat::Csv:
        return QObject::tr("Every result of the chosen sessions, one row each, with its status, times, objective "
                           "and what the compiler reported.");
    case ExportFormat::KernelTunerCache:
        return QObject::tr("Every result of one session as a Kernel Tuner cache file, which Kernel Tuner's "
                           "simulation mode replays. Tilescope reads it back as it was. It holds one session.");
    }
    return {};
}

QString firstLines(const std::string& text, int lines, int* total) {
    std::size_t end = 0;
    int shown = 0;
    while (shown < lines && end < text.size()) {
        const std::size_t next = text.find('\n', end);
        end = next == std::string::npos ? text.size() : next + 1;
        ++shown;
    }
    if (total) {
        *total = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
        if (!text.empty() && text.back() != '\n')
            ++*total;
    }
    return QString::fromUtf8(text.data(), static_cast<qsizetype>(end));
}

QString byteCount(qint64 bytes) {
    return QLocale().formattedDataSize(bytes, 1, QLocale::DataSizeTraditionalFormat);
}

} // namespace

QString exportFileSuffix(ExportFormat format) {
    switch (format) {
    case ExportFormat::T4:
        return QStringLiteral(".t4.json");
    case ExportFormat::BestConfigsJson:
        return QStringLiteral("_best.json");
    case ExportFormat::Triton:
        return QStringLiteral("_triton.py");
    case ExportFormat::CppHeader:
        return QStringLiteral("_tuned.h");
    case ExportFormat::Csv:
        return QStringLiteral(".csv");
    case ExportFormat::KernelTunerCache:
        return QStringLiteral("_ktcache.json");
    }
    return {};
}

QString exportFormatTitle(ExportFormat format) {
    switch (format) {
    case ExportFormat::T4:
        return QObject::tr("T4 results (JSON)");
    case ExportFormat::BestConfigsJson:
        return QObject::tr("Best configs (JSON cache)");
    case ExportFormat::Triton:
        return QObject::tr("triton.Config lists (Python)");
    case ExportFormat::CppHeader:
        return QObject::tr("C++ header with a dispatch table");
    case ExportFormat::Csv:
        return QObject::tr("CSV, every result");
    case ExportFormat::KernelTunerCache:
        return QObject::tr("Kernel Tuner cache (JSON)");
    }
    return {};
}

ExportDialog::ExportDialog(QWidget* parent)
    : QDialog(parent) {
    setWindowTitle(tr("Export Results"));
    setObjectName(QStringLiteral("exportDialog"));
    m_outputFolder = QDir::currentPath();

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(makeForm());
    m_preview = new QPlainTextEdit(this);
    m_preview->setObjectName(QStringLiteral("exportPreview"));
    m_preview->setReadOnly(true);
    m_preview->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_preview->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_previewNote = new QLabel(this);
    m_previewNote->setForegroundRole(QPalette::PlaceholderText);
    auto* previewBox = new QGroupBox(tr("Preview"), this);
    auto* previewLayout = new QVBoxLayout(previewBox);
    previewLayout->addWidget(m_preview, 1);
    previewLayout->addWidget(m_previewNote);

    m_status = new QLabel(this);
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    m_exportButton = m_buttons->addButton(tr("&Export"), QDialogButtonBox::AcceptRole);
    m_exportButton->setDefault(true);
    auto* bottom = new QHBoxLayout;
    bottom->addWidget(m_status, 1);
    bottom->addWidget(m_buttons);

    layout->addWidget(previewBox, 1);
    layout->addLayout(bottom);

    connectControls();
    onFormatChanged();
    resize(fontMetrics().averageCharWidth() * 130, fontMetrics().height() * 46);
}

// Source, sessions, format and file, a row each.
QFormLayout* ExportDialog::makeForm() {
    m_sourceLabelWidget = new QLabel(tr("no results"), this);
    m_sourceLabelWidget->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_sourceLabelWidget->setWordWrap(true);
    m_openButton = new QPushButton(tr("Open Database or Recording…"), this);
    m_openButton->setToolTip(tr("Export from a results database (.db), a T4 file or a Kernel Tuner cache instead"));
    auto* sourceRow = new QHBoxLayout;
    sourceRow->addWidget(m_sourceLabelWidget, 1);
    sourceRow->addWidget(m_openButton);

    m_sessionModel = new SessionListModel(this);
    m_sessionView = new QTableView(this);
    m_sessionView->setObjectName(QStringLiteral("exportSessions"));
    m_sessionView->setModel(m_sessionModel);
    m_sessionView->verticalHeader()->hide();
    m_sessionView->horizontalHeader()->setStretchLastSection(true);
    m_sessionView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_sessionView->setSelectionMode(QAbstractItemView::SingleSelection);
    m_sessionView->setAlternatingRowColors(true);
    m_sessionView->setWordWrap(false);
    m_sessionView->setMaximumHeight(fontMetrics().height() * 8);
    m_sessionView->setToolTip(tr("The sessions (shapes, devices) whose results go into the file"));

    m_formatCombo = new QComboBox(this);
    for (ExportFormat format : exportFormats())
        m_formatCombo->addItem(exportFormatTitle(format), static_cast<int>(format));
    m_formatHelp = new QLabel(this);
    m_formatHelp->setWordWrap(true);
    m_formatHelp->setForegroundRole(QPalette::PlaceholderText);
    m_formatHelp->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_topSpin = new QSpinBox(this);
    m_topSpin->setRange(1, 1000);
    m_topSpin->setValue(8);
    m_topSpin->setToolTip(tr("triton: the configs listed per (shape, device), best first"));
    m_topLabel = new QLabel(tr("configs per shape and device"), this);
    auto* formatRow = new QHBoxLayout;
    formatRow->addWidget(m_formatCombo, 1);
    formatRow->addSpacing(fontMetrics().averageCharWidth() * 2);
    formatRow->addWidget(new QLabel(tr("Top:"), this));
    formatRow->addWidget(m_topSpin);
    formatRow->addWidget(m_topLabel);

    m_pathEdit = new QLineEdit(this);
    m_pathEdit->setClearButtonEnabled(true);
    auto* browse = new QPushButton(tr("Browse…"), this);
    auto* pathRow = new QHBoxLayout;
    pathRow->addWidget(m_pathEdit, 1);
    pathRow->addWidget(browse);

    auto* form = new QFormLayout;
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    form->addRow(tr("Source:"), sourceRow);
    form->addRow(tr("Sessions:"), m_sessionView);
    form->addRow(tr("Format:"), formatRow);
    form->addRow(QString(), m_formatHelp);
    form->addRow(tr("File:"), pathRow);
    connect(browse, &QPushButton::clicked, this, &ExportDialog::browse);
    return form;
}

// What the buttons, the format, the sessions checked and the file name do.
void ExportDialog::connectControls() {
    connect(m_openButton, &QPushButton::clicked, this, [this]() {
        const QString path =
            QFileDialog::getOpenFileName(this, tr("Export from a Database or Recording"), m_outputFolder,
                                         tr("Results (*.db *.sqlite *.json *.gz);;All files (*)"));
        if (!path.isEmpty())
            openRecording(path);
    });
    connect(m_formatCombo, &QComboBox::currentIndexChanged, this, &ExportDialog::onFormatChanged);
    connect(m_topSpin, &QSpinBox::valueChanged, this, &ExportDialog::refresh);
    connect(m_sessionModel, &SessionListModel::checkedChanged, this, [this]() {
        if (!m_pathEdited)
            proposeFileName();
        refresh();
    });
    connect(m_pathEdit, &QLineEdit::textEdited, this, [this]() {
        m_pathEdited = true;
        updateButtons();
    });
    connect(m_pathEdit, &QLineEdit::textChanged, this, &ExportDialog::updateButtons);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_exportButton, &QPushButton::clicked, this, [this]() {
        QString error;
        if (!exportNow(&error)) {
            m_status->setText(QStringLiteral("<span style='color:%1'>%2</span>")
                                  .arg(QColor(Qt::red).darker(120).name(), error.toHtmlEscaped()));
            return;
        }
        accept();
    });
}

ExportDialog::~ExportDialog() {
    m_load.stop();
    m_making.stop();
}

void ExportDialog::setSessions(std::vector<SessionData> sessions, const QString& sourceLabel) {
    m_sessions = std::make_shared<const std::vector<SessionData>>(std::move(sessions));
    m_sourceLabel = sourceLabel;
    m_sourceLabelWidget->setText(sourceLabel);
    m_sessionModel->setSessions(m_sessions);
    m_sessionView->resizeColumnsToContents();
    m_sessionView->horizontalHeader()->setStretchLastSection(true);
    emit sourceChanged();
}

void ExportDialog::openRecording(const QString& path) {
    m_status->setText(tr("Reading %1…").arg(QDir::toNativeSeparators(path)));
    m_openButton->setEnabled(false);
    m_load.start(
        [path]() {
            std::vector<SessionData> sessions;
            QString error;
            try {
                sessions = readRecording(path.toStdString());
            } catch (const std::exception& e) {
                error = QString::fromStdString(e.what());
            }
            return std::make_pair(std::move(sessions), error);
        },
        [this, path](std::pair<std::vector<SessionData>, QString> loaded) {
            m_openButton->setEnabled(true);
            if (!loaded.second.isEmpty()) {
                m_status->setText(loaded.second); // the sessions listed, and their preview, stay
                return;
            }
            m_outputFolder = QFileInfo(path).absolutePath();
            setSessions(std::move(loaded.first), QDir::toNativeSeparators(path));
            m_status->clear();
        });
}

void ExportDialog::setFormat(ExportFormat format) {
    const int index = m_formatCombo->findData(static_cast<int>(format));
    if (index >= 0)
        m_formatCombo->setCurrentIndex(index);
}

ExportFormat ExportDialog::format() const {
    return static_cast<ExportFormat>(m_formatCombo->currentData().toInt());
}

void ExportDialog::setTopK(int k) {
    m_topSpin->setValue(k);
}

int ExportDialog::topK() const {
    return m_topSpin->value();
}

void ExportDialog::setOutputPath(const QString& path) {
    m_pathEdit->setText(path);
    m_pathEdited = !path.isEmpty();
}

QString ExportDialog::outputPath() const {
    return m_pathEdit->text().trimmed();
}

void ExportDialog::setOutputFolder(const QString& folder) {
    if (folder.isEmpty())
        return;
    m_outputFolder = folder;
    if (!m_pathEdited)
        proposeFileName();
}

QString ExportDialog::previewText() const {
    return m_preview->toPlainText();
}

void ExportDialog::onFormatChanged() {
    const ExportFormat f = format();
    m_formatHelp->setText(formatHelp(f));
    const bool top = f == ExportFormat::Triton;
    m_topSpin->setEnabled(top);
    m_topLabel->setEnabled(top);
    m_sessionModel->setExclusive(f == ExportFormat::T4 || f == ExportFormat::KernelTunerCache);
    if (!m_pathEdited) {
        proposeFileName();
    } else if (const QString path = outputPath(); !path.isEmpty()) {
        // Keep the user's name, but give it the format's suffix.
        QString base = path;
        for (ExportFormat other : exportFormats())
            if (base.endsWith(exportFileSuffix(other))) {
                base.chop(exportFileSuffix(other).size());
                break;
            }
        if (base != path)
            m_pathEdit->setText(base + exportFileSuffix(f));
    }
    refresh();
}

void ExportDialog::proposeFileName() {
    QString stem = QStringLiteral("results");
    if (m_sessions) {
        for (int row : m_sessionModel->checkedRows()) {
            const std::string& kernel = (*m_sessions)[static_cast<std::size_t>(row)].info.kernel;
            if (!kernel.empty()) {
                stem = QString::fromStdString(kernel);
                break;
            }
        }
    }
    m_pathEdit->setText(QDir(m_outputFolder).filePath(stem + exportFileSuffix(format())));
}

void ExportDialog::browse() {
    const ExportFormat f = format();
    const QString suffix = exportFileSuffix(f);
    const QString extension = suffix.mid(suffix.lastIndexOf(QLatin1Char('.')));
    const QString filter = tr("%1 (*%2);;All files (*)").arg(exportFormatTitle(f), extension);
    const QString start = outputPath().isEmpty() ? m_outputFolder : outputPath();
    const QString path = QFileDialog::getSaveFileName(this, tr("Export Results To"), start, filter);
    if (path.isEmpty())
        return;
    m_pathEdit->setText(path);
    m_pathEdited = true;
    m_outputFolder = QFileInfo(path).absolutePath();
}

std::vector<SessionData> ExportDialog::chosenSessions() const {
    std::vector<SessionData> chosen;
    if (!m_sessions)
        return chosen;
    for (int row : m_sessionModel->checkedRows())
        chosen.push_back((*m_sessions)[static_cast<std::size_t>(row)]);
    return chosen;
}

ExportDialog::Made ExportDialog::make(std::vector<SessionData> sessions, ExportOptions options,
                                      const std::string& source) {
    Made made;
    try {
        ExportRequest request;
        request.sessions = std::move(sessions);
        request.options = options;
        request.source = source;
        made.text = std::make_shared<const std::string>(runExport(request).text);
    } catch (const InputError& e) {
        made.error = QString::fromStdString(e.message());
    } catch (const std::exception& e) {
        made.error = QString::fromStdString(e.what());
    }
    return made;
}

void ExportDialog::refresh() {
    m_making.supersede(); // a preview being made is of the old choices
    m_ready = false;
    m_text.reset();
    m_problem.clear();
    if (!m_sessions || m_sessions->empty()) {
        m_problem = tr("There are no results to export: open a recording or run a session first.");
        apply(Made{nullptr, m_problem});
        return;
    }
    if (m_sessionModel->checkedRows().empty()) {
        apply(Made{nullptr, tr("Check at least one session.")});
        return;
    }
    m_previewNote->setText(tr("Making the preview…"));
    updateButtons();
    // The chosen sessions are copied on the helper thread, not here: a few thousand results
    // take a moment.
    m_making.start(
        [sessions = m_sessions, rows = m_sessionModel->checkedRows(),
         options = ExportOptions{format(), static_cast<std::size_t>(topK())}, source = m_sourceLabel.toStdString()]() {
            std::vector<SessionData> chosen;
            for (int row : rows)
                chosen.push_back((*sessions)[static_cast<std::size_t>(row)]);
            return make(std::move(chosen), options, source);
        },
        [this](const Made& made) { apply(made); });
}

void ExportDialog::apply(const Made& made) {
    m_text = made.text;
    m_problem = made.text ? QString() : made.error;
    m_ready = true;
    showPreview();
    updateButtons();
    emit previewReady();
}

void ExportDialog::showPreview() {
    if (!m_text) {
        m_preview->setPlainText(QString());
        m_previewNote->setText(m_problem);
        return;
    }
    int total = 0;
    m_preview->setPlainText(firstLines(*m_text, kPreviewLines, &total));
    m_previewNote->setText(
        total > kPreviewLines
            ? tr("The first %1 of %2 lines (%3).")
                  .arg(kPreviewLines)
                  .arg(formatCount(std::uint64_t(total)), byteCount(qint64(m_text->size())))
            : tr("All %1 lines (%2).").arg(formatCount(std::uint64_t(total)), byteCount(qint64(m_text->size()))));
}

void ExportDialog::updateButtons() {
    m_exportButton->setEnabled(m_ready && m_text && !outputPath().isEmpty());
}

bool ExportDialog::exportNow(QString* error) {
    auto fail = [error](const QString& message) {
        if (error)
            *error = message;
        return false;
    };
    const QString path = outputPath();
    if (path.isEmpty())
        return fail(tr("Choose a file to write."));
    std::shared_ptr<const std::string> text = m_ready ? m_text : nullptr;
    if (!m_ready) {
        const Made made =
            make(chosenSessions(), ExportOptions{format(), std::size_t(topK())}, m_sourceLabel.toStdString());
        apply(made);
        text = made.text;
    }
    if (!text)
        return fail(m_problem.isEmpty() ? tr("There is nothing to write.") : m_problem);
    if (const QFileInfo info(path); !info.absoluteDir().exists())
        return fail(tr("The folder %1 does not exist.").arg(QDir::toNativeSeparators(info.absolutePath())));
    ExportWritten written;
    try {
        written = writeExport(path.toStdString(), *text, format());
    } catch (const InputError& e) {
        return fail(tr("Cannot write %1: %2").arg(QDir::toNativeSeparators(path), QString::fromStdString(e.message())));
    }
    m_outputFolder = QFileInfo(path).absolutePath();
    const QString name = QString::fromStdString(written.formatName);
    m_status->setText(
        tr("Wrote %1 (%2, %3).").arg(QDir::toNativeSeparators(path), name, byteCount(qint64(written.bytes))));
    emit exported(path, name, static_cast<qint64>(written.bytes));
    return true;
}

} // namespace tilescope::views
