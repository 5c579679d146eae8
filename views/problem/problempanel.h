#pragma once

// The Problem panel: what the open tuning problem is. The kernel and its objective, the shape
// being looked at, the tuning parameters and the conditions (with what each removes from the
// space of that shape).

#include <QWidget>

#include <memory>

class QComboBox;
class QLabel;
class QSplitter;
class QTableView;

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
    QSize sizeHint() const override;

private:
    void onProblemChanged();
    void onSpaceRequested();
    void onSpaceReady(const std::shared_ptr<const SpaceResult>& result);
    void onImpactReady(const std::shared_ptr<const ConditionImpactSet>& impact);
    void fitColumns();
    void fitSplitter();

    ProblemDocument* m_document;
    ParameterModel* m_parameters;
    ConditionModel* m_conditions;
    QLabel* m_kernelLabel = nullptr;
    QLabel* m_objectiveLabel = nullptr;
    QComboBox* m_shapeBox = nullptr;
    QTableView* m_parameterView = nullptr;
    QTableView* m_conditionView = nullptr;
    QSplitter* m_splitter = nullptr;
};

} // namespace tilescope::views
