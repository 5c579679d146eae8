#include "problem/problemdocument.h"

#include "base/error.h"
#include "spec/tuningproblem.h"
#include "tuner/storedproblem.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QStringList>

#include <algorithm>
#include <filesystem>

namespace tilescope::views {

namespace {

// Kernel sources are small; a cap keeps a mistaken multi-gigabyte "kernel" from freezing the view.
constexpr qint64 kMaxKernelBytes = 8 << 20;

std::filesystem::path toPath(const QString& path) {
    return std::filesystem::path(path.toStdU16String());
}

QString fromPath(const std::filesystem::path& path) {
    return QString::fromStdU16String(path.u16string());
}

} // namespace

QString ProblemError::text() const {
    QString out = file;
    if (!location.isEmpty())
        out += (out.isEmpty() ? QString() : QStringLiteral(": ")) + location;
    return out.isEmpty() ? message : out + QStringLiteral(": ") + message;
}

// One edit: the problem before and after (immutable snapshots, so undo gives back the very same
// problem). Keystrokes in one field merge into one command.
class ProblemDocument::EditCommand : public QUndoCommand {
public:
    EditCommand(ProblemDocument* document, std::shared_ptr<const TuningProblem> before,
                std::shared_ptr<const TuningProblem> after, const QString& what, int mergeKey)
        : QUndoCommand(what)
        , m_document(document)
        , m_before(std::move(before))
        , m_after(std::move(after))
        , m_mergeKey(mergeKey) {}

