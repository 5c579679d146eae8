#pragma once

// The open tuning problem: an immutable snapshot of the engine's TuningProblem, the file it came
// from, its kernel source and the shape being looked at. Loading a bad file keeps the current
// problem and reports the error with its file and field.

#include <QObject>
#include <QString>
#include <QUndoStack>

#include <memory>
#include <optional>

namespace tilescope {
class StoredProblem;
class TuningProblem;
} // namespace tilescope

namespace tilescope::views {

/// Why a problem could not be opened or saved: the file, the field inside it (a JSON pointer,
/// or "line 4, column 7" for bad JSON; may be empty) and what is wrong.
struct ProblemError {
    QString file;
    QString location;
    QString message;

    /// "sgemm.json: /ConfigurationSpace/Conditions/2/Expression: unknown name 'BLOCK_Q'".
    QString text() const;
};

class ProblemDocument : public QObject {
    Q_OBJECT
public:
    enum class Origin {
        File,    ///< a file the user opened
        Example, ///< the embedded example, extracted to a temporary folder
        Stored,  ///< the problem a results database stored, written to a temporary folder
    };

    explicit ProblemDocument(QObject* parent = nullptr);
    ~ProblemDocument() override;

    /// Reads a problem file. On success it becomes the current problem (shape 0) and
    /// problemChanged() is emitted; on failure the current problem stays and loadFailed() is
    /// emitted. Never throws.
    bool load(const QString& path, Origin origin = Origin::File);
    /// Opens a problem made in memory (a proposal from a kernel) as if read from `path`, a file
    /// that does not exist yet: it counts as modified until saved, and Save writes it there.
    void openProposal(std::shared_ptr<const TuningProblem> problem, const QString& path);

    /// Opens the problem a results database stored for one of its sessions (read back with the
    /// files it was tuned with, StoredProblem), from the database named `database` (for titles).
    /// It has no file of its own: Save asks for a place, and Save As writes the files beside it.
    void openStored(std::shared_ptr<const StoredProblem> stored, const QString& database);

    /// Writes the current problem to `path`, its KernelFile rewritten so that it still resolves
    /// from there (the embedded example's kernel is copied beside it), then opens the written
    /// file. On failure returns false and fills `error`.
    bool saveAs(const QString& path, ProblemError* error);

    /// Writes the edited problem back to its file (Save). An example has no file of its own:
    /// false with the reason, and the caller asks for a place (saveAs).
    bool save(ProblemError* error);

    /// Makes `edited` the current problem as an edit that Undo reverts (`what` names it in the
    /// Edit menu: "Edit condition 2"). Consecutive edits with the same `mergeKey` (>= 0), such
    /// as the keystrokes of one field, merge into one undo step. Emits problemEdited().
    void applyEdit(std::shared_ptr<const TuningProblem> edited, const QString& what, int mergeKey = -1);
    /// Undo and redo of edits; clean where the problem equals its file.
    QUndoStack* undoStack() const { return m_undo; }
    /// The problem differs from its file (edits not saved).
    bool isModified() const;

    bool hasProblem() const { return m_problem != nullptr; }
    std::shared_ptr<const TuningProblem> problem() const { return m_problem; }
    /// The file the problem was read from (absolute).
    QString path() const { return m_path; }
    Origin origin() const { return m_origin; }
    /// For titles: "sgemm.json", "sgemm.json (example)" for the embedded example, "sgemm.json
    /// (from results.db)" for a problem a database stored.
    QString displayName() const;
    /// The kernel source text ("" when it could not be read; see kernelError()).
    QString kernelSource() const { return m_kernelSource; }
    QString kernelPath() const { return m_kernelPath; }
    QString kernelError() const { return m_kernelError; }

    /// Why a problem could not be opened, for people: where and what, the file, and which problem
    /// stays open.
    QString failureDetails(const ProblemError& error) const;
    /// Why the open problem's kernel cannot be compiled here though its space opens (the fields
    /// that block a launch, one per line) and what still works; "" when nothing blocks it.
    QString launchBlockersText() const;

    int shapeIndex() const { return m_shapeIndex; }
    /// Selects the shape to look at (clamped to the problem's shapes).
    void setShapeIndex(int index);

signals:
    /// Another problem was opened (or the same one read again).
    void problemChanged();
    /// The open problem was edited, or an edit undone or redone: same file, new content.
    void problemEdited();
    void modifiedChanged(bool modified);
    void shapeChanged(int index);
    void loadFailed(const tilescope::views::ProblemError& error);

private:
    class EditCommand;
    void readKernel();
    /// Origin::Stored: copies the files the database kept into `targetDir`; why not, or "".
    QString copyStoredFiles(const QString& targetDir) const;
    void setEdited(std::shared_ptr<const TuningProblem> problem);

    QUndoStack* m_undo;
    std::shared_ptr<const TuningProblem> m_problem;
    QString m_path;
    Origin m_origin = Origin::File;
    QString m_kernelSource;
    QString m_kernelPath;
    QString m_kernelError;
    std::shared_ptr<const StoredProblem> m_stored; // Origin::Stored: holds its folder
    QString m_storedFrom;                          // the database's file name
    int m_shapeIndex = 0;
};

} // namespace tilescope::views
