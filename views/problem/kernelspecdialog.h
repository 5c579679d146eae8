#pragma once

// Edit > Kernel and Launch: the fields of a problem that are not its space, in one form: the
// kernel's name, file and compiler options, the launch (ProblemSize, GlobalSize, LocalSize,
// dynamic shared memory), the arguments, the shapes, the objective and the metrics. OK applies them as one undoable
// edit, checked as a loaded file is; a bad field keeps the dialog open and says which and why.

#include <QDialog>

class QFormLayout;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QTableWidget;

namespace tilescope::views {

class ProblemDocument;

class KernelSpecDialog : public QDialog {
    Q_OBJECT
public:
    explicit KernelSpecDialog(ProblemDocument* document, QWidget* parent = nullptr);

    /// Fills the form from the document's problem.
    void reload();
    /// Applies the form as one edit; false (with the reason shown) when the problem refuses it.
    bool apply();

    QLineEdit* field(const QString& name) const; ///< by object name: "kernelName", "localX", ...
    QPlainTextEdit* shapesEdit() const { return m_shapes; }
    /// The kernel's arguments, a row each: Name, Type, Memory, Access, Size or value, Fill, Fill value.
    QTableWidget* argumentTable() const { return m_arguments; }
    void addArgument();
    void removeSelectedArgument();
    QLabel* errorLabel() const { return m_error; }

    void accept() override;

private:
    QLineEdit* addField(const QString& name, const QString& label, const QString& tip);

    ProblemDocument* m_document;
    QPlainTextEdit* m_shapes = nullptr;
    QTableWidget* m_arguments = nullptr;
    QLabel* m_error = nullptr;
    QFormLayout* m_form = nullptr;
};

} // namespace tilescope::views