    void redo() override { m_document->setEdited(m_after); }
    void undo() override { m_document->setEdited(m_before); }
    int id() const override { return m_mergeKey; }
    bool mergeWith(const QUndoCommand* other) override {
        if (other->id() != id() || id() < 0)
            return false;
        m_after = static_cast<const EditCommand*>(other)->m_after;
        return true;
    }

private:
    ProblemDocument* m_document;
    std::shared_ptr<const TuningProblem> m_before;
    std::shared_ptr<const TuningProblem> m_after;
    int m_mergeKey;
};

ProblemDocument::ProblemDocument(QObject* parent)
    : QObject(parent)
    , m_undo(new QUndoStack(this)) {
    connect(m_undo, &QUndoStack::cleanChanged, this, [this](bool clean) { emit modifiedChanged(!clean); });
}

ProblemDocument::~ProblemDocument() = default;

bool ProblemDocument::load(const QString& path, Origin origin) {
    const QString absolute = QFileInfo(path).absoluteFilePath();
    std::shared_ptr<const TuningProblem> problem;
    try {
        problem = std::make_shared<const TuningProblem>(TuningProblem::load(toPath(absolute)));
    } catch (const InputError& e) {
        emit loadFailed({path, QString::fromStdString(e.location()), QString::fromStdString(e.message())});
        return false;
    } catch (const std::exception& e) {
        emit loadFailed({path, {}, QString::fromStdString(e.what())});
        return false;
    }

    m_undo->clear(); // a new problem: the edits of the last one are gone
    m_problem = std::move(problem);
    m_stored.reset();
    m_path = absolute;
    m_origin = origin;
    m_shapeIndex = 0;
    readKernel();
    emit problemChanged();
    emit shapeChanged(m_shapeIndex);
    return true;
}

void ProblemDocument::readKernel() {
    m_kernelPath = fromPath(m_problem->kernelPath());
    m_kernelSource.clear();
    m_kernelError.clear();
    QFile kernel(m_kernelPath);
    if (!kernel.open(QIODevice::ReadOnly))
        m_kernelError = tr("Cannot read %1: %2").arg(m_kernelPath, kernel.errorString());
    else if (kernel.size() > kMaxKernelBytes)
        m_kernelError = tr("%1 is too large to show (%2 MiB)").arg(m_kernelPath).arg(kernel.size() >> 20);
    else
        m_kernelSource = QString::fromUtf8(kernel.readAll());
}

void ProblemDocument::openProposal(std::shared_ptr<const TuningProblem> problem, const QString& path) {
    if (!problem)
        return;
    m_undo->clear();
    m_problem = std::move(problem);
    m_stored.reset();
    m_path = QFileInfo(path).absoluteFilePath();
    m_origin = Origin::File;
    m_shapeIndex = 0;
    readKernel();
    m_undo->resetClean(); // nothing on disk yet: modified until saved
    emit problemChanged();
    emit shapeChanged(m_shapeIndex);
    emit modifiedChanged(true);
}

void ProblemDocument::openStored(std::shared_ptr<const StoredProblem> stored, const QString& database) {
    if (!stored)
        return;
    m_undo->clear();
    // The problem keeps the stored problem (and so its folder) alive as long as it is in use.
    m_problem = std::shared_ptr<const TuningProblem>(stored, &stored->problem());
    m_stored = std::move(stored);
    m_storedFrom = database;
    m_path = fromPath(m_stored->problemFile());
    m_origin = Origin::Stored;
    m_shapeIndex = 0;
    readKernel();
    emit problemChanged();
    emit shapeChanged(m_shapeIndex);
}

QString ProblemDocument::displayName() const {
    if (m_path.isEmpty())
        return {};
    const QString name = QFileInfo(m_path).fileName();
    if (m_origin == Origin::Stored)
        return tr("%1 (from %2)").arg(name, m_storedFrom);
    return m_origin == Origin::Example ? tr("%1 (example)").arg(name) : name;
}

void ProblemDocument::setShapeIndex(int index) {
    if (!m_problem)
        return;
    index = std::clamp(index, 0, std::max(0, static_cast<int>(m_problem->shapes.size()) - 1));
    if (index == m_shapeIndex)
        return;
    m_shapeIndex = index;
    emit shapeChanged(index);
}

QString ProblemDocument::copyStoredFiles(const QString& targetDir) const {
    // The files the database kept go beside the copy, where the problem names them.
    const QString from = fromPath(m_stored->problemFile().parent_path());
    for (const std::string& name : m_stored->writtenFiles()) {
        const QString relative = QString::fromStdString(name);
        const QString source = QDir(from).filePath(relative);
        const QString dest = QDir::cleanPath(QDir(targetDir).filePath(relative));
        if (QFileInfo::exists(dest)) {
            QFile existing(dest), kept(source);
            if (!existing.open(QIODevice::ReadOnly) || !kept.open(QIODevice::ReadOnly) ||
                existing.readAll() != kept.readAll())
                return tr("%1 already exists with other content; save the problem in another folder")
                    .arg(QDir::toNativeSeparators(dest));
            continue;
        }
        if (!QDir().mkpath(QFileInfo(dest).absolutePath()) || !QFile::copy(source, dest))
            return tr("cannot write %1").arg(QDir::toNativeSeparators(dest));
        QFile::setPermissions(dest, QFile::permissions(dest) | QFileDevice::WriteOwner);
    }
    return {};
}

bool ProblemDocument::saveAs(const QString& path, ProblemError* error) {
    auto fail = [&](const QString& location, const QString& message) {
        if (error)
            *error = {path, location, message};
        return false;
    };
    if (!m_problem)
        return fail({}, tr("no problem is open"));

    TuningProblem copy = *m_problem;
    const QFileInfo target(path);
    const QString targetDir = target.absolutePath();
    const QFileInfo kernel(m_kernelPath);
    if (m_origin == Origin::Stored && m_stored) {
        if (const QString why = copyStoredFiles(targetDir); !why.isEmpty())
            return fail({}, why);
    } else if (m_origin == Origin::Example) {
        // The example lives in a temporary folder that goes away: put its kernel beside the copy.
        const QString kernelTarget = targetDir + QLatin1Char('/') + kernel.fileName();
        if (QFileInfo::exists(kernelTarget)) {
            QFile existing(kernelTarget);
            if (!existing.open(QIODevice::ReadOnly) || QString::fromUtf8(existing.readAll()) != m_kernelSource)
                return fail(
                    QStringLiteral("/KernelSpecification/KernelFile"),
                    tr("%1 already exists with other content; save the problem in another folder").arg(kernelTarget));
        } else if (!QFile::copy(m_kernelPath, kernelTarget)) {
            return fail(QStringLiteral("/KernelSpecification/KernelFile"), tr("cannot write %1").arg(kernelTarget));
        } else {
            QFile::setPermissions(kernelTarget, QFile::permissions(kernelTarget) | QFileDevice::WriteOwner);
        }
        copy.kernelFile = kernel.fileName().toStdString();
    } else {
        std::error_code ec;
        const auto relative = std::filesystem::relative(toPath(kernel.absoluteFilePath()), toPath(targetDir), ec);
        copy.kernelFile = ec || relative.empty() ? kernel.absoluteFilePath().toStdString() : relative.generic_string();
    }
    try {
        copy.save(toPath(target.absoluteFilePath()));
    } catch (const InputError& e) {
        return fail(QString::fromStdString(e.location()), QString::fromStdString(e.message()));
    } catch (const std::exception& e) {
        return fail({}, QString::fromStdString(e.what()));
    }
    const int shape = m_shapeIndex;
    if (!load(target.absoluteFilePath(), Origin::File))
        return fail({}, tr("the saved file could not be read back"));
    setShapeIndex(shape);
    return true;
}

QString ProblemDocument::failureDetails(const ProblemError& error) const {
    QString details = error.location.isEmpty() ? error.message : tr("At %1: %2").arg(error.location, error.message);
    details +=
        QLatin1Char('\n') + tr("File: %1").arg(QDir::toNativeSeparators(QFileInfo(error.file).absoluteFilePath()));
    if (hasProblem())
        details += QLatin1Char('\n') + tr("%1 stays open.").arg(displayName());
    return details;
}

QString ProblemDocument::launchBlockersText() const {
    if (!m_problem || m_problem->launchBlockers.empty())
        return {};
    QStringList reasons;
    for (const InputError& blocker : m_problem->launchBlockers)
        reasons << QString::fromStdString(blocker.location() + ": " + blocker.message());
    return reasons.join(QLatin1Char('\n')) +
           tr("\nCounting, sampling and replaying a recording (a Kernel Tuner cache, T4, a database) work.");
}

void ProblemDocument::applyEdit(std::shared_ptr<const TuningProblem> edited, const QString& what, int mergeKey) {
    if (!m_problem || !edited)
        return;
    m_undo->push(new EditCommand(this, m_problem, std::move(edited), what, mergeKey));
}

void ProblemDocument::setEdited(std::shared_ptr<const TuningProblem> problem) {
    m_problem = std::move(problem);
    if (m_shapeIndex >= static_cast<int>(m_problem->shapes.size()))
        m_shapeIndex = std::max(0, static_cast<int>(m_problem->shapes.size()) - 1);
    emit problemEdited();
}

bool ProblemDocument::isModified() const {
    return !m_undo->isClean();
}

bool ProblemDocument::save(ProblemError* error) {
    if (!m_problem || m_origin != Origin::File || m_path.isEmpty()) {
        if (error)
            *error = {m_path,
                      {},
                      m_origin == Origin::Stored
                          ? tr("the problem was read from %1 and has no file of its own; save it somewhere with Save "
                               "As")
                                .arg(m_storedFrom)
                          : tr("the example has no file of its own; save it somewhere with Save As")};
        return false;
    }
    try {
        m_problem->save(toPath(m_path));
    } catch (const InputError& e) {
        if (error)
            *error = {m_path, QString::fromStdString(e.location()), QString::fromStdString(e.message())};
        return false;
    } catch (const std::exception& e) {
        if (error)
            *error = {m_path, {}, QString::fromStdString(e.what())};
        return false;
    }
    m_undo->setClean();
    return true;
}

} // namespace tilescope::views
