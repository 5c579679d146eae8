#pragma once

// Edit > Kernel and Launch: the fields of a problem that are not its space, on five tabs: the
// kernel (name, file, compiler options, device), the launch (ProblemSize, GlobalSize, LocalSize,
// dynamic shared memory), the arguments and reference outputs, the shapes, objective and
// metrics, the budget and the search. OK applies them as one undoable edit, checked as a loaded
// file is; a bad field keeps the dialog open and says which and why. Fields the form does not
// show are kept as they were.

#include <QDialog>

class QFormLayout;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QTabWidget;
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
    /// The reference outputs, a row each: Name, Checks (the argument), Fill, Fill value, Data
    /// source, Seed, Validation, Threshold.
    QTableWidget* referenceTable() const { return m_references; }
    QPlainTextEdit* searchAttributesEdit() const { return m_searchAttributes; }
    QTabWidget* tabs() const { return m_tabs; }
    /// A row with defaults at the end of the arguments or reference outputs.
    void addRow(QTableWidget* table);
    void addArgument();
    void removeSelectedArgument();
    QLabel* errorLabel() const { return m_error; }

    void accept() override;

private:
    QFormLayout* addPage(const QString& title, bool grows = false);
    QLineEdit* addField(QFormLayout* form, const QString& name, const QString& label, const QString& tip);
    QWidget* withButtons(QTableWidget* table, const QString& what);

    ProblemDocument* m_document;
    QPlainTextEdit* m_shapes = nullptr;
    QString m_loadedShapes; // the shapes as the form showed them: unchanged, generators are written back
    QTabWidget* m_tabs = nullptr;
    QTableWidget* m_arguments = nullptr;
    QTableWidget* m_references = nullptr;
    QPlainTextEdit* m_searchAttributes = nullptr;
    QLabel* m_error = nullptr;
};

} // namespace tilescope::views
