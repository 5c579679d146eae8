#pragma once

// The Problem panel: what the open tuning problem is. The kernel and its objective, the shape
// being looked at, the tuning parameters and the conditions (with what each removes from the
// space of that shape).

#include "problem/expressionedit.h"

#include <QWidget>

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

class QComboBox;
class QFormLayout;
class QPushButton;
class QStackedWidget;
class QTableWidget;
class QLabel;
class QLineEdit;
class QToolButton;
class QSplitter;
class QTableView;

namespace tilescope {
class TuningProblem;
struct SessionInfo;
struct ResultRecord;
} // namespace tilescope

namespace tilescope::views {

class ConditionModel;
class ParameterModel;
class ProblemDocument;
class SpaceController;
struct ConditionImpactSet;
struct SpaceResult;

class ProblemPanel : public QWidget {
    Q_OBJECT
public:
    ProblemPanel(ProblemDocument* document, SpaceController* controller, QWidget* parent = nullptr);
    ~ProblemPanel() override;

    ParameterModel* parameterModel() const { return m_parameters; }
    ConditionModel* conditionModel() const { return m_conditions; }
    QComboBox* shapeBox() const { return m_shapeBox; }
    QTableView* parameterView() const { return m_parameterView; }
    QTableView* conditionView() const { return m_conditionView; }
    /// The editor of the selected condition: typing edits it, live.
    ExpressionEdit* conditionEditor() const { return m_conditionEdit; }
    /// The editors of the selected parameter's name and values.
    QLineEdit* parameterNameEditor() const { return m_parameterName; }
    QLineEdit* parameterValuesEditor() const { return m_parameterValues; }
    /// Why the last edit was not taken ("" when it was): the field and the column.
    QLabel* editErrorLabel() const { return m_editError; }
    /// "2,761 valid of 10,000 raw (27.6 %)", marked stale while an edit has an error.
    QLabel* countLabel() const { return m_countLabel; }
    /// The conditions' row shown in the editor (-1: none).
    int selectedCondition() const;
    int selectedParameter() const;
    /// Selects a condition (or parameter) row, in file order, and shows it in its editor.
    void selectCondition(int row);
    void selectParameter(int row);
    /// Adds a condition ("True", to be typed over) or a parameter, and selects it.
    void addCondition();
    void addParameter();
    void removeSelectedCondition();
    void removeSelectedParameter();
    /// Moves the selected parameter up (-1) or down (+1).
    void moveSelectedParameter(int step);
    QSize sizeHint() const override;

    /// What a recording opened without its problem knows (shown while no problem is open): the
    /// kernel, problem size, device and objective it names, and the parameters with the values
    /// found in its results. `results` may be empty; a session with no parameters clears it.
    void showRecording(const SessionInfo& session, const std::vector<ResultRecord>& results, const QString& fileName);
    /// The launch of the selected config (compact JSON, as the views give it; "" clears): grid,
    /// block, threads and threads per ProblemSize element, so that a wrong geometry shows.
    void showLaunchOf(const QString& configJson);
    /// "Launch: a grid of 32 x 512 x 1 blocks of 64 x 4 x 1 threads, ..." ("" when none).
    QString launchText() const;

    /// True while the panel shows a recording's contents instead of a problem.
    bool showsRecording() const;
    /// The table of parameters found in the recording.
    QTableWidget* recordedParameterView() const { return m_recordedParameters; }
    QPushButton* openProblemButton() const { return m_openProblem; }

signals:
    /// The user asked to open the T1 problem that goes with the recording shown.
    void openProblemRequested();
    /// An edit typed into one of the editors was checked: taken (error "") or refused (why).
    void editChecked(const QString& error);

private:
    // The constructor's steps, in the order the widgets are made.
    QFormLayout* makeHeaderForm(); // the kernel, the objective, the shape
    /// The parameters' and the conditions' tables, each in a box under its title.
    std::pair<QWidget*, QWidget*> makeTableBoxes();
    /// The selected row's editors under each table, and the timers that let typing settle.
    void makeEditors(QWidget* parameterBox, QWidget* conditionBox);
    /// The header, the count, the launch, an edit's error and the tables' split.
    QWidget* makeProblemPage(QFormLayout* form, QWidget* parameterBox, QWidget* conditionBox);
    /// A recording opened without its problem: what it names and the values found in it.
    void makeRecordingPage();
    void connectEditing(SpaceController* controller); // the document, the editors, the counts
    void onProblemChanged();
    /// The models and the condition editor's parameter names over `problem`.
    void showProblem(const std::shared_ptr<const TuningProblem>& problem);
    void onProblemEdited();
    void refreshModels();
    void refreshHeader(); // the kernel and objective lines, the shapes
    void showSelectedCondition();
    void showSelectedParameter();
    void applyConditionText();
    void applyParameterText();
    void showEditError(const QString& error);
    void updateCountLabel();
    void updateEditButtons();
    void onSpaceRequested();
    void onSpaceReady(const std::shared_ptr<const SpaceResult>& result);
    void onImpactReady(const std::shared_ptr<const ConditionImpactSet>& impact);
    void fitColumns();
    void fitSplitter(bool growOnly = false);

    void updatePage();

    ProblemDocument* m_document;
    QStackedWidget* m_pages = nullptr; // the problem, or what a recording without one knows
    QWidget* m_recordingPage = nullptr;
    QLabel* m_recordingHeader = nullptr;
    QTableWidget* m_recordedParameters = nullptr;
    QPushButton* m_openProblem = nullptr;
    bool m_hasRecording = false;
    ParameterModel* m_parameters;
    ConditionModel* m_conditions;
    QLabel* m_kernelLabel = nullptr;
    QLabel* m_objectiveLabel = nullptr;
    QComboBox* m_shapeBox = nullptr;
    QTableView* m_parameterView = nullptr;
    QTableView* m_conditionView = nullptr;
    QSplitter* m_splitter = nullptr;

    ExpressionEdit* m_conditionEdit = nullptr;
    QLineEdit* m_parameterName = nullptr;
    QLineEdit* m_parameterValues = nullptr;
    QToolButton* m_addCondition = nullptr;
    QToolButton* m_removeCondition = nullptr;
    QToolButton* m_addParameter = nullptr;
    QToolButton* m_removeParameter = nullptr;
    QToolButton* m_parameterUp = nullptr;
    QToolButton* m_parameterDown = nullptr;
    QLabel* m_editError = nullptr;
    QLabel* m_countLabel = nullptr;
    QLabel* m_launchLabel = nullptr; // the selected config's launch
    QString m_launchConfig;
    QTimer* m_conditionTimer = nullptr; // typing settles before the edit is checked
    QTimer* m_parameterTimer = nullptr;
    QTimer* m_fitTimer = nullptr; // the split fitted to the parameters' rows once they settle
    bool m_splitMoved = false;    // the user moved the split: it only grows to show every row
    int m_conditionRow = -1;      // in file order
    int m_parameterRow = -1;
    QString m_error;                                // the refused edit's reason
    std::shared_ptr<const SpaceResult> m_lastSpace; // the last count that arrived
    bool m_counting = false;
    std::vector<std::optional<std::uint64_t>> m_validPerShape; // from the last impact; empty: one shape
};

} // namespace tilescope::views
