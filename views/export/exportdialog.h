#pragma once

// File > Export Results: the current session's results (or a database's, or any recording's) in
// the formats of core/exchange: T4, the JSON cache of best configs, triton.Config lists, a C++
// header, CSV. Which sessions (shapes, devices) go in, the top k for triton, a file to write and
// a preview of its first lines. The text is made by the export use case (jobs/export.h) on a
// helper thread (a T4 file of a few thousand results is megabytes), and what the preview shows
// is exactly what Export writes, through the same use case.

#include "common/backgroundtask.h"

#include "jobs/export.h"

#include <QDialog>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

class QComboBox;
class QDialogButtonBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QTableView;

namespace tilescope::views {

class SessionListModel;

class ExportDialog : public QDialog {
    Q_OBJECT
public:
    /// Lines of the output the preview shows.
    static constexpr int kPreviewLines = 60;

    explicit ExportDialog(QWidget* parent = nullptr);
    /// Waits for the text in the making.
    ~ExportDialog() override;

    /// The sessions to export from, and what to call them ("the current session", a file name).
    void setSessions(std::vector<SessionData> sessions, const QString& sourceLabel);
    /// Reads every session of a recording (a Tilescope database, a T4 file, a Kernel Tuner cache)
    /// on a helper thread; sourceChanged() or failed() follows.
    void openRecording(const QString& path);

    void setFormat(ExportFormat format);
    ExportFormat format() const;
    void setTopK(int k);
    int topK() const;
    void setOutputPath(const QString& path);
    QString outputPath() const;
    /// The folder a file name is proposed in (the user's last export folder).
    void setOutputFolder(const QString& folder);

    SessionListModel* sessionModel() const { return m_sessionModel; }
    /// The preview as shown (the first kPreviewLines lines and a note), and whether the text is
    /// ready for the current choices.
    QString previewText() const;
    bool isReady() const { return m_ready; }
    /// Why the current choices give nothing to write ("" when they do).
    QString problemText() const { return m_problem; }

    /// Writes the text for the current choices to outputPath() (making it first if it is not
    /// ready). On failure returns false and fills `error`.
    bool exportNow(QString* error = nullptr);

signals:
    /// The text for the current choices is ready (or known to be impossible: problemText()).
    void previewReady();
    /// A recording opened through openRecording() is listed.
    void sourceChanged();
    /// A file was written.
    void exported(const QString& path, const QString& formatName, qint64 bytes);

private:
    struct Made {
        std::shared_ptr<const std::string> text; ///< null when it failed
        QString error;
    };

    QFormLayout* makeForm();
    void connectControls();
    void onFormatChanged();
    void refresh();
    void apply(const Made& made);
    void showPreview();
    void updateButtons();
    void browse();
    void proposeFileName();
    std::vector<SessionData> chosenSessions() const;
    static Made make(std::vector<SessionData> sessions, ExportOptions options, const std::string& source);

    std::shared_ptr<const std::vector<SessionData>> m_sessions;
    QString m_sourceLabel;
    QString m_outputFolder;
    bool m_pathEdited = false; // the user typed or chose a path: format changes keep it

    std::shared_ptr<const std::string> m_text;
    bool m_ready = false;
    QString m_problem;

    SessionListModel* m_sessionModel = nullptr;
    QLabel* m_sourceLabelWidget = nullptr;
    QPushButton* m_openButton = nullptr;
    QTableView* m_sessionView = nullptr;
    QComboBox* m_formatCombo = nullptr;
    QLabel* m_formatHelp = nullptr;
    QSpinBox* m_topSpin = nullptr;
    QLabel* m_topLabel = nullptr;
    QLineEdit* m_pathEdit = nullptr;
    QPlainTextEdit* m_preview = nullptr;
    QLabel* m_previewNote = nullptr;
    QLabel* m_status = nullptr;
    QDialogButtonBox* m_buttons = nullptr;
    QPushButton* m_exportButton = nullptr;

    BackgroundTask m_load{this};   // a recording being read: the newest only
    BackgroundTask m_making{this}; // the text for the current choices: a change supersedes it
};

/// A file name suffix for a format: ".t4.json", "_best.json", "_triton.py", "_tuned.h", ".csv".
QString exportFileSuffix(ExportFormat format);
/// For menus and the dialog: "T4 results (JSON)", ...
QString exportFormatTitle(ExportFormat format);

} // namespace tilescope::views
